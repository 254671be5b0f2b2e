"""Where the store's data lives in Redis: the key names under a prefix, and the fields of a
session's hash.

Every key the store reads or writes is named here, so that a module of one concern and a script
of another agree on them (a compare-and-set also sets the clock's deadline and spends the
group's budget).
"""

from __future__ import annotations

from tgcheat.table.place import Place

KEY_PREFIX = "tgc"

# A session hash holds the version, the document, the ids of the messages that show the game
# and the updates that changed it, one field each: one read gets them all, and they expire
# together.
VERSION_FIELD = "v"
DOCUMENT_FIELD = "d"
#: The ids of the last updates that changed the session (tgcheat.store.scripts.UPDATE_MARKS).
UPDATES_FIELD = "u"
#: The prefix of every message id's field ("m:table", "m:hand:<user id>", "m:told:<user id>").
MESSAGE_FIELD = "m:"
#: The prefix of the fields that say which version each message shows ("m:s:table",
#: "m:s:hand:<user id>"): message fields, so they go with the message ids.
SHOWN_FIELD = MESSAGE_FIELD + "s:"
#: The prefix of the fields that keep the line a former table message became ("m:h:<message
#: id>"), so that an older edit landing on it later can be undone.
HISTORY_FIELD = MESSAGE_FIELD + "h:"


class Keys:
    """The names of the keys of one store (one prefix)."""

    def __init__(self, prefix: str = KEY_PREFIX) -> None:
        self.prefix = prefix
        #: A sorted set: each place with a deadline (``Place.key``), scored by it (ms).
        self.deadlines = f"{prefix}:deadlines"
        #: A sorted set: each place whose table edit waits for its budget, scored by when.
        self.deferred_tables = f"{prefix}:deferred-tables"

    def session(self, place: Place) -> str:
        """A group's (or a topic's) session hash (see the fields above)."""
        return f"{self.prefix}:chat:{place.key}"

    def sessions_of(self, chat_id: int) -> str:
        """A pattern that matches the session of each topic of a chat (not the chat's own)."""
        return f"{self.prefix}:chat:{chat_id}:*"

    def budget(self, place: Place) -> str:
        """A place's message budget (a token bucket) and what waits there for the clock."""
        return f"{self.prefix}:rate:{place.key}"

    def group(self, chat_id: int) -> str:
        """A group's settings hash."""
        return f"{self.prefix}:group:{chat_id}"

    def user(self, user_id: int) -> str:
        """A user's settings hash."""
        return f"{self.prefix}:user:{user_id}"

    def pings(self, chat_id: int) -> str:
        """The people a group's next game is announced to in private (tgcheat.store.pings)."""
        return f"{self.prefix}:ping:{chat_id}"

    def failures(self, update_id: int) -> str:
        """How many deliveries of an update failed (tgcheat.store.deliveries)."""
        return f"{self.prefix}:fail:{update_id}"

    def person_stats(self, user_id: int) -> str:
        """A person's statistics across groups (tgcheat.store.stats)."""
        return f"{self.prefix}:stats:user:{user_id}"

    def chat_stats(self, chat_id: int) -> str:
        """A chat's statistics: a group's table, and the games counted in the chat."""
        return f"{self.prefix}:stats:chat:{chat_id}"

    @property
    def changes(self) -> str:
        """The pub/sub channel each committed change of a session is announced on (the Mini
        App's live updates, tgcheat.store.changes): one for every place, so that a web process
        holds one subscription whatever the number of open Mini Apps."""
        return f"{self.prefix}:changes"

    def app_request(self, signature: str, request_id: str) -> str:
        """A Mini App request already carried out: its initData's signature and the page's id
        for the request (tgcheat.store.changes.AppRequests)."""
        return f"{self.prefix}:app:req:{signature}:{request_id}"
