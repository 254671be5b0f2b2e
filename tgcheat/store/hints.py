"""What this process last saw of each chat: a hint that may save a read, never the truth.

Two hints per chat. The latest version and session: a change may start from them instead of
reading, because the compare-and-set proves them current (tgcheat.store.sessions). And the last
stored document with its decoded session, so that reading the same document again skips
decoding it (sessions are immutable).
"""

from __future__ import annotations

from tgcheat.table.place import Place
from tgcheat.table.session import Session

#: How many chats' hints one process keeps (a busy process's working set); past that, all are
#: dropped at once (cheaper than tracking which is oldest).
CACHE_CHATS = 10_000

#: A chat's version and session.
Latest = tuple[int, Session | None]


class ChatHints:
    def __init__(self) -> None:
        self._latest: dict[Place, Latest] = {}
        self._decoded: dict[Place, tuple[bytes, Session]] = {}

    def remember(self, place: Place, version: int, session: Session | None) -> None:
        if len(self._latest) >= CACHE_CHATS:
            self._latest.clear()
        self._latest[place] = (version, session)

    def take(self, place: Place) -> Latest | None:
        """The chat's latest hint, removed: a change that starts from it replaces it."""
        return self._latest.pop(place, None)

    def forget(self, place: Place) -> None:
        """The chat's session is gone."""
        self._latest.pop(place, None)
        self._decoded.pop(place, None)

    def decoded(self, place: Place, document: bytes) -> Session | None:
        """The session of ``document``, when it is the last one decoded for the chat."""
        known = self._decoded.get(place)
        if known is not None and known[0] == document:
            return known[1]
        return None

    def keep_decoded(self, place: Place, document: bytes, session: Session) -> None:
        if len(self._decoded) >= CACHE_CHATS:
            self._decoded.clear()
        self._decoded[place] = (document, session)
