"""A game as people on phones meet it in a busy group: last cards that are noticed, a table
that stays at the bottom, a Cheat! button in the turn message, nothing that happens silently,
and a game over that says who won and lets the same players play again."""

from __future__ import annotations

from tests.bot.conftest import GROUP_ID, BotHarness
from tests.bot.play import (
    game_state,
    has_op,
    install_game,
    join_by_button,
    latest_group_text,
    play,
    seated,
    table_record,
)
from tests.engine.helpers import cards, state_with
from tests.support.updates import User
from tgcheat.bot.app import CheatApplication
from tgcheat.bot.callbacks import Op, TablePress
from tgcheat.engine.actions import Stop
from tgcheat.engine.cards import Rank
from tgcheat.engine.game import apply
from tgcheat.engine.rules import FinalCheck, Rules
from tgcheat.engine.state import Phase

ANN, BOB, CAROL = User(1, "Ann"), User(2, "Bob"), User(3, "Carol")
PLAYERS = (ANN, BOB, CAROL)


async def _rigged(bot: BotHarness, rules: Rules | None = None) -> None:
    """Ann to play aces holding one ace: her next play is her last cards."""
    state = state_with(
        [cards("A♣"), cards("2♣", "7♦"), cards("3♣", "8♦")], rules=rules or Rules(), rest_to=2
    )
    await install_game(bot, seated(state, list(PLAYERS)))
    for user in PLAYERS:
        await bot.start_private(user, f"h{GROUP_ID}")


async def _started(bot: BotHarness) -> None:
    await bot.command(ANN, "/new")
    for user in PLAYERS:
        await join_by_button(bot, user)
    await bot.press(ANN, GROUP_ID, has_op(Op.START))


def _is_last_group_message(bot: BotHarness, message_id: int) -> bool:
    return bot.fake.last_message(GROUP_ID).message_id == message_id


async def test_last_cards_name_those_who_must_answer_in_a_new_table_message(
    bot: BotHarness,
) -> None:
    await _rigged(bot)
    old_table = bot.fake.visible_messages(GROUP_ID)
    await play(bot, ANN, [Rank.ACE])
    table = await table_record(bot)
    assert _is_last_group_message(bot, table.message_id)
    assert all(table.message_id != m.message_id for m in old_table)
    # A mention notifies Bob and Carol; the time left is shown; the answers are buttons.
    last_version = table.history[-1]
    for user in (BOB, CAROL):
        assert f'href="tg://user?id={user.id}"' in (last_version.text or "")
    assert "seconds left" in (table.plain_text or "")
    labels = [b["text"] for b in table.buttons]
    assert "✅ I believe you" in labels and "❗ Cheat!" in labels


async def test_under_final_check_next_the_next_player_is_pinged_in_private(
    bot: BotHarness,
) -> None:
    await _rigged(bot, Rules(final_check=FinalCheck.NEXT))
    before = bot.fake.last_message(BOB.id).message_id
    await play(bot, ANN, [Rank.ACE])
    ping = bot.fake.last_message(BOB.id)
    assert ping.message_id != before, "a new message notifies Bob"
    assert "Last cards!" in (ping.plain_text or "")
    labels = [b["text"] for b in ping.buttons]
    assert "✅ I believe you" in labels and "❗ Cheat!" in labels
    assert not any("Cheat" in b["text"] for b in (await table_record(bot)).buttons)


async def test_the_table_is_the_last_bot_message_after_a_reveal_and_a_reply(
    bot: BotHarness,
) -> None:
    await _started(bot)
    state = await game_state(bot)
    claimant = next(u for u in PLAYERS if u.id == state.players[state.turn].user_id)
    hand = state.players[state.turn].hand
    bluff = next(c.rank for c in hand if c.rank is not state.required)
    await play(bot, claimant, [bluff])
    first_table = (await table_record(bot)).message_id
    state = await game_state(bot)
    doubter = next(u for u in PLAYERS if u.id == state.players[state.turn].user_id)
    await bot.press(doubter, GROUP_ID, has_op(Op.CHALLENGE))
    # The old table is now the reveal, in the history; a new table is at the bottom.
    assert "Caught bluffing!" in (bot.fake.message(GROUP_ID, first_table).plain_text or "")
    assert not bot.fake.message(GROUP_ID, first_table).buttons
    table = await table_record(bot)
    assert table.message_id != first_table and _is_last_group_message(bot, table.message_id)
    # A reply to a command buries the table: it comes back below the reply, the old one goes.
    await bot.command(BOB, "/rules")
    assert latest_group_text(bot, "Rules")
    moved = await table_record(bot)
    assert moved.message_id != table.message_id and _is_last_group_message(bot, moved.message_id)
    assert bot.fake.message(GROUP_ID, table.message_id).deleted


async def test_the_player_to_play_may_call_cheat_from_their_turn_message(bot: BotHarness) -> None:
    await _started(bot)
    state = await game_state(bot)
    claimant = next(u for u in PLAYERS if u.id == state.players[state.turn].user_id)
    hand = state.players[state.turn].hand
    await play(bot, claimant, [next(c.rank for c in hand if c.rank is not state.required)])
    state = await game_state(bot)
    nxt = next(u for u in PLAYERS if u.id == state.players[state.turn].user_id)
    turn_message = bot.fake.last_message(nxt.id)
    assert f"{claimant.first_name}" in (turn_message.plain_text or "")
    assert any(b["text"] == "❗ Cheat!" for b in turn_message.buttons)
    await bot.press(nxt, nxt.id, has_op(Op.CHALLENGE))
    assert "Caught bluffing!" in latest_group_text(bot, "calls Cheat")


async def test_a_timeout_is_told_on_the_table_and_to_the_player(bot: BotHarness) -> None:
    await _started(bot)
    state = await game_state(bot)
    late = next(u for u in PLAYERS if u.id == state.players[state.turn].user_id)
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None
    app = bot.app
    assert isinstance(app, CheatApplication) and app.timers is not None
    await app.timers.fire_due(session.deadline_ms)
    table = await table_record(bot)
    assert f"{late.first_name} ran out of time: 1 card was played for them." in table.seen_text
    notice = bot.fake.last_message(late.id)
    assert "Your time ran out: 1 card was played for you." in (notice.plain_text or "")
    assert "Miss 2 more turns in a row" in (notice.plain_text or "")
    assert not notice.buttons, "the keyboard of a turn that is over is gone"


async def test_a_kick_is_told_on_the_table_and_to_the_player(bot: BotHarness) -> None:
    """The clock plays for whoever does not, until someone other than Ann has missed a
    turn: Ann, who opened the game, removes them."""
    await _started(bot)
    app = bot.app
    assert isinstance(app, CheatApplication) and app.timers is not None
    state = await game_state(bot)
    while state.players[state.turn].user_id == ANN.id:
        session, _ = await bot.store.load(GROUP_ID)
        assert session is not None
        await app.timers.fire_due(session.deadline_ms)
        state = await game_state(bot)
    seat = state.turn
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None
    await app.timers.fire_due(session.deadline_ms)
    kicked = next(u for u in PLAYERS if u.id == state.players[seat].user_id)
    await bot.command(ANN, f"/kick {seat + 1}")
    assert (await game_state(bot)).players[seat].left
    assert f"{kicked.first_name} was removed from the game." in group_text_now(bot)
    notice = bot.fake.last_message(kicked.id)
    assert "You were removed from this game." in (notice.plain_text or "")
    assert not notice.buttons


def group_text_now(bot: BotHarness) -> str:
    return "\n".join(m.seen_text for m in bot.fake.visible_messages(GROUP_ID))


async def test_the_game_over_table_shows_the_winner_and_play_again_opens_a_lobby(
    bot: BotHarness,
) -> None:
    await _rigged(bot)
    await play(bot, ANN, [Rank.ACE])
    for user in (BOB, CAROL):
        await bot.press(user, GROUP_ID, has_op(Op.ACCEPT))
    assert (await game_state(bot)).phase is Phase.FINISHED
    final = await table_record(bot)
    text = final.seen_text
    assert "Ann played out their hand and wins!" in text
    assert "2. Bob" in text and "Carol" in text
    assert "1 play" in text
    assert "You won!" in (bot.fake.last_message(ANN.id).plain_text or "")
    assert "Your place: 2 of 3" in (bot.fake.last_message(BOB.id).plain_text or "")
    # Carol, a player, plays again: a lobby with the same three already in.
    await bot.press(CAROL, GROUP_ID, has_op(Op.PLAY_AGAIN))
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None and session.lobby is not None
    assert [uid for uid, _ in session.lobby.players] == [ANN.id, BOB.id, CAROL.id]
    assert session.creator == CAROL.id
    assert "Players (3/6)" in (bot.fake.last_message(GROUP_ID).plain_text or "")
    assert not bot.fake.message(GROUP_ID, final.message_id).buttons


async def test_play_again_is_refused_to_an_outsider(bot: BotHarness) -> None:
    state = state_with([cards("A♣"), cards("2♣"), cards("3♣")], rest_to=2)
    stopped, _ = apply(seated(state, list(PLAYERS)), Stop())
    await install_game(bot, stopped)
    outsider = User(77, "Mallory")
    data = TablePress(Op.PLAY_AGAIN, GROUP_ID, "rigged1").encode()
    message = {
        "message_id": 1,
        "chat": bot.group,
        "date": 0,
        "text": "the table",
        "from": bot.fake.bot_sender,
    }
    await bot.feed(bot.updates.callback(outsider, message, data))
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None and session.lobby is None
    answer = bot.fake.calls_to("answerCallbackQuery")[-1].params.get("text", "")
    assert "Only whoever opened the game" in str(answer)
