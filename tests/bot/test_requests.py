"""What a situation of a game costs in Bot API requests, chat by chat: each request players do
not need is one fewer against Telegram's limits (benchmarks/requests_per_play.py measures
whole games)."""

from __future__ import annotations

import time
from collections import Counter

from redis.asyncio import Redis

from tests.bot.conftest import GROUP_ID, BotHarness, make_harness
from tests.bot.play import game_state, has_op, install_game, play, seated, table_record
from tests.engine.helpers import cards, state_with
from tests.support.updates import User
from tgcheat.bot.app import CheatApplication
from tgcheat.bot.callbacks import Op
from tgcheat.bot.timers import Timers
from tgcheat.engine.cards import Rank

ANN, BOB, CAROL = User(1, "Ann"), User(2, "Bob"), User(3, "Carol")


def _requests(bot: BotHarness, chat_id: int, since: int) -> Counter[str]:
    """The requests made to one chat since the ``since``-th call, by method."""
    return Counter(
        call.method for call in bot.fake.calls[since:] if call.params.get("chat_id") == chat_id
    )


def _hands(bot: BotHarness, user: User) -> list[int]:
    return [
        m.message_id for m in bot.fake.visible_messages(user.id) if "Your cards in" in m.seen_text
    ]


def _timers(bot: BotHarness) -> Timers:
    app = bot.app
    assert isinstance(app, CheatApplication) and app.timers is not None
    return app.timers


def _clocks_of(bot: BotHarness) -> list[int]:
    """The bot's clocks (the handlers', the sender's, the store's, the clock's), one that a
    test moves: ``now[0]``."""
    now = [int(time.time() * 1000)]
    app = bot.app
    assert isinstance(app, CheatApplication) and app.routes is not None
    shell = app.routes.shell

    def clock() -> int:
        return now[0]

    shell.clock = shell.sender.clock = shell.store.sessions.clock = _timers(bot).clock = clock
    return now


async def _dealt(bot: BotHarness) -> None:
    """Ann, Bob and Carol at a table, Ann to play aces, each in their private chat."""
    state = state_with([cards("4♣", "9♣"), cards("2♣", "5♦"), cards("3♣", "6♦")], rest_to=2)
    await install_game(bot, seated(state, [ANN, BOB, CAROL]))
    for user in (ANN, BOB, CAROL):
        await bot.start_private(user, f"h{GROUP_ID}")


async def test_a_challenge_edits_the_hand_of_the_player_whose_turn_goes_on(
    bot: BotHarness,
) -> None:
    """Carol catches Ann's lie from the table. Bob's turn goes on (``after_challenge=continue``):
    he was notified when it began, the reveal in the group notifies him again, and his hand
    message, the last one of his chat, loses its Cheat! button by one edit, not a new message
    and the deletion of the old one."""
    await _dealt(bot)
    await play(bot, ANN, [Rank.FOUR])
    before = _hands(bot, BOB)
    turn = before[-1]
    assert bot.fake.message(BOB.id, turn).buttons
    mark = len(bot.fake.calls)
    await bot.press(CAROL, GROUP_ID, has_op(Op.CHALLENGE))
    state = await game_state(bot)
    assert state.players[state.turn].user_id == BOB.id
    assert state.players[0].hand == tuple(cards("4♣", "9♣"))  # Ann took her lie back
    assert _requests(bot, BOB.id, mark) == Counter({"editMessageText": 1})
    assert _hands(bot, BOB) == before
    hand = bot.fake.message(BOB.id, turn)
    assert "Your turn" in hand.seen_text and "call Cheat!" not in hand.seen_text
    assert not bot.fake.find_button(BOB.id, has_op(Op.CHALLENGE))
    # He plays on from the edited message.
    await play(bot, BOB, [Rank.TWO])
    assert (await game_state(bot)).turn == 2
    bot.fake.assert_clean()


async def test_a_table_edit_that_waited_for_the_budget_is_not_made_once_a_play_showed_it(
    redis: Redis,
) -> None:
    """Over the group's budget a play's table edit waits for the clock; when the budget allows
    the next play's own edit, the table shows the latest state and the clock's turn comes to
    nothing: no edit that Telegram would refuse as not modified."""
    bot = await make_harness(redis, group_messages_per_minute=2)
    try:
        now = _clocks_of(bot)
        timers = _timers(bot)
        state = state_with(
            [cards("4♣", "9♣", "10♣"), cards("2♣", "5♦", "J♦"), cards("3♣", "6♦")], rest_to=2
        )
        await install_game(bot, seated(state, [ANN, BOB, CAROL]))
        for user in (ANN, BOB, CAROL):
            await bot.start_private(user, f"h{GROUP_ID}")
        mark = len(bot.fake.calls)
        for user, rank in ((ANN, Rank.FOUR), (BOB, Rank.TWO), (CAROL, Rank.THREE)):
            await play(bot, user, [rank])
        # The budget let the first two of those through: the third's table edit waits.
        assert _requests(bot, GROUP_ID, mark) == Counter({"sendMessage": 1, "editMessageText": 1})
        assert "pile: 3 cards" not in (await table_record(bot)).seen_text
        now[0] += 60_000
        await play(bot, ANN, [Rank.NINE])
        assert "pile: 4 cards" in (await table_record(bot)).seen_text
        mark = len(bot.fake.calls)
        await timers.refresh_deferred_tables(now[0] + 1_000)
        assert _requests(bot, GROUP_ID, mark) == Counter()
        assert "pile: 4 cards" in (await table_record(bot)).seen_text
    finally:
        await bot.app.shutdown()
    bot.fake.assert_clean()


async def test_a_reveal_on_the_last_token_moves_the_table_at_once(redis: Redis) -> None:
    """One token left when Carol catches Ann's lie: the old table becomes the reveal's line
    and the table is posted below it at once (2 requests), leaving the budget a token in debt;
    not the reveal alone now and, later, the table posted anew below it with the old one
    deleted (3)."""
    bot = await make_harness(redis, group_messages_per_minute=2)
    try:
        now = _clocks_of(bot)
        await _dealt(bot)
        await play(bot, ANN, [Rank.FOUR])  # the table is posted: one token of two spent
        old = (await table_record(bot)).message_id
        mark = len(bot.fake.calls)
        await bot.press(CAROL, GROUP_ID, has_op(Op.CHALLENGE))
        now[0] += 60_000
        await _timers(bot).refresh_deferred_tables(now[0])
        assert _requests(bot, GROUP_ID, mark) == Counter(
            {"editMessageText": 1, "sendMessage": 1}
        )
        table = await table_record(bot)
        assert bot.fake.last_message(GROUP_ID).message_id == table.message_id != old
        assert "calls Cheat on" in bot.fake.message(GROUP_ID, old).seen_text
        assert "pile: 0 cards" in table.seen_text
    finally:
        await bot.app.shutdown()
    bot.fake.assert_clean()
