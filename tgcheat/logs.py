"""The program's log: lines for a person (`LOG_FORMAT=text`, the default) or one JSON object a
line for a log platform (`LOG_FORMAT=json`), with the fields a record carries (an update's id,
its chat, a failure's cause) as fields of their own, and a traceback inside its line.

A failed update is logged by ``update_failed`` only: one record with its cause, the chat and the
update id, whichever path (webhook or long polling) it came by.
"""

from __future__ import annotations

import datetime
import logging
import sys
from typing import Any

import orjson

__all__ = ["FIELDS", "LOG_FORMATS", "JsonFormatter", "cause_of", "configure", "update_failed"]

LOG_FORMATS = ("text", "json")
#: The fields of ours a record may carry (``extra=``), written out by the JSON format.
FIELDS = ("update_id", "chat_id", "kind", "cause", "try_number", "tries")
_TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time (UTC, ISO 8601), level, logger, message, our fields, and
    the traceback (``exception``) when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.datetime.fromtimestamp(record.created, datetime.UTC).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name in FIELDS:
            value = record.__dict__.get(name)
            if value is not None:
                entry[name] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            entry["exception"] = record.exc_text
        return orjson.dumps(entry, default=str).decode()


def configure(level: str, log_format: str = "text") -> None:
    """The root logger's handler on stderr, in ``log_format`` ("text" or "json"), unless it
    has one already."""
    handler = logging.StreamHandler(sys.stderr)
    json = log_format == "json"
    handler.setFormatter(JsonFormatter() if json else logging.Formatter(_TEXT_FORMAT))
    # As logging.basicConfig: nothing changes when the root logger has handlers already.
    logging.basicConfig(level=level, handlers=[handler])
    # httpx logs every request at INFO with its URL, and a Bot API URL contains the token.
    logging.getLogger("httpx").setLevel(max(logging.WARNING, logging.getLevelName(level)))
    logging.getLogger("httpcore").setLevel(logging.WARNING)


def cause_of(error: BaseException | None) -> str:
    """An exception in one line: its type and its message."""
    if error is None:
        return "unknown"
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def update_failed(
    logger: logging.Logger,
    update_id: int | None,
    chat_id: int | None,
    error: BaseException | None,
    *,
    kind: str | None = None,
    message: str = "",
    level: int = logging.ERROR,
    **fields: Any,
) -> None:
    """The one record of a failed update: its id, its chat, its cause (``message`` says what
    follows: tried again, given up)."""
    cause = cause_of(error)
    where = f" in chat {chat_id}" if chat_id is not None else ""
    text = f"Update {update_id}{where} failed: {cause}"
    logger.log(
        level,
        f"{text}; {message}" if message else text,
        exc_info=error if error is not None else None,
        extra={"update_id": update_id, "chat_id": chat_id, "kind": kind, "cause": cause, **fields},
    )
