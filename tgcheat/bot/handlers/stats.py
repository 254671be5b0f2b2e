"""Statistics: /stats, /top, /profile (with its global board setting) and /forgetme (with its
confirmation button). The games are counted where a finished game is shown (``Publisher``);
these only read them, or delete a person's."""

from __future__ import annotations

from tgcheat.bot import views
from tgcheat.bot.callbacks import BoardPress, ForgetPress
from tgcheat.bot.handlers.shell import Answer, Asker, Command, Shell
from tgcheat.bot.taps import Tap
from tgcheat.i18n import N_
from tgcheat.table.place import Place
from tgcheat.table.rating import season_of
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
        """A group's leaderboards and rating boards (this season, all time); in private, the
        rating boards across groups."""
        shell = self.shell
        tr = await shell.language_of(command.asker)
        season = season_of(shell.clock())
        stats = shell.store.stats
        if not command.in_group:
            this_season = await stats.board(None, season)
            ever = await stats.board(None, None)
            await shell.tell(command.asker, views.global_board_view(tr, season, this_season, ever))
            return
        rows = await stats.group(command.chat_id)
        boards = views.group_board_lines(
            tr,
            season,
            await stats.board(command.chat_id, season),
            await stats.board(command.chat_id, None),
        )
        await shell.tell(command.asker, views.top_view(tr, command.title, rows, boards))

    async def profile(self, command: Command) -> None:
        """A person's rating, tier, season rank, games and achievements; in private with their
        board setting and sharing."""
        shell = self.shell
        tr = await shell.language_of(command.asker)
        profile = await shell.store.stats.profile(command.user_id, shell.clock())
        view = views.profile_view(
            tr,
            profile,
            command.name,
            in_private=not command.in_group,
            user_id=command.user_id,
            app_url=shell.delivery.app_url,
        )
        await shell.tell(command.asker, view)

    async def board_press(self, tap: Tap, press: BoardPress) -> None:
        """The global board setting: only the person named in it, in their own private chat."""
        if press.user_id != tap.user_id or tap.chat_id != tap.user_id:
            raise SessionRefused(SessionRefusal.NOT_ALLOWED)
        shell = self.shell
        tr = await shell.language_of(Asker(tap.user_id, tap.language_code))
        await shell.store.stats.set_hidden(tap.user_id, press.hidden, shell.clock())
        profile = await shell.store.stats.profile(tap.user_id, shell.clock())
        view = views.profile_view(
            tr,
            profile,
            "",
            in_private=True,
            user_id=tap.user_id,
            app_url=shell.delivery.app_url,
        )
        if tap.message_id is not None:
            await shell.sender.edit(tap.user_id, tap.message_id, view)
        await shell.sender.answer(tap.query_id)

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
        # Waiting for a quick game, they wait no longer.
        await shell.store.quick.forget(tap.user_id)
        done = views.page(tr, tr._(FORGOTTEN))
        if tap.message_id is not None:
            await shell.sender.edit(tap.user_id, tap.message_id, done)
        await shell.sender.answer(tap.query_id)
