"""A quick game with anyone: /quick in private (and the Mini App's button) puts the person in
the queue, or takes them out of it; a table made of the queue is dealt at a quick game's place
(``tgcheat.table.quick``) and shown in its players' private chats. The clock makes the tables
due (``Timers.tick``); asking makes one at once when the queue fills a table."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from telegram.error import TelegramError

from tgcheat.bot import views
from tgcheat.bot.callbacks import QuickPress
from tgcheat.bot.handlers.shell import Answer, Asker, Command, Shell, new_game_id
from tgcheat.bot.sender import ChatFlooded
from tgcheat.bot.taps import Tap
from tgcheat.i18n import N_, Translator, translator
from tgcheat.store.quick import Answer as Queued
from tgcheat.store.quick import Asked, Mode
from tgcheat.table import transitions as table
from tgcheat.table.place import Place
from tgcheat.table.quick import MAX_NAME, Seeker, quick_game, seated_in
from tgcheat.table.refusals import SessionRefusal, SessionRefused

log = logging.getLogger(__name__)

#: Tables one look at the queue makes at most (the rest at the clock's next tick).
TABLES_AT_ONCE = 16

IN_PRIVATE = N_("Send /quick in our private chat to play a quick game with anyone.")
ALREADY_PLAYING = N_("You are playing a quick game already. /leave leaves it.")
QUEUE_FULL = N_("Very many people are waiting just now: try again in a minute.")
NOT_WAITING = N_("You are not waiting for a quick game.")
#: /leave in private from someone in no quick game: a group's game is left in its group.
NOT_PLAYING = N_("Send /leave in the group of the game.")


@dataclass(frozen=True, slots=True)
class Seeking:
    """Who asks for a quick game, as the others will see them."""

    user_id: int
    name: str
    tr: Translator


class QuickHandlers:
    def __init__(self, shell: Shell) -> None:
        self.shell = shell

    # --- asking -----------------------------------------------------------------------------

    async def quick(self, command: Command) -> None:
        """/quick: wait for a quick game, or (waiting already) stop waiting."""
        if command.in_group:
            raise Answer(IN_PRIVATE)
        tr = await self.shell.language_of(command.asker)
        seeking = Seeking(command.user_id, quick_name(command.full_name, tr), tr)
        answer = await self.ask(seeking, Mode.TOGGLE)
        told = await self.shell.tell(command.asker, _answer_view(tr, answer))
        await self._note_waiting(seeking, answer, told)
        await self.match_due()

    async def press(self, tap: Tap, press: QuickPress) -> None:
        """The waiting message's 🚪 and a quick game's result's ⚡: for whoever presses."""
        if tap.chat_id != tap.user_id:
            # Drawn only in private chats: data sent from anywhere else is forged.
            raise SessionRefused(SessionRefusal.STALE)
        shell = self.shell
        asker = Asker(tap.user_id, tap.language_code, chat_id=tap.chat_id)
        tr = await shell.language_of(asker)
        seeking = Seeking(tap.user_id, quick_name(tap.full_name, tr), tr)
        answer = await self.ask(seeking, Mode.JOIN if press.join else Mode.LEAVE)
        if answer.outcome is Asked.QUEUED and press.join:
            await shell.sender.answer(tap.query_id)
            told = await shell.tell(asker, _answer_view(tr, answer))
            await self._note_waiting(seeking, answer, told)
            await self.match_due()
            return
        await shell.sender.answer(tap.query_id, quick_answer_text(tr, answer))

    async def ask(self, seeking: Seeking, mode: Mode) -> Queued:
        """The person in the queue (``Mode.JOIN``), out of it, or either (``TOGGLE``). A game
        mark of theirs whose game is over for them (ended, or they left it) is dropped on the
        way: only someone still seated at a live quick game is kept out."""
        store = self.shell.store
        over: int | None = None
        for _ in range(2):
            answer = await store.quick.ask(
                seeking.user_id,
                mode,
                name=seeking.name,
                language=seeking.tr.language,
                now_ms=self.shell.clock(),
                over=over,
            )
            if answer.outcome is not Asked.PLAYING:
                return answer
            session, _ = await store.load(Place.of_quick_game(answer.detail))
            if seated_in(session, seeking.user_id):
                return answer
            over = answer.detail
        return answer

    async def _note_waiting(self, seeking: Seeking, answer: Queued, told: int | None) -> None:
        """The message that says the person waits is kept with their place in the queue: once
        their table is made, it says so and loses its 🚪 button."""
        if answer.outcome is Asked.QUEUED and told is not None:
            await self.shell.store.quick.note_waiting_message(seeking.user_id, told)

    # --- making tables ----------------------------------------------------------------------

    async def match_due(self) -> int:
        """Deal every table the queue makes now (the clock calls it each tick); how many."""
        made, queue = 0, self.shell.store.quick
        for _ in range(TABLES_AT_ONCE):
            match = await queue.match(self.shell.clock())
            if match is None:
                break
            made += await self._deal(Place.of_quick_game(match.number), match.seekers)
            await queue.dealt(match.number)
        return made

    async def _deal(self, place: Place, seekers: tuple[Seeker, ...]) -> bool:
        """The table's game dealt and shown; False when it was dealt already (by a process that
        died before saying so: its place is synced when its lease ends)."""
        shell = self.shell
        now, game_id = shell.clock(), new_game_id()
        try:
            committed = await shell.store.transact(
                place,
                lambda session: quick_game(
                    session,
                    place=place,
                    game_id=game_id,
                    seekers=seekers,
                    rng=shell.rng,
                    now_ms=now,
                ),
                lease=True,
            )
        except SessionRefused as refusal:
            if refusal.reason is not SessionRefusal.GAME_OPEN:
                raise
            return False
        try:
            await shell.show(place, committed)
        except ChatFlooded as flooded:
            await shell.held_back(flooded)
        for seeker in seekers:
            if seeker.waiting_message:
                await self._found(seeker)
        return True

    async def _found(self, seeker: Seeker) -> None:
        """The message that said the person waits now says their table was made (its 🚪
        button gone): their game is below it."""
        tr = translator(seeker.language)
        try:
            await self.shell.sender.edit(
                seeker.user_id, seeker.waiting_message, views.quick_found_view(tr)
            )
        except (ChatFlooded, TelegramError) as error:
            log.info("quick game: %s's waiting message not edited (%s)", seeker.user_id, error)

    # --- leaving ------------------------------------------------------------------------------

    async def leave(self, command: Command) -> None:
        """/leave in private: out of the quick game the person plays (the hand set aside)."""
        shell = self.shell
        number = await shell.store.quick.playing(command.user_id)
        if number is None:
            raise Answer(NOT_PLAYING)
        place = Place.of_quick_game(number)
        now = shell.clock()
        committed = await shell.store.transact(
            place,
            lambda session: table.leave_table(session, command.user_id, now),
            update_id=command.update_id,
            lease=True,
        )
        await shell.show(place, committed)


def quick_name(full_name: str, tr: Translator) -> str:
    """The name others see at a quick table: the person's name in Telegram, never their
    username."""
    name = " ".join(full_name.split())[:MAX_NAME]
    return name or tr._("Player")


def quick_answer_text(tr: Translator, answer: Queued) -> str:
    match answer.outcome:
        case Asked.QUEUED:
            return views.quick_waiting_text(tr, answer.detail)
        case Asked.LEFT:
            return tr._("🚪 You no longer wait for a quick game.")
        case Asked.ABSENT:
            return tr._(NOT_WAITING)
        case Asked.PLAYING:
            return tr._(ALREADY_PLAYING)
    return tr._(QUEUE_FULL)


def _answer_view(tr: Translator, answer: Queued) -> views.View:
    """The reply to /quick: waiting (with a button to stop), or why not."""
    if answer.outcome is Asked.QUEUED:
        return views.quick_waiting_view(tr, answer.detail)
    if answer.outcome is Asked.LEFT:
        return views.quick_left_view(tr)
    return views.page(tr, quick_answer_text(tr, answer))
