"""Players' statistics: what a finished game adds to each person's figures (across groups) and
to the group's table, and the group's leaderboards (/top).

A game is counted once it has ended by the rules (someone went out, the move cap, the last
player left at the table); a game stopped with /stop or by the bot leaving the group is not.
A game that ended with one player left at the table (the others walked out) counts only as far
as it was really played (``really_played``): for those who made at least one play, and only
when at least two people did. So nobody climbs /top with throwaway accounts that are dealt in
and leave at once; a game won by going out or at the move cap was played to its end.
Games with computer players stay out of the main figures: they count apart, as games and wins
against computer players, in the person's own statistics only (a group's leaderboard ranks
people who played people). Everything here is pure; the store keeps the rows
(tgcheat.store.stats).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from tgcheat.engine.state import EndReason, Phase
from tgcheat.table.achievements import earned_in_game, seat_game
from tgcheat.table.computers import is_computer
from tgcheat.table.place import QUICK_CHAT_BASE
from tgcheat.table.rating import MIN_RATED_PLAYERS
from tgcheat.table.session import Session

#: A leaderboard by win rate lists only players with at least this many games.
MIN_GAMES = 3
#: The best detective is ranked by right calls among their calls, from this many calls up.
MIN_CALLS = 3
#: Places on each leaderboard.
TOP_SIZE = 5
#: A game the others walked out of counts only when at least this many people made a play.
MIN_PLAYERS_WHO_PLAYED = 2


@dataclass(frozen=True, slots=True)
class Row:
    """A person's figures (in one group, or across groups). The store keeps them as numbers in
    this order; the last two are not added up but follow the wins (see ``Line.outcome``)."""

    games: int = 0
    wins: int = 0
    second: int = 0
    third: int = 0
    plays: int = 0
    bluffs: int = 0
    bluffs_caught: int = 0
    #: Bluffs nobody caught: known only when the game ends (the cards never turned over).
    bluffs_unseen: int = 0
    right_calls: int = 0
    wrong_calls: int = 0
    #: Times they took the pile (a bluff caught, or a Cheat! call that was wrong).
    piles_taken: int = 0
    cards_taken: int = 0
    matches_won: int = 0
    #: Games with computer players, apart from the figures above.
    computer_games: int = 0
    computer_wins: int = 0
    #: Wins in a row now (games with computer players leave it as it is), and the longest.
    streak: int = 0
    best_streak: int = 0

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else 0.0

    @property
    def calls(self) -> int:
        return self.right_calls + self.wrong_calls

    @property
    def call_rate(self) -> float:
        return self.right_calls / self.calls if self.calls else 0.0

    def numbers(self) -> tuple[int, ...]:
        return dataclasses.astuple(self)

    @classmethod
    def of(cls, numbers: Iterable[int]) -> Row:
        """A row from the store's numbers (a shorter stored row reads 0 for what it lacks)."""
        values = list(numbers)[: len(ROW_FIELDS)]
        return cls(*values, *([0] * (len(ROW_FIELDS) - len(values))))


ROW_FIELDS = tuple(field.name for field in dataclasses.fields(Row))
#: Where the streak and the longest streak are in a row (0-based): the store's script keeps them.
STREAK_AT = ROW_FIELDS.index("streak")
BEST_STREAK_AT = ROW_FIELDS.index("best_streak")


class Outcome:
    """How a game counts for a person's streak (the store's script reads the number)."""

    LOST = 0
    WON = 1
    #: A game with computer players: the streak stays as it is.
    APART = 2


@dataclass(frozen=True, slots=True)
class Line:
    """What one person's finished game adds to their figures."""

    user_id: int
    #: Their name as the game showed it (the latest is kept).
    name: str
    #: What is added to each figure (the streaks are 0: see ``outcome``).
    added: Row
    outcome: int
    #: Their place in the game (1 is best; 0: they left before its end), which rates it.
    place: int = 0
    #: The achievements the game itself earned them (tgcheat.table.achievements).
    earned: tuple[str, ...] = ()

    def after(self, row: Row) -> Row:
        """``row`` (their figures before the game) with the game counted, as the store does."""
        added = dataclasses.replace(self.added, streak=0, best_streak=0).numbers()
        numbers = [a + b for a, b in zip(row.numbers(), added, strict=True)]
        counted = Row.of(numbers)
        if self.outcome == Outcome.WON:
            streak = row.streak + 1
            return dataclasses.replace(
                counted, streak=streak, best_streak=max(row.best_streak, streak)
            )
        if self.outcome == Outcome.LOST:
            return dataclasses.replace(counted, streak=0)
        return counted


@dataclass(frozen=True, slots=True)
class GameRecord:
    """A finished game as the statistics count it."""

    #: Names the game among all games of all chats: a re-delivery, a second process or the
    #: clock count the same game under the same key, once.
    key: str
    chat_id: int
    #: Played in a group (a /play game in a private chat has no group table).
    in_group: bool
    with_computers: bool
    lines: tuple[Line, ...]
    #: When the game ended (Unix ms; 0: not known, a game stored before this was kept).
    ended_ms: int = 0

    @property
    def group_rows(self) -> bool:
        """Whether the group's table counts it: a group's game between people."""
        return self.in_group and not self.with_computers

    @property
    def rated(self) -> bool:
        """Whether it moves the ratings (tgcheat.table.rating): a group's game between people
        that at least ``MIN_RATED_PLAYERS`` of them really played."""
        return self.group_rows and len(self.lines) >= MIN_RATED_PLAYERS


def game_record(session: Session) -> GameRecord | None:
    """What the session's finished game adds to the statistics; None when there is no finished
    game to count (none, still played, or stopped)."""
    state = session.game
    if state is None or state.phase is not Phase.FINISHED or state.result is None:
        return None
    result = state.result
    if result.reason is EndReason.STOPPED:
        return None
    places = dict(result.places)
    # A quick game counts as a game against the computer does, whoever sat at it: strangers'
    # games move no group's table and no rating (two accounts of one person could meet there).
    with_computers = session.quick or any(is_computer(p.user_id) for p in state.players)
    counted = set(range(len(state.players)))
    if result.reason is EndReason.LAST_PLAYER and not with_computers:
        counted = set(really_played(session))
        if len(counted) < MIN_PLAYERS_WHO_PLAYED:
            return None
    match = session.match
    match_winner = match.winner if match is not None and match.finished else None
    lines = []
    for seat, player in enumerate(state.players):
        if is_computer(player.user_id):
            continue
        won = result.winner == seat
        if with_computers:
            added = Row(computer_games=1, computer_wins=int(won))
            outcome = Outcome.APART
        elif seat not in counted:
            continue
        else:
            tally = session.tally.of(seat)
            place = places.get(seat)
            added = Row(
                games=1,
                wins=int(won),
                second=int(place == 2),
                third=int(place == 3),
                plays=tally.plays,
                bluffs=tally.bluffs,
                bluffs_caught=tally.bluffs_caught,
                bluffs_unseen=tally.bluffs_unseen,
                right_calls=tally.right_calls,
                wrong_calls=tally.wrong_calls,
                piles_taken=tally.bluffs_caught + tally.wrong_calls,
                cards_taken=tally.cards_taken,
                matches_won=int(match_winner == player.user_id),
            )
            outcome = Outcome.WON if won else Outcome.LOST
        game = seat_game(session, seat)
        earned = earned_in_game(game) if game is not None else ()
        place = places.get(seat, 0)
        lines.append(Line(player.user_id, player.name, added, outcome, place, earned))
    return GameRecord(
        key=f"{session.chat_id}:{session.game_id}",
        # Every quick game is counted in one chat's hash (its games' marks, kept bounded), not
        # in a hash of its own.
        chat_id=QUICK_CHAT_BASE if session.quick else session.chat_id,
        in_group=session.chat_id < 0 and not session.quick,
        with_computers=with_computers,
        lines=tuple(lines),
        ended_ms=session.ended_ms,
    )


def really_played(session: Session) -> frozenset[int]:
    """The seats of the people who made at least one play in the session's game (a turn the
    clock played for them counts: they sat at the table through it)."""
    state = session.game
    if state is None:
        return frozenset()
    return frozenset(
        seat
        for seat, player in enumerate(state.players)
        if not is_computer(player.user_id) and session.tally.of(seat).plays > 0
    )


@dataclass(frozen=True, slots=True)
class Ranked:
    """One place on a leaderboard."""

    name: str
    row: Row


@dataclass(frozen=True, slots=True)
class Leaderboards:
    """A group's leaderboards (/top), best first, ``TOP_SIZE`` places each at most.

    - ``wins``: win rate among players with at least ``MIN_GAMES`` games; ties go to more
      games, then more wins.
    - ``bluffers``: bluffs that got away (never caught); ties go to fewer bluffs caught.
    - ``detectives``: the share of right Cheat! calls among players with at least ``MIN_CALLS``
      calls; ties go to more right calls.
    """

    wins: tuple[Ranked, ...]
    bluffers: tuple[Ranked, ...]
    detectives: tuple[Ranked, ...]


def leaderboards(rows: Mapping[int, tuple[str, Row]]) -> Leaderboards:
    """The leaderboards of a group's table (rows by user id: the name and the figures). Equal
    figures keep the order of user ids, so the same table always ranks the same way."""
    ranked = [Ranked(name, row) for _, (name, row) in sorted(rows.items())]
    wins = sorted(
        (r for r in ranked if r.row.games >= MIN_GAMES),
        key=lambda r: (-r.row.win_rate, -r.row.games, -r.row.wins),
    )
    bluffers = sorted(
        (r for r in ranked if r.row.bluffs_unseen > 0),
        key=lambda r: (-r.row.bluffs_unseen, r.row.bluffs_caught),
    )
    detectives = sorted(
        (r for r in ranked if r.row.calls >= MIN_CALLS),
        key=lambda r: (-r.row.call_rate, -r.row.right_calls),
    )
    return Leaderboards(
        tuple(wins[:TOP_SIZE]), tuple(bluffers[:TOP_SIZE]), tuple(detectives[:TOP_SIZE])
    )
