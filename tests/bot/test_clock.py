"""The clock: deadlines in Redis, fired by any process, once."""

from __future__ import annotations

import asyncio

from tests.bot.conftest import GROUP_ID, BotHarness, make_harness
from tests.bot.play import game_state, group_texts, has_op, install_game, join_by_button, seated
from tests.engine.helpers import cards, state_with
from tests.support.updates import User
from tgcheat.bot.app import CheatApplication
from tgcheat.bot.callbacks import Op
from tgcheat.engine.cards import Rank
from tgcheat.engine.rules import ChallengePriority, Rules
from tgcheat.engine.state import Phase

ANN, BOB, CAROL, DAN = User(1, "Ann"), User(2, "Bob"), User(3, "Carol"), User(4, "Dan")


def _timers(bot: BotHarness):  # type: ignore[no-untyped-def]
    app = bot.app
    assert isinstance(app, CheatApplication) and app.timers is not None
    return app.timers


async def _deadline(bot: BotHarness) -> int:
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None
    return session.deadline_ms


async def _start(bot: BotHarness) -> None:
    await bot.command(ANN, "/new")
    for user in (ANN, BOB, CAROL):
        await join_by_button(bot, user)
    await bot.press(ANN, GROUP_ID, has_op(Op.START))


async def test_a_turn_timeout_plays_for_the_player_once(bot: BotHarness) -> None:
    await _start(bot)
    deadline = await _deadline(bot)
    assert deadline > 0
    state = await game_state(bot)
    timers = _timers(bot)
    assert await timers.fire_due(deadline - 1) == 0
    assert (await game_state(bot)).plays == 0
    await timers.fire_due(deadline)
    after = await game_state(bot)
    assert after.plays == 1 and after.players[state.turn].timeouts == 1
    assert after.turn != state.turn
    # Firing again at the same moment does nothing more: the next deadline is a turn away.
    await timers.fire_due(deadline)
    assert (await game_state(bot)).plays == 1
    assert await _deadline(bot) == deadline + 90_000


async def test_two_processes_firing_the_same_deadline_act_once(bot: BotHarness) -> None:
    await _start(bot)
    deadline = await _deadline(bot)
    other = await make_harness(bot.store._redis, bot.fake)
    try:
        await asyncio.gather(_timers(bot).fire_due(deadline), _timers(other).fire_due(deadline))
    finally:
        await other.app.shutdown()
    state = await game_state(bot)
    assert state.plays == 1 and state.deck_size == 52


async def test_an_unanswered_final_play_is_accepted(bot: BotHarness) -> None:
    state = state_with([cards("A♣"), cards("2♣"), cards("3♣")], rest_to=2)
    await install_game(bot, seated(state, [ANN, BOB, CAROL]))
    await bot.start_private(ANN, f"h{GROUP_ID}")
    await bot.press(ANN, ANN.id, has_op(Op.PICK, Rank.ACE))
    await bot.press(ANN, ANN.id, has_op(Op.PLAY))
    assert (await game_state(bot)).phase is Phase.FINAL_CHECK
    await _timers(bot).fire_due(await _deadline(bot))
    done = await game_state(bot)
    assert done.phase is Phase.FINISHED and done.result is not None and done.result.winner == 0
    assert await _deadline(bot) == 0


async def test_an_untouched_lobby_expires(bot: BotHarness) -> None:
    await bot.command(ANN, "/new")
    lobby = bot.fake.last_message(GROUP_ID)
    await _timers(bot).fire_due(await _deadline(bot))
    assert "Nobody started this game in time" in (
        bot.fake.message(GROUP_ID, lobby.message_id).plain_text or ""
    )
    await bot.command(BOB, "/new")
    assert "a new game is open" in (bot.fake.last_message(GROUP_ID).plain_text or "")


async def test_the_turn_timer_can_be_off(bot: BotHarness) -> None:
    bot.fake.set_admins(GROUP_ID, {ANN.id})
    await bot.command(ANN, "/settings")
    await bot.press(ANN, GROUP_ID, "Turn time")
    await bot.press(ANN, GROUP_ID, "off")
    await _start(bot)
    assert await _deadline(bot) == 0
    assert await bot.store.clock.due(10**15) == []


async def test_clockwise_priority_gives_the_challenge_to_the_nearest_caller(
    bot: BotHarness,
) -> None:
    rules = Rules(challenge_priority=ChallengePriority.CLOCKWISE, challenge_grace_s=3)
    state = state_with(
        [cards("5♣", "6♣"), cards("2♣"), cards("3♣"), cards("4♣")], rules=rules, rest_to=3
    )
    await install_game(bot, seated(state, [ANN, BOB, CAROL, DAN]))
    await bot.start_private(ANN, f"h{GROUP_ID}")
    await bot.press(ANN, ANN.id, has_op(Op.PICK, Rank.FIVE))
    await bot.press(ANN, ANN.id, has_op(Op.PLAY))
    # Dan presses first, Carol a moment later: Carol sits nearer Ann clockwise.
    await bot.press(DAN, GROUP_ID, has_op(Op.CHALLENGE))
    await bot.press(CAROL, GROUP_ID, has_op(Op.CHALLENGE))
    pending = await game_state(bot)
    assert len(pending.challenges) == 2 and pending.pile
    assert "Cheat! called by" in group_texts(bot)
    await _timers(bot).fire_due(await _deadline(bot))
    resolved = await game_state(bot)
    assert resolved.challenges == () and resolved.pile == ()
    reveal = next(
        m.seen_text
        for m in bot.fake.visible_messages(GROUP_ID)
        if "calls Cheat" in (m.plain_text or "")
    )
    assert reveal.startswith("❗ Carol calls Cheat on Ann")


class _ClockThatSwallowsOneCancel:
    """A clock whose first cancellation is lost, as asyncio.wait_for can lose one on Python
    3.11 when the operation it waits for finishes at that moment."""

    def __init__(self) -> None:
        self.cancels_seen = 0

    async def run(self) -> None:
        while True:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                self.cancels_seen += 1
                if self.cancels_seen > 1:
                    raise


async def test_stopping_ends_a_clock_that_lost_a_cancellation(redis) -> None:  # type: ignore[no-untyped-def]
    bot = await make_harness(redis)
    app = bot.app
    assert isinstance(app, CheatApplication)
    clock = _ClockThatSwallowsOneCancel()
    app.timers = clock  # type: ignore[assignment]
    await app.start()
    await asyncio.sleep(0)
    loop = asyncio.get_running_loop()
    started = loop.time()
    await asyncio.wait_for(app.stop(), timeout=10)
    assert loop.time() - started < 5, "stopping waited for the clock until told to give up"
    assert clock.cancels_seen == 2
    await app.shutdown()
