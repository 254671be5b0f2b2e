"""Liar's Bar through the bot, with update JSON: the call, the pause, then the pull."""

from __future__ import annotations

from tests.bot.conftest import GROUP_ID, BotHarness
from tests.bot.play import game_state, group_texts, has_op, join_by_button
from tests.support.updates import User, private
from tgcheat.bot.app import CheatApplication
from tgcheat.bot.callbacks import Op
from tgcheat.engine.game import PULL_PAUSE_MS
from tgcheat.engine.rules import PRESETS
from tgcheat.i18n import translator
from tgcheat.webapp.view import state_json

ANN, BOB, CAROL = User(1, "Ann"), User(2, "Bob"), User(3, "Carol")
USERS = {u.id: u for u in (ANN, BOB, CAROL)}


async def _deadline(bot: BotHarness) -> int:
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None
    return session.deadline_ms


def _pull_lines(bot: BotHarness) -> list[str]:
    return [
        m.seen_text
        for m in bot.fake.visible_messages(GROUP_ID)
        if "BANG!" in m.seen_text or "lives on" in m.seen_text
    ]


async def test_a_call_is_revealed_then_the_trigger_is_pulled_after_a_pause(
    bot: BotHarness,
) -> None:
    await bot.command(ANN, "/new liars")
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None and session.rules == PRESETS["liars"]
    for user in (ANN, BOB, CAROL):
        await join_by_button(bot, user)
    await bot.press(ANN, GROUP_ID, has_op(Op.START))
    state = await game_state(bot)
    assert [len(p.hand) for p in state.players] == [5, 5, 5] and state.deck_size == 20
    assert "Round 1" in group_texts(bot)

    player = USERS[state.players[state.turn].user_id]
    rank = state.players[state.turn].hand[0].rank
    await bot.press(player, player.id, has_op(Op.PICK, rank))
    await bot.press(player, player.id, has_op(Op.PLAY))
    state = await game_state(bot)
    caller = USERS[state.players[state.turn].user_id]
    third = next(u for u in USERS.values() if u not in (player, caller))
    # Only the next player may call: nobody else has a Liar! button.
    assert bot.fake.find_button(third.id, has_op(Op.CHALLENGE)) is None
    await bot.press(caller, caller.id, has_op(Op.CHALLENGE))

    pending = await game_state(bot)
    before_pull, _ = await bot.store.load(GROUP_ID)
    assert pending.pull_by is not None
    puller = pending.players[pending.pull_by].name
    texts = group_texts(bot)
    assert f"{puller} must pull the trigger…" in texts
    assert f"{puller} puts the revolver to their head…" in texts
    # The pause: the group does not know yet, and the clock waits for its moment.
    assert _pull_lines(bot) == []
    deadline = await _deadline(bot)
    app = bot.app
    assert isinstance(app, CheatApplication) and app.timers is not None
    assert await app.timers.fire_due(deadline - 1) == 0
    assert _pull_lines(bot) == []
    await app.timers.fire_due(deadline)

    pulled = await game_state(bot)
    shot = pulled.players[pending.pull_by].shot
    lines = _pull_lines(bot)
    assert len(lines) == 1
    assert lines[0] == (
        f"💥 BANG! {puller} is out." if shot else f"🔫 click. {puller} lives on (chamber 1 of 6)."
    )
    assert pulled.pull_by is None and pulled.round == 2
    assert pulled.players[pending.pull_by].pulls == 1
    # Firing again changes nothing.
    await app.timers.fire_due(deadline + PULL_PAUSE_MS)
    assert len(_pull_lines(bot)) == 1
    # The Mini App tells the same line as the group, once the trigger is pulled (and none
    # before).
    tr = translator("en")
    session, version = await bot.store.load(GROUP_ID)
    assert session is not None
    for user in USERS.values():
        shown = state_json(tr, session, version, user.id, "cheatbot", deadline)
        text = shown["pull"]["text"].replace("\u2068", "").replace("\u2069", "")
        assert text == lines[0] and shown["pull"]["hit"] == shot
    assert "pull" not in state_json(tr, before_pull, 1, ANN.id, "cheatbot", deadline)
    # Meanwhile it held its breath with the group: who is about to pull, and no more after.
    assert before_pull is not None
    waiting = state_json(tr, before_pull, 1, ANN.id, "cheatbot", deadline)
    assert waiting["pulling"].replace("\u2068", "").replace("\u2069", "") == (
        f"🔫 {puller} puts the revolver to their head…"
    )
    assert "pulling" not in state_json(tr, session, version, ANN.id, "cheatbot", deadline)


async def test_a_game_against_computers_seats_four_at_most(bot: BotHarness) -> None:
    await bot.start_private(ANN)
    await bot.command(ANN, "/play 4 liars", chat=private(ANN))
    said = bot.fake.last_message(ANN.id).plain_text or ""
    assert "enough for 4 players at most" in said
    session, _ = await bot.store.load(ANN.id)
    assert session is None or session.game is None
    await bot.command(ANN, "/play 3 hard liars", chat=private(ANN))
    session, _ = await bot.store.load(ANN.id)
    assert session is not None and session.game is not None
    assert len(session.game.players) == 4 and session.game.rules.revolver


async def test_new_names_a_preset_and_a_pace(bot: BotHarness) -> None:
    await bot.command(ANN, "/new liars blitz")
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None and session.rules is not None
    assert session.rules.revolver and session.rules.turn_timeout_s == 15
    assert "Liar's Bar (revolver) · blitz" in group_texts(bot)
    await bot.press(ANN, GROUP_ID, has_op(Op.CANCEL))
    await bot.command(ANN, "/new correspondence")
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None and session.rules is not None
    assert session.rules.turn_timeout_s == 86_400 and not session.rules.revolver
    await bot.command(ANN, "/new liars sleepy")
    assert "Unknown rules sleepy" in (bot.fake.last_message(GROUP_ID).plain_text or "")
