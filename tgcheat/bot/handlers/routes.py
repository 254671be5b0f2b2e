"""Where each update goes: commands and chat events through python-telegram-bot's handlers,
button presses by the type of their data. Every refusal on the way takes the one path of
``Shell.refuse``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from telegram import Update
from telegram.ext import (
    Application,
    CallbackQueryHandler,
    ChatMemberHandler,
    CommandHandler,
    ContextTypes,
    InlineQueryHandler,
    MessageHandler,
    filters,
)

from tgcheat.bot.callbacks import (
    BadCallback,
    BoardPress,
    ClaimPress,
    ComputerPress,
    ForgetPress,
    HandPress,
    LanguagePress,
    Op,
    QuickPress,
    SettingsPress,
    TablePress,
    TurnPress,
    parse,
)
from tgcheat.bot.handlers.inline import InlineHandlers
from tgcheat.bot.handlers.language import LanguageHandlers
from tgcheat.bot.handlers.lobby import LobbyHandlers
from tgcheat.bot.handlers.membership import MembershipHandlers
from tgcheat.bot.handlers.play import PlayHandlers
from tgcheat.bot.handlers.quick import QuickHandlers
from tgcheat.bot.handlers.settings import SettingsHandlers
from tgcheat.bot.handlers.shell import REFUSALS, Answer, Asker, Command, Shell, command_from
from tgcheat.bot.handlers.stats import StatsHandlers
from tgcheat.bot.handlers.story import StoryHandlers
from tgcheat.bot.taps import Tap, tap_from_update
from tgcheat.i18n import N_
from tgcheat.table.refusals import SessionRefusal, SessionRefused

CommandCallback = Callable[[Update, ContextTypes.DEFAULT_TYPE], Coroutine[Any, Any, None]]


class Routes:
    def __init__(self, shell: Shell) -> None:
        self.shell = shell
        self.lobby = LobbyHandlers(shell)
        self.play = PlayHandlers(shell)
        self.settings = SettingsHandlers(shell)
        self.language = LanguageHandlers(shell)
        self.membership = MembershipHandlers(shell)
        self.story = StoryHandlers(shell)
        self.stats = StatsHandlers(shell)
        self.inline = InlineHandlers(shell)
        self.quick = QuickHandlers(shell)

    def register(self, application: Application) -> None:  # type: ignore[type-arg]
        commands: dict[str, Callable[[Command], Awaitable[None]]] = {
            "new": self.lobby.new,
            "play": self.lobby.solo,
            "quick": self.quick.quick,
            "notify": self.lobby.notify,
            "start": self.lobby.start,
            "help": self.lobby.help,
            "join": self.lobby.join_command,
            "leave": self._leave,
            "stop": self.play.stop,
            "kick": self.membership.kick,
            "settings": self.settings.settings,
            "rules": self.settings.rules,
            "language": self.language.language,
            "stats": self.stats.stats,
            "top": self.stats.top,
            "forgetme": self.stats.forget_me,
            "profile": self.stats.profile,
        }
        # They only show something: a message written on behalf of a chat may ask for them.
        shown_to_anyone = {"start", "help", "rules"}
        for name, handle in commands.items():
            run = self._command(handle, persons_only=name not in shown_to_anyone)
            application.add_handler(CommandHandler(name, run))
        application.add_handler(CallbackQueryHandler(self._button))
        application.add_handler(InlineQueryHandler(self.inline.query))
        application.add_handler(
            MessageHandler(filters.StatusUpdate.LEFT_CHAT_MEMBER, self.membership.member_left)
        )
        application.add_handler(
            MessageHandler(filters.StatusUpdate.MIGRATE, self.membership.migrated)
        )
        application.add_handler(
            MessageHandler(filters.StatusUpdate.FORUM_TOPIC_CLOSED, self.membership.topic_closed)
        )
        application.add_handler(
            ChatMemberHandler(self.membership.bot_membership, ChatMemberHandler.MY_CHAT_MEMBER)
        )

    def _command(
        self, handle: Callable[[Command], Awaitable[None]], *, persons_only: bool
    ) -> CommandCallback:
        """``handle`` behind the one refusal path. A command written on behalf of a chat (a
        channel, an anonymous admin) comes from an account everyone who writes so shares: it
        is nobody to open, join, manage or play a game, so ``persons_only`` turns it down."""

        async def run(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
            command = command_from(update, context)
            if command is None:
                return
            try:
                if persons_only and command.asker.as_chat:
                    raise Answer(N_("To play, post as yourself (not as the group or a channel)."))
                await handle(command)
            except REFUSALS as refusal:
                await self.shell.refuse(command.asker, refusal)

        run.__qualname__ = f"Routes.command[{getattr(handle, '__qualname__', handle)}]"
        return run

    async def _leave(self, command: Command) -> None:
        """/leave: in a group, out of its lobby or game; in private, out of a quick game."""
        if command.in_group:
            await self.play.leave(command)
        else:
            await self.quick.leave(command)

    async def _button(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        tap = tap_from_update(update)
        if tap is not None:
            await self.tap(tap)

    async def tap(self, tap: Tap) -> None:
        """A button press, from the webhook's JSON or from polling's Update."""
        try:
            await self._dispatch(tap)
        except REFUSALS as refusal:
            asker = Asker(tap.user_id, tap.language_code, query_id=tap.query_id)
            await self.shell.refuse(asker, refusal)

    async def _dispatch(self, tap: Tap) -> None:
        try:
            press = parse(tap.data)
        except BadCallback:
            raise Answer(N_("This button is not valid.")) from None
        quick_table = isinstance(press, TablePress | ComputerPress) and press.place.quick
        if quick_table and press.op is not Op.STORY:
            # A quick table has no lobby, and is never made again by a press.
            raise SessionRefused(SessionRefusal.STALE)
        match press:
            case QuickPress():
                await self.quick.press(tap, press)
            case TablePress(op=Op.START):
                await self.lobby.deal(tap, press)
            case TablePress(op=Op.LEAVE):
                await self.lobby.leave(tap, press)
            case TablePress(op=Op.CANCEL):
                await self.lobby.cancel(tap, press)
            case TablePress(op=Op.PLAY_AGAIN):
                await self.lobby.play_again(tap, press)
            case TablePress(op=Op.NOTIFY):
                await self.lobby.notify_press(tap, press)
            case TablePress(op=Op.STORY):
                await self.story.tell(tap, press)
            case ComputerPress():
                await self.lobby.computer_seat(tap, press)
            case TablePress():
                await self.lobby.next_game(tap, press)
            case ClaimPress():
                await self.play.answer_claim(tap, press)
            case TurnPress():
                await self.play.turn(tap, press)
            case HandPress(op=Op.PLAY):
                await self.play.play(tap, press)
            case HandPress():
                await self.play.pick(tap, press)
            case SettingsPress():
                await self.settings.press(tap, press)
            case LanguagePress():
                await self.language.press(tap, press)
            case ForgetPress():
                await self.stats.forget_press(tap, press)
            case BoardPress():
                await self.stats.board_press(tap, press)
