"""After a change is committed: show it. The table and hands are re-rendered from the stored
state, so whatever the order of deliveries, a message shows a state that really was.

When Telegram asks the bot to wait before a chat's next message (a 429, ``ChatFlooded``), the
update is not held up: what was not shown (the table, the announcements, hands) is kept in the
group's budget (``GroupBudget.hold``) with the wait, and the clock shows it once the wait is
over (``show_held``): the latest table, after the announcements it missed."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from telegram.error import NetworkError, TelegramError

from tgcheat.bot import views
from tgcheat.bot.sender import ChatFlooded, Edit, Sender, TopicGone, wall_clock_ms
from tgcheat.engine.events import ChallengeResolved, Event, HandChanged
from tgcheat.engine.lobby import Lobby
from tgcheat.engine.state import GameState, Phase
from tgcheat.i18n import Translator, translator
from tgcheat.store.budget import Held
from tgcheat.store.games import GameStore
from tgcheat.store.messages import (
    FORMER_HAND,
    TABLE_ROLE,
    WITH_BUTTONS,
    WITHOUT_BUTTONS,
    Added,
    HandMessage,
    hand_role,
)
from tgcheat.store.outbox import MustShow
from tgcheat.store.send_budget import Priority
from tgcheat.table.audiences import Announcement, Audience, audience
from tgcheat.table.computers import is_computer
from tgcheat.table.place import Place
from tgcheat.table.session import MessageIds, Session
from tgcheat.table.stats import game_record
from tgcheat.table.transitions import end_without_group

__all__ = ["UNREACHABLE", "Publisher", "must_show", "wall_clock_ms"]

log = logging.getLogger(__name__)

T = TypeVar("T")

#: A hand job's result when the player's private chat cannot be reached.
UNREACHABLE = -1
#: No ids to keep with the hands'.
_NOTHING_TO_KEEP = MessageIds()
#: A hand job's result when the player's private chat is in a flood wait: the clock shows it.
HELD = -2
#: A hand job's result when there is nothing to send (a computer player's hand).
NOTHING_SENT = -3
#: How long a publisher keeps trying to tell Redis that what a change owed was shown (Redis
#: restarting): until it does, the clock would show it a second time once the lease is over.
SETTLE_TRIES_S = 10.0


def must_show(session: Session, events: Sequence[Event]) -> MustShow | None:
    """What players must see of a change of a game (recorded with it: tgcheat.store.outbox):
    the reveals and passes and the table posted anew below them (at the end: the result), and
    the hands that come back as a notification when one player was told something (a timeout,
    a removal) or the table moved. None for a change that only edits messages."""
    state = session.game
    if state is None or not events:
        return None
    shown = audience(state, events, session.notice)
    if not shown.table_moves and session.notice is None:
        return None
    tr = translator(session.language)
    return MustShow(
        lines=tuple(_announcement(tr, state, event) for event in shown.announcements),
        table=shown.table_moves,
        hands=tuple(
            user_id
            for seat in sorted(shown.notified)
            if not is_computer(user_id := state.players[seat].user_id)
        ),
    )


def _announcement(tr: Translator, state: GameState, event: Announcement) -> str:
    if isinstance(event, ChallengeResolved):
        return views.reveal_view(tr, state, event).text
    return views.passed_view(tr, state, event)


@dataclass(slots=True)
class _Showing:
    """One publication of a stored state: the version it draws, what it has shown, and what
    of what the change owes the players (``MustShow``) it has not shown yet."""

    version: int
    #: The change recorded what it owes (settled at the end).
    owed: bool = False
    #: Owed lines not shown yet, in order.
    lines: list[str] = field(default_factory=list)
    #: The table is owed a new message below the lines, not posted yet.
    table: bool = False
    #: Owed hands not shown yet.
    hands: set[int] = field(default_factory=set)
    #: The table message now shows ``version``.
    table_shown: bool = False
    #: Which message that is (an edit may land after the table moved on).
    table_message: int | None = None
    #: The table shown is the game's result: never posted twice.
    final: bool = False
    #: Its entry is settled whole already (nothing more to tell Redis).
    settled: bool = False

    def line_shown(self, line: str) -> None:
        if line in self.lines:
            self.lines.remove(line)

    def rest(self) -> MustShow:
        return MustShow(tuple(self.lines), self.table, tuple(sorted(self.hands)))

    def held(self, lines: Sequence[str]) -> Sequence[str]:
        """Lines a flood wait holds for the clock: none that are owed (the change's entry
        keeps those)."""
        return () if self.owed else lines


class Publisher:
    def __init__(
        self, store: GameStore, sender: Sender, clock: Callable[[], int] = wall_clock_ms
    ) -> None:
        #: How often a lease on what a change owes is renewed while it is shown (seconds;
        #: 0: a third of the lease).
        self.lease_renewal_s = 0.0
        self.store = store
        self.sender = sender
        #: The time (Unix ms) a view says "seconds left" from.
        self.clock = clock
        #: The Mini App's address (tgcheat.webapp), when the bot serves it: the hands then
        #: offer "🃏 Open cards".
        self.app_url: str | None = None

    @property
    def bot_username(self) -> str:
        return self.sender.bot.username

    # --- the lobby ----------------------------------------------------------------------------

    async def post_lobby(self, session: Session, messages: MessageIds) -> None:
        assert session.lobby is not None
        view = views.lobby_view(
            translator(session.language), session, session.lobby, self.bot_username
        )
        if messages.table is not None:
            # The previous game's table keeps its final text; only the new one has buttons.
            await self.store.messages.clear(session.place)
        try:
            message_id = await self.sender.send(session.place, view, priority=Priority.MUST)
        except ChatFlooded as flooded:
            # The clock posts it (the lobby has no message yet).
            await self._hold_group(session.place, flooded, table=True)
            return
        if message_id is not None:
            await self.store.messages.add(session.place, MessageIds(table=message_id))
        await self._ping_signed_up(session, session.lobby)

    async def _ping_signed_up(self, session: Session, lobby: Lobby) -> None:
        """Those who asked (/notify) hear in private that the group's next game is open, with
        its Join link: once each, then they are signed off."""
        for user_id in await self.store.pings.take(session.chat_id):
            if lobby.has(user_id) or user_id == session.creator:
                continue
            language = await self.store.settings.user_language(user_id) or session.language
            view = views.ping_view(translator(language), session, self.bot_username)
            try:
                await self.sender.send(user_id, view)
            except ChatFlooded:
                log.info("private chat %s in a flood wait: a next-game ping dropped", user_id)

    async def refresh_lobby(self, place: Place) -> None:
        session, messages, version = await self.store.read(place)
        if session is None or session.lobby is None:
            return
        view = views.lobby_view(
            translator(session.language), session, session.lobby, self.bot_username
        )
        showing = _Showing(version)
        await self._show_table(session, messages, view, showing, Priority.LATER)
        await self._record(place, showing)

    async def close_lobby(
        self, session: Session, messages: MessageIds, *, expired: bool = False
    ) -> None:
        message_id = messages.table
        if message_id is not None:
            view = views.lobby_closed_view(translator(session.language), expired=expired)
            try:
                await self.sender.edit(session.place, message_id, view, priority=Priority.MUST)
            except ChatFlooded as flooded:
                # Nothing is left for the clock to show; the old lobby's buttons are refused.
                await self._hold_group(session.place, flooded)

    async def _show_table(
        self,
        session: Session,
        messages: MessageIds,
        view: views.View,
        showing: _Showing,
        priority: Priority,
    ) -> None:
        """The table edited in place (an edit of ``priority`` in the bot's budget); posted anew
        at the bottom when another bot message buried it (the old one goes, so there is still
        one table)."""
        old = messages.table
        if messages.buried:
            await self._post_table(session.place, old, view, showing=showing)
            return
        place = session.place
        try:
            if old is not None:
                outcome = await self.sender.edit(place, old, view, priority=priority)
                if outcome is Edit.UNREACHABLE:
                    return
                if outcome is Edit.DONE:
                    showing.table_shown, showing.table_message = True, old
                    return
                if not await self._still_latest(place, showing.version, old):
                    # The table was moved on by a newer state's publisher (the message gone
                    # with it): posting this older one would be a second table.
                    return
            new = await self.sender.send(place, view, silent=True, priority=Priority.MUST)
        except ChatFlooded as flooded:
            await self._hold_group(place, flooded, table=True)
            return
        except TelegramError:
            await self._refresh_later(place)
            raise
        showing.table_shown = new is not None
        showing.table_message = new
        if new is not None:
            # Kept through a Redis restart: a table posted and not kept would keep its buttons.
            added = await _through_a_redis_restart(
                lambda: self.store.messages.add(place, MessageIds(table=new), replacing=old)
            )
            await self._delete_displaced(place, added, new)

    async def _delete_displaced(self, place: Place, added: Added, new: int) -> None:
        """Another process posted a table anew meanwhile, in place of the same one: one table
        stays, the one recorded last (``new``, this one's, when a write was tried again)."""
        if added.displaced is not None and added.displaced != new:
            log.info("chat %s: table %s posted alongside, deleted", place, added.displaced)
            await self._delete(place, place.chat_id, added.displaced)

    async def _still_latest(self, place: Place, version: int, table: int) -> bool:
        """Whether ``version`` is still the stored one and ``table`` its table message: a
        table that is gone is posted anew only then."""
        loaded = await self.store.read(place)
        return loaded.version <= version and loaded.messages.table == table

    async def _post_table(
        self,
        place: Place,
        old: int | None,
        view: views.View,
        *,
        history: str | None = None,
        showing: _Showing,
    ) -> None:
        """A new table message at the bottom of the group (a notification). The old one keeps
        ``history`` (a short line of what happened), or is deleted. In a flood wait, or over
        the bot's budget, what is not shown waits for the clock (the budget takes the whole
        sequence's tokens at its first request: an old table never keeps its buttons because
        the budget refused its edit)."""
        with self.sender.together(_table_post_cost(old, history)):
            try:
                if old is None and history is not None:
                    await self.sender.send(
                        place, views.View(history), silent=True, priority=Priority.MUST
                    )
                    showing.line_shown(history)
                    history = None
                new = await self.sender.send(place, view, priority=Priority.MUST)
            except ChatFlooded as flooded:
                held = showing.held(_some(history))
                await self._hold_group(place, flooded, table=True, lines=held, bury=True)
                return
            except TelegramError:
                if not showing.owed:
                    await self._refresh_later(place)
                raise
            if new is None:
                return
            showing.table = False
            showing.table_shown = True
            showing.table_message = new
            line = (old, history) if old is not None and history is not None else None
            # Kept through a Redis restart: a table posted and not kept would keep its buttons.
            added = await _through_a_redis_restart(
                lambda: self.store.messages.add(
                    place,
                    MessageIds(table=new),
                    history=line,
                    former=old if line is None else None,
                    replacing=old,
                    table_version=showing.version,
                )
            )
            became_history = added.became_history
            await self._delete_displaced(place, added, new)
            if old is None:
                return
            if history is None:
                if not became_history:
                    await self._delete(place, place.chat_id, old)
                return
            try:
                if await self.sender.edit(place, old, views.View(history)) is Edit.GONE:
                    await self.sender.send(place, views.View(history), silent=True)
            except ChatFlooded as flooded:
                if showing.owed:
                    await self._history_failed(place, old, showing, flooded.until_ms)
                    return
                # The new table is out (posting it again would repeat a game's result): the line
                # follows it when the wait is over.
                await self._hold_group(place, flooded, lines=[history])
                return
            except TelegramError:
                if not showing.owed:
                    raise
                await self._history_failed(place, old, showing, self.sender.clock())
                raise
            showing.line_shown(history)

    async def _history_failed(
        self, place: Place, old: int, showing: _Showing, until_ms: int
    ) -> None:
        """The old table did not become its line: it goes (its buttons are out of date), and
        the clock shows the line with the table posted anew below it (a game's result is not
        posted twice: the line comes below it)."""
        showing.table = not showing.final
        now = self.sender.clock()
        await _through_a_redis_restart(
            lambda: self.store.budget.hold(
                place,
                max(until_ms, now),
                now,
                group_flooded=until_ms > now,
                gone=[(place.chat_id, old)],
            )
        )

    async def bring_table_down(self, place: Place) -> None:
        """After another bot message in the group (a reply to a command): the live table is
        the last one again, when the group's budget allows; else when it is next shown."""
        session, messages, version = await self.store.read(place)
        if session is None or session.live_game is None or messages.table is None:
            return
        if not await self.store.budget.take(place, self.clock()):
            await self.store.messages.add(place, MessageIds(buried=True))
            return
        tr = translator(session.language)
        view = views.table_view(tr, session, session.live_game, self.bot_username, self.clock())
        showing = _Showing(version)
        await self._post_table(place, messages.table, view, showing=showing)
        await self._record(place, showing)

    # --- the game -----------------------------------------------------------------------------

    async def publish(
        self,
        session: Session,
        state: GameState,
        events: Sequence[Event],
        messages: MessageIds,
        table_deferred: bool = False,
        *,
        version: int = 0,
        owed: bool = False,
    ) -> None:
        """Show a committed change (stored at ``version``). What it ``owed`` the players was
        recorded with it: settled here once shown, or left to the clock for what was not."""
        tr = translator(session.language)
        shown = audience(state, events, session.notice)
        lines = [_announcement(tr, state, a) for a in shown.announcements]
        showing = _Showing(version, owed, final=shown.ended)
        if owed:
            showing.lines = list(lines)
            showing.table = shown.table_moves and not table_deferred
            showing.hands = {state.players[seat].user_id for seat in shown.notified}
        try:
            async with self._lease_kept(session.place, version if owed else None):
                if shown.ended:
                    await self._count(session)
                await self._publish(session, state, shown, lines, messages, table_deferred, showing)
        finally:
            if owed and not showing.settled:
                await self._settle(session.place, version, showing.rest())

    async def _publish(
        self,
        session: Session,
        state: GameState,
        shown: Audience,
        lines: list[str],
        messages: MessageIds,
        table_deferred: bool,
        showing: _Showing,
    ) -> None:
        if table_deferred:
            # Over the group's budget the reveals still go out, and the table waits for the
            # clock (tgcheat.bot.timers), which posts it anew below them.
            await self._announce(session.place, lines, showing)
            table: Coroutine[Any, Any, None] | None = None
        elif shown.table_moves:
            table = self._move_table_down(session, state, messages, lines, showing)
        else:
            table = self._refresh_table(session, state, messages, showing)
        if table is not None and showing.owed:
            table = self._settled_after(table, session.place, showing)
        # The table (in the group) and the hands (in private chats) at once: a play waits
        # for Telegram's answers to its requests side by side, not one after the other.
        # A reveal that went out over the budget buried the table: kept in the hands' write.
        buried = MessageIds(buried=table_deferred and bool(lines))
        await self._publish_hands(
            session, state, shown, messages, showing, alongside=table, also_keep=buried
        )
        if shown.ended:
            await self._delete_retired(session)
            await self.store.messages.clear(session.place, keep_table=True)

    @contextlib.asynccontextmanager
    async def _lease_kept(self, place: Place, version: int | None) -> AsyncIterator[None]:
        """While this process shows what a change owes the players (its entry, leased to it:
        ``version``), its lease is renewed: slow requests must not let the clock show the same
        reveal or result a second time. The lease still ends if this process dies."""
        if version is None:
            yield
            return
        budget = self.store.budget
        period_s = self.lease_renewal_s or budget.lease_ms / 3000

        async def renew() -> None:
            while True:
                await asyncio.sleep(period_s)
                if not await budget.extend(place, version, self.store.sessions.clock()):
                    return

        renewal = asyncio.create_task(renew(), name=f"lease {place.key}")
        try:
            yield
        finally:
            renewal.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await renewal

    async def _delete_retired(self, session: Session) -> None:
        """The former hand messages of a game that ended, one request per player. Best
        effort: one left behind is a hand without buttons, nothing the game needs."""
        messages = (await self.store.read(session.place)).messages
        players = list({user for user, _ in messages.retired})
        jobs = [
            self.sender.delete_many(user_id, messages.retired_of(user_id), priority=Priority.LATER)
            for user_id in players
        ]
        outcomes = await asyncio.gather(*jobs, return_exceptions=True)
        waiting: list[tuple[int, int]] = []
        for user_id, outcome in zip(players, outcomes, strict=True):
            if isinstance(outcome, ChatFlooded):
                waiting.extend((user_id, old) for old in messages.retired_of(user_id))
            elif isinstance(outcome, Exception):
                log.info("former hand messages not deleted: %s", outcome)
        if waiting:
            # The clock deletes them once the wait is over.
            now = self.sender.clock()
            await self.store.budget.hold(session.place, now, now, group_flooded=False, gone=waiting)

    async def _count(self, session: Session) -> None:
        """A finished game's statistics, counted before its result is shown: a process that
        dies before it leaves the result's entry to the clock, whose showing counts it too
        (``show_held``); counting is idempotent (tgcheat.store.stats)."""
        record = game_record(session)
        if record is not None:
            await self.store.stats.count(record)

    async def _settled_after(
        self, group: Coroutine[Any, Any, None], place: Place, showing: _Showing
    ) -> None:
        """The group's part of an owed change, then its entry settled but for the hands
        still on their way: a process that dies while a private chat keeps it waiting leaves
        only those for the clock, never a second reveal or result."""
        await group
        if not showing.lines and not showing.table:
            hands = MustShow(hands=tuple(sorted(showing.hands)))
            await self._settle(place, showing.version, hands, still_showing=True)
            # Without hands owed, the entry is gone: nothing is left to settle at the end.
            showing.settled = hands.empty

    async def _settle(
        self, place: Place, version: int, rest: MustShow, *, still_showing: bool = False
    ) -> None:
        """Tell Redis what of a change's entry was shown (``GroupBudget.settle``), through a
        Redis restart: an entry left unsettled is shown again by the clock. What was not
        shown is due at the sender's time, the one its holds are counted in (the clock's), not
        the views' (``self.clock``, which tools move ahead): due at a time the clock has not
        reached, a reveal would wait that long."""
        await _through_a_redis_restart(
            lambda: self.store.budget.settle(
                place, version, self.sender.clock(), rest, still_showing=still_showing
            )
        )

    async def _move_table_down(
        self,
        session: Session,
        state: GameState,
        messages: MessageIds,
        lines: list[str],
        showing: _Showing,
    ) -> None:
        """What happened stays in the history as short lines (the old table message becomes
        the first), and the table comes back as the last message, which notifies."""
        history = lines[0] if lines else None
        cost = len(lines[1:]) + _table_post_cost(messages.table, history)
        with self.sender.together(cost):
            place = session.place
            for index, line in enumerate(lines[1:], start=1):
                try:
                    await self.sender.send(
                        place, views.View(line), silent=True, priority=Priority.MUST
                    )
                except ChatFlooded as flooded:
                    unshown = showing.held([lines[0], *lines[index:]])
                    await self._hold_group(place, flooded, table=True, lines=unshown, bury=True)
                    return
                showing.line_shown(line)
            tr = translator(session.language)
            view = views.table_view(tr, session, state, self.bot_username, self.clock())
            # The new table's id is kept before the old message becomes history: a re-delivery
            # that catches up meanwhile then edits the new table, or the old one before its line.
            await self._post_table(place, messages.table, view, history=history, showing=showing)

    async def show_anew(self, session: Session, state: GameState, version: int) -> None:
        """Post the table and every hand as new messages (the group's chat id changed)."""
        showing = _Showing(version)
        await self._refresh_table(session, state, MessageIds(), showing)
        everyone = tuple(HandChanged(seat) for seat in state.active_seats())
        shown = audience(state, everyone)
        await self._publish_hands(session, state, shown, MessageIds(), showing)

    async def catch_up(
        self, session: Session, state: GameState, messages: MessageIds, version: int
    ) -> None:
        """Show the stored state again, by edits only: the first delivery may still be
        publishing in another process, so a message sent here too would be a second copy.
        (What the change owed the players is its entry's: the clock shows it when the first
        delivery's lease is over.)"""
        hand_jobs = []
        drawn: dict[int, HandMessage] = {}
        for seat in state.active_seats():
            user_id = state.players[seat].user_id
            old = messages.hand(user_id)
            if old is not None and not is_computer(user_id):
                tr = translator(session.language_of(user_id))
                view = views.hand_view(
                    tr, session, state, seat, session.place_title, app_url=self.app_url
                )
                drawn[user_id] = _hand_message(user_id, old, view)
                hand_jobs.append(self._edit_only(user_id, old, view))
        hands = asyncio.gather(*hand_jobs)
        table = messages.table
        showing = _Showing(version)
        if table is not None:
            if await self.store.budget.owes(session.place, version):
                # Its publisher is moving the table (a new message, the old one becoming a
                # line of the history): an edit here could land on the old one in between.
                table = None
            else:
                # The table may have moved since these ids were read: the one there is now.
                table = (await self.store.read(session.place)).messages.table
        if table is None:
            outcomes = await hands
        else:
            view = views.table_view(translator(session.language), session, state, self.bot_username)
            table_edit = self._edit_table(session.place, table, view, showing)
            outcomes, _ = await asyncio.gather(hands, table_edit)
        await self._hold_hands(session.place, outcomes)
        shown_hands = [user_id for user_id, outcome in outcomes if outcome == 0]
        await self._record(
            session.place,
            showing,
            hands=shown_hands,
            hand_messages=[drawn[user_id] for user_id in shown_hands],
        )

    async def _edit_only(self, user_id: int, message_id: int, view: views.View) -> tuple[int, int]:
        """A hand edited in place, never posted (``catch_up``); HELD in a flood wait."""
        try:
            await self.sender.edit(user_id, message_id, view, priority=Priority.LATER)
        except ChatFlooded:
            return user_id, HELD
        return user_id, 0

    async def _edit_table(
        self, place: Place, message_id: int, view: views.View, showing: _Showing
    ) -> None:
        try:
            outcome = await self.sender.edit(place, message_id, view, priority=Priority.TABLE)
        except ChatFlooded as flooded:
            await self._hold_group(place, flooded, table=True)
            return
        except TelegramError:
            await self._refresh_later(place)
            raise
        showing.table_shown = outcome is Edit.DONE
        showing.table_message = message_id

    async def end_game_at(self, place: Place) -> None:
        """The game at ``place`` ends without its group (the bot was removed, or the topic
        was closed or deleted): no winner, nothing more sent there, no deadline left; the
        players learn it in private."""
        committed = await self.store.transact(place, end_without_group)
        session = committed.session
        if committed.changed and session is not None and session.game is not None:
            await self.publish_hands_only(
                session, session.game, committed.messages, committed.version
            )

    async def end_topic(self, place: Place) -> None:
        """A forum topic closed or deleted: its game ends (``end_game_at``) and nothing of it
        is kept or retried (a reopened topic starts afresh with /new)."""
        try:
            await self.end_game_at(place)
        except TopicGone:
            # Telling the group the players cannot be reached: that group is gone too.
            log.info("topic %s gone while its game ended", place)
        finally:
            await self.store.forget_place(place)

    async def publish_hands_only(
        self, session: Session, state: GameState, messages: MessageIds, version: int
    ) -> None:
        await self._publish_hands(session, state, audience(state, ()), messages, _Showing(version))

    async def refresh_table(
        self, session: Session, state: GameState, messages: MessageIds, version: int
    ) -> None:
        """The table shows the stored state (``version``)."""
        showing = _Showing(version)
        await self._refresh_table(session, state, messages, showing)
        await self._record(session.place, showing)

    async def _refresh_table(
        self, session: Session, state: GameState, messages: MessageIds, showing: _Showing
    ) -> None:
        tr = translator(session.language)
        table = views.table_view(tr, session, state, self.bot_username, self.clock())
        # A last play to answer is what the players must see to act; any other table edit
        # may wait for the clock, which shows the latest.
        priority = Priority.MUST if state.phase is Phase.FINAL_CHECK else Priority.TABLE
        await self._show_table(session, messages, table, showing, priority)

    async def _publish_hands(
        self,
        session: Session,
        state: GameState,
        shown: Audience,
        messages: MessageIds,
        showing: _Showing,
        *,
        alongside: Coroutine[Any, Any, None] | None = None,
        also_keep: MessageIds = _NOTHING_TO_KEEP,
    ) -> None:
        """Show the hands of ``shown`` (``alongside``: the table's requests, sent at the same
        time); ``also_keep`` is written with the hands' ids and the versions shown, in one
        write. A hand whose request failed is shown again by the clock."""
        try:
            jobs, drawn = self._hand_jobs(session, state, shown, messages)
        except BaseException:
            if alongside is not None:
                alongside.close()  # never started: nothing to wait for
            raise
        # Concurrently: each is a request to Telegram, in a chat of its own (one job needs no
        # task of its own). Every job runs to its end, so that the ids of the messages that
        # were sent are kept even when another job failed; then the first failure is raised.
        concurrent: list[Awaitable[Any]] = list(jobs)
        if alongside is not None:
            concurrent.append(alongside)
        if len(concurrent) == 1:
            done: list[Any] = [await concurrent[0]]
        else:
            done = await asyncio.gather(*concurrent, return_exceptions=True)
        failures = [outcome for outcome in done if isinstance(outcome, BaseException)]
        results = [
            outcome for outcome in done[: len(jobs)] if not isinstance(outcome, BaseException)
        ]
        owners = [state.players[seat].user_id for seat in sorted(shown.hands)]
        failed = [
            user_id
            for user_id, outcome in zip(owners, done[: len(jobs)], strict=True)
            if isinstance(outcome, BaseException) and user_id not in showing.hands
        ]
        sent = {user_id: message_id for user_id, message_id in results if message_id > 0}
        # A player the bot cannot reach (never started it, or blocked it): the game goes on
        # (the clock plays for them) and the group is told once per game.
        unreachable = [
            user_id
            for user_id, message_id in results
            if message_id == UNREACHABLE and user_id not in messages.told
        ]
        # Those a flood wait holds are shown by the clock; the unreachable never will be.
        showing.hands.difference_update(user_id for user_id, outcome in results if outcome != 0)
        showing.hands.difference_update(sent)
        hand_messages = []
        for user_id, outcome in results:
            old = messages.hand(user_id)
            if outcome > 0:
                hand_messages.append(_hand_message(user_id, outcome, drawn[user_id]))
                if old is not None and old != outcome:
                    hand_messages.append(HandMessage(user_id, old, FORMER_HAND))
            elif outcome == 0 and old is not None and user_id in drawn:
                hand_messages.append(_hand_message(user_id, old, drawn[user_id]))
        await self._record(
            session.place,
            showing,
            ids=also_keep.merged(MessageIds(hands=sent, told=frozenset(unreachable))),
            hands=[user_id for user_id, outcome in results if outcome >= 0],
            hand_messages=hand_messages,
        )
        await self._hold_hands(session.place, results)
        await self._remember_dealt(session, [u for u in sent if messages.hand(u) is None])
        if failed:
            # An edit that failed (not one the change owed: its entry shows those): the clock
            # shows the hand from the stored state.
            await self._hold_hands(session.place, [(user_id, HELD) for user_id in failed])
        if failures:
            raise failures[0]
        await self._tell_unreachable(session, state, unreachable)

    async def _remember_dealt(self, session: Session, user_ids: list[int]) -> None:
        """The players whose first hand of this game was sent: the Mini App opened from the
        menu button finds their game (a hint only: nothing fails without it)."""
        if not user_ids:
            return
        try:
            await self.store.played_places.record(user_ids, session.place)
        except Exception as error:
            log.warning("where %s play was not remembered: %s", user_ids, error)

    def _hand_jobs(
        self,
        session: Session,
        state: GameState,
        shown: Audience,
        messages: MessageIds,
    ) -> tuple[list[Coroutine[Any, Any, tuple[int, int]]], dict[int, views.View]]:
        """A request (not yet started) for each hand to show anew: a new message for those
        notified (the former one left in place: it goes at the game's end, or at once should
        it have buttons, see ``_record``), an edit for the others; and the view each shows."""
        jobs: list[Coroutine[Any, Any, tuple[int, int]]] = []
        drawn: dict[int, views.View] = {}
        for seat in sorted(shown.hands):
            user_id = state.players[seat].user_id
            if is_computer(user_id):
                # No private chat, and nobody else may see its cards.
                jobs.append(_nothing_for(user_id))
                continue
            old = messages.hand(user_id)
            view = views.hand_view(
                translator(session.language_of(user_id)),
                session,
                state,
                seat,
                session.place_title,
                app_url=self.app_url,
            )
            drawn[user_id] = view
            if seat in shown.notified or old is None:
                jobs.append(self._repost(session.place, user_id, None, view))
            else:
                jobs.append(self._edit_hand(user_id, old, view))
        return jobs, drawn

    async def _repost(
        self,
        group: Place,
        user_id: int,
        old: int | None,
        view: views.View,
        priority: Priority = Priority.MUST,
    ) -> tuple[int, int]:
        """A new hand message notifies the player (an edit would not) and lands at the bottom
        of the chat, where their thumb is; the old one goes, so there is still one."""
        try:
            message_id = await self.sender.send(user_id, view, priority=priority)
        except ChatFlooded:
            return user_id, HELD
        if old is not None:
            await self._delete(group, user_id, old)
        return user_id, message_id if message_id is not None else UNREACHABLE

    async def _edit_hand(self, user_id: int, message_id: int, view: views.View) -> tuple[int, int]:
        try:
            outcome = await self.sender.edit(user_id, message_id, view, priority=Priority.LATER)
            if outcome is Edit.DONE:
                return user_id, 0
            if outcome is Edit.UNREACHABLE:
                return user_id, UNREACHABLE
            posted = await self.sender.send(user_id, view, silent=True, priority=Priority.LATER)
        except ChatFlooded:
            return user_id, HELD
        return user_id, posted if posted is not None else UNREACHABLE

    async def _tell_unreachable(
        self, session: Session, state: GameState, user_ids: list[int]
    ) -> None:
        if not user_ids:
            return
        tr = translator(session.language)
        names = views.joined(
            tr,
            (
                views.name_html(state.players[seat].name)
                for seat in range(len(state.players))
                if state.players[seat].user_id in user_ids
            ),
        )
        text = tr._(
            "{names}: I can't send you your cards. Tap <b>🃏 My cards</b> on the "
            "table and press <b>Start</b> in our private chat."
        ).format(names=names)
        await self._announce(session.place, [views.directed(tr, text)])

    async def repost_hand(
        self, session: Session, state: GameState, user_id: int, messages: MessageIds
    ) -> None:
        seat = state.seat_of(user_id)
        assert seat is not None
        view = views.hand_view(
            translator(session.language_of(user_id)),
            session,
            state,
            seat,
            session.place_title,
            app_url=self.app_url,
        )
        # The player asked for it (🃏 My cards): an answer to their own action.
        _, message_id = await self._repost(
            session.place, user_id, messages.hand(user_id), view, Priority.ALWAYS
        )
        if message_id == HELD:
            await self._hold_hands(session.place, [(user_id, HELD)])
        elif message_id != UNREACHABLE:
            await self.store.messages.add(session.place, MessageIds(hands={user_id: message_id}))

    # --- what a flood wait held back --------------------------------------------------------

    async def _announce(
        self, place: Place, lines: Sequence[str], showing: _Showing | None = None
    ) -> None:
        """Announcements, each a message that notifies; in a flood wait, those not sent wait
        for the clock."""
        with self.sender.together(len(lines)):
            for index, line in enumerate(lines):
                try:
                    await self.sender.send(place, views.View(line), priority=Priority.MUST)
                except ChatFlooded as flooded:
                    held = showing.held(lines[index:]) if showing is not None else lines[index:]
                    await self._hold_group(place, flooded, table=True, lines=held, bury=True)
                    return
                if showing is not None:
                    showing.line_shown(line)

    async def _record(
        self,
        place: Place,
        showing: _Showing,
        *,
        ids: MessageIds = _NOTHING_TO_KEEP,
        hands: Iterable[int] = (),
        hand_messages: Iterable[HandMessage] = (),
    ) -> None:
        """Keep ``ids`` and which version the messages just shown draw ("latest state wins"):
        one of them that a newer version reached first is shown again by the clock. A former
        hand message that has buttons (an edit reached it late) is deleted now."""
        roles = [hand_role(user_id) for user_id in hands]
        table_message = None
        if showing.table_shown:
            roles.append(TABLE_ROLE)
            table_message = showing.table_message
        recorded = await self.store.messages.record(
            place,
            showing.version,
            self.clock(),
            ids=ids,
            shown=roles,
            table_message=table_message,
            hand_messages=hand_messages,
        )
        for user_id, message_id in recorded.gone:
            await self._delete(place, user_id, message_id)
        if recorded.overtaken:
            log.info(
                "chat %s: %s overtaken by a newer state, shown again", place, recorded.overtaken
            )
        if recorded.history is not None and table_message is not None:
            # The table moved on while this edit was on its way (it read the table's id before
            # the move): the message it reached is a line of the history again.
            log.info("chat %s: message %s was a table again, made history", place, table_message)
            await self.sender.edit(place, table_message, views.View(recorded.history))

    async def record_hand(self, place: Place, version: int, user_id: int) -> None:
        """A player's hand message was drawn from ``version`` (a card picked)."""
        await self._record(place, _Showing(version), hands=[user_id])

    async def _refresh_later(self, place: Place) -> None:
        """A table request failed (Telegram did not confirm it): the clock shows the table
        from the stored state."""
        now = self.sender.clock()
        await self.store.budget.hold(place, now, now, group_flooded=False, table=True)

    async def _delete(self, group: Place, chat_id: int, message_id: int) -> None:
        """An old message deleted (a table, a hand); in a flood wait, or when Telegram did not
        confirm it, by the clock after it."""
        try:
            await self.sender.delete(chat_id, message_id, priority=Priority.LATER)
        except NetworkError:
            now = self.sender.clock()
            await self.store.budget.hold(
                group, now, now, group_flooded=False, gone=[(chat_id, message_id)]
            )
        except ChatFlooded as flooded:
            await self.store.budget.hold(
                group,
                flooded.until_ms,
                self.sender.clock(),
                group_flooded=flooded.chat_waits and flooded.chat_id == group.chat_id,
                gone=[(chat_id, message_id)],
            )

    async def _hold_group(
        self,
        place: Place,
        flooded: ChatFlooded,
        *,
        table: bool = False,
        lines: Sequence[str] = (),
        bury: bool = False,
    ) -> None:
        """Telegram asks to wait before the group's next message: the wait is kept (nothing
        more goes there before it ends), and with it what the clock shows then (``table``,
        ``lines``). ``bury``: the table is posted anew at the bottom then, under the lines."""
        log.info("chat %s in a flood wait: %d lines held", place, len(lines))
        if bury:
            await self.store.messages.add(place, MessageIds(buried=True))
        await self.store.budget.hold(
            place,
            flooded.until_ms,
            self.sender.clock(),
            group_flooded=flooded.chat_waits,
            table=table,
            lines=lines,
        )

    async def _hold_hands(self, place: Place, outcomes: Sequence[tuple[int, int]]) -> None:
        """Hands whose private chat is in a flood wait: the clock shows them when it is over
        (the latest of those waits)."""
        held = [user_id for user_id, outcome in outcomes if outcome == HELD]
        if not held:
            return
        now = self.sender.clock()
        until = max(self.sender.flood_ends(user_id) or now for user_id in held)
        log.info("hands of %s in a flood wait, held for the clock", held)
        await self.store.budget.hold(place, until, now, group_flooded=False, hands=held)

    async def held_back(self, flooded: ChatFlooded) -> None:
        """A flood wait met outside the publisher (a reply, a menu): in a group, the wait is
        kept and the table shown again after it; a private chat's message is not held."""
        if flooded.in_group:
            await self._hold_group(flooded.place, flooded, table=True)
        else:
            log.info("private chat %s in a flood wait: a message was not sent", flooded.place)

    async def show_held(self, place: Place, held: Held) -> None:
        """The clock's turn at what a group's budget, a flood wait or a failed request held
        back (``held``, released to this process alone): the announcements, then the latest
        table, and the hands that were not shown. When a request fails on the way, what was
        not shown yet is held again for the clock's next look."""
        unshown = list(held.lines)
        try:
            async with self._lease_kept(place, held.token):
                with self.sender.waited():
                    await self._show_held(place, held, unshown)
        except BaseException:
            # What was not shown is the clock's again at its next look.
            rest = MustShow(tuple(unshown), held.table, held.hands)
            await self._settle(place, held.token, rest)
            raise
        await self._settle(place, held.token, MustShow())

    async def _show_held(self, place: Place, held: Held, unshown: list[str]) -> None:
        for gone_chat, message_id in held.gone:
            await self._delete(place, gone_chat, message_id)
        session, messages, version = await self.store.read(place)
        if session is None:
            unshown.clear()
            return
        showing = _Showing(version)
        if held.table and session.game is not None and session.game.phase is Phase.FINISHED:
            # Perhaps the result of a publisher that died before it counted the game.
            await self._count(session)
        shown_whole = self.sender.together(
            len(held.lines) + (_table_post_cost(messages.table, None) if held.table else 0)
        )
        # The lines and the table posted anew below them go whole.
        with shown_whole if held.lines else contextlib.nullcontext():
            if not await self._show_held_group(place, held, session, messages, showing, unshown):
                return
        game = session.game
        if game is None or not held.hands:
            await self._record(place, showing)
            return
        seats = [game.seat_of(user_id) for user_id in held.hands]
        # Back as new messages, which notify: the players missed a change of their hand.
        notified = frozenset(seat for seat in seats if seat is not None)
        shown = Audience(
            (), ended=False, final_in_group=False, notified=notified, edited=frozenset()
        )
        await self._publish_hands(session, game, shown, messages, showing)

    async def _show_held_group(
        self,
        place: Place,
        held: Held,
        session: Session,
        messages: MessageIds,
        showing: _Showing,
        unshown: list[str],
    ) -> bool:
        """The group's part of what was held: its lines, then its table. False when a flood
        wait or the budget held it back again (with the hands)."""
        for index, line in enumerate(held.lines):
            try:
                await self.sender.send(place, views.View(line), silent=True, priority=Priority.MUST)
            except ChatFlooded as flooded:
                rest = held.lines[index:]
                await self._hold_group(
                    place, flooded, table=held.table, lines=rest, bury=held.table
                )
                # Held again (not before: should Redis fail the hold, they are still unshown,
                # and the entry keeps them).
                unshown.clear()
                await self._hold_hands(place, [(user, HELD) for user in held.hands])
                return False
            unshown.pop(0)
        if held.table:
            game = session.game
            result_out = (
                game is not None
                and game.phase is Phase.FINISHED
                and messages.table is not None
                and messages.table_version >= showing.version
            )
            if result_out:
                # A game's result is never posted twice: lines held from before it follow it.
                messages = dataclasses.replace(messages, buried=False)
            elif held.lines:
                # The table that waited comes below them. (Lines held without the table
                # follow a table that was out already.)
                messages = dataclasses.replace(messages, buried=True)
            if session.lobby is not None:
                await self.refresh_lobby(place)
            elif session.game is not None:
                await self._refresh_table(session, session.game, messages, showing)
        return True


async def _through_a_redis_restart(job: Callable[[], Awaitable[T]]) -> T:
    """``job`` (a write that keeps what players must see), tried again while Redis restarts,
    for ``SETTLE_TRIES_S`` at most: given up, it would be lost or shown twice."""
    delay, give_up = 0.05, time.monotonic() + SETTLE_TRIES_S
    while True:
        try:
            return await job()
        except (RedisConnectionError, RedisTimeoutError):
            if time.monotonic() > give_up:
                raise
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)


def _hand_message(user_id: int, message_id: int, view: views.View) -> HandMessage:
    """What a hand message shows, for whether it may stay once replaced: a button that acts on
    the game (its data goes out of date) may not; one that opens the Mini App may."""
    rows = view.markup["inline_keyboard"] if view.markup else []
    acts = any("callback_data" in button for row in rows for button in row)
    return HandMessage(user_id, message_id, WITH_BUTTONS if acts else WITHOUT_BUTTONS)


async def _nothing_for(user_id: int) -> tuple[int, int]:
    """A computer player's hand job: nothing is sent."""
    return user_id, NOTHING_SENT


def _table_post_cost(old: int | None, history: str | None) -> int:
    """The requests of a table posted anew: its line when there is no old table to become
    it, the new table, and the old one made the line or deleted."""
    return 1 + (1 if old is None and history is not None else 0) + (1 if old is not None else 0)


def _some(line: str | None) -> list[str]:
    return [line] if line is not None else []
