"""A quick game with anyone (/quick): the messages of the wait. The game itself is shown by
the table and hand views, in each player's private chat."""

from __future__ import annotations

from tgcheat.bot.callbacks import QuickPress
from tgcheat.bot.views.base import View, button, directed, keyboard, page
from tgcheat.i18n import Translator
from tgcheat.table.quick import FILL_AFTER_MS


def quick_waiting_text(tr: Translator, waiting: int, *, in_chat: bool = True) -> str:
    """Waiting for a quick game: how many wait, and what comes next (``in_chat``: with how
    /quick stops it; the Mini App has a button)."""
    seconds = FILL_AFTER_MS // 1000
    return directed(
        tr,
        tr.ngettext(
            "⚡ Looking for players: {count} person is waiting.",
            "⚡ Looking for players: {count} people are waiting.",
            waiting,
        ).format(count=waiting)
        + "\n"
        + tr.ngettext(
            "The game starts within {seconds} second; computer players take the empty seats.",
            "The game starts within {seconds} seconds; computer players take the empty seats.",
            seconds,
        ).format(seconds=seconds)
        + "\n"
        + (
            tr._("The others see only your name. /quick again stops waiting.")
            if in_chat
            else tr._("The others see only your name.")
        ),
    )


def quick_waiting_view(tr: Translator, waiting: int) -> View:
    leave = QuickPress(join=False)
    markup = keyboard([[button(tr._("🚪 Stop waiting"), callback_data=leave.encode())]])
    return page(tr, quick_waiting_text(tr, waiting), markup)


def quick_found_view(tr: Translator) -> View:
    """The waiting message once the person's table is made: no button; the game follows."""
    return page(tr, tr._("⚡ Found a table: your game is below."))


def quick_left_view(tr: Translator) -> View:
    join = QuickPress(join=True)
    markup = keyboard([[button(tr._("⚡ Quick game"), callback_data=join.encode())]])
    return page(tr, tr._("🚪 You no longer wait for a quick game."), markup)
