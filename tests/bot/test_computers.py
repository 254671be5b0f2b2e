"""Computer players at the table: seated from the lobby by its creator or an admin, playing
through the same compare-and-set as people, moved by the Redis clock at a human pace, their
hands shown nowhere."""

from __future__ import annotations

from tests.bot.conftest import GROUP_ID, BotHarness, make_harness
from tests.bot.play import game_state, group_texts, has_op, join_by_button, play
from tests.support.updates import User, private
from tgcheat.bot.app import CheatApplication
from tgcheat.bot.callbacks import Op, PresetChoice, SettingsPress
from tgcheat.bot.timers import Timers
from tgcheat.engine.game import can_accept, play_limit
from tgcheat.engine.rules import PRESETS
from tgcheat.engine.state import GameState, Phase
from tgcheat.table.computers import THINK_MS, is_computer

ANN, BOB = User(1, "Ann"), User(2, "Bob")


def _timers(bot: BotHarness) -> Timers:
    app = bot.app
    assert isinstance(app, CheatApplication) and app.timers is not None
    return app.timers


def _add(level: str) -> object:
    return lambda b: b.get("text", "").startswith("➕🤖") and level in b.get("text", "")


async def _lobby_with_computers(bot: BotHarness, levels: tuple[str, ...]) -> None:
    await bot.command(ANN, "/new")
    await join_by_button(bot, ANN)
    for level in levels:
        await bot.press(ANN, GROUP_ID, _add(level))


async def _ann_moves(bot: BotHarness, state: GameState) -> bool:
    """Ann's move when she has one: plays true cards when she can, believes last cards."""
    seat = state.seat_of(ANN.id)
    assert seat is not None
    if state.phase is Phase.PLAYING and state.turn == seat and not state.challenges:
        hand = state.players[seat].hand
        true = [c.rank for c in hand if c.rank is state.required]
        ranks = true[: play_limit(state, seat)] or [hand[0].rank]
        await play(bot, ANN, ranks)
        return True
    if state.phase is Phase.FINAL_CHECK and can_accept(state, seat):
        await bot.press(ANN, GROUP_ID, has_op(Op.ACCEPT))
        return True
    return False


async def _play_out(bot: BotHarness, max_steps: int = 3000) -> GameState:
    for _ in range(max_steps):
        state = await game_state(bot)
        if state.phase is Phase.FINISHED:
            return state
        if await _ann_moves(bot, state):
            continue
        session, _ = await bot.store.load(GROUP_ID)
        assert session is not None
        due = session.next_deadline_ms
        assert due, f"nobody is to act at play {state.plays}"
        await _timers(bot).fire_due(due)
    raise AssertionError("the game did not end")


async def test_a_lobby_filled_with_computer_players_plays_a_whole_game(bot: BotHarness) -> None:
    await _lobby_with_computers(bot, ("easy", "normal", "hard"))
    lobby = bot.fake.last_message(GROUP_ID).seen_text
    assert "🤖 Ada (easy)" in lobby and "🤖 Max (normal)" in lobby and "🤖 Kim (hard)" in lobby
    await bot.press(ANN, GROUP_ID, has_op(Op.START))
    state = await game_state(bot)
    assert sum(is_computer(p.user_id) for p in state.players) == 3
    final = await _play_out(bot)
    assert final.result is not None
    assert "🤖 A game with computer players." in group_texts(bot)
    # No request ever went to a computer player: they have no chat.
    chats = {call.params.get("chat_id") for call in bot.fake.calls}
    assert not any(isinstance(chat, int) and -10 < chat < 0 for chat in chats)
    assert not any("tg://user?id=-" in (call.params.get("text") or "") for call in bot.fake.calls)


async def test_only_the_games_creator_or_an_admin_seats_computer_players(bot: BotHarness) -> None:
    await bot.command(ANN, "/new")
    await join_by_button(bot, ANN)
    await join_by_button(bot, BOB)
    await bot.press(BOB, GROUP_ID, _add("hard"))
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None and session.lobby is not None
    assert [uid for uid, _ in session.lobby.players] == [ANN.id, BOB.id]
    answer = bot.fake.callback_answers[max(bot.fake.callback_answers)]
    assert "Only whoever opened the game" in str(answer.get("text"))
    await bot.press(ANN, GROUP_ID, _add("hard"))
    await bot.press(ANN, GROUP_ID, lambda b: b.get("text") == "➖🤖")
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None and session.lobby is not None
    assert [uid for uid, _ in session.lobby.players] == [ANN.id, BOB.id]
    assert session.computers == ()


async def test_a_full_lobby_offers_no_more_seats(bot: BotHarness) -> None:
    await _lobby_with_computers(bot, ("easy",) * 5)
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None and session.lobby is not None and session.lobby.full
    labels = [b["text"] for b in bot.fake.last_message(GROUP_ID).buttons]
    assert not any(label.startswith("➕🤖") for label in labels) and "➖🤖" in labels


async def test_a_restart_while_a_computer_player_thinks_loses_nothing(redis) -> None:  # type: ignore[no-untyped-def]
    bot = await make_harness(redis)
    try:
        await _lobby_with_computers(bot, ("normal", "normal"))
        await bot.press(ANN, GROUP_ID, has_op(Op.START))
        state = await game_state(bot)
        while state.players[state.turn].user_id == ANN.id:
            await _ann_moves(bot, state)
            state = await game_state(bot)
        session, _ = await bot.store.load(GROUP_ID)
        assert session is not None and session.computers_due_ms
        due = session.computers_due_ms
    finally:
        await bot.app.shutdown()
    # Another process, after the restart: the clock in Redis still says when it moves. Its
    # move may be a play or a Cheat! call on Ann's cards (then the count of plays and the
    # turn may stay as they were), so the whole game is compared.
    again = await make_harness(redis, bot.fake)
    try:
        await _timers(again).fire_due(due - 1)
        assert await game_state(again) == state
        await _timers(again).fire_due(due)
        assert await game_state(again) != state
    finally:
        await again.app.shutdown()


def test_a_computer_player_thinks_like_a_person() -> None:
    low, high = THINK_MS
    assert 1_000 <= low < high <= 6_000


async def test_a_solo_game_in_private_from_play_to_the_result(bot: BotHarness) -> None:
    await bot.start_private(ANN)
    await bot.command(ANN, "/play 2 hard", chat=private(ANN))
    session, _ = await bot.store.load(ANN.id)
    assert session is not None and session.game is not None
    state = session.game
    assert len(state.players) == 3 and sum(is_computer(p.user_id) for p in state.players) == 2
    for _ in range(3000):
        state = (await bot.store.load(ANN.id))[0].game  # type: ignore[union-attr]
        assert state is not None
        if state.phase is Phase.FINISHED:
            break
        seat = state.seat_of(ANN.id)
        assert seat is not None
        if state.phase is Phase.PLAYING and state.turn == seat and not state.challenges:
            hand = state.players[seat].hand
            true = [c.rank for c in hand if c.rank is state.required]
            await play(bot, ANN, true[: play_limit(state, seat)] or [hand[0].rank])
        elif state.phase is Phase.FINAL_CHECK and can_accept(state, seat):
            await bot.press(ANN, ANN.id, has_op(Op.ACCEPT))
        else:
            current, _ = await bot.store.load(ANN.id)
            assert current is not None and current.next_deadline_ms
            await _timers(bot).fire_due(current.next_deadline_ms)
    assert state.phase is Phase.FINISHED
    texts = "\n".join(m.seen_text for m in bot.fake.visible_messages(ANN.id))
    assert "🤖 A game with computer players." in texts
    assert "Your cards in" in texts or "You won" in texts or "Your place:" in texts
    # Only Ann's chat was written to.
    chats = {call.params.get("chat_id") for call in bot.fake.calls if "chat_id" in call.params}
    assert chats == {ANN.id}


async def test_play_refuses_what_it_cannot_seat(bot: BotHarness) -> None:
    await bot.start_private(ANN)
    await bot.command(ANN, "/play 9", chat=private(ANN))
    assert "1 to 5 computer players" in (bot.fake.last_message(ANN.id).plain_text or "")
    await bot.command(ANN, "/play lots", chat=private(ANN))
    assert "I don't know lots" in (bot.fake.last_message(ANN.id).plain_text or "")
    assert (await bot.store.load(ANN.id))[0] is None


async def test_each_computer_player_plays_its_level_and_remembers_the_game(
    bot: BotHarness,
) -> None:
    await _lobby_with_computers(bot, ("easy", "hard"))
    await bot.press(ANN, GROUP_ID, has_op(Op.START))
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None and session.game is not None
    players = session.computer_players
    assert players is not None
    by_user = dict(zip((p.user_id for p in session.game.players), players.strategies, strict=True))
    assert by_user[ANN.id] is None and sorted(s for s in by_user.values() if s) == ["easy", "hard"]
    dealt = players.to_data()
    for _ in range(12):
        state = await game_state(bot)
        if state.phase is Phase.FINISHED or not await _ann_moves(bot, state):
            current, _ = await bot.store.load(GROUP_ID)
            assert current is not None
            if current.next_deadline_ms:
                await _timers(bot).fire_due(current.next_deadline_ms)
    later, _ = await bot.store.load(GROUP_ID)
    assert later is not None and later.computer_players is not None
    # What they saw is kept with the game, in Redis: another process goes on from it.
    assert later.computer_players.to_data() != dealt


async def test_the_rules_of_games_against_the_computer_are_ones_own(bot: BotHarness) -> None:
    """/settings in private sets the rules /play deals with; nobody else may set them."""
    await bot.start_private(ANN)
    await bot.command(ANN, "/settings", chat=private(ANN))
    menu = bot.fake.last_message(ANN.id)
    assert any("callback_data" in b for b in menu.buttons)
    verju = next(number for number, name in enumerate(PRESETS) if name == "verju")
    forged = SettingsPress(ANN.id, PresetChoice(verju)).encode()
    await bot.feed(bot.updates.callback(BOB, menu, forged))
    assert await bot.store.settings.group_rules(ANN.id) is None
    await bot.feed(bot.updates.callback(ANN, menu, forged))
    assert await bot.store.settings.group_rules(ANN.id) == PRESETS["verju"]
    await bot.command(ANN, "/play 2", chat=private(ANN))
    session, _ = await bot.store.load(ANN.id)
    assert session is not None and session.game is not None
    assert session.game.rules.rank_rule is PRESETS["verju"].rank_rule
