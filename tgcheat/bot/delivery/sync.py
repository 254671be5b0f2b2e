"""The one writer of a place: ``Delivery.sync`` brings what Telegram shows toward what the
stored session says should be shown (tgcheat.bot.delivery.desired), by the plan's requests
(tgcheat.bot.delivery.plan), under the place's lease (tgcheat.store.shown).

A sync is idempotent and level-triggered: it reads the session and what Telegram confirmed,
and asks for what differs. Handlers sync after their commit (whose compare-and-set took the
lease: no round trip of its own), the clock syncs the places due, and a re-delivered update
only syncs. What the group's budget, the bot's budget or a flood wait holds back is left: the
place is due when it can go. A process that changes the session while another holds the lease
leaves the sync to that one, which syncs again before it lets go.

One press's cost in Redis: the compare-and-set (which takes the lease and reads what is
shown), at most one request for the bot's budget for all of the sync's Bot API requests, and
the end of the sync (which keeps what was confirmed, spends the group's tokens and lets go).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from telegram.error import Forbidden, NetworkError, TelegramError

from tgcheat.bot import views
from tgcheat.bot.delivery.desired import Drawing, desired, hand_slot
from tgcheat.bot.delivery.lost_lease import LostLease
from tgcheat.bot.delivery.plan import (
    GONE,
    Chat,
    Delete,
    Desired,
    EditTo,
    Request,
    Send,
    Shown,
    ShownSlot,
    Step,
    aged,
    buried,
    confirmed,
    log_of,
    of_this_game,
    plan,
    unsure,
    within_group_budget,
    without_chat,
)
from tgcheat.bot.delivery.shown_codec import decode_shown, encode_shown
from tgcheat.bot.delivery_lag import observe_lag
from tgcheat.bot.sender import ChatFlooded, Edit, Sender, TopicGone, wall_clock_ms
from tgcheat.engine.state import Phase
from tgcheat.i18n import translator
from tgcheat.store.budget import GroupBucket, burst_of
from tgcheat.store.games import Committed, GameStore
from tgcheat.store.send_budget import Priority
from tgcheat.store.shown import Lease, LeaseLost
from tgcheat.table.computers import is_computer
from tgcheat.table.place import Place
from tgcheat.table.session import MessageIds, Session
from tgcheat.table.standing import GameNews
from tgcheat.table.stats import game_record

log = logging.getLogger(__name__)

#: Rounds one sync makes at most while the session keeps changing under it; past them, the
#: lease runs out and the clock syncs the place.
MAX_ROUNDS = 8
#: A request Telegram did not confirm (a network error, a 5xx) is tried again by the clock
#: this long after.
RETRY_MS = 2_000
#: Plans one round makes at most when messages it counted on turn out gone (a person deleted
#: them): each plans the place again from what was confirmed.
REPLANS = 3


@dataclass(slots=True)
class _ChatRun:
    """What one chat's requests came to."""

    done: list[tuple[Request, int | None]] = field(default_factory=list)
    #: Held back until then (a flood wait, a refusal of the budget, a failure): ms, 0: none.
    again_ms: int = 0
    #: Telegram asked the group itself to wait until then.
    flood_until_ms: int = 0
    #: The chat could not be reached (a person who never started the bot, or blocked it).
    unreachable: bool = False
    topic_gone: TopicGone | None = None
    #: A message the plan counted on was not there: the place is planned again.
    replan: bool = False
    #: A flood wait held the chat's requests back.
    flooded: bool = False


@dataclass(slots=True)
class _Round:
    #: What is shown: the round's start, with what Telegram confirmed since.
    shown: Shown
    #: What was shown when the round started.
    started: Shown
    spent: int = 0
    due_ms: int = 0
    flood_until_ms: int = 0
    #: Messages this round posted: deleted should the lease turn out lost (but for the first
    #: ``kept_posts``, which a checkpoint recorded for the next holder).
    posted: list[tuple[Chat, int]] = field(default_factory=list)
    kept_posts: int = 0
    topic_gone: TopicGone | None = None
    #: Private chats found unreachable.
    unreachable: list[int] = field(default_factory=list)
    #: Steps whose group messages were counted in the group's budget (by id).
    charged: set[int] = field(default_factory=set)
    #: Chats whose requests a flood wait held back.
    held: set[Chat] = field(default_factory=set)
    #: A budget (the group's or the bot's) held back some of the round's steps.
    refused: bool = False

    def due_at(self, ms: int) -> None:
        if ms and (self.due_ms == 0 or ms < self.due_ms):
            self.due_ms = ms


class Delivery:
    def __init__(
        self, store: GameStore, sender: Sender, clock: Callable[[], int] = wall_clock_ms
    ) -> None:
        self.store = store
        self.sender = sender
        #: The one clock of delivery: budgets, flood waits and due times are counted in it.
        self.clock = clock
        #: The Mini App's address (tgcheat.webapp), when the bot serves it: the hands then
        #: offer "🃏 Open cards".
        self.app_url: str | None = None
        #: The one compensation of a round whose lease ran out.
        self.lost_lease = LostLease(store.shown, sender, lambda: self.clock())

    async def sync(
        self,
        place: Place,
        committed: Committed[object] | None = None,
        *,
        answering: int | None = None,
        reach: int | None = None,
        only_hand: bool = False,
    ) -> frozenset[Chat]:
        """Bring ``place``'s chats toward what its stored session says; the chats a flood
        wait held requests back in (they are due when it is over). ``committed``: the
        change just written (its compare-and-set took the lease, or left the sync to the
        process that holds it); ``answering``: the person whose own tap this answers (their
        hand's requests are never refused by the budget); ``reach``: a person who asked for
        their hand (it comes back as a new message, even when it could not be sent before).
        TopicGone when the place's topic is closed or deleted."""
        lease = committed.lease if committed is not None else None
        if lease is None:
            if committed is not None and committed.changed:
                return frozenset()
            lease = await self.store.shown.begin(place, self.clock())
            if lease is None:
                return frozenset()
        gone: TopicGone | None = None
        held: set[Chat] = set()
        hand_of = answering if only_hand else None
        for _ in range(MAX_ROUNDS):
            wanted, done = await self._prepare(place, lease, reach, hand_of)
            reach = hand_of = None
            try:
                async with self._kept(place, lease, done):
                    await self._show(place, lease, wanted, done, answering)
            except BaseException:
                # What was confirmed so far is kept, and the place let go, due again soon.
                log.info("chat %s: a sync stopped on the way, let go", place)
                await self._let_go(place, lease, done)
                raise
            gone = gone or done.topic_gone
            held |= done.held
            try:
                following = await self._end(place, lease, wanted, done)
            except LeaseLost:
                log.info("chat %s: the lease ran out under this sync, taken back", place)
                await self.lost_lease.take_back(place, done.posted[done.kept_posts :])
                return frozenset(held)
            if following is None:
                break
            lease = following
        if gone is not None:
            raise gone
        return frozenset(held)

    async def _end(self, place: Place, lease: Lease, wanted: Desired, done: _Round) -> Lease | None:
        """The round's end kept in Redis, tried again while Redis restarts (for a lease's time
        at most): given up, the place would wait for its lease to run out."""
        delay_s, give_up = 0.05, time.monotonic() + self.store.shown.lease_ms / 1000
        while True:
            try:
                return await self.store.shown.end(
                    place,
                    lease,
                    encode_shown(done.shown),
                    spent=done.spent,
                    flood_until_ms=done.flood_until_ms,
                    due_ms=done.due_ms,
                    now_ms=self.clock(),
                    partial=wanted.partial,
                )
            except (RedisConnectionError, RedisTimeoutError, TimeoutError):
                if time.monotonic() > give_up:
                    raise
                await asyncio.sleep(delay_s)
                delay_s = min(delay_s * 2, 1.0)

    async def _prepare(
        self, place: Place, lease: Lease, reach: int | None, hand_of: int | None
    ) -> tuple[Desired, _Round]:
        """What the place should show, and what is shown as this round starts from it."""
        session = lease.session
        shown = decode_shown(lease.shown)
        if session is not None:
            # Counted first: the result shows what counting it brought.
            shown = await self._counted(session, shown)
        game = session.game_id if session is not None else ""
        news = GameNews.decode(shown.news) if shown.counted == game else None
        if lease.recheck > shown.recheck_seen:
            # Drawn with the lines a late edit may have overwritten.
            shown = dataclasses.replace(unsure(shown), recheck_seen=lease.recheck)
        # A pick in the chat shows that person's hand there: they are looking at the chat.
        watching = _watching(lease, self.clock()) if hand_of is None else {}
        wanted = self.desired(
            session,
            lines_after=shown.drawn_after(place, game),
            hand_of=hand_of,
            watching=watching,
            news=news,
        )
        if not lease.shown and lease.legacy:
            shown = taken_over(lease.legacy, wanted, session)
        if lease.buried > shown.buried_seen:
            shown = dataclasses.replace(buried(shown, place), buried_seen=lease.buried)
        shown = of_this_game(shown, wanted.log)
        if session is not None and session.without_group:
            shown = without_chat(shown, place)
        if reach is not None:
            shown = _reached(shown, reach)
        done = _Round(shown, started=shown)
        # Looked at again when a Mini App's report of a visible page runs out.
        done.due_at(wanted.again_ms)
        return wanted, done

    async def _show(
        self, place: Place, lease: Lease, wanted: Desired, done: _Round, answering: int | None
    ) -> None:
        """The plan's requests, within the budgets; what Telegram confirms is folded into
        ``done`` as it comes."""
        now = self.clock()
        held_since = done.started.held_since_ms
        for _ in range(REPLANS):
            steps = plan(wanted, done.shown)
            if held_since:
                steps = aged(steps, now - held_since)
            if answering is not None:
                steps = [
                    dataclasses.replace(step, priority=Priority.ALWAYS)
                    if step.chat == answering
                    else step
                    for step in steps
                ]
            steps = self._within_group_budget(place, steps, lease.bucket, now, done)
            steps = await self._within_bot_budget(steps, now, done)
            observe_lag(lease.session, steps, now)
            if not steps:
                break
            by_chat: dict[Chat, list[Step]] = {}
            for step in steps:
                by_chat.setdefault(step.chat, []).append(step)
            runs = {chat: _ChatRun() for chat in by_chat}
            runs_of_chats = [
                self._run(chat, chat_steps, runs[chat], lease, done)
                for chat, chat_steps in by_chat.items()
            ]
            with self.sender.paid():
                if len(runs_of_chats) == 1:
                    # One chat, most often: no task of its own to make.
                    await runs_of_chats[0]
                else:
                    await asyncio.gather(*runs_of_chats)
            for chat, run in runs.items():
                done.due_at(run.again_ms)
                done.flood_until_ms = max(done.flood_until_ms, run.flood_until_ms)
                done.topic_gone = done.topic_gone or run.topic_gone
                if run.flooded:
                    done.held.add(chat)
                if run.unreachable and isinstance(chat, int) and chat != place.chat_id:
                    done.unreachable.append(chat)
            if not any(run.replan for run in runs.values()):
                break
        if done.refused:
            held_since = held_since or now
        elif not wanted.partial:
            held_since = 0
        done.shown = dataclasses.replace(done.shown, held_since_ms=held_since)
        await self._after(place, lease.session, done)

    @contextlib.asynccontextmanager
    async def _kept(self, place: Place, lease: Lease, done: _Round) -> AsyncIterator[None]:
        """While the round's requests take their time, what it has shown so far is kept (a
        checkpoint a third of a lease apart): a process that dies, or whose lease runs out
        under a slow Telegram, leaves every request it made known to the next sync. Most
        rounds end before the first checkpoint: its task is made only once one is due."""
        period_s = self.store.shown.lease_ms / 3000
        keeping: list[asyncio.Task[None]] = []

        async def keep() -> None:
            while True:
                saved = len(done.posted)
                if not await self.store.shown.checkpoint(place, lease, encode_shown(done.shown)):
                    return
                done.kept_posts = saved
                await asyncio.sleep(period_s)

        def start() -> None:
            keeping.append(asyncio.create_task(keep(), name=f"checkpoint {place.key}"))

        first = asyncio.get_running_loop().call_later(period_s, start)
        try:
            yield
        finally:
            first.cancel()
            for task in keeping:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    async def _after(self, place: Place, session: Session | None, done: _Round) -> None:
        """What a round found out besides its requests' answers: players the bot cannot
        reach (the group is told once), players dealt their first hand."""
        if done.unreachable and session is not None:
            done.shown = dataclasses.replace(
                done.shown, unreachable=done.shown.unreachable | frozenset(done.unreachable)
            )
            await self._tell_unreachable(place, session, done.unreachable)
        await _remember_dealt(self.store, place, done.started, done.shown)

    def desired(
        self,
        session: Session | None,
        *,
        lines_after: int = 0,
        hand_of: int | None = None,
        watching: Mapping[int, int] | None = None,
        news: GameNews | None = None,
    ) -> Desired:
        """What ``session`` should be shown by (nothing, without a session); lines up to
        ``lines_after`` are posted already; ``hand_of``: only that person's hand;
        ``watching``: whose Mini App shows the game now (their hands are held); ``news``:
        what counting its finished game brought."""
        if session is None:
            return Desired()
        drawing = Drawing(self.sender.bot.username, self.app_url, news)
        return desired(session, drawing, lines_after, hand_of, watching)

    def _within_group_budget(
        self, place: Place, steps: Sequence[Step], bucket: GroupBucket, now: int, done: _Round
    ) -> list[Step]:
        """The steps the group's budget allows now (``plan.within_group_budget``); the place
        is due when the others may go."""
        if place.chat_id > 0 or place.quick or not self.store.budget.limited:
            return list(steps)
        per_minute = self.store.budget.per_minute
        allowance = within_group_budget(
            steps,
            tokens=bucket.available(now, per_minute),
            debt_floor=-burst_of(per_minute),
            flood_until_ms=bucket.until_ms,
            now_ms=now,
            refill_ms=lambda missing: GroupBucket.refill_ms(missing, per_minute),
        )
        done.spent += allowance.spent
        done.charged |= {id(step) for step in allowance.charged}
        done.refused |= len(allowance.steps) < len(steps)
        done.due_at(allowance.due_ms)
        return list(allowance.steps)

    async def _within_bot_budget(self, steps: list[Step], now: int, done: _Round) -> list[Step]:
        """The steps the bot's budget across all chats allows now, asked in one round trip."""
        budget = self.sender.budget
        if budget is None or not steps:
            return steps
        granted, wait_ms = await budget.take_many(now, [(s.priority, s.cost) for s in steps])
        if wait_ms:
            done.due_at(now + wait_ms)
        done.refused |= not all(granted)
        # What was refused in the group gives its group tokens back.
        for step, taken in zip(steps, granted, strict=True):
            if not taken and id(step) in done.charged:
                done.spent -= step.group_cost
        return [step for step, taken in zip(steps, granted, strict=True) if taken]

    async def _run(
        self, chat: Chat, steps: Sequence[Step], run: _ChatRun, lease: Lease, done: _Round
    ) -> None:
        """One chat's steps, in order, each answer folded into ``done`` as it comes; the
        first failure stops them, as does a message to send once ``lease`` is nearly out
        (what is left is planned again at the next sync)."""
        for step in steps:
            for request in step.requests:
                if isinstance(request, Send) and lease.left_ms(self.clock()) < self._margin_ms():
                    # Sent now, it might land once the lease has run out and another process
                    # has sent its own: this one's would be deleted, but heard all the same.
                    run.again_ms = self.clock()
                    return
                try:
                    answer = await _made(self.sender, request)
                except ChatFlooded as flooded:
                    run.again_ms = flooded.until_ms
                    run.flooded = True
                    if flooded.chat_waits and flooded.in_group:
                        run.flood_until_ms = flooded.until_ms
                    return
                except TopicGone as gone:
                    run.topic_gone = gone
                    return
                except Forbidden:
                    run.unreachable = True
                    return
                except (NetworkError, TelegramError) as error:
                    log.info(
                        "chat %s: a request not confirmed (%s), tried again later", chat, error
                    )
                    run.again_ms = self.clock() + RETRY_MS
                    return
                except Exception:
                    log.exception("chat %s: a request failed, tried again later", chat)
                    run.again_ms = self.clock() + RETRY_MS
                    return
                if answer is _UNREACHABLE:
                    run.unreachable = True
                    return
                done.shown = confirmed(done.shown, request, answer)
                if isinstance(request, Send) and answer is not None:
                    done.posted.append((chat, answer))
                if answer == GONE:
                    # The rest of the step was planned on that message: planned again.
                    run.replan = True
                    return

    def _margin_ms(self) -> float:
        """What a sync must have left of its lease to send a message: the time a request
        may take (the HTTP client's read timeout), but never over a third of a lease."""
        timeout_s = self.sender.bot.request.read_timeout
        third = self.store.shown.lease_ms / 3
        return third if timeout_s is None else min(third, timeout_s * 1000)

    async def _counted(self, session: Session, shown: Shown) -> Shown:
        """A finished game's statistics are counted before its result is shown, once (counting
        is idempotent too: tgcheat.store.stats)."""
        game = session.game
        if game is None or game.phase is not Phase.FINISHED or shown.counted == session.game_id:
            return shown
        record = game_record(session)
        news = await self.store.stats.count(record) if record is not None else None
        encoded = news.encode() if news is not None else ""
        return dataclasses.replace(shown, counted=session.game_id, news=encoded)

    async def _tell_unreachable(self, place: Place, session: Session, user_ids: list[int]) -> None:
        """The group hears once a game which players the bot cannot send their cards to; the
        game goes on (the clock plays for them)."""
        state = session.game
        if state is None or session.private_table:
            # No group to tell: the clock plays for them.
            return
        view = views.unreachable_view(translator(session.language), state, user_ids)
        try:
            with self.sender.paid():
                await self.sender.send(place, view)
        except (ChatFlooded, TelegramError) as error:
            log.info("chat %s: players unreachable, not told (%s)", place, error)

    async def _let_go(self, place: Place, lease: Lease, done: _Round) -> None:
        """The lease let go after a round failed on the way (or was cancelled), with what it
        had shown: the place is due again soon."""
        shown = encode_shown(done.shown)
        try:
            held: Lease | None = lease
            for _ in range(MAX_ROUNDS):
                if held is None:
                    break
                held = await self.store.shown.end(
                    place,
                    held,
                    shown,
                    spent=done.spent,
                    flood_until_ms=done.flood_until_ms,
                    due_ms=self.clock() + RETRY_MS,
                    now_ms=self.clock(),
                )
        except Exception as error:
            log.warning("chat %s: the lease was not let go (%s); it runs out", place, error)

    async def shown_ids(self, place: Place) -> MessageIds:
        """The ids of the messages that show the place now (the table, each hand)."""
        return message_ids(decode_shown(await self.store.shown.read(place)))


def _watching(lease: Lease, now_ms: int) -> dict[int, int]:
    """The players whose Mini App shows the place's live game now (their reports, read with
    the lease, not run out), with when each report runs out."""
    session = lease.session
    state = session.live_game if session is not None else None
    if state is None or all(is_computer(p.user_id) for p in state.players):
        return {}
    return {user: until for user, until in lease.watching.items() if until > now_ms}


#: A request's answer when its chat cannot be written to.
_UNREACHABLE = -2


async def _made(sender: Sender, request: Request) -> int | None:
    """One request: a sent message's id, None for an edit or a deletion done, GONE for a
    message that is not there; ``_UNREACHABLE`` for a chat the bot cannot write to."""
    if isinstance(request, Send):
        sent = await sender.send(request.chat, request.view, silent=request.silent)
        return _UNREACHABLE if sent is None else sent
    if isinstance(request, EditTo):
        outcome = await sender.edit(request.chat, request.message_id, request.view)
        return {Edit.UNREACHABLE: _UNREACHABLE, Edit.GONE: GONE}.get(outcome)
    assert isinstance(request, Delete)
    if len(request.message_ids) == 1:
        await sender.delete(request.chat, request.message_ids[0])
    else:
        await sender.delete_many(request.chat, request.message_ids)
    return None


async def _remember_dealt(store: GameStore, place: Place, before: Shown, after: Shown) -> None:
    """The players whose first hand of this game was sent: the Mini App opened from the
    menu button finds their game (a hint only: nothing fails without it)."""
    dealt = [
        slot.chat
        for name, slot in after.slots.items()
        if name not in before.slots and isinstance(slot.chat, int) and name == hand_slot(slot.chat)
    ]
    if not dealt:
        return
    try:
        await store.played_places.record(dealt, place)
    except Exception as error:
        log.warning("where %s play was not remembered: %s", dealt, error)


def _reached(shown: Shown, user_id: int) -> Shown:
    """``shown`` once a person asked for their hand: it is posted anew (its old message goes),
    and tried even if it could not be sent before."""
    name = hand_slot(user_id)
    slots = dict(shown.slots)
    current = slots.get(name)
    if current is not None:
        slots[name] = dataclasses.replace(current, epoch=f"{log_of(current.epoch)}:asked")
    return dataclasses.replace(shown, slots=slots, unreachable=shown.unreachable - {user_id})


def taken_over(legacy: Mapping[str, int], wanted: Desired, session: Session | None) -> Shown:
    """What an earlier version showed of a live game, as a record: its table and hands at the
    epochs the session has now (edited, not posted anew: their content is not known, so the
    first sync edits each), and every line of the game's log posted already (the earlier
    version posted them itself)."""
    slots = {}
    for slot in wanted.slots:
        field = "table" if slot.name == "table" else slot.name
        message_id = legacy.get(field)
        if message_id is not None:
            slots[slot.name] = ShownSlot(slot.chat, message_id, slot.epoch, digest="")
    last_line: dict[Chat, tuple[str, int]] = {}
    if session is not None and session.told.game_id == wanted.log:
        last_line[session.place] = (wanted.log, session.told.count)
    return Shown(slots, last_line)


def message_ids(shown: Shown) -> MessageIds:
    """The table's and the hands' message ids of a shown record."""
    table = shown.slots.get("table")
    hands = {
        slot.chat: slot.message_id
        for name, slot in shown.slots.items()
        if isinstance(slot.chat, int) and name == hand_slot(slot.chat)
    }
    return MessageIds(
        table=table.message_id if table is not None else None,
        hands=hands,
        buried=table.buried if table is not None else False,
    )
