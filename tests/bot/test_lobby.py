"""The lobby: joining, leaving, cancelling; a full lobby dealt by the clock, any player let
start a lobby its opener left waiting; the lobby message follows."""

from __future__ import annotations

import random

from tests.bot.conftest import GROUP_ID, BotHarness
from tests.bot.play import game_state, has_op, join_by_button
from tests.support.updates import User
from tgcheat.bot.app import CheatApplication
from tgcheat.bot.callbacks import Op
from tgcheat.bot.timers import Timers
from tgcheat.table import transitions as table
from tgcheat.table.session import Session
from tgcheat.table.transitions import Actor

ALICE, BOB, CAROL = User(1, "Alice"), User(2, "Bob"), User(3, "Carol")


async def test_joining_and_leaving_edit_the_lobby_message(bot: BotHarness) -> None:
    await bot.command(ALICE, "/new")
    lobby_id = bot.fake.last_message(GROUP_ID).message_id
    await join_by_button(bot, ALICE)
    await join_by_button(bot, BOB)
    assert "Players (2/6): 1. Alice, 2. Bob" in _lobby_text(bot, lobby_id)
    await join_by_button(bot, BOB)
    assert "already in this game" in (bot.fake.last_message(BOB.id).plain_text or "")
    await bot.command(BOB, "/leave")
    assert "Players (1/6): 1. Alice" in _lobby_text(bot, lobby_id)
    # A second /new while the lobby is open is refused.
    await bot.command(CAROL, "/new")
    assert "already open" in (bot.fake.last_message(GROUP_ID).plain_text or "")


async def test_only_the_creator_or_an_admin_cancels(bot: BotHarness) -> None:
    await bot.command(ALICE, "/new")
    lobby_id = bot.fake.last_message(GROUP_ID).message_id
    await bot.press(BOB, GROUP_ID, has_op(Op.CANCEL))
    assert "Only whoever opened the game" in str(
        bot.fake.calls_to("answerCallbackQuery")[-1].params.get("text")
    )
    await bot.press(ALICE, GROUP_ID, has_op(Op.CANCEL))
    lobby = bot.fake.message(GROUP_ID, lobby_id)
    assert "cancelled" in (lobby.plain_text or "") and not lobby.buttons
    # The group can open a new game straight away.
    await bot.command(BOB, "/new")
    assert "a new game is open" in (bot.fake.last_message(GROUP_ID).plain_text or "")


# --- the lobby does not hang -------------------------------------------------------------------

#: A moment, in Unix milliseconds, the handlers' clock reads in these tests.
T0 = 1_800_000_000_000
FULL_TABLE = [User(10 + i, name) for i, name in enumerate(("Ann", "Ben", "Cy", "Di", "Ed", "Flo"))]


class _Clock:
    """The handlers' time, moved by the test."""

    def __init__(self, now_ms: int) -> None:
        self.now_ms = now_ms

    def __call__(self) -> int:
        return self.now_ms


def _set_clock(bot: BotHarness) -> _Clock:
    clock = _Clock(T0)
    bot.shell.clock = clock
    return clock


def _timers(bot: BotHarness) -> Timers:
    app = bot.app
    assert isinstance(app, CheatApplication) and app.timers is not None
    return app.timers


def _lobby_text(bot: BotHarness, message_id: int) -> str:
    return bot.fake.message(GROUP_ID, message_id).seen_text


def _popup(bot: BotHarness) -> str:
    return str(bot.fake.calls_to("answerCallbackQuery")[-1].params.get("text"))


async def _stored(bot: BotHarness) -> Session:
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None
    return session


async def _open_full_lobby(bot: BotHarness) -> int:
    await bot.command(FULL_TABLE[0], "/new")
    lobby_id = bot.fake.last_message(GROUP_ID).message_id
    for user in FULL_TABLE:
        await join_by_button(bot, user)
    return lobby_id


async def test_a_full_lobby_counts_down_and_the_clock_deals_it_as_start_would(
    bot: BotHarness,
) -> None:
    _set_clock(bot)
    lobby_id = await _open_full_lobby(bot)
    assert "The table is full: the game starts in 10 seconds." in _lobby_text(bot, lobby_id)
    full = await _stored(bot)
    assert full.deadline_ms == T0 + 10_000
    timers = _timers(bot)
    timers.rng = random.Random(4)
    assert await timers.fire_due(T0 + 9_999) == 0
    await timers.fire_due(T0 + 10_000)

    state = await game_state(bot)
    by_start, _ = table.start(
        full,
        game_id=full.game_id,
        actor=Actor(full.creator),
        rng=random.Random(4),
        now_ms=T0 + 10_000,
    )
    assert state == by_start.game, "the clock deals as Start does"
    # The lobby message became the table; every player has their cards in private.
    shown = bot.fake.message(GROUP_ID, lobby_id)
    assert "a new game is open" not in (shown.plain_text or "")
    assert any("My cards" in str(b.get("text")) for b in shown.buttons)
    for user in FULL_TABLE:
        assert "Your cards in" in (bot.fake.last_message(user.id).plain_text or "")


async def test_leaving_a_full_lobby_by_its_button_stops_the_countdown(bot: BotHarness) -> None:
    _set_clock(bot)
    lobby_id = await _open_full_lobby(bot)
    await bot.press(FULL_TABLE[5], GROUP_ID, has_op(Op.LEAVE))
    assert _popup(bot) == "You left the game."
    text = _lobby_text(bot, lobby_id)
    assert "Players (5/6): 1. Ann, 2. Ben, 3. Cy, 4. Di, 5. Ed" in text
    assert "starts in" not in text
    # Nothing is due when the countdown would have ended: the lobby waits.
    assert await _timers(bot).fire_due(T0 + 10_000) == 0
    assert (await _stored(bot)).lobby is not None


async def test_a_player_may_start_the_game_only_once_the_opener_had_three_minutes(
    bot: BotHarness,
) -> None:
    clock = _set_clock(bot)
    await bot.command(ALICE, "/new")
    lobby_id = bot.fake.last_message(GROUP_ID).message_id
    for user in (ALICE, BOB, CAROL):
        await join_by_button(bot, user)
    assert "Any player may start it in 3 minutes." in _lobby_text(bot, lobby_id)

    clock.now_ms = T0 + 60_000
    await bot.press(BOB, GROUP_ID, has_op(Op.START))
    assert "Only whoever opened the game" in _popup(bot)
    assert (await _stored(bot)).lobby is not None

    # The clock says so on the lobby message when the time comes.
    assert await _timers(bot).fire_due(T0 + 180_000) == 1
    assert "Any player may start it now." in _lobby_text(bot, lobby_id)
    clock.now_ms = T0 + 180_000
    await bot.press(BOB, GROUP_ID, has_op(Op.START))
    assert (await game_state(bot)).players
    assert "a new game is open" not in _lobby_text(bot, lobby_id)


async def test_the_leave_button_takes_the_player_out_and_updates_the_lobby(
    bot: BotHarness,
) -> None:
    await bot.command(ALICE, "/new")
    lobby_id = bot.fake.last_message(GROUP_ID).message_id
    await join_by_button(bot, ALICE)
    await join_by_button(bot, BOB)
    await bot.press(BOB, GROUP_ID, has_op(Op.LEAVE))
    assert _popup(bot) == "You left the game."
    assert "Players (1/6): 1. Alice" in _lobby_text(bot, lobby_id)
    await bot.press(BOB, GROUP_ID, has_op(Op.LEAVE))
    assert _popup(bot) == "You are not playing in this game."
