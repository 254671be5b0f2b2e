"""The clock: turn and final-play timeouts, the Cheat! grace period, lobbies that expire.

Deadlines live in Redis (in each session, and in a sorted set that any process can scan), so
every running process fires them and a restarted one fires those that fell due while it was
down. Firing is a compare-and-set like any other change and only acts when the stored deadline
has passed, so two processes firing the same deadline, or one firing it twice, act once.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable

from tgcheat.bot.deadlines import TICK_S, clock_action, game_deadline, now_ms
from tgcheat.bot.progress import advance
from tgcheat.bot.publish import Publisher, group_messages
from tgcheat.engine.events import Event
from tgcheat.engine.game import ActionRefused, apply
from tgcheat.engine.state import Phase
from tgcheat.store.games import GameStore
from tgcheat.table.session import Session

log = logging.getLogger(__name__)


class Timers:
    def __init__(
        self, store: GameStore, publisher: Publisher, clock: Callable[[], int] = now_ms
    ) -> None:
        self.store = store
        self.publisher = publisher
        self.clock = clock

    async def fire_due(self, now: int | None = None) -> int:
        """Act on every deadline that has passed; how many chats were looked at."""
        now = self.clock() if now is None else now
        chats = await self.store.due(now)
        for chat_id in chats:
            try:
                await self.fire(chat_id, now)
            except Exception:
                # One broken game must not stop the clock of all the others.
                log.exception("timer of chat %s failed", chat_id)
        return len(chats)

    async def fire(self, chat_id: int, now: int) -> None:
        def tick(session: Session | None) -> tuple[Session | None, tuple[Event, ...]]:
            if session is None or session.deadline_ms == 0 or session.deadline_ms > now:
                return session, ()
            if session.lobby is not None:
                # Nobody started the game in time: the lobby closes.
                return dataclasses.replace(session, lobby=None, deadline_ms=0), ()
            game = session.game
            if game is None or game.phase is Phase.FINISHED:
                return dataclasses.replace(session, deadline_ms=0), ()
            try:
                state, events = apply(game, clock_action(game, now))
            except ActionRefused:
                # Nothing to do at this moment after all: wait for a whole turn again.
                return dataclasses.replace(session, deadline_ms=game_deadline(0, game, (), now)), ()
            return advance(session, state, events, now), tuple(events)

        before, _ = await self.store.load(chat_id)
        if before is None:
            await self.store.forget_deadline(chat_id)
            return
        committed = await self.store.transact(chat_id, tick, group_messages=group_messages)
        session = committed.session
        if not committed.changed or session is None:
            return
        if before.lobby is not None and session.lobby is None:
            await self.publisher.close_lobby(session, committed.messages, expired=True)
        elif session.game is not None and committed.result:
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
        for chat_id in await self.store.deferred_tables(now):
            if not await self.store.take_group_budget(chat_id, now):
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
