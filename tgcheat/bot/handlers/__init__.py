"""Telegram handlers, one module per concern; each parses, asks ``tgcheat.table`` for the change
inside ``store.transact`` and publishes what was committed. See ``routes`` for where each
update goes and ``shell`` for what they share."""

from tgcheat.bot.handlers.lobby import HELP_TEXT
from tgcheat.bot.handlers.routes import Routes
from tgcheat.bot.handlers.shell import Shell

__all__ = ["HELP_TEXT", "Routes", "Shell"]
