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


class InvalidRules(Exception):
    """A combination of options that RULES.md refuses; ``reason`` is a stable code."""

    def __init__(self, reason: str, option: str) -> None:
        super().__init__(f"{reason}: {option}")
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
    #: Plays after which the game ends at once; 0 means no cap.
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

    def deck_count(self, players: int) -> int:
        if self.decks == DECKS_AUTO:
            return 2 if players > 6 else 1
        return self.decks

    def play_limit(self, hand_size: int) -> int:
        return hand_size if self.max_cards == 0 else min(self.max_cards, hand_size)

    def validate(self) -> Rules:
        """Return self, or raise InvalidRules naming the first offending option."""
        if self.challengers is Challengers.NEXT and self.challenge_window is ChallengeWindow.TWO:
            # Under `next` the next player's play closes the claim, so nothing stays open longer.
            raise InvalidRules("next_with_window_two", "challenge_window")
        if self.challengers is Challengers.NEXT and (
            self.challenge_priority is ChallengePriority.CLOCKWISE
        ):
            raise InvalidRules("next_with_clockwise", "challenge_priority")
        if self.max_cards < 0:
            raise InvalidRules("bad_max_cards", "max_cards")
        if self.decks not in (DECKS_AUTO, 1, 2):
            raise InvalidRules("bad_decks", "decks")
        if not MIN_PLAYERS <= self.min_players <= self.max_players <= MAX_PLAYERS:
            raise InvalidRules("bad_players", "players")
        if self.decks == 1 and self.max_players > 6:
            raise InvalidRules("one_deck_too_many_players", "decks")
        if self.move_cap < 0 or 0 < self.move_cap < 10:
            raise InvalidRules("bad_move_cap", "move_cap")
        if (self.match is MatchKind.SINGLE) != (self.match_target == 0) or self.match_target < 0:
            raise InvalidRules("bad_match", "match")
        if self.turn_timeout_s < 0 or self.afk_limit < 1 or self.challenge_grace_s < 0:
            raise InvalidRules("bad_timer", "turn_timeout_s")
        return self

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

PRESETS: dict[str, Rules] = {
    "cheat": Rules(),
    "verju": Rules(
        rank_rule=RankRule.SAME,
        challengers=Challengers.NEXT,
        after_challenge=AfterChallenge.WINNER_OPENS,
        final_check=FinalCheck.NEXT,
    ),
    "free": Rules(rank_rule=RankRule.FREE),
}
DEFAULT_PRESET = "cheat"
