"""What an operator watches: the process's figures in Prometheus's text format (`GET /metrics`).

Each process counts its own (updates, refusals, Bot API requests, budget refusals, the
delivery's lag, Redis round trips, Mini App streams): Prometheus scrapes every process and
sums them (``sum by (...) (rate(...))``). The games and lobbies in progress are the bot's as a
whole, counted in Redis when a scrape asks (``tgcheat.store.census``): every process reports
the same figure, so take its ``max``.

Every label has a bounded set of values (a method, a reason code, a priority, a kind of chat):
no chat, user or message id is ever a label. Names follow Prometheus's conventions: counters end
in ``_total``, durations are in seconds.

This module imports nothing of tgcheat, so that every layer may count here.
"""

from __future__ import annotations

import contextlib
import contextvars
import re
from collections.abc import Iterator
from dataclasses import dataclass

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.exposition import CONTENT_TYPE_LATEST

__all__ = [
    "BOT_API_REQUESTS",
    "CONTENT_TYPE",
    "DELIVERY_LAG",
    "FLOODS",
    "MINIAPP_STREAMS",
    "PLACES_IN_PROGRESS",
    "REDIS_ROUND_TRIP",
    "REFUSALS",
    "REGISTRY",
    "SEND_BUDGET_REFUSALS",
    "UPDATES",
    "UpdateOutcome",
    "chat_kind",
    "exposition",
    "handling_update",
    "note_refused",
    "update_kind",
]

# The "_created" series (when each series was first seen) double what is served, and
# Prometheus's text format does not need them.
disable_created_metrics()  # type: ignore[no-untyped-call]

#: The bot's own registry (not the library's global one, which also holds the interpreter's
#: figures): what `/metrics` serves.
REGISTRY = CollectorRegistry(auto_describe=True)
CONTENT_TYPE = CONTENT_TYPE_LATEST

UPDATES = Counter(
    "tgcheat_updates",
    "Updates handled, by kind (press, command, message, membership, other) and outcome "
    "(ok, refused: answered with a refusal, failed: an error, Telegram delivers it again)",
    ["kind", "outcome"],
    registry=REGISTRY,
)
REFUSALS = Counter(
    "tgcheat_refusals",
    "Presses and commands turned down, by reason (the table's or the engine's reason code; "
    "answer: a request answered with a message instead, e.g. a command in the wrong chat)",
    ["reason"],
    registry=REGISTRY,
)
BOT_API_REQUESTS = Counter(
    "tgcheat_bot_api_requests",
    "Bot API requests the game made (messages sent, edited, deleted; button answers), by "
    "method and result (ok, flood: 429, refused: another 4xx, error: 5xx, network)",
    ["method", "result"],
    registry=REGISTRY,
)
FLOODS = Counter(
    "tgcheat_bot_api_floods",
    "Telegram's 429 Too Many Requests, by the kind of chat it was for (group, private)",
    ["chat_kind"],
    registry=REGISTRY,
)
SEND_BUDGET_REFUSALS = Counter(
    "tgcheat_send_budget_refusals",
    "Requests the bot-wide send budget held back for later, by priority (must: what a player "
    "must see to act; table: a table edit; later: the rest)",
    ["priority"],
    registry=REGISTRY,
)
DELIVERY_LAG = Histogram(
    "tgcheat_delivery_lag_seconds",
    "How long what players must see to act (their turn, a reveal, the table posted anew) "
    "waited: from the game's change to the request that shows it",
    buckets=(0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300),
    registry=REGISTRY,
)
REDIS_ROUND_TRIP = Histogram(
    "tgcheat_redis_round_trip_seconds",
    "Redis round trips of the store (a command, a script or a pipeline)",
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5),
    registry=REGISTRY,
)
MINIAPP_STREAMS = Gauge(
    "tgcheat_miniapp_streams_open",
    "Mini App live streams this process holds open",
    registry=REGISTRY,
)
PLACES_IN_PROGRESS = Gauge(
    "tgcheat_places_in_progress",
    "Lobbies and games in progress in the whole bot (counted in Redis at the scrape, among the "
    "places on the clock: every lobby, every game with a turn timer or computer players), by "
    "stage (lobby, game)",
    ["stage"],
    registry=REGISTRY,
)

#: The kinds of update the counters tell apart.
UPDATE_KINDS = ("press", "command", "message", "membership", "other")
#: A Bot API method name as a label: only a plain word (anything else is "other").
_METHOD = re.compile(r"[A-Za-z]{1,40}")


def update_kind(data: dict[str, object]) -> str:
    """The kind of an update, from its JSON (Telegram's or python-telegram-bot's to_dict)."""
    if "callback_query" in data:
        return "press"
    message = data.get("message")
    if isinstance(message, dict):
        text = message.get("text")
        return "command" if isinstance(text, str) and text.startswith("/") else "message"
    if "my_chat_member" in data or "chat_member" in data:
        return "membership"
    return "other"


def chat_kind(chat_id: int) -> str:
    """A group (or channel: a negative id) or a private chat: the only thing of a chat a
    label may say."""
    return "group" if chat_id < 0 else "private"


def method_label(method: str) -> str:
    return method if _METHOD.fullmatch(method) else "other"


def api_result(status: int) -> str:
    """A Bot API answer's HTTP status as a label."""
    if 200 <= status <= 299:
        return "ok"
    if status == 429:
        return "flood"
    if 400 <= status <= 499:
        return "refused"
    return "error"


@dataclass(slots=True)
class UpdateOutcome:
    """How the update being handled went; a refusal on the way marks it."""

    refused: bool = False
    failed: bool = False


_OUTCOME: contextvars.ContextVar[UpdateOutcome | None] = contextvars.ContextVar(
    "tgcheat_update_outcome", default=None
)


@contextlib.contextmanager
def handling_update(kind: str) -> Iterator[UpdateOutcome]:
    """While one update is handled: counted once at the end, with its outcome (an exception
    that escapes counts it failed; so does ``outcome.failed``, set by an error handler)."""
    outcome = UpdateOutcome()
    token = _OUTCOME.set(outcome)
    try:
        yield outcome
    except BaseException:
        outcome.failed = True
        raise
    finally:
        _OUTCOME.reset(token)
        result = "failed" if outcome.failed else "refused" if outcome.refused else "ok"
        UPDATES.labels(kind, result).inc()


def current_outcome() -> UpdateOutcome | None:
    return _OUTCOME.get()


def note_refused(reason: str) -> None:
    """A request turned down (``reason``: a code from a bounded set)."""
    REFUSALS.labels(reason).inc()
    outcome = _OUTCOME.get()
    if outcome is not None:
        outcome.refused = True


def exposition() -> bytes:
    """Every figure, in Prometheus's text format."""
    return generate_latest(REGISTRY)
