"""Long polling as safe as the webhook: a failed update is logged with its cause and handed to
the handlers again, a few times, so that a change whose showing failed is shown after all."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from telegram import Update
from telegram.ext import Updater

from tests.bot.conftest import GROUP_ID, BotHarness
from tests.bot.play import game_state, has_op, join_by_button
from tests.support.updates import User
from tgcheat.bot.app import ALLOWED_UPDATES, CheatApplication, PollingRetries, retry_failed_updates
from tgcheat.bot.callbacks import ClaimPress, Op, parse
from tgcheat.bot.delivery.sync import RETRY_MS
from tgcheat.table.place import Place

ANN, BOB, CAROL = User(1, "Ann"), User(2, "Bob"), User(3, "Carol")
USERS = {u.id: u for u in (ANN, BOB, CAROL)}
#: The wait before the first second try, shortened.
FIRST_WAIT_S = 0.02


@asynccontextmanager
async def polling(bot: BotHarness) -> AsyncIterator[PollingRetries]:
    """The bot polling the fake Telegram, as `tgcheat poll` runs it."""
    retries = retry_failed_updates(bot.app, first_wait_s=FIRST_WAIT_S)
    updater = Updater(bot=bot.app.bot, update_queue=bot.app.update_queue)
    await updater.initialize()
    await bot.app.start()
    await updater.start_polling(poll_interval=0, allowed_updates=ALLOWED_UPDATES)
    try:
        yield retries
    finally:
        await updater.stop()
        await bot.app.stop()
        await updater.shutdown()


async def until(condition: Callable[[], bool], timeout_s: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "not within the time"
        await asyncio.sleep(0.01)


def claims_on_the_table(bot: BotHarness) -> list[int]:
    found = bot.fake.find_button(GROUP_ID, lambda b: "start=h" in str(b.get("url", "")))
    assert found is not None, "no table in the group"
    record = bot.fake.message(GROUP_ID, found[0])
    presses = [parse(b["callback_data"]) for b in record.buttons if "callback_data" in b]
    return [p.claim for p in presses if isinstance(p, ClaimPress)]


async def test_a_play_whose_showing_failed_is_shown_by_the_clock(
    bot: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    """Telegram fails one of a play's edits: the play is stored and the update handled (its
    sync leaves the place due), and the clock's sync shows it soon after, without the update
    being delivered again."""
    await bot.command(ANN, "/new")
    for user in USERS.values():
        await join_by_button(bot, user)
    await bot.press(ANN, GROUP_ID, has_op(Op.START))
    state = await game_state(bot)
    mover = USERS[state.players[state.turn].user_id]
    await bot.press(mover, mover.id, has_op(Op.PICK, state.players[state.turn].hand[0].rank))
    play = bot.updates.press(bot.fake, mover, mover.id, has_op(Op.PLAY))
    # The play is stored, then Telegram fails one of its edits: nothing shows the claim yet.
    bot.fake.fail_next("editMessageText", status=502, description="Bad Gateway")
    caplog.set_level(logging.ERROR, logger="tgcheat")
    timers = bot.app.timers  # type: ignore[attr-defined]
    async with polling(bot):
        bot.fake.push_update(play)
        # The play's sync is over once the play is stored (its compare-and-set took the
        # place's lease) and the place is let go, left due for the clock (a due mark from
        # before the play is no sign: the play may not have been taken from the queue yet).
        for _ in range(500):
            stored = (await game_state(bot)).plays == state.plays + 1
            held = await bot.store.shown.held(Place(GROUP_ID))
            due = Place(GROUP_ID) in await bot.store.shown.due(2**62)
            if stored and not held and (due or claims_on_the_table(bot) == [state.plays + 1]):
                break
            await asyncio.sleep(0.01)
        else:
            raise AssertionError("the play's sync did not end")
        # Whatever the running clock has done meanwhile, its sync of the place shows the play.
        await timers.sync_due(timers.clock() + RETRY_MS)
        assert claims_on_the_table(bot) == [state.plays + 1]
    assert not [r.getMessage() for r in caplog.records if "failed" in r.getMessage()]


async def test_an_update_that_keeps_failing_is_given_up_and_polling_goes_on(
    bot: BotHarness, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    sender = bot.shell.sender
    sends = 0
    send = sender.send

    async def broken(*args: Any, **kwargs: Any) -> int | None:
        nonlocal sends
        sends += 1
        raise RuntimeError("the send broke")

    monkeypatch.setattr(sender, "send", broken)
    caplog.set_level(logging.ERROR, logger="tgcheat")
    async with polling(bot):
        bot.fake.push_update(bot.updates.start_private(ANN))

        def given_up() -> bool:
            return any("given up" in r.getMessage() for r in caplog.records)

        await until(given_up)
        # Four tries in all: the first and three more, each after a longer wait.
        assert sends == 4
        tries = [r.getMessage() for r in caplog.records if "Handling update" in r.getMessage()]
        assert [t.split("(try ")[1][:6] for t in tries] == ["1 of 4", "2 of 4", "3 of 4", "4 of 4"]
        assert "given up: RuntimeError: the send broke" in tries[-1]
        # The next update is handled as usual.
        monkeypatch.setattr(sender, "send", send)
        bot.fake.push_update(bot.updates.start_private(BOB))

        def answered() -> bool:
            return bool(bot.fake.visible_messages(BOB.id))

        await until(answered)


async def test_stopping_does_not_wait_for_the_second_tries(
    bot: BotHarness, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(*args: Any, **kwargs: Any) -> int | None:
        raise RuntimeError("the send broke")

    monkeypatch.setattr(bot.shell.sender, "send", broken)
    caplog.set_level(logging.WARNING, logger="tgcheat")
    app = bot.app
    assert isinstance(app, CheatApplication)
    retries = retry_failed_updates(app, first_wait_s=3600)
    await app.start()
    try:
        await app.update_queue.put(Update.de_json(bot.updates.start_private(ANN), app.bot))
        await until(lambda: _logged(caplog, "trying again in"))
    finally:
        async with asyncio.timeout(5):
            await app.stop()
    assert retries is app.retries
    assert _logged(caplog, "1 failed update(s) will not be tried again")


def _logged(caplog: pytest.LogCaptureFixture, text: str) -> bool:
    return any(text in r.getMessage() for r in caplog.records)
