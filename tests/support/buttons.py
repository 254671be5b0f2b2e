"""Finding the bot's buttons by what their callback data means."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tgcheat.bot.callbacks import BadCallback, Press, parse


def press_matcher(wanted: Callable[[Press], bool]) -> Callable[[dict[str, Any]], bool]:
    """A predicate for FakeTelegram.find_button: buttons whose data parses to a wanted press."""

    def matches(button: dict[str, Any]) -> bool:
        data = button.get("callback_data")
        if not data:
            return False
        try:
            return wanted(parse(str(data)))
        except BadCallback:
            return False

    return matches
