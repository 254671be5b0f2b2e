"""The ids of the messages that show a group's session: the table in the group, each player's
hand in their private chat, and the players the group was told cannot be reached.

They are fields of the session's hash (tgcheat.store.keys), so one read gets them with the
session and they expire with it. What is written here is also written into this process's hint
of the chat (tgcheat.store.hints), which a change may start from instead of reading.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from redis.asyncio import Redis

from tgcheat.store.direct import DirectCommands
from tgcheat.store.hints import ChatHints
from tgcheat.store.keys import HISTORY_FIELD, MESSAGE_FIELD, SHOWN_FIELD, Keys
from tgcheat.store.scripts import (
    CLEAR_MESSAGES_SCRIPT,
    RECORD_SCRIPT,
    SET_MESSAGES_SCRIPT,
    clear_messages_call,
    record_call,
    set_messages_call,
)
from tgcheat.store.timeout import bounded
from tgcheat.table.place import Place, Where
from tgcheat.table.session import MessageIds

# The names after MESSAGE_FIELD: "table", "hand:<user id>" (the message id),
# "told:<user id>" (1: the group was told), "buried" (1: the table is not the last message),
# "old:<user id>:<message id>" (a former hand message left until the game ends) and
# "btn:<user id>:<message id>" (a hand message last drawn with buttons).
_TABLE = "table"
#: The version the table was last drawn from ("m:s:table", kept by RECORD_SCRIPT).
_TABLE_SHOWN = SHOWN_FIELD[len(MESSAGE_FIELD) :] + _TABLE
_HAND = "hand:"
_TOLD = "told:"
_BURIED = "buried"
#: Written by RECORD_SCRIPT alone (tgcheat.store.scripts).
_RETIRED = "old:"
TABLE_FIELD = MESSAGE_FIELD + _TABLE
_NO_IDS = MessageIds()


class Added(NamedTuple):
    """What keeping the ids of messages just sent found (``Messages.add``)."""

    became_history: bool = False
    displaced: int | None = None


class Messages:
    def __init__(self, redis: Redis, direct: DirectCommands, keys: Keys, hints: ChatHints) -> None:
        self._direct = direct
        self._keys = keys
        self._hints = hints
        self._set = redis.register_script(SET_MESSAGES_SCRIPT)
        self._clear = redis.register_script(CLEAR_MESSAGES_SCRIPT)
        self._record = redis.register_script(RECORD_SCRIPT)

    async def add(
        self,
        where: Where,
        ids: MessageIds,
        *,
        history: tuple[int, str] | None = None,
        former: int | None = None,
        replacing: int | None = None,
        table_version: int = 0,
    ) -> Added:
        """Keep the ids of messages just sent (merged into those kept), and ``history``: the
        line a former table message (its id) becomes. Kept only while the session is: ids of
        messages sent as it went away are dropped. ``became_history`` when ``former`` (a table
        message this process replaced) has become a line of the history meanwhile (another
        process moved the table): it stays. ``displaced``: a new table ``ids`` names was posted
        in place of ``replacing``, but the table kept was another one, not a line of the
        history (another process posted one anew from the same old table): it is no longer
        the table, and must go. ``table_version``: the version the new table was drawn from,
        kept with its id (unless a newer one is), so that the clock finds it out at once."""
        if ids.empty:
            return Added()
        place = Place.of(where)
        self._hints.add_messages(place, ids)
        fields: list[tuple[str, int | str]] = list(message_fields(ids))
        if history is not None:
            message_id, line = history
            fields.append((f"{HISTORY_FIELD}{message_id}", line))
        call = set_messages_call(
            session_key=self._keys.session(place),
            fields=fields,
            former=former,
            replacing=replacing if ids.table is not None else None,
            table_version=table_version if ids.table is not None else 0,
        )
        answer = await bounded(self._direct.run_script(self._set, call.keys, call.args))
        if not isinstance(answer, list):
            return Added()
        code, displaced = (int(part) for part in answer)
        return Added(became_history=code == 2, displaced=displaced or None)

    async def record(
        self,
        where: Where,
        version: int,
        now_ms: int,
        *,
        ids: MessageIds = _NO_IDS,
        shown: Iterable[str] = (),
        table_message: int | None = None,
        hand_messages: Iterable[HandMessage] = (),
    ) -> Recorded:
        """Keep ``ids`` (as ``add``) and that the messages ``shown`` ("table",
        "hand:<user id>", see ``hand_role``) were drawn from ``version``; those a newer
        version was shown in already are shown again by the clock (RECORD_SCRIPT).
        ``table_message``: where the table was shown, which may have become a line of the
        history meanwhile."""
        roles = tuple(shown)
        hands = tuple(hand_messages)
        if ids.empty and not roles and not hands:
            return _NOTHING_RECORDED
        place = Place.of(where)
        if not ids.empty:
            self._hints.add_messages(place, ids)
        call = record_call(
            session_key=self._keys.session(place),
            waiting_key=self._keys.waiting(place),
            deferred_key=self._keys.deferred_tables(place.chat_id),
            place=place.key,
            version=version,
            now_ms=now_ms,
            fields=message_fields(ids),
            shown=roles,
            table_message=table_message,
            hand_messages=((h.user_id, h.message_id, h.what) for h in hands),
        )
        overtaken, history, gone = await bounded(
            self._direct.run_script(self._record, call.keys, call.args)
        )
        return Recorded(
            tuple(_text(role) for role in overtaken or ()),
            _text(history) if history else None,
            tuple(_user_and_message(_text(entry)) for entry in gone or ()),
        )

    async def clear(self, where: Where, *, keep_table: bool = False) -> None:
        """Forget the message ids of a finished game (all but the table's, and the version it
        shows, with ``keep_table``: the clock must know its result is out)."""
        place = Place.of(where)
        self._hints.drop_latest(place)
        kept = (TABLE_FIELD, MESSAGE_FIELD + _TABLE_SHOWN) if keep_table else ()
        call = clear_messages_call(session_key=self._keys.session(place), keep=kept)
        await bounded(self._clear(keys=call.keys, args=call.args))


TABLE_ROLE = "table"


class Recorded(NamedTuple):
    """What ``Messages.record`` found."""

    #: The roles of messages a newer version reached first (the clock shows them again).
    overtaken: tuple[str, ...]
    #: The line of the history the table message shown has become, if it has.
    history: str | None
    #: Former hand messages to delete now (user id, message id): one was given buttons again
    #: by an edit that reached it late.
    gone: tuple[tuple[int, int], ...] = ()


class HandMessage(NamedTuple):
    """A hand message just shown, with buttons or without, or a former one left in place."""

    user_id: int
    message_id: int
    #: "b": shown with buttons; "n": shown without; "r": a former hand left in place.
    what: str


#: What a ``HandMessage`` is.
WITH_BUTTONS, WITHOUT_BUTTONS, FORMER_HAND = "b", "n", "r"

_NOTHING_RECORDED = Recorded((), None)


def _user_and_message(entry: str) -> tuple[int, int]:
    user, _, message = entry.partition(":")
    return int(user), int(message)


def _text(raw: bytes | str) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)


def hand_role(user_id: int) -> str:
    """The role of a player's hand message in ``Messages.record``."""
    return f"hand:{user_id}"


def message_ids(fields: dict[bytes, bytes]) -> MessageIds:
    """The message ids among a session hash's fields (the version and document removed)."""
    table = None
    hands: dict[int, int] = {}
    told: set[int] = set()
    buried = False
    retired: set[tuple[int, int]] = set()
    table_version = 0
    prefix = len(MESSAGE_FIELD)
    for raw_name, value in fields.items():
        name = raw_name[prefix:].decode()
        if name == _TABLE:
            table = int(value)
        elif name == _BURIED:
            buried = value == b"1"
        elif name == _TABLE_SHOWN:
            table_version = int(value)
        elif name.startswith(_HAND):
            hands[int(name[len(_HAND) :])] = int(value)
        elif name.startswith(_TOLD):
            told.add(int(name[len(_TOLD) :]))
        elif name.startswith(_RETIRED):
            user_id, _, message_id = name[len(_RETIRED) :].partition(":")
            retired.add((int(user_id), int(message_id)))
    return MessageIds(
        table, hands, frozenset(told), buried, frozenset(retired), table_version=table_version
    )


def message_fields(ids: MessageIds) -> list[tuple[str, int]]:
    """The session hash's fields and values that keep ``ids``."""
    fields = [(f"{MESSAGE_FIELD}{_HAND}{user_id}", mid) for user_id, mid in ids.hands.items()]
    fields += [(f"{MESSAGE_FIELD}{_TOLD}{user_id}", 1) for user_id in ids.told]
    if ids.table is not None:
        fields.append((TABLE_FIELD, ids.table))
    if ids.table is not None or ids.buried:
        fields.append((MESSAGE_FIELD + _BURIED, int(ids.buried)))
    return fields
