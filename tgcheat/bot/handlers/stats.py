"""Statistics: /stats, /top and /forgetme (with its confirmation button). The games are counted
where a finished game is shown (``Publisher``); these only read them, or delete a person's."""

from __future__ import annotations

from tgcheat.bot import views
from tgcheat.bot.callbacks import ForgetPress
from tgcheat.bot.handlers.shell import Answer, Asker, Command, Shell
from tgcheat.bot.taps import Tap
from tgcheat.i18n import N_
from tgcheat.table.place import Place
from tgcheat.table.refusals import SessionRefusal, SessionRefused

FORGOTTEN = N_("🗑 Done: your statistics and your settings are deleted.")


class StatsHandlers:
    def __init__(self, shell: Shell) -> None:
        self.shell = shell

    async def stats(self, command: Command) -> None:
        """In a group: the asker's figures there and its best; in private: their own across
        groups."""
        shell = self.shell
        tr = await shell.language_of(command.asker)
        if not command.in_group:
            row = await shell.store.stats.person(command.user_id)
            await shell.tell(command.asker, views.my_stats_view(tr, row))
            return
        rows = await shell.store.stats.group(command.chat_id)
        view = views.group_stats_view(tr, command.name, rows, command.user_id)
        await shell.tell(command.asker, view)

    async def top(self, command: Command) -> None:
        """A group's leaderboards."""
        if not command.in_group:
            raise Answer(N_("Send /top in a group to see its best players."))
        shell = self.shell
        tr = await shell.language_of(command.asker)
        rows = await shell.store.stats.group(command.chat_id)
        await shell.tell(command.asker, views.top_view(tr, command.title, rows))

    async def forget_me(self, command: Command) -> None:
        """/forgetme asks first (it may be sent by mistake), and only in private: a group's
        members need not see it, nor the answer."""
        if command.in_group:
            raise Answer(N_("Send /forgetme in our private chat."))
        tr = await self.shell.language_of(command.asker)
        await self.shell.tell(command.asker, views.forget_view(tr, command.user_id))

    async def forget_press(self, tap: Tap, press: ForgetPress) -> None:
        """The confirmation: only the person named in it, in their own private chat."""
        if press.user_id != tap.user_id or tap.chat_id != tap.user_id:
            raise SessionRefused(SessionRefusal.NOT_ALLOWED)
        shell = self.shell
        # The answer's language is read before the setting goes.
        tr = await shell.language_of(Asker(tap.user_id, tap.language_code))
        await shell.store.stats.forget_person(tap.user_id, shell.clock())
        # Their games against the computer are theirs alone: they go too.
        await shell.store.forget_place(Place(tap.user_id))
        done = views.page(tr, tr._(FORGOTTEN))
        if tap.message_id is not None:
            await shell.sender.edit(tap.user_id, tap.message_id, done)
        await shell.sender.answer(tap.query_id)
