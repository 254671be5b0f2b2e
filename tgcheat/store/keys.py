"""Where the store's data lives in Redis: the key names under a prefix, and the fields of a
session's hash.

Every key the store reads or writes is named here, so that a module of one concern and a script
of another agree on them (a compare-and-set also sets the clock's deadline and spends the
group's budget).

The names are those of a Redis Cluster as much as of a single server: a script or a transaction
may only touch keys of one hash slot there. So every key of one chat — the sessions of the chat
and of its topics, its message budget and what waits there, its settings, its next-game
sign-ups, its statistics — carries the hash tag of its shard (``{s17}``), and the clock's
sorted sets are split into ``SHARDS`` fixed shards, each tagged like the chats it holds
(``tgc:{s17}:deadlines``): one script touches one slot. A shard is the chat id modulo
``SHARDS``. Per-person keys (a user's settings, a person's statistics) and an update's failures
have no tag: each is its own slot, only touched by scripts of one key.

``SHARDS`` never changes without moving the keys (``tgcheat.store.migration``): a chat's keys
would be looked for under another tag.
"""

from __future__ import annotations

from tgcheat.table.place import Place, Where

KEY_PREFIX = "tgc"

#: The clock's sorted sets are split into this many shards, the chats spread over them by id.
#: 64: enough to spread the chats over the masters of any cluster the bot may run on, few
#: enough that the clock reads them all in one pipeline each tick.
SHARDS = 64

# A session hash holds the version, the document, the ids of the messages that show the game
# and the updates that changed it, one field each: one read gets them all, and they expire
# together.
VERSION_FIELD = "v"
DOCUMENT_FIELD = "d"
#: The ids of the last updates that changed the session (tgcheat.store.scripts.UPDATE_MARKS).
UPDATES_FIELD = "u"
#: The prefix of the message id fields an earlier version kept ("m:table", "m:hand:<user id>"):
#: read once, when a live game's place is first synced (``tgcheat.store.shown``).
LEGACY_MESSAGE_FIELD = "m:"
#: What Telegram confirmed the place's chats show (``tgcheat.store.shown``), as JSON.
SHOWN_FIELD = "s"
#: The place's lease: the process that syncs it now ("<token> <until ms>").
LEASE_FIELD = "l"
#: How many messages others posted below the place's table (replies to commands): its sync
#: brings the table down when this moved.
BURIED_FIELD = "b"
#: How often a sync that lost its lease asked for the place's messages to be checked again (an
#: edit of it may have landed after the new holder's): its next sync edits every message.
RECHECK_FIELD = "x"


def shard_of(chat_id: int) -> int:
    """The shard of a chat (0..SHARDS-1; Python's modulo is never negative, as group ids are)."""
    return chat_id % SHARDS


class Keys:
    """The names of the keys of one store (one prefix)."""

    def __init__(self, prefix: str = KEY_PREFIX) -> None:
        if "{" in prefix or "}" in prefix:
            # A brace in the prefix would become the hash tag of every key.
            raise ValueError(f"a key prefix may not hold {{ or }}: {prefix!r}")
        self.prefix = prefix

    def tag(self, chat_id: int) -> str:
        """The start of every key of a chat: the prefix and its shard's hash tag."""
        return f"{self.prefix}:{{s{shard_of(chat_id)}}}"

    def shard_tag(self, shard: int) -> str:
        return f"{self.prefix}:{{s{shard}}}"

    def deadlines(self, chat_id: int) -> str:
        """A sorted set of the chat's shard: each place with a deadline (``Place.key``), scored
        by it (ms)."""
        return self.deadlines_of_shard(shard_of(chat_id))

    @property
    def shards(self) -> range:
        return range(SHARDS)

    def deadlines_of_shard(self, shard: int) -> str:
        return f"{self.shard_tag(shard)}:deadlines"

    def due(self, chat_id: int) -> str:
        """A sorted set of the chat's shard: each place with something left to sync (what a
        budget or a flood wait held back, or a sync under way whose process may die), scored
        by when the clock is to sync it."""
        return self.due_of_shard(shard_of(chat_id))

    def due_of_shard(self, shard: int) -> str:
        return f"{self.shard_tag(shard)}:due"

    def deferred_tables_of_shard(self, shard: int) -> str:
        """An earlier version's due set (``tgcheat.store.migration`` empties it)."""
        return f"{self.shard_tag(shard)}:deferred-tables"

    def session(self, where: Where) -> str:
        """A group's (or a topic's) session hash (see the fields above)."""
        place = Place.of(where)
        return f"{self.tag(place.chat_id)}:chat:{place.key}"

    def sessions_of(self, chat_id: int) -> str:
        """A pattern that matches the session of each topic of a chat (not the chat's own)."""
        return f"{self.tag(chat_id)}:chat:{chat_id}:*"

    def bucket(self, chat_id: int) -> str:
        """A group's message budget (a token bucket) and its flood wait, shared by its topics:
        Telegram's limit is the group's."""
        return f"{self.tag(chat_id)}:rate:{chat_id}"

    def group(self, chat_id: int) -> str:
        """A group's settings hash."""
        return f"{self.tag(chat_id)}:group:{chat_id}"

    def send_budget(self) -> str:
        """The bot's budget of messages across all chats (tgcheat.store.send_budget): one key
        in a slot of its own."""
        return f"{self.prefix}:{{send}}:budget"

    def send_floods(self) -> str:
        """The chats that got a 429 in the last second (tgcheat.store.send_budget): in the send
        budget's slot, as the script that reads it writes the budget too."""
        return f"{self.prefix}:{{send}}:floods"

    def user(self, user_id: int) -> str:
        """A user's settings hash."""
        return f"{self.prefix}:user:{user_id}"

    def replies(self, asker_id: int) -> str:
        """What one person's commands may still cost in replies (tgcheat.store.send_budget.
        ReplyBudget): a person's id, or a group's for those who write as a chat there."""
        return f"{self.prefix}:replies:{asker_id}"

    def pings(self, chat_id: int) -> str:
        """The people a group's next game is announced to in private (tgcheat.store.pings)."""
        return f"{self.tag(chat_id)}:ping:{chat_id}"

    def failures(self, update_id: int) -> str:
        """How many deliveries of an update failed (tgcheat.store.deliveries)."""
        return f"{self.prefix}:fail:{update_id}"

    def person_stats(self, user_id: int) -> str:
        """A person's statistics across groups (tgcheat.store.stats)."""
        return f"{self.prefix}:stats:user:{user_id}"

    def chat_stats(self, chat_id: int) -> str:
        """A chat's statistics: a group's table, and the games counted in the chat."""
        return f"{self.tag(chat_id)}:stats:chat:{chat_id}"

    def group_board(self, chat_id: int, season: int | None = None) -> str:
        """A group's rating board (a sorted set of user ids by the rating shown): of a season
        (``tgcheat.table.rating.season_of``), or of all time (None). In the chat's slot: the
        chat's statistics script writes them with its hash."""
        scope = "all" if season is None else str(season)
        return f"{self.tag(chat_id)}:board:{chat_id}:{scope}"

    def global_board(self, season: int | None = None) -> str:
        """The rating board across groups of the people who did not opt out: of a season, or of
        all time (None)."""
        scope = "all" if season is None else str(season)
        return f"{self.prefix}:board:global:{scope}"

    @property
    def changes(self) -> str:
        """The pub/sub channel each committed change of a session is announced on (the Mini
        App's live updates, tgcheat.store.changes): one for every place, so that a web process
        holds one subscription whatever the number of open Mini Apps."""
        return f"{self.prefix}:changes"

    def played_places(self, user_id: int) -> str:
        """Where a person was dealt a hand lately (tgcheat.store.changes.PlayedPlaces)."""
        return f"{self.prefix}:user:{user_id}:played"

    def watching(self, where: Where) -> str:
        """Whose Mini App shows the place's game now (a hash: tgcheat.store.watching)."""
        place = Place.of(where)
        return f"{self.tag(place.chat_id)}:watching:{place.key}"

    def app_requests(self, user_id: int) -> str:
        """The Mini App requests a person had carried out lately (a sorted set:
        tgcheat.store.changes.AppRequests)."""
        return f"{self.prefix}:user:{user_id}:app"

    # The quick games' queue (tgcheat.store.quick): every key under one hash tag of its own, so
    # that one script matches the whole queue on a Redis Cluster too.

    def quick_queue(self) -> str:
        """Who waits for a quick game: a sorted set of user ids by when they asked (ms)."""
        return f"{self.prefix}:{{quick}}:queue"

    def quick_seekers(self) -> str:
        """What each person waiting is shown as: a hash of user id to "<language> <name>"."""
        return f"{self.prefix}:{{quick}}:seekers"

    def quick_playing(self) -> str:
        """The quick game each person matched plays: a hash of user id to the game's number."""
        return f"{self.prefix}:{{quick}}:playing"

    def quick_playing_until(self) -> str:
        """Until when each of those marks holds (a sorted set by ms): one past it is dropped."""
        return f"{self.prefix}:{{quick}}:until"

    def quick_games(self) -> str:
        """How many quick games were made: the next one's number."""
        return f"{self.prefix}:{{quick}}:games"

    def quick_made(self) -> str:
        """The tables made of the queue and not dealt yet: a hash of the game's number to its
        seating (JSON), kept until a process has dealt it."""
        return f"{self.prefix}:{{quick}}:made"

    def quick_made_due(self) -> str:
        """When each of those tables is dealt again should its process not have done it (a
        sorted set of game numbers by ms)."""
        return f"{self.prefix}:{{quick}}:made_due"
