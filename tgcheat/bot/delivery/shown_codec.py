"""The shown record (``tgcheat.bot.delivery.plan.Shown``) as the store keeps it: compact JSON,
chats as place keys ("-100123", "-100123:5") or person ids, so that a record read back plans
exactly what the one written would have."""

from __future__ import annotations

from typing import Any

import orjson

from tgcheat.bot.delivery.plan import Chat, Shown, ShownSlot, TurnedLine
from tgcheat.table.place import Place


def encode_shown(shown: Shown) -> bytes:
    document: dict[str, Any] = {
        "s": {
            name: [
                _chat(slot.chat),
                slot.message_id,
                slot.epoch,
                slot.digest,
                int(slot.buried),
                int(slot.acts),
            ]
            for name, slot in shown.slots.items()
        },
        "l": [[_chat(chat), log, seq] for chat, (log, seq) in shown.last_line.items()],
    }
    if shown.unreachable:
        document["u"] = sorted(shown.unreachable)
    if shown.buried_seen:
        document["b"] = shown.buried_seen
    if shown.counted:
        document["c"] = shown.counted
    if shown.news:
        document["n"] = shown.news
    if shown.recheck_seen:
        document["x"] = shown.recheck_seen
    if shown.held_since_ms:
        document["h"] = shown.held_since_ms
    if shown.turned:
        document["t"] = [
            [_chat(t.chat), t.message_id, t.log, t.seq, int(t.sure)] for t in shown.turned
        ]
    return orjson.dumps(document)


def decode_shown(raw: bytes | None) -> Shown:
    """The record ``raw`` holds; nothing shown yet for None."""
    if not raw:
        return Shown()
    document = orjson.loads(raw)
    slots = {
        name: ShownSlot(
            _of_chat(chat), int(message_id), str(epoch), str(digest), bool(buried), bool(acts)
        )
        for name, (chat, message_id, epoch, digest, buried, *rest) in document["s"].items()
        for acts in (rest[0] if rest else 1,)
    }
    last_line = {_of_chat(chat): (str(log), int(seq)) for chat, log, seq in document["l"]}
    return Shown(
        slots,
        last_line,
        unreachable=frozenset(int(user) for user in document.get("u", ())),
        buried_seen=int(document.get("b", 0)),
        counted=str(document.get("c", "")),
        news=str(document.get("n", "")),
        recheck_seen=int(document.get("x", 0)),
        held_since_ms=int(document.get("h", 0)),
        turned=tuple(
            TurnedLine(_of_chat(chat), int(message_id), str(log), int(seq), bool(sure))
            for chat, message_id, log, seq, sure in document.get("t", ())
        ),
    )


def _chat(chat: Chat) -> str | int:
    """A place by its key (a group or topic), a private chat by its id."""
    return chat.key if isinstance(chat, Place) else chat


def _of_chat(value: str | int) -> Chat:
    return Place.from_key(value) if isinstance(value, str) else value
