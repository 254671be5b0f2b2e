"""The game's definition: every option of RULES.md, the presets, and their validation.

The engine branches on these fields, never on a preset's name (variants are data).
"""

from __future__ import annotations

import dataclasses
import enum
import typing
from dataclasses import dataclass
from typing import Any


class RankRule(enum.StrEnum):
    ASCENDING = "ascending"
    SAME = "same"
    FREE = "free"
    #: Each round the table draws the rank every claim must name (Liar's Bar).
    TABLE = "table"


class Challengers(enum.StrEnum):
    ANYONE = "anyone"
    NEXT = "next"


class AfterChallenge(enum.StrEnum):
    CONTINUE = "continue"
    WINNER_OPENS = "winner_opens"


class ChallengePriority(enum.StrEnum):
    FIRST = "first"
    CLOCKWISE = "clockwise"


class ChallengeWindow(enum.StrEnum):
    LAST = "last"
    TWO = "two"


class FinalCheck(enum.StrEnum):
    ALL = "all"
    NEXT = "next"


class Jokers(enum.StrEnum):
    OFF = "off"
    WILD = "wild"


class DeckKind(enum.StrEnum):
    #: 52 cards a deck (and the jokers of ``jokers``), every card dealt.
    STANDARD = "standard"
    #: Liar's Bar's deck: six each of A, K and Q (and the jokers of ``jokers``); five cards
    #: to each player, a new deal every round.
    SHORT = "short"


class Penalty(enum.StrEnum):
    #: Whoever was wrong takes the pile into their hand (RULES.md "A challenge").
    PILE = "pile"
    #: Whoever was wrong pulls the trigger of their own six-chamber revolver, one bullet
    #: placed at random when the game starts; hit, they are out. The round ends at the call
    #: and the cards are dealt anew; the last player alive wins (Liar's Bar).
    REVOLVER = "revolver"


class Pace(enum.StrEnum):
    """A game's pace: the turn time, chosen by name (``/new liars blitz``)."""

    BLITZ = "blitz"
    NORMAL = "normal"
    SLOW = "slow"
    #: A turn may take a day: the player is reminded in private after a few hours.
    CORRESPONDENCE = "correspondence"


#: Each pace's turn time (s); ``normal`` is the default's.
PACE_TURN_S: dict[Pace, int] = {
    Pace.BLITZ: 15,
    Pace.NORMAL: 90,
    Pace.SLOW: 300,
    Pace.CORRESPONDENCE: 86_400,
}


class Passing(enum.StrEnum):
    NEVER = "never"
    EXHAUSTED = "exhausted"
    VOTE = "vote"


class MatchKind(enum.StrEnum):
    SINGLE = "single"
    FIRST_TO = "first_to"
    BEST_OF = "best_of"
    PENALTY = "penalty"


#: ``decks`` value meaning one deck up to six players, two from seven (RULES.md).
DECKS_AUTO = 0
MIN_PLAYERS = 2
MAX_PLAYERS = 10
DEFAULT_MOVE_CAP = 300
#: Most players one deck serves under ``decks=auto`` (RULES.md ``decks``).
ONE_DECK_PLAYERS = 6
#: Bounds of the numeric options, so that a settings menu cannot make a game unplayable.
MAX_MAX_CARDS = 52
MAX_MOVE_CAP = 10_000
MIN_MOVE_CAP = 10
MAX_MATCH_TARGET = 99
MIN_TURN_TIMEOUT_S = 10
#: A correspondence game's turn may take a day.
MAX_TURN_TIMEOUT_S = 86_400
MAX_GRACE_S = 30
MAX_AFK_LIMIT = 10
#: The short deck: six copies of each of its ranks, five cards to each player a round.
SHORT_DECK_RANKS = (1, 13, 12)
SHORT_DECK_COPIES = 6
SHORT_HAND = 5
#: A revolver's chambers.
CHAMBERS = 6


class RulesProblem(enum.StrEnum):
    """Why a set of options is refused: a stable code, with a translated message in the bot."""

    #: ``challengers=next``: the next player's play closes the claim, so nothing stays open
    #: for a second turn (RULES.md "Invalid combinations").
    NEXT_WITH_WINDOW_TWO = "next_with_window_two"
    #: ``passing=exhausted`` needs a required rank; under ``rank_rule=free`` there is none, so
    #: nobody could ever pass and the option would only mislead.
    EXHAUSTED_NEEDS_REQUIRED_RANK = "exhausted_needs_required_rank"
    BAD_MAX_CARDS = "bad_max_cards"
    BAD_DECKS = "bad_decks"
    BAD_PLAYERS = "bad_players"
    #: RULES.md ``players``: more than six players need two decks.
    ONE_DECK_TOO_MANY_PLAYERS = "one_deck_too_many_players"
    BAD_MOVE_CAP = "bad_move_cap"
    BAD_MATCH = "bad_match"
    BAD_TIMER = "bad_timer"
    BAD_AFK_LIMIT = "bad_afk_limit"
    BAD_GRACE = "bad_grace"
    #: ``deck=short``: five cards to each player leaves a short deck enough for four at most
    #: (three without its jokers).
    SHORT_DECK_TOO_MANY_PLAYERS = "short_deck_too_many_players"
    #: ``penalty=revolver``: a round ends only at a call, so a pass could go round forever
    #: (no play limit ends a game of bullets).
    REVOLVER_WITHOUT_PASSING = "revolver_without_passing"
    #: ``deck=short`` has only A, K and Q: the ascending sequence would ask for a 2 nobody
    #: holds.
    SHORT_DECK_NOT_ASCENDING = "short_deck_not_ascending"
    #: ``with_option``: no option has that name.
    UNKNOWN_OPTION = "unknown_option"
    #: ``with_option``: the value is not one the option takes.
    BAD_VALUE = "bad_value"


class InvalidRules(Exception):
    """A combination of options that RULES.md refuses; ``reason`` is a stable code and
    ``option`` the option it blames (a name of ``OPTION_VALUES``)."""

    def __init__(self, reason: RulesProblem, option: str) -> None:
        super().__init__(f"{reason.value}: {option}")
        self.reason = reason
        self.option = option


@dataclass(frozen=True, slots=True)
class Rules:
    """Every option of RULES.md with its default (the ``cheat`` preset)."""

    rank_rule: RankRule = RankRule.ASCENDING
    challengers: Challengers = Challengers.ANYONE
    after_challenge: AfterChallenge = AfterChallenge.CONTINUE
    challenge_priority: ChallengePriority = ChallengePriority.FIRST
    #: Under ``clockwise`` priority: how long after the first Cheat! others may still join.
    challenge_grace_s: int = 3
    challenge_window: ChallengeWindow = ChallengeWindow.LAST
    final_check: FinalCheck = FinalCheck.ALL
    #: Most cards in one play; 0 means "any number up to the hand" (the Dutch text).
    max_cards: int = 4
    #: 1 or 2 decks, or ``DECKS_AUTO``.
    decks: int = DECKS_AUTO
    jokers: Jokers = Jokers.OFF
    passing: Passing = Passing.NEVER
    #: Moves (plays and passes) after which the game ends at once; 0 means no cap.
    move_cap: int = DEFAULT_MOVE_CAP
    min_players: int = 3
    max_players: int = 6
    match: MatchKind = MatchKind.SINGLE
    #: N of ``first_to_N``, ``best_of_N`` or ``penalty_N``.
    match_target: int = 0
    #: Seconds a player has to act before they are played for; 0 turns the timer off.
    turn_timeout_s: int = 90
    #: Timeouts in a row after which a player is removed.
    afk_limit: int = 3
    deck: DeckKind = DeckKind.STANDARD
    penalty: Penalty = Penalty.PILE

    def deck_count(self, players: int) -> int:
        if self.deck is DeckKind.SHORT:
            return 1
        if self.decks == DECKS_AUTO:
            return 2 if players > ONE_DECK_PLAYERS else 1
        return self.decks

    @property
    def short_deck_size(self) -> int:
        jokers = 2 if self.jokers is Jokers.WILD else 0
        return len(SHORT_DECK_RANKS) * SHORT_DECK_COPIES + jokers

    @property
    def revolver(self) -> bool:
        return self.penalty is Penalty.REVOLVER

    def play_limit(self, hand_size: int) -> int:
        return hand_size if self.max_cards == 0 else min(self.max_cards, hand_size)

    def validate(self) -> Rules:
        """Return self, or raise InvalidRules naming the first offending option."""
        if self.challengers is Challengers.NEXT and self.challenge_window is ChallengeWindow.TWO:
            # Under `next` the next player's play closes the claim, so nothing stays open longer.
            raise InvalidRules(RulesProblem.NEXT_WITH_WINDOW_TWO, "challenge_window")
        if self.passing is Passing.EXHAUSTED and self.rank_rule is RankRule.FREE:
            raise InvalidRules(RulesProblem.EXHAUSTED_NEEDS_REQUIRED_RANK, "passing")
        if not 0 <= self.max_cards <= MAX_MAX_CARDS:
            raise InvalidRules(RulesProblem.BAD_MAX_CARDS, "max_cards")
        if self.decks not in (DECKS_AUTO, 1, 2):
            raise InvalidRules(RulesProblem.BAD_DECKS, "decks")
        if not MIN_PLAYERS <= self.min_players <= self.max_players <= MAX_PLAYERS:
            raise InvalidRules(RulesProblem.BAD_PLAYERS, "players")
        if self.decks == 1 and self.max_players > ONE_DECK_PLAYERS:
            raise InvalidRules(RulesProblem.ONE_DECK_TOO_MANY_PLAYERS, "decks")
        if self.deck is DeckKind.SHORT and self.max_players * SHORT_HAND > self.short_deck_size:
            raise InvalidRules(RulesProblem.SHORT_DECK_TOO_MANY_PLAYERS, "players")
        if self.deck is DeckKind.SHORT and self.rank_rule is RankRule.ASCENDING:
            raise InvalidRules(RulesProblem.SHORT_DECK_NOT_ASCENDING, "rank_rule")
        if self.penalty is Penalty.REVOLVER and self.passing is not Passing.NEVER:
            raise InvalidRules(RulesProblem.REVOLVER_WITHOUT_PASSING, "passing")
        if self.move_cap != 0 and not MIN_MOVE_CAP <= self.move_cap <= MAX_MOVE_CAP:
            raise InvalidRules(RulesProblem.BAD_MOVE_CAP, "move_cap")
        if self.match is MatchKind.SINGLE:
            if self.match_target != 0:
                raise InvalidRules(RulesProblem.BAD_MATCH, "match")
        elif not 1 <= self.match_target <= MAX_MATCH_TARGET:
            raise InvalidRules(RulesProblem.BAD_MATCH, "match")
        if self.turn_timeout_s != 0 and not (
            MIN_TURN_TIMEOUT_S <= self.turn_timeout_s <= MAX_TURN_TIMEOUT_S
        ):
            raise InvalidRules(RulesProblem.BAD_TIMER, "turn_timeout_s")
        if not 1 <= self.afk_limit <= MAX_AFK_LIMIT:
            raise InvalidRules(RulesProblem.BAD_AFK_LIMIT, "afk_limit")
        if not 0 <= self.challenge_grace_s <= MAX_GRACE_S:
            raise InvalidRules(RulesProblem.BAD_GRACE, "challenge_grace_s")
        return self

    def with_option(self, name: str, value: str) -> Rules:
        """These rules with option ``name`` (a key of ``OPTION_VALUES``) set from its string
        form, validated: raises InvalidRules for an unknown option, a bad value, or a
        combination RULES.md refuses."""
        parser = _PARSERS.get(name)
        if parser is None:
            raise InvalidRules(RulesProblem.UNKNOWN_OPTION, name)
        try:
            changes = parser(value.strip().lower())
        except ValueError:
            raise InvalidRules(RulesProblem.BAD_VALUE, name) from None
        try:
            changed = dataclasses.replace(self, **changes)
        except TypeError:  # pragma: no cover - parsers only name real fields
            raise InvalidRules(RulesProblem.BAD_VALUE, name) from None
        return changed.validate()

    def option_value(self, name: str) -> str:
        """The string form of option ``name`` now, in the vocabulary of ``OPTION_VALUES``."""
        formatter = _FORMATTERS.get(name)
        if formatter is None:
            raise InvalidRules(RulesProblem.UNKNOWN_OPTION, name)
        return formatter(self)

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rules:
        """Rules from stored settings; unknown keys (from a newer version) are ignored."""
        kwargs: dict[str, Any] = {}
        for field in dataclasses.fields(cls):
            if field.name in data:
                kwargs[field.name] = _FIELD_TYPES[field.name](data[field.name])
        return cls(**kwargs)


_FIELD_TYPES: dict[str, type] = typing.get_type_hints(Rules)


# --- options as strings, for a settings menu -------------------------------------------------

#: Every option a group may set, with the values a menu offers (the default first). Numeric
#: options also accept other numbers within their bounds (see ``Rules.validate``).
OPTION_VALUES: dict[str, tuple[str, ...]] = {
    "rank_rule": tuple(RankRule),
    "challengers": tuple(Challengers),
    "after_challenge": tuple(AfterChallenge),
    "challenge_priority": tuple(ChallengePriority),
    "challenge_grace_s": ("3", "1", "2", "5", "10"),
    "challenge_window": tuple(ChallengeWindow),
    "final_check": tuple(FinalCheck),
    "max_cards": ("4", "1", "2", "3", "6", "any"),
    "decks": ("auto", "1", "2"),
    "jokers": tuple(Jokers),
    "passing": tuple(Passing),
    "move_cap": ("300", "100", "200", "500", "none"),
    "players": ("3-6", "2-6", "2-8", "3-10", "2-10", "2-4"),
    "match": (
        "single",
        "first_to_3",
        "first_to_5",
        "best_of_3",
        "best_of_5",
        "penalty_3",
        "penalty_5",
    ),
    "turn_timeout_s": ("90", "30", "60", "120", "300", "off", "15", "86400"),
    "afk_limit": ("3", "1", "2", "5"),
    "deck": tuple(DeckKind),
    "penalty": tuple(Penalty),
}
#: The option names in menu order.
OPTION_NAMES: tuple[str, ...] = tuple(OPTION_VALUES)


def _int(value: str, *, zero: tuple[str, ...] = ()) -> int:
    """A non-negative number; the words in ``zero`` stand for 0 ("any", "none", "off")."""
    if value in zero:
        return 0
    if not value.isdigit():
        raise ValueError(value)
    return int(value)


def _players(value: str) -> dict[str, Any]:
    low, sep, high = value.partition("-")
    if not sep:
        low = high = value
    return {"min_players": _int(low), "max_players": _int(high)}


def _match(value: str) -> dict[str, Any]:
    if value == MatchKind.SINGLE:
        return {"match": MatchKind.SINGLE, "match_target": 0}
    kind, _, target = value.rpartition("_")
    return {"match": MatchKind(kind), "match_target": _int(target)}


_PARSERS: dict[str, typing.Callable[[str], dict[str, Any]]] = {
    "rank_rule": lambda v: {"rank_rule": RankRule(v)},
    "challengers": lambda v: {"challengers": Challengers(v)},
    "after_challenge": lambda v: {"after_challenge": AfterChallenge(v)},
    "challenge_priority": lambda v: {"challenge_priority": ChallengePriority(v)},
    "challenge_grace_s": lambda v: {"challenge_grace_s": _int(v)},
    "challenge_window": lambda v: {"challenge_window": ChallengeWindow(v)},
    "final_check": lambda v: {"final_check": FinalCheck(v)},
    "max_cards": lambda v: {"max_cards": _int(v, zero=("any",))},
    "decks": lambda v: {"decks": _int(v, zero=("auto",))},
    "jokers": lambda v: {"jokers": Jokers(v)},
    "passing": lambda v: {"passing": Passing(v)},
    "move_cap": lambda v: {"move_cap": _int(v, zero=("none",))},
    "players": _players,
    "match": _match,
    "turn_timeout_s": lambda v: {"turn_timeout_s": _int(v, zero=("off",))},
    "afk_limit": lambda v: {"afk_limit": _int(v)},
    "deck": lambda v: {"deck": DeckKind(v)},
    "penalty": lambda v: {"penalty": Penalty(v)},
}


def _zero_as(word: str, value: int) -> str:
    return word if value == 0 else str(value)


_FORMATTERS: dict[str, typing.Callable[[Rules], str]] = {
    "rank_rule": lambda r: r.rank_rule.value,
    "challengers": lambda r: r.challengers.value,
    "after_challenge": lambda r: r.after_challenge.value,
    "challenge_priority": lambda r: r.challenge_priority.value,
    "challenge_grace_s": lambda r: str(r.challenge_grace_s),
    "challenge_window": lambda r: r.challenge_window.value,
    "final_check": lambda r: r.final_check.value,
    "max_cards": lambda r: _zero_as("any", r.max_cards),
    "decks": lambda r: _zero_as("auto", r.decks),
    "jokers": lambda r: r.jokers.value,
    "passing": lambda r: r.passing.value,
    "move_cap": lambda r: _zero_as("none", r.move_cap),
    "players": lambda r: f"{r.min_players}-{r.max_players}",
    "match": lambda r: (
        r.match.value if r.match is MatchKind.SINGLE else f"{r.match.value}_{r.match_target}"
    ),
    "turn_timeout_s": lambda r: _zero_as("off", r.turn_timeout_s),
    "afk_limit": lambda r: str(r.afk_limit),
    "deck": lambda r: r.deck.value,
    "penalty": lambda r: r.penalty.value,
}
assert set(_PARSERS) == set(_FORMATTERS) == set(OPTION_VALUES)


PRESETS: dict[str, Rules] = {
    "cheat": Rules(),
    "verju": Rules(
        rank_rule=RankRule.SAME,
        challengers=Challengers.NEXT,
        after_challenge=AfterChallenge.WINNER_OPENS,
        final_check=FinalCheck.NEXT,
    ),
    "free": Rules(rank_rule=RankRule.FREE),
    # Liar's Bar: 2–4 players, a rank drawn for each round, 1–3 cards, only the next player
    # may call, and the revolver for whoever was wrong.
    "liars": Rules(
        rank_rule=RankRule.TABLE,
        challengers=Challengers.NEXT,
        after_challenge=AfterChallenge.WINNER_OPENS,
        final_check=FinalCheck.NEXT,
        max_cards=3,
        jokers=Jokers.WILD,
        min_players=2,
        max_players=4,
        deck=DeckKind.SHORT,
        penalty=Penalty.REVOLVER,
    ),
}
DEFAULT_PRESET = "cheat"


#: The options a preset decides; the rest (timers, decks, match, …) stay as a group chose them.
PRESET_OPTIONS = (
    "rank_rule",
    "challengers",
    "after_challenge",
    "final_check",
    "challenge_window",
    "challenge_priority",
    "deck",
    "penalty",
)
#: Options a preset sets only when it differs from the default there (Liar's Bar's cards per
#: play, jokers and seats), and back to the default when another preset is chosen after it:
#: a group that chose 6 cards a play keeps them in Cheat, not after Liar's Bar.
PRESET_SHAPE_OPTIONS = ("max_cards", "jokers", "min_players", "max_players")


def with_preset(rules: Rules, name: str) -> Rules:
    """``rules`` playing preset ``name``, validated (raises InvalidRules)."""
    preset = PRESETS[name]
    changes = {option: getattr(preset, option) for option in PRESET_OPTIONS}
    leaving_short = rules.deck is DeckKind.SHORT and preset.deck is not DeckKind.SHORT
    for option in PRESET_SHAPE_OPTIONS:
        default = getattr(Rules(), option)
        if getattr(preset, option) != default or leaving_short:
            changes[option] = getattr(preset, option)
    if preset.penalty is Penalty.REVOLVER:
        changes["passing"] = Passing.NEVER
    return dataclasses.replace(rules, **changes).validate()


def preset_of(rules: Rules) -> str | None:
    """The name of the preset these rules are, if any (a menu shows it; the engine never
    branches on it). Only the game-play options of the presets' table count, so a group that
    changed its timer still plays ``verju``."""
    keys = ("rank_rule", "challengers", "after_challenge", "final_check", "deck", "penalty")
    for name, preset in PRESETS.items():
        if all(getattr(rules, k) == getattr(preset, k) for k in keys):
            return name
    return None


def with_pace(rules: Rules, pace: Pace) -> Rules:
    """``rules`` at ``pace``: its turn time."""
    return dataclasses.replace(rules, turn_timeout_s=PACE_TURN_S[pace]).validate()


def pace_of(rules: Rules) -> Pace | None:
    """The pace whose turn time these rules have, if any."""
    return next((pace for pace, turn in PACE_TURN_S.items() if turn == rules.turn_timeout_s), None)
