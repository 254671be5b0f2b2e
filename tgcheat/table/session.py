"""A group's session: its lobby or game (and match), and the messages that show it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from tgcheat.engine.lobby import Lobby
from tgcheat.engine.match import Match
from tgcheat.engine.rules import Rules
from tgcheat.engine.state import GameState, Phase
from tgcheat.engine.strategies import ComputerPlayers
from tgcheat.table.chronicle import GameTally, Notice
from tgcheat.table.place import Place
from tgcheat.table.story import Story
from tgcheat.table.told import Told

#: Turns at least this long (the correspondence pace: a day) remind the player in private…
LONG_TURN_S = 6 * 3600
#: … this long after the wait began.
REMIND_AFTER_S = 4 * 3600


@dataclass(frozen=True, slots=True)
class LobbyClock:
    """What an open lobby's clock counts from (``tgcheat.table.clock.lobby_clock_deadline``)."""

    #: The lobby's last event the clock counts from, in Unix milliseconds: its opening, the
    #: last join, the moment the rules made it full, or the moment any player was let start it.
    #: A full lobby is dealt ``FULL_LOBBY_COUNTDOWN_S`` after it; any other closes
    #: ``LOBBY_TIMEOUT_S`` after it.
    touched_ms: int
    #: When the lobby last reached its minimum of players; 0 while it has fewer. From
    #: ``ANY_PLAYER_MAY_START_AFTER_S`` later, any player in it may start the game.
    minimum_reached_ms: int = 0


@dataclass(frozen=True, slots=True)
class Session:
    """A group's current lobby or game (a finished game stays until the next /new)."""

    chat_id: int
    #: A random token per lobby; buttons carry it, so a button of an older game is stale.
    game_id: str
    creator: int
    lobby: Lobby | None = None
    game: GameState | None = None
    #: The group's title, shown in players' private messages.
    title: str = ""
    #: The language of the group's messages.
    language: str = "en"
    #: Each player's language for their private messages, by user id.
    player_languages: tuple[tuple[int, str], ...] = ()
    #: When the clock acts next (a turn or final-play timeout, a lobby's expiry), in Unix
    #: milliseconds; 0: never. Kept in a Redis sorted set too, so any process can fire it.
    deadline_ms: int = 0
    #: The match this game belongs to, when the rules play more than one game.
    match: Match | None = None
    #: The last thing that happened without anyone's press (a timeout, a removal).
    notice: Notice | None = None
    #: The game so far, for its summary at the end.
    tally: GameTally = field(default_factory=GameTally)
    #: The game's plays as they really were, told once it is over (``tgcheat.table.story``).
    story: Story = field(default_factory=Story)
    #: The open lobby's clock (None without a lobby, and in documents stored before lobbies
    #: had one: ``tgcheat.table.clock.lobby_clock_of`` then reads it from the deadline).
    lobby_clock: LobbyClock | None = None
    #: The computer players' levels, by their (negative) user ids (``tgcheat.table.computers``).
    computers: tuple[tuple[int, str], ...] = ()
    #: When the computer players act next, in Unix milliseconds; 0: none has anything to do
    #: until something changes.
    computers_due_ms: int = 0
    #: The game's computer players: each one's strategy and what it remembers of the game
    #: (None without computer players, and between games).
    computer_players: ComputerPlayers | None = None
    #: The forum topic the game was opened in (None: a chat without topics, or General).
    topic: int | None = None
    #: The topic's name, when Telegram showed it; players' private messages name it.
    topic_title: str = ""
    #: What players must be told of the game, as data (``tgcheat.table.told``): read by
    #: delivery, never rendered text.
    told: Told = field(default_factory=Told)
    #: When the game ended (Unix milliseconds); 0 while it goes on. The statistics skip a
    #: finished game for a person who asked to be forgotten after it (tgcheat.store.stats).
    ended_ms: int = 0
    #: When the game last changed (Unix ms): the time its table counts the seconds left from,
    #: so that the table drawn from the session is the same whenever it is drawn.
    changed_ms: int = 0
    #: The lobby closed because nobody started it in time (not cancelled).
    lobby_expired: bool = False
    #: The game ended without its group (the bot was removed, or the topic closed or
    #: deleted): nothing more is shown there, only in the players' private chats.
    without_group: bool = False
    #: Cards players picked on their hand keyboard and have not played yet: (user id, the
    #: game's play count they were picked at, one rank code per card). A pick of an earlier
    #: play is out of date.
    picks: tuple[tuple[int, int, str], ...] = ()
    #: The turn's deadline whose players were reminded in private (a long turn is reminded
    #: once, ``REMIND_AFTER_S`` after it began); 0: none.
    reminded_ms: int = 0

    @property
    def place(self) -> Place:
        """Where the session lives: its chat, and its topic."""
        return Place(self.chat_id, self.topic)

    @property
    def place_title(self) -> str:
        """How players' private messages name where the game is: the group, and its topic
        when the topic's name is known ("Friday · Cheat night")."""
        if self.topic_title and self.title:
            return f"{self.title} · {self.topic_title}"
        return self.title or self.topic_title

    @property
    def against_computer(self) -> bool:
        """A game in a person's private chat (/play): the table and the hand share it."""
        return self.chat_id > 0

    @property
    def quick(self) -> bool:
        """A quick game (/quick): no group; its table is shown in each person's private
        chat, in their language, with their hand below it."""
        return self.place.quick

    @property
    def private_table(self) -> bool:
        """The table is shown in the players' private chats, where their hands are (a game
        against the computer, a quick game)."""
        return self.against_computer or self.quick

    @property
    def next_deadline_ms(self) -> int:
        """When the clock acts next: the turn's deadline or the computer players' move,
        whichever comes first; 0: never."""
        due = [ms for ms in (self.deadline_ms, self.computers_due_ms, self.reminder_due_ms) if ms]
        return min(due) if due else 0

    @property
    def waiting_since_ms(self) -> int:
        """When the game began to wait for the players it waits for now (a turn's deadline
        less its length); 0 without a turn timer."""
        game = self.game
        if game is None or self.deadline_ms == 0 or game.rules.turn_timeout_s == 0:
            return 0
        return self.deadline_ms - 1000 * game.rules.turn_timeout_s

    @property
    def reminder_due_ms(self) -> int:
        """When the players a long turn waits for are reminded in private; 0: not due (a
        short turn, or reminded already)."""
        game = self.game
        if (
            game is None
            or game.phase is Phase.FINISHED
            or game.rules.turn_timeout_s < LONG_TURN_S
            or self.deadline_ms == 0
            or self.reminded_ms == self.deadline_ms
        ):
            return 0
        return self.waiting_since_ms + 1000 * REMIND_AFTER_S

    @property
    def reminded(self) -> bool:
        """The players the game waits for were reminded of this turn."""
        return self.reminded_ms != 0 and self.reminded_ms == self.deadline_ms

    def picked(self, user_id: int) -> str:
        """The cards the player picked for the game's current play ("" none)."""
        game = self.game
        for user, plays, selection in self.picks:
            if user == user_id and game is not None and game.plays == plays:
                return selection
        return ""

    def language_of(self, user_id: int) -> str:
        # A loop, not a generator: asked for every hand drawn.
        for uid, lang in self.player_languages:
            if uid == user_id:
                return lang
        return self.language

    @property
    def rules(self) -> Rules:
        """The rules of the lobby or game (a snapshot of the group's settings when opened)."""
        if self.game is not None:
            return self.game.rules
        assert self.lobby is not None
        return self.lobby.rules

    @property
    def in_progress(self) -> bool:
        """A lobby is open or a game is being played: a new one cannot be opened."""
        return self.lobby is not None or (
            self.game is not None and self.game.phase is not Phase.FINISHED
        )

    @property
    def live_game(self) -> GameState | None:
        """The game, while it is being played."""
        game = self.game
        return game if game is not None and game.phase is not Phase.FINISHED else None


@dataclass(frozen=True, slots=True)
class MessageIds:
    """The ids of the messages that show a session now: the table in the group and each
    player's hand in their private chat (read from what delivery recorded)."""

    table: int | None = None
    #: Each player's hand message, by user id.
    hands: Mapping[int, int] = field(default_factory=dict)
    #: Another message was posted below the table since.
    buried: bool = False

    def hand(self, user_id: int) -> int | None:
        return self.hands.get(user_id)
