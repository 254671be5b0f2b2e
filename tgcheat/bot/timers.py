"""The clock: turn and final-play timeouts, the Cheat! grace period, lobbies (a full one dealt
after its countdown, any player let start one that waited for its opener, one nobody touched
closed), and table edits that waited for the group's budget.

Deadlines live in Redis (in each session, and in a sorted set that any process can scan), so
every running process fires them and a restarted one fires those that fell due while it was
down. Firing is a compare-and-set like any other change (``tgcheat.table.transitions.tick``)
and only acts when the stored deadline has passed, so two processes firing the same deadline,
or one firing it twice, act once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from random import SystemRandom

from tgcheat.bot.publish import Publisher, wall_clock_ms
from tgcheat.engine.game import RandomSource
from tgcheat.store.games import GameStore
from tgcheat.table import transitions as table
from tgcheat.table.audiences import group_messages

log = logging.getLogger(__name__)

#: How often each process looks for due deadlines.
TICK_S = 1.0


class Timers:
    def __init__(
        self,
        store: GameStore,
        publisher: Publisher,
        clock: Callable[[], int] = wall_clock_ms,
        *,
        rng: RandomSource | None = None,
    ) -> None:
        self.store = store
        self.publisher = publisher
        self.clock = clock
        #: Deals a full lobby's game (the handlers' generator, given by the app; a seeded one
        #: in tests that replay a game).
        self.rng: RandomSource = rng if rng is not None else SystemRandom()

    async def fire_due(self, now: int | None = None) -> int:
        """Act on every deadline that has passed; how many chats were looked at."""
        now = self.clock() if now is None else now
        chats = await self.store.clock.due(now)
        for chat_id in chats:
            try:
                await self.fire(chat_id, now)
            except Exception:
                # One broken game must not stop the clock of all the others.
                log.exception("timer of chat %s failed", chat_id)
        return len(chats)

    async def fire(self, chat_id: int, now: int) -> None:
        before, _ = await self.store.load(chat_id)
        if before is None:
            await self.store.clock.forget(chat_id)
            return
        committed = await self.store.transact(
            chat_id,
            lambda session: table.tick(session, now, rng=self.rng),
            group_messages=group_messages,
        )
        session = committed.session
        if not committed.changed or session is None:
            return
        if session.lobby is not None:
            # Still open: its message now says that any player may start it.
            await self.publisher.refresh_lobby(chat_id)
        elif before.lobby is not None and session.game is None:
            await self.publisher.close_lobby(session, committed.messages, expired=True)
        elif session.game is not None and committed.result:
            # A game played on, or a full lobby dealt: its message becomes the table, as when
            # Start is pressed.
            await self.publisher.publish(
                session,
                session.game,
                committed.result,
                committed.messages,
                table_deferred=committed.table_deferred,
            )

    async def refresh_deferred_tables(self, now: int | None = None) -> None:
        """Table edits that waited for the group's budget: one edit shows the latest state."""
        now = self.clock() if now is None else now
        for chat_id in await self.store.budget.deferred_tables(now):
            if not await self.store.budget.take(chat_id, now):
                continue
            session, messages = await self.store.load(chat_id)
            if session is not None and session.game is not None:
                await self.publisher.refresh_table(session, session.game, messages)

    async def run(self) -> None:
        while True:
            try:
                await self.fire_due()
                await self.refresh_deferred_tables()
            except Exception as error:
                # Typically Redis being away: say so once a tick, without a traceback each time.
                log.warning("the clock could not run (%s); trying again", error)
            await asyncio.sleep(TICK_S)
