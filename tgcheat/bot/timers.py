"""The clock: turn and final-play timeouts, the Cheat! grace period, lobbies (a full one dealt
after its countdown, any player let start one that waited for its opener, one nobody touched
closed), the quick games' tables due (``tgcheat.table.quick``), and the places due to be synced
(what the group's budget, the bot's budget or Telegram's flood wait held back, or a sync whose
process died: ``tgcheat.store.shown``).

Deadlines live in Redis (in each session, and in a sorted set that any process can scan), so
every running process fires them and a restarted one fires those that fell due while it was
down. Firing is a compare-and-set like any other change (``tgcheat.table.transitions.tick``)
and only acts when the stored deadline has passed, so two processes firing the same deadline,
or one firing it twice, act once.

Each due chat is handled in a task of its own, a few at a time (``CHATS_AT_ONCE``): a chat
whose requests are slow (Telegram takes its time there) holds up no other. The running clock
does not wait for such a chat at its next tick: it leaves it to its task and goes on with the
others.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable, Iterable
from random import SystemRandom

from tgcheat.bot.delivery.desired import hand_epoch, hand_slot
from tgcheat.bot.delivery.shown_codec import decode_shown
from tgcheat.bot.handlers.quick import QuickHandlers
from tgcheat.bot.handlers.shell import Shell
from tgcheat.bot.sender import ChatFlooded, TopicGone, wall_clock_ms
from tgcheat.store.games import GameStore
from tgcheat.table import transitions as table
from tgcheat.table.computers import TableRandom, is_computer
from tgcheat.table.place import Place, Where
from tgcheat.table.session import Session

log = logging.getLogger(__name__)

#: How often each process looks for due deadlines.
TICK_S = 1.0
#: Chats the clock handles at the same time, at most (each waits for Redis and Telegram).
CHATS_AT_ONCE = 16


class Timers:
    def __init__(
        self,
        store: GameStore,
        shell: Shell,
        clock: Callable[[], int] = wall_clock_ms,
        *,
        rng: TableRandom | None = None,
    ) -> None:
        self.store = store
        self.shell = shell
        self.clock = clock
        #: Deals a full lobby's game (the handlers' generator, given by the app; a seeded one
        #: in tests that replay a game).
        self.rng: TableRandom = rng if rng is not None else SystemRandom()
        self._slots = asyncio.Semaphore(CHATS_AT_ONCE)
        self._quick = QuickHandlers(shell)
        #: The chats being handled, each by its task.
        self._busy: dict[Place, asyncio.Task[None]] = {}

    async def fire_due(self, now: int | None = None) -> int:
        """Act on every deadline that has passed, each chat in a task of its own; returns once
        they are done, with how many chats were looked at."""
        now = self.clock() if now is None else now
        chats = await self.store.clock.due(now)
        await self._finish(self._start_each(chats, lambda place: self.fire(place, now)))
        return len(chats)

    async def fire(self, where: Where, now: int) -> None:
        place = Place.of(where)
        before, _ = await self.store.load(place)
        if before is None:
            await self.store.clock.forget(place)
            return
        # Whose hand is not shown yet matters only to a game's deadline that is due (not to a
        # lobby's, nor to a computer player's move): read only then.
        game = before.live_game
        unseen: frozenset[int] = frozenset()
        if game is not None and 0 < before.deadline_ms <= now:
            unseen, syncing = await self._hands_not_shown(place, before)
            if syncing and table.awaits_any(game, unseen):
                # The sync under way may have sent that hand already: it is recorded when the
                # sync ends, and the turn judged at a tick after that (a turn started again
                # for a player who was shown it would be a write for nothing).
                return
        committed = await self.store.transact(
            place,
            lambda session: table.tick(session, now, rng=self.rng, unseen=unseen),
            lease=True,
        )
        if committed.changed:
            await self.shell.show(place, committed)

    async def unseen_hands(self, place: Place, session: Session | None = None) -> frozenset[int]:
        """The players whose hand message is not yet the one of their turn (a budget or a
        flood wait held it back): their turn does not time out before they have seen it.
        ``session``: the place's, when it was read already."""
        if session is None:
            session, _ = await self.store.load(place)
        unseen, _ = await self._hands_not_shown(place, session)
        return unseen

    async def _hands_not_shown(
        self, place: Place, session: Session | None
    ) -> tuple[frozenset[int], bool]:
        """``unseen_hands`` by the stored record, and whether a sync holds the place (then
        the record may lack a hand it has sent)."""
        state = session.live_game if session is not None else None
        if session is None or state is None:
            return frozenset(), False
        record, syncing = await self.store.shown.read_and_held(place)
        shown = decode_shown(record)
        unseen = set()
        for player in state.players:
            user_id = player.user_id
            if is_computer(user_id) or user_id in shown.unreachable:
                continue
            current = shown.slots.get(hand_slot(user_id))
            if current is None or current.epoch != hand_epoch(session, user_id):
                unseen.add(user_id)
        if unseen:
            # A player whose Mini App shows the game sees their turn there.
            unseen -= set(await self.store.watching.of(place, self.clock(), unseen))
        return frozenset(unseen), syncing

    async def sync_due(self, now: int | None = None) -> None:
        """Sync every place due (each chat in a task of its own; returns once they are
        done)."""
        now = self.clock() if now is None else now
        places = await self.store.shown.due(now)
        await self._finish(self._start_each(places, self.sync))

    async def sync(self, place: Place) -> None:
        await self.shell.show(place)

    async def tick(self) -> None:
        """One look at the clock: due deadlines, then the places due to be synced. A chat
        still busy from an earlier tick is left to its task; a chat slower than a tick is not
        waited for."""
        now = self.clock()
        fired = self._start_each(
            await self.store.clock.due(now), lambda place: self.fire(place, now)
        )
        if fired:
            await asyncio.wait(fired, timeout=TICK_S)
        self._start_each(await self.store.shown.due(now), self.sync)
        await self.quick_tables()
        budget = self.shell.sender.budget
        if budget is not None:
            await budget.count_answers(now)

    async def quick_tables(self) -> int:
        """Deal the quick games' tables due (``tgcheat.table.quick``): a table full, or its
        first person's wait over. Any process may: the queue's script makes each table once.
        How many were dealt."""
        return await self._quick.match_due()

    async def run(self) -> None:
        try:
            while True:
                try:
                    await self.tick()
                except Exception as error:
                    # Typically Redis being away: say so once a tick, without a traceback each
                    # time.
                    log.warning("the clock could not run (%s); trying again", error)
                await asyncio.sleep(TICK_S)
        finally:
            busy = list(self._busy.values())
            for task in busy:
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.gather(*busy, return_exceptions=True)

    def _start_each(
        self, places: Iterable[Place], job: Callable[[Place], Awaitable[None]]
    ) -> list[asyncio.Task[None]]:
        """``job`` for each chat not busy already, each in a task of its own."""
        started = []
        for place in dict.fromkeys(places):
            if place in self._busy:
                continue
            task = asyncio.create_task(self._guarded(place, job))
            self._busy[place] = task
            task.add_done_callback(functools.partial(self._done, place))
            started.append(task)
        return started

    def _done(self, place: Place, task: asyncio.Task[None]) -> None:
        if self._busy.get(place) is task:
            del self._busy[place]

    async def _guarded(self, place: Place, job: Callable[[Place], Awaitable[None]]) -> None:
        async with self._slots:
            try:
                await job(place)
            except ChatFlooded as flooded:
                await self.shell.held_back(flooded)
            except TopicGone as gone:
                await self.shell.end_topic(gone.place)
            except Exception:
                # One broken game must not stop the clock of all the others.
                log.exception("the clock's turn at chat %s failed", place)

    @staticmethod
    async def _finish(tasks: list[asyncio.Task[None]]) -> None:
        if tasks:
            await asyncio.wait(tasks)
