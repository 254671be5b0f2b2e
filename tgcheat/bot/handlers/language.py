"""/language and its buttons: the language of a group's game messages (an admin), or of a
person's own private messages."""

from __future__ import annotations

from tgcheat.bot import views
from tgcheat.bot.callbacks import LanguagePress
from tgcheat.bot.handlers.shell import Answer, Command, Shell
from tgcheat.bot.taps import Tap
from tgcheat.i18n import N_, available_languages, translator
from tgcheat.table import transitions as table
from tgcheat.table.place import Place
from tgcheat.table.refusals import SessionRefusal, SessionRefused


class LanguageHandlers:
    def __init__(self, shell: Shell) -> None:
        self.shell = shell

    async def language(self, command: Command) -> None:
        shell = self.shell
        tr = await shell.language_of(command.asker)
        chat_id = command.chat_id
        if not command.in_group:
            await shell.tell(command.asker, views.language_view(tr, chat_id, tr.language, False))
            return
        if not await shell.is_admin(chat_id, command.user_id):
            raise Answer(N_("Only a group admin can change its language."))
        current = await shell.store.settings.group_language(chat_id) or tr.language
        await shell.tell(command.asker, views.language_view(tr, chat_id, current, True))

    async def press(self, tap: Tap, press: LanguagePress) -> None:
        shell = self.shell
        language = press.language
        menu = shell.menu_message(tap, press.chat_id)
        if language not in available_languages():
            raise SessionRefused(SessionRefusal.STALE)
        if press.for_group:
            if not await shell.is_admin(press.chat_id, tap.user_id):
                raise SessionRefused(SessionRefusal.NOT_ALLOWED)
            await shell.store.settings.save_group_language(press.chat_id, language)
            await self._show_in(press.chat_id, language)
        elif press.chat_id == tap.user_id:
            await shell.store.settings.save_user_language(tap.user_id, language)
        else:
            raise SessionRefused(SessionRefusal.STALE)
        chosen = translator(language)
        await shell.sender.answer(tap.query_id, chosen._("Language saved."))
        view = views.language_view(chosen, press.chat_id, language, press.for_group)
        await shell.sender.edit(press.chat_id, menu, view)

    async def _show_in(self, chat_id: int, language: str) -> None:
        """The open lobby or game switches too: its table is re-drawn whole in the new
        language, never half in one and half in another."""
        shell = self.shell
        committed = await shell.store.transact(
            chat_id, lambda session: (table.set_language(session, language), None), lease=True
        )
        if committed.changed:
            await shell.show(Place(chat_id), committed)
