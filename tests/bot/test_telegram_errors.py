"""Telegram's errors and the group's membership: the game goes on, nothing is lost."""

from __future__ import annotations

from tests.bot.conftest import GROUP_ID, BotHarness, make_harness
from tests.bot.play import game_state, group_texts, has_op, join_by_button, play
from tests.support.updates import User
from tgcheat.bot.app import CheatApplication
from tgcheat.bot.callbacks import Op
from tgcheat.engine.state import GameState, Phase
from tgcheat.table.session import MessageIds

ANN, BOB, CAROL, DAN = User(1, "Ann"), User(2, "Bob"), User(3, "Carol"), User(4, "Dan")
USERS = {u.id: u for u in (ANN, BOB, CAROL, DAN)}


async def _start(bot: BotHarness, players: tuple[User, ...] = (ANN, BOB, CAROL)) -> GameState:
    await bot.command(ANN, "/new")
    for user in players:
        await join_by_button(bot, user)
    await bot.press(ANN, GROUP_ID, has_op(Op.START))
    return await game_state(bot)


def _turn_user(state: GameState) -> User:
    return USERS[state.players[state.turn].user_id]


async def _play_one(bot: BotHarness) -> GameState:
    state = await game_state(bot)
    await play(bot, _turn_user(state), [state.players[state.turn].hand[0].rank])
    return await game_state(bot)


def _table_id(bot: BotHarness) -> int:
    return bot.fake.visible_messages(GROUP_ID)[0].message_id


async def test_a_player_who_blocked_the_bot_is_reported_once_and_the_game_goes_on(
    bot: BotHarness,
) -> None:
    state = await _start(bot)
    blocker = USERS[state.players[(state.turn + 1) % 3].user_id]
    bot.fake.blocked_users.add(blocker.id)
    for _ in range(5):
        state = await game_state(bot)
        if _turn_user(state) == blocker:
            # The clock plays for them (here: the deadline fires at once).
            app = bot.app
            assert isinstance(app, CheatApplication) and app.timers is not None
            session, _ = await bot.store.load(GROUP_ID)
            assert session is not None
            await app.timers.fire_due(session.deadline_ms)
        else:
            await _play_one(bot)
    assert (await game_state(bot)).plays == 5
    notices = [
        m
        for m in bot.fake.visible_messages(GROUP_ID)
        if "can't send you your cards" in (m.plain_text or "")
    ]
    assert len(notices) == 1 and blocker.first_name in (notices[0].plain_text or "")


async def test_a_deleted_table_is_posted_anew(bot: BotHarness) -> None:
    await _start(bot)
    old = _table_id(bot)
    await bot.feed(bot.updates.text(bot.group, ANN, "oops"))  # someone chats meanwhile
    bot.fake.messages[(GROUP_ID, old)].deleted = True
    await _play_one(bot)
    new = bot.fake.last_message(GROUP_ID)
    assert new.message_id != old and "pile: 1 card" in (new.plain_text or "")
    await _play_one(bot)
    assert bot.fake.last_message(GROUP_ID).message_id == new.message_id
    assert "pile: 2 cards" in (bot.fake.message(GROUP_ID, new.message_id).plain_text or "")


async def test_retry_after_is_not_waited_out_the_clock_shows_the_table(bot: BotHarness) -> None:
    state = await _start(bot)
    user = _turn_user(state)
    await bot.press(user, user.id, has_op(Op.PICK, state.players[state.turn].hand[0].rank))
    bot.fake.flood(GROUP_ID, 1)  # "retry after 1"
    await bot.press(user, user.id, has_op(Op.PLAY))  # handled at once: the table edit waits
    assert (await game_state(bot)).plays == 1
    assert "pile: 1 card" not in (bot.fake.message(GROUP_ID, _table_id(bot)).plain_text or "")
    assert [c.status for c in bot.fake.calls_to("editMessageText")].count(429) == 1
    bot.fake.lift_flood(GROUP_ID)
    app = bot.app
    assert isinstance(app, CheatApplication) and app.timers is not None
    assert app.routes is not None
    shell = app.routes.shell
    later = shell.clock() + 1_500
    shell.clock = lambda: later
    await app.timers.sync_due(later)
    assert "pile: 1 card" in (bot.fake.message(GROUP_ID, _table_id(bot)).plain_text or "")


async def test_table_edits_over_the_group_budget_wait_and_coalesce(redis) -> None:  # type: ignore[no-untyped-def]
    bot = await make_harness(redis, group_messages_per_minute=3)
    try:
        await _start(bot)  # the lobby and the start: two table messages
        edits_before = len(bot.fake.calls_to("editMessageText"))
        for _ in range(4):
            await _play_one(bot)
        group_edits = [
            c
            for c in bot.fake.calls_to("editMessageText")[edits_before:]
            if c.params["chat_id"] == GROUP_ID
        ]
        assert len(group_edits) <= 2
        assert "pile: 4 cards" not in (bot.fake.message(GROUP_ID, _table_id(bot)).plain_text or "")
        app = bot.app
        assert isinstance(app, CheatApplication) and app.timers is not None
        assert app.routes is not None
        shell = app.routes.shell
        later = shell.clock() + 61_000
        shell.clock = lambda: later
        await app.timers.sync_due(later)
        assert "pile: 4 cards" in (bot.fake.message(GROUP_ID, _table_id(bot)).plain_text or "")
    finally:
        await bot.app.shutdown()
    bot.fake.assert_clean()


async def test_a_player_leaving_the_group_leaves_the_game(bot: BotHarness) -> None:
    state = await _start(bot, (ANN, BOB, CAROL, DAN))
    leaver = USERS[state.players[state.turn].user_id]
    await bot.feed(bot.updates.left_chat_member(bot.group, leaver))
    after = await game_state(bot)
    seat = after.seat_of(leaver.id)
    assert seat is not None and after.players[seat].left and after.turn != seat
    assert after.deck_size == 52 and "left the game" in (
        bot.fake.message(GROUP_ID, _table_id(bot)).plain_text or ""
    )


async def test_kick_by_seat_number_for_the_creator_or_an_admin_only(bot: BotHarness) -> None:
    """Anyone else is refused; Ann, who opened the game, removes a player who is there only
    as an admin of the group."""
    state = await _start(bot, (ANN, BOB, CAROL, DAN))
    target = USERS[state.players[2].user_id]
    await bot.command(BOB if target != BOB else CAROL, "/kick 3")
    assert "Only whoever opened the game" in group_texts(bot)
    bot.fake.set_admins(GROUP_ID, {ANN.id})
    await bot.command(ANN, "/kick 3")
    after = await game_state(bot)
    assert after.players[2].left and after.players[2].user_id == target.id


async def test_the_last_player_left_wins(bot: BotHarness) -> None:
    state = await _start(bot)
    leavers = [USERS[p.user_id] for p in state.players[:2]]
    for user in leavers:
        await bot.feed(bot.updates.left_chat_member(bot.group, user))
    done = await game_state(bot)
    assert done.phase is Phase.FINISHED and done.result is not None
    assert done.result.winner == 2
    assert "Everyone else left" in group_texts(bot)


async def test_a_group_that_becomes_a_supergroup_keeps_its_game(bot: BotHarness) -> None:
    old_group = {"id": -4001, "type": "group", "title": "Old group"}
    bot.group = old_group
    await bot.command(ANN, "/new")
    for user in (ANN, BOB, CAROL):
        bot.fake.started_users.add(user.id)
        await bot.command(user, "/join")
    await bot.press(ANN, -4001, has_op(Op.START))
    before, _ = await bot.store.load(-4001)
    assert before is not None and before.game is not None
    new_id = -1009990001
    await bot.feed(bot.updates.migrate(-4001, new_id, title="Old group"))
    moved, _ = await bot.store.load(new_id)
    assert moved is not None and moved.game is not None
    assert moved.game.players == before.game.players
    assert (await bot.store.load(-4001))[0] is None
    table = bot.fake.last_message(new_id)
    assert "pile: 0 cards" in (table.plain_text or "")
    # The player to act plays with the new buttons.
    user = USERS[moved.game.players[moved.game.turn].user_id]
    await play(bot, user, [moved.game.players[moved.game.turn].hand[0].rank])
    after, _ = await bot.store.load(new_id)
    assert after is not None and after.game is not None and after.game.plays == 1


async def test_the_bot_removed_from_the_group_ends_the_game_and_cleans_up(bot: BotHarness) -> None:
    await _start(bot)
    bot.fake.kick_bot(GROUP_ID)
    await bot.feed(bot.updates.my_chat_member(bot.group, ANN, "member", "kicked"))
    session, _ = await bot.store.load(GROUP_ID)
    messages = await bot.message_ids(GROUP_ID)
    assert session is None and messages == MessageIds()
    assert await bot.store.clock.due(10**15) == []
    assert "The game is over." in (bot.fake.last_message(BOB.id).plain_text or "")
