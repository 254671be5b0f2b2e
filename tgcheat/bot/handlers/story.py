"""📜 How it went, on a finished game's result: its story posted where the game was played
(the group, or the private chat of a game against the computer), once a game, in the game's
language, for anyone who taps it: the game is over, nothing in it is secret any more."""

from __future__ import annotations

from tgcheat.bot import views
from tgcheat.bot.callbacks import TablePress
from tgcheat.bot.handlers.shell import Answer, Asker, Shell
from tgcheat.bot.taps import Tap
from tgcheat.i18n import N_, translator
from tgcheat.table import transitions as table
from tgcheat.table.place import Place
from tgcheat.table.refusals import SessionRefusal, SessionRefused

GROUP_BUSY = N_("The group has had many messages just now: tap again in a minute.")


class StoryHandlers:
    def __init__(self, shell: Shell) -> None:
        self.shell = shell

    async def tell(self, tap: Tap, press: TablePress) -> None:
        """Marked as posted first (one compare-and-set: of two taps at once, one posts), then
        sent through the group's budget; when it cannot be sent, it may be asked again."""
        shell = self.shell
        place = press.place
        if place.quick:
            await self._tell_privately(tap, press)
            return
        if tap.chat_id != place.chat_id:
            # A press names the chat of the message it is on: data naming another chat is
            # forged, and would post a story somewhere nobody asked for it.
            raise SessionRefused(SessionRefusal.STALE)
        committed = await shell.store.transact(
            place,
            lambda session: (table.tell_story(session, game_id=press.game_id), None),
            update_id=tap.update_id,
        )
        session = committed.session
        if not committed.changed or session is None:
            # A delivery of the same press again: the first one posted it.
            await shell.sender.answer(tap.query_id)
            return
        # A group message as the table is: counted on delivery's clock, as its are.
        now = shell.delivery.clock()
        if place.chat_id < 0 and not await shell.store.budget.take_for_reply(place, now):
            await self._untell(place, press.game_id)
            raise Answer(GROUP_BUSY)
        try:
            sent = await shell.sender.send(
                place, views.story_view(translator(session.language), session)
            )
        except Exception:
            await self._untell(place, press.game_id)
            raise
        if sent is None:
            await self._untell(place, press.game_id)
        await shell.sender.answer(tap.query_id)

    async def _tell_privately(self, tap: Tap, press: TablePress) -> None:
        """A quick game's story, to one of its players in their private chat and language (no
        group to post it in once for all): within their replies' budget."""
        shell = self.shell
        session, _ = await shell.store.load(press.place)
        state = session.game if session is not None else None
        if (
            session is None
            or state is None
            or session.game_id != press.game_id
            or state.result is None
            or state.seat_of(tap.user_id) is None
            or tap.chat_id != tap.user_id
        ):
            raise SessionRefused(SessionRefusal.STALE)
        asker = Asker(tap.user_id, tap.language_code, chat_id=tap.chat_id)
        await shell.sender.answer(tap.query_id)
        if await shell.may_reply(asker):
            view = views.story_view(translator(session.language_of(tap.user_id)), session)
            await shell.sender.send(tap.user_id, view)

    async def _untell(self, place: Place, game_id: str) -> None:
        await self.shell.store.transact(
            place, lambda session: (table.untell_story(session, game_id=game_id), None)
        )
