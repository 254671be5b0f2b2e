"""What a situation of a game costs in Bot API requests, chat by chat: each request players do
not need is one fewer against Telegram's limits (benchmarks/requests_per_play.py measures
whole games)."""

from __future__ import annotations

from collections import Counter

from tests.bot.conftest import GROUP_ID, BotHarness
from tests.bot.play import game_state, has_op, install_game, play, seated
from tests.engine.helpers import cards, state_with
from tests.support.updates import User
from tgcheat.bot.callbacks import Op
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
