"""After a change is committed: show it. The table and hands are re-rendered from the stored
state, so whatever the order of deliveries, a message shows a state that really was."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any

from tgcheat.bot import views
from tgcheat.bot.sender import Edit, Sender
from tgcheat.engine.events import ChallengeResolved, Event, HandChanged
from tgcheat.engine.state import GameState
from tgcheat.i18n import Translator, translator
from tgcheat.store.games import GameStore
from tgcheat.table.audiences import Announcement, Audience, audience
from tgcheat.table.session import MessageIds, Session

#: A hand job's result when the player's private chat cannot be reached.
UNREACHABLE = -1


def wall_clock_ms() -> int:
    return int(time.time() * 1000)


class Publisher:
    def __init__(
        self, store: GameStore, sender: Sender, clock: Callable[[], int] = wall_clock_ms
    ) -> None:
        self.store = store
        self.sender = sender
        #: The time (Unix ms) a view says "seconds left" from.
        self.clock = clock

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
            await self.store.messages.clear(session.chat_id)
        message_id = await self.sender.send(session.chat_id, view)
        if message_id is not None:
            await self.store.messages.add(session.chat_id, MessageIds(table=message_id))

    async def refresh_lobby(self, chat_id: int) -> None:
        session, messages = await self.store.load(chat_id)
        if session is None or session.lobby is None:
            return
        view = views.lobby_view(
            translator(session.language), session, session.lobby, self.bot_username
        )
        await self._show_table(session, messages, view)

    async def close_lobby(
        self, session: Session, messages: MessageIds, *, expired: bool = False
    ) -> None:
        message_id = messages.table
        if message_id is not None:
            view = views.lobby_closed_view(translator(session.language), expired=expired)
            await self.sender.edit(session.chat_id, message_id, view)

    async def _show_table(
        self, session: Session, messages: MessageIds, view: views.View
    ) -> None:
        """The table edited in place; posted anew at the bottom when another bot message
        buried it (the old one goes, so there is still one table)."""
        old = messages.table
        if messages.buried:
            await self._post_table(session.chat_id, old, view)
            return
        new = await self.sender.upsert(session.chat_id, old, view)
        if new is not None and new != old:
            await self.store.messages.add(session.chat_id, MessageIds(table=new))

    async def _post_table(
        self,
        chat_id: int,
        old: int | None,
        view: views.View,
        *,
        history: str | None = None,
    ) -> None:
        """A new table message at the bottom of the group (a notification). The old one keeps
        ``history`` (a short line of what happened), or is deleted."""
        if old is None and history is not None:
            await self.sender.send(chat_id, views.View(history), silent=True)
        new = await self.sender.send(chat_id, view)
        if new is None:
            return
        await self.store.messages.add(chat_id, MessageIds(table=new))
        if old is None:
            return
        if history is None:
            await self.sender.delete(chat_id, old)
        elif await self.sender.edit(chat_id, old, views.View(history)) is Edit.GONE:
            await self.sender.send(chat_id, views.View(history), silent=True)

    async def bring_table_down(self, chat_id: int) -> None:
        """After another bot message in the group (a reply to a command): the live table is
        the last one again, when the group's budget allows; else when it is next shown."""
        session, messages = await self.store.load(chat_id)
        if session is None or session.live_game is None or messages.table is None:
            return
        if not await self.store.budget.take(chat_id, self.clock()):
            await self.store.messages.add(chat_id, MessageIds(buried=True))
            return
        tr = translator(session.language)
        view = views.table_view(tr, session, session.live_game, self.bot_username, self.clock())
        await self._post_table(chat_id, messages.table, view)

    # --- the game -----------------------------------------------------------------------------

    async def publish(
        self,
        session: Session,
        state: GameState,
        events: Sequence[Event],
        messages: MessageIds,
        table_deferred: bool = False,
    ) -> None:
        tr = translator(session.language)
        shown = audience(state, events, session.notice)
        lines = [self._announcement(tr, state, a) for a in shown.announcements]
        if table_deferred:
            # Over the group's budget the reveals still go out, and the table waits for the
            # clock (tgcheat.bot.timers), which posts it anew below them.
            for line in lines:
                await self.sender.send(session.chat_id, views.View(line))
            buried = MessageIds(buried=bool(lines))
            table: Coroutine[Any, Any, MessageIds | None] | None = self._kept(buried)
        elif shown.table_moves:
            table = self._move_table_down(session, state, messages, lines)
        else:
            table = self.refresh_table(session, state, messages)
        # The table (in the group) and the hands (in private chats) at once: a play waits
        # for Telegram's answers to its requests side by side, not one after the other.
        await self._publish_hands(session, state, shown, messages, alongside=table)
        if shown.ended:
            await self.store.messages.clear(session.chat_id, keep_table=True)

    async def _move_table_down(
        self, session: Session, state: GameState, messages: MessageIds, lines: list[str]
    ) -> None:
        """What happened stays in the history as short lines (the old table message becomes
        the first), and the table comes back as the last message, which notifies."""
        chat_id = session.chat_id
        for line in lines[1:]:
            await self.sender.send(chat_id, views.View(line), silent=True)
        tr = translator(session.language)
        view = views.table_view(tr, session, state, self.bot_username, self.clock())
        # The new table's id is kept before the old message becomes history: a re-delivery
        # that catches up meanwhile then edits the new table, or the old one before its line.
        history = lines[0] if lines else None
        await self._post_table(chat_id, messages.table, view, history=history)

    @staticmethod
    async def _kept(ids: MessageIds) -> MessageIds:
        """Ids to keep with the hands' in one write, when no table request goes with them."""
        return ids

    @staticmethod
    def _announcement(tr: Translator, state: GameState, event: Announcement) -> str:
        if isinstance(event, ChallengeResolved):
            return views.reveal_view(tr, state, event).text
        return views.passed_view(tr, state, event)

    async def show_anew(self, session: Session, state: GameState) -> None:
        """Post the table and every hand as new messages (the group's chat id changed)."""
        await self.refresh_table(session, state, MessageIds())
        everyone = tuple(HandChanged(seat) for seat in state.active_seats())
        shown = audience(state, everyone)
        await self._publish_hands(session, state, shown, MessageIds())

    async def catch_up(self, session: Session, state: GameState, messages: MessageIds) -> None:
        """Show the stored state again, by edits only: the first delivery may still be
        publishing in another process, so a message sent here too would be a second copy."""
        jobs = []
        table = messages.table
        if table is not None:
            view = views.table_view(translator(session.language), session, state, self.bot_username)
            jobs.append(self.sender.edit(session.chat_id, table, view))
        for seat in state.active_seats():
            user_id = state.players[seat].user_id
            old = messages.hand(user_id)
            if old is not None:
                tr = translator(session.language_of(user_id))
                view = views.hand_view(tr, session, state, seat, session.title)
                jobs.append(self.sender.edit(user_id, old, view))
        await asyncio.gather(*jobs)

    async def publish_hands_only(
        self, session: Session, state: GameState, messages: MessageIds
    ) -> None:
        await self._publish_hands(session, state, audience(state, ()), messages)

    async def refresh_table(
        self, session: Session, state: GameState, messages: MessageIds
    ) -> None:
        tr = translator(session.language)
        table = views.table_view(tr, session, state, self.bot_username, self.clock())
        await self._show_table(session, messages, table)

    async def _publish_hands(
        self,
        session: Session,
        state: GameState,
        shown: Audience,
        messages: MessageIds,
        *,
        alongside: Coroutine[Any, Any, MessageIds | None] | None = None,
    ) -> None:
        """Show the hands of ``shown`` (``alongside``: the table's requests, sent at the same
        time; the ids it returns are kept with the hands' in one write)."""
        try:
            jobs = self._hand_jobs(session, state, shown, messages)
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
        sent = {user_id: message_id for user_id, message_id in results if message_id > 0}
        table_ids = done[-1] if alongside is not None else None
        if not isinstance(table_ids, MessageIds):
            table_ids = MessageIds()
        # A player the bot cannot reach (never started it, or blocked it): the game goes on
        # (the clock plays for them) and the group is told once per game.
        unreachable = [
            user_id
            for user_id, message_id in results
            if message_id == UNREACHABLE and user_id not in messages.told
        ]
        await self.store.messages.add(
            session.chat_id,
            table_ids.merged(MessageIds(hands=sent, told=frozenset(unreachable))),
        )
        if failures:
            raise failures[0]
        await self._tell_unreachable(session, state, unreachable)

    def _hand_jobs(
        self,
        session: Session,
        state: GameState,
        shown: Audience,
        messages: MessageIds,
    ) -> list[Coroutine[Any, Any, tuple[int, int]]]:
        """A request (not yet started) for each hand to show anew: a new message for those
        notified, an edit for the others."""
        jobs: list[Coroutine[Any, Any, tuple[int, int]]] = []
        for seat in sorted(shown.hands):
            user_id = state.players[seat].user_id
            old = messages.hand(user_id)
            view = views.hand_view(
                translator(session.language_of(user_id)), session, state, seat, session.title
            )
            if seat in shown.notified or old is None:
                jobs.append(self._repost(user_id, old, view))
            else:
                jobs.append(self._edit_hand(user_id, old, view))
        return jobs

    async def _repost(self, user_id: int, old: int | None, view: views.View) -> tuple[int, int]:
        """A new hand message notifies the player (an edit would not) and lands at the bottom
        of the chat, where their thumb is; the old one goes, so there is still one."""
        message_id = await self.sender.send(user_id, view)
        if old is not None:
            await self.sender.delete(user_id, old)
        return user_id, message_id if message_id is not None else UNREACHABLE

    async def _edit_hand(self, user_id: int, message_id: int, view: views.View) -> tuple[int, int]:
        outcome = await self.sender.edit(user_id, message_id, view)
        if outcome is Edit.DONE:
            return user_id, 0
        if outcome is Edit.UNREACHABLE:
            return user_id, UNREACHABLE
        posted = await self.sender.send(user_id, view, silent=True)
        return user_id, posted if posted is not None else UNREACHABLE

    async def _tell_unreachable(
        self, session: Session, state: GameState, user_ids: list[int]
    ) -> None:
        if not user_ids:
            return
        tr = translator(session.language)
        names = ", ".join(
            views.name_html(state.players[seat].name)
            for seat in range(len(state.players))
            if state.players[seat].user_id in user_ids
        )
        await self.sender.send(
            session.chat_id,
            views.View(
                tr._(
                    "{names}: I can't send you your cards. Tap <b>🃏 My cards</b> on the "
                    "table and press <b>Start</b> in our private chat."
                ).format(names=names)
            ),
        )

    async def repost_hand(
        self, session: Session, state: GameState, user_id: int, messages: MessageIds
    ) -> None:
        seat = state.seat_of(user_id)
        assert seat is not None
        view = views.hand_view(
            translator(session.language_of(user_id)), session, state, seat, session.title
        )
        _, message_id = await self._repost(user_id, messages.hand(user_id), view)
        if message_id != UNREACHABLE:
            await self.store.messages.add(session.chat_id, MessageIds(hands={user_id: message_id}))
