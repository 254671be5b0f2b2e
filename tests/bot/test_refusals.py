"""Bad input gets a clear answer and changes nothing."""

from __future__ import annotations

import asyncio

from tests.bot.conftest import GROUP_ID, BotHarness, make_harness
from tests.bot.play import game_state, has_op, join_by_button, latest_group_text, play
from tests.support.updates import User, private
from tgcheat.bot.callbacks import ClaimPress, HandPress, Op
from tgcheat.engine.cards import Rank
from tgcheat.engine.state import GameState
from tgcheat.store.keys import Keys

ALICE, BOB, CAROL, DAN = User(1, "Alice"), User(2, "Bob"), User(3, "Carol"), User(4, "Dan")
OUTSIDER = User(9, "Mallory")


async def _started_game(bot: BotHarness, players: tuple[User, ...] = (ALICE, BOB, CAROL)) -> None:
    await bot.command(players[0], "/new")
    for user in players:
        await join_by_button(bot, user)
    await bot.press(players[0], GROUP_ID, has_op(Op.START))


def _last_answer(bot: BotHarness) -> str:
    return str(bot.fake.calls_to("answerCallbackQuery")[-1].params.get("text", ""))


def _user(state: GameState, seat: int) -> User:
    return next(u for u in (ALICE, BOB, CAROL, DAN) if u.id == state.players[seat].user_id)


async def _session_version(bot: BotHarness) -> bytes | None:
    return await bot.store._redis.hget(Keys().session(GROUP_ID), "v")


async def _press_data(bot: BotHarness, user: User, chat_id: int, data: str) -> None:
    message = bot.fake.last_message(chat_id)
    await bot.feed(bot.updates.callback(user, message, data))


async def test_a_command_in_the_wrong_chat_is_answered_and_changes_nothing(bot: BotHarness) -> None:
    bot.fake.started_users.add(ALICE.id)
    await bot.command(ALICE, "/new", chat=private(ALICE))
    assert "in the group" in (bot.fake.last_message(ALICE.id).plain_text or "")
    await bot.command(ALICE, "/join")
    assert "no game is open" in (bot.fake.last_message(GROUP_ID).plain_text or "").lower()
    assert await _session_version(bot) is None


async def test_someone_who_never_started_the_bot_is_told_how_to_join(bot: BotHarness) -> None:
    await bot.command(ALICE, "/new")
    await bot.command(BOB, "/join")
    reply = bot.fake.last_message(GROUP_ID)
    assert "can't send you your cards" in (reply.plain_text or "")
    link = reply.buttons[0]["url"]
    assert link.startswith("https://t.me/tgcheat_bot?start=j")
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None and session.lobby is not None and not session.lobby.players
    # Following the link joins in one tap.
    await bot.start_private(BOB, link.split("start=")[1])
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None and session.lobby is not None
    assert [uid for uid, _ in session.lobby.players] == [BOB.id]
    # /join after starting the bot works from the group too.
    bot.fake.started_users.add(CAROL.id)
    await bot.command(CAROL, "/join")
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None and session.lobby is not None and len(session.lobby.players) == 2


async def test_start_needs_three_players_and_the_creator_or_an_admin(bot: BotHarness) -> None:
    await bot.command(ALICE, "/new")
    await join_by_button(bot, ALICE)
    await join_by_button(bot, BOB)
    await bot.press(ALICE, GROUP_ID, has_op(Op.START))
    assert _last_answer(bot) == "Not enough players yet."
    await join_by_button(bot, CAROL)
    await bot.press(BOB, GROUP_ID, has_op(Op.START))
    assert "Only whoever opened the game" in _last_answer(bot)
    version = await _session_version(bot)
    bot.fake.set_admins(GROUP_ID, {BOB.id})
    await bot.press(BOB, GROUP_ID, has_op(Op.START))
    assert await _session_version(bot) != version
    await game_state(bot)


async def test_presses_that_are_not_allowed_get_a_pop_up(bot: BotHarness) -> None:
    await _started_game(bot)
    state = await game_state(bot)
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None
    turn, other = _user(state, state.turn), _user(state, (state.turn + 1) % 3)
    version = await _session_version(bot)

    # Not your turn: a Play press made up by another player.
    forged = HandPress(Op.PLAY, GROUP_ID, session.game_id, 0, "A", Rank.ACE).encode()
    await _press_data(bot, other, other.id, forged)
    assert _last_answer(bot) in ("It is not your turn.", "You do not hold those cards any more.")
    # Not in this game.
    await _press_data(bot, OUTSIDER, GROUP_ID, forged)
    assert _last_answer(bot) == "You are not playing in this game."
    # Forged or garbage data.
    for data in ("p:1:2", "zzz", f"c:{GROUP_ID}:{session.game_id}:abc", "c:1:!!:1", "x" * 64):
        await _press_data(bot, other, GROUP_ID, data)
        assert _last_answer(bot) == "This button is not valid."
    # A button of an older game.
    old = ClaimPress(Op.CHALLENGE, GROUP_ID, "old000", 1).encode()
    await _press_data(bot, other, GROUP_ID, old)
    assert _last_answer(bot) == "This button is out of date."
    assert await _session_version(bot) == version

    # Challenging your own claim.
    hand = state.players[state.turn].hand
    await play(bot, turn, [hand[0].rank])
    version = await _session_version(bot)
    await bot.press(turn, GROUP_ID, has_op(Op.CHALLENGE))
    assert _last_answer(bot) == "You cannot call Cheat on your own play."
    await bot.press(OUTSIDER, GROUP_ID, has_op(Op.CHALLENGE))
    assert _last_answer(bot) == "You are not playing in this game."
    assert await _session_version(bot) == version


async def test_a_double_tap_on_play_plays_once(bot: BotHarness) -> None:
    await _started_game(bot)
    state = await game_state(bot)
    user = _user(state, state.turn)
    rank = state.players[state.turn].hand[0].rank
    await bot.press(user, user.id, has_op(Op.PICK, rank))
    play_update = bot.updates.press(bot.fake, user, user.id, has_op(Op.PLAY))
    twin = {**play_update, "update_id": play_update["update_id"] + 1000}
    twin["callback_query"] = {**play_update["callback_query"], "id": "twin"}
    await asyncio.gather(bot.feed(play_update), bot.feed(twin))
    after = await game_state(bot)
    assert after.plays == 1
    assert len(after.pile) == 1
    answers = [c.params.get("text") for c in bot.fake.calls_to("answerCallbackQuery")[-2:]]
    assert "This button is out of date." in answers


async def test_two_cheat_presses_at_once_give_one_challenge(bot: BotHarness) -> None:
    await _started_game(bot, (ALICE, BOB, CAROL, DAN))
    state = await game_state(bot)
    claimant = _user(state, state.turn)
    await play(bot, claimant, [state.players[state.turn].hand[0].rank])
    others = [u for u in (ALICE, BOB, CAROL, DAN) if u.id != claimant.id]
    presses = [bot.updates.press(bot.fake, u, GROUP_ID, has_op(Op.CHALLENGE)) for u in others]
    await asyncio.gather(*(bot.feed(p) for p in presses))
    reveals = [
        m for m in bot.fake.visible_messages(GROUP_ID) if "calls Cheat" in (m.plain_text or "")
    ]
    assert len(reveals) == 1
    answers = [c.params.get("text") for c in bot.fake.calls_to("answerCallbackQuery")[-3:]]
    assert answers.count("Too late: that play can no longer be challenged.") == 2
    after = await game_state(bot)
    assert after.deck_size == 52 and after.pile == ()


async def test_a_repeated_update_is_ignored(bot: BotHarness) -> None:
    await _started_game(bot)
    state = await game_state(bot)
    user = _user(state, state.turn)
    await bot.press(user, user.id, has_op(Op.PICK, state.players[state.turn].hand[0].rank))
    play_update = bot.updates.press(bot.fake, user, user.id, has_op(Op.PLAY))
    await bot.feed(play_update)
    sent = len(bot.fake.calls)
    await bot.feed(play_update)
    assert (await game_state(bot)).plays == 1
    # The repeat shows the current state again: nothing new is sent, and every edit finds the
    # message already showing it.
    again = bot.fake.calls[sent:]
    assert not [c for c in again if c.method.lower() == "sendmessage"]
    edits = [c for c in again if c.method.lower() == "editmessagetext"]
    assert all(c.status == 400 and "not modified" in str(c.error) for c in edits)


async def test_a_new_process_on_the_same_redis_carries_on_the_game(bot: BotHarness) -> None:
    await _started_game(bot)
    state = await game_state(bot)
    await play(bot, _user(state, state.turn), [state.players[state.turn].hand[0].rank])
    await bot.app.shutdown()
    # A fresh process: a new Application, the same Redis and the same (offline) Telegram.
    fresh = await make_harness(bot.store._redis, bot.fake)
    fresh.updates = bot.updates
    bot.app = fresh.app
    state = await game_state(fresh)
    assert state.plays == 1
    await play(fresh, _user(state, state.turn), [state.players[state.turn].hand[0].rank])
    assert (await game_state(fresh)).plays == 2


async def test_stop_ends_the_game_for_its_creator_only(bot: BotHarness) -> None:
    await _started_game(bot)
    await bot.command(BOB, "/stop")
    assert latest_group_text(bot, "Only whoever opened the game")
    await bot.command(ALICE, "/stop")
    assert "The game was stopped." in (bot.fake.last_message(GROUP_ID).plain_text or "")
    state = await game_state(bot)
    assert state.result is not None
    await bot.command(ALICE, "/stop")
    assert "There is no game here" in (bot.fake.last_message(GROUP_ID).plain_text or "")
