"""Achievements: what a person earned by a finished game, from the game's own record (its
tally and story, tgcheat.table.chronicle and tgcheat.table.story) and their figures after it
(pure; the store keeps the codes earned, each once: tgcheat.store.stats).

Each achievement has a short code the store keeps (never renamed, never reused) and a name and
condition the views show in every language (tgcheat.bot.views.profile). They are earned in the
games the statistics count (a game stopped with /stop earns nothing), in games between people
only except the firsts, which a game with computer players earns too. A game's story keeps its
first and its latest moves (tgcheat.table.story): "in a row" is read from what it kept.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tgcheat.engine.rules import preset_of
from tgcheat.engine.state import EndReason
from tgcheat.table.computers import is_computer
from tgcheat.table.session import Session
from tgcheat.table.story import PlayEntry

if TYPE_CHECKING:
    from tgcheat.table.stats import Row

#: Bluffs nobody caught in one game for "Poker face".
POKER_FACE_BLUFFS = 5
#: Right calls in a row for "Eagle eye".
EAGLE_EYE_CALLS = 3
#: The pile taken before a win for "Comeback", and the one for "Mountain".
COMEBACK_PILE = 20
MOUNTAIN_PILE = 30
#: A game this short (plays by everyone) won is "Lightning"; one this long is a "Marathon".
LIGHTNING_PLAYS = 20
MARATHON_PLAYS = 150

#: Every achievement's code, in the order a profile lists them. A code is stored: never renamed.
CODES: tuple[str, ...] = (
    # Firsts.
    "g1",  # First game
    "w1",  # First win
    "pc",  # First win with the "cheat" preset
    "pv",  # First win with the "verju" preset
    "pf",  # First win with the "free" preset
    "cw",  # First win against computer players
    # One game.
    "pk",  # Poker face: 5 bluffs nobody caught
    "ee",  # Eagle eye: 3 right calls in a row
    "sh",  # Sharpshooter: 5 right calls, none wrong
    "cb",  # Comeback: win after taking a pile of 20+
    "ha",  # Honest Abe: win without a bluff
    "ut",  # Untouchable: win without taking a pile
    "ll",  # Last lie: go out on a bluff
    "lt",  # Lightning: win a game of 20 plays or fewer
    "mr",  # Marathon: a game of 150 plays or more
    "mt",  # Mountain: take a pile of 30+ cards
    "fh",  # Full house: a game of 10 players
    "rh",  # Red-handed: 3 bluffs caught in one game
    "pa",  # Paranoid: 3 wrong calls in one game
    "mw",  # Match winner
    # Over time.
    "s3",  # Hat trick: 3 wins in a row
    "s5",  # Unstoppable: 5 wins in a row
    "gx",  # Regular: 25 games
    "gc",  # Veteran: 100 games
    "wx",  # Champion: 25 wins
    "rg",  # Gold: a rating of 1400
    "rd",  # Diamond: a rating of 1800
)
assert len(set(CODES)) == len(CODES)


@dataclass(frozen=True, slots=True)
class SeatGame:
    """What one seat's finished game was, as the achievements read it."""

    won: bool
    players: int
    #: Plays by everyone in the game.
    plays: int
    preset: str | None
    with_computers: bool
    match_won: bool
    own_plays: int
    bluffs: int
    bluffs_caught: int
    right_calls: int
    wrong_calls: int
    #: The biggest pile they took (cards), and their longest run of right calls.
    biggest_pile: int
    calls_in_a_row: int
    #: Their last play was their last cards, and a lie.
    out_on_a_bluff: bool


def seat_game(session: Session, seat: int) -> SeatGame | None:
    """The seat's game, for a finished game the statistics count (else None)."""
    state = session.game
    if state is None or state.result is None or state.result.reason is EndReason.STOPPED:
        return None
    tally = session.tally.of(seat)
    biggest = 0
    run = longest = 0
    last_own: PlayEntry | None = None
    for entry in session.story.entries:
        if not isinstance(entry, PlayEntry):
            continue
        if entry.taker == seat:
            biggest = max(biggest, entry.taken)
        if entry.caller == seat:
            run = run + 1 if entry.lie else 0
            longest = max(longest, run)
        if entry.seat == seat:
            last_own = entry
    match = session.match
    return SeatGame(
        won=state.result.winner == seat,
        players=len(state.players),
        plays=state.plays,
        preset=preset_of(state.rules),
        with_computers=any(is_computer(p.user_id) for p in state.players),
        match_won=match is not None
        and match.finished
        and match.winner == state.players[seat].user_id,
        own_plays=tally.plays,
        bluffs=tally.bluffs,
        bluffs_caught=tally.bluffs_caught,
        right_calls=tally.right_calls,
        wrong_calls=tally.wrong_calls,
        biggest_pile=biggest,
        calls_in_a_row=longest,
        out_on_a_bluff=last_own is not None
        and last_own.final
        and last_own.lie
        and last_own.caller is None
        and state.result.winner == seat,
    )


_GAME: dict[str, Callable[[SeatGame], bool]] = {
    "g1": lambda g: True,
    "w1": lambda g: g.won and not g.with_computers,
    "pc": lambda g: g.won and not g.with_computers and g.preset == "cheat",
    "pv": lambda g: g.won and not g.with_computers and g.preset == "verju",
    "pf": lambda g: g.won and not g.with_computers and g.preset == "free",
    "cw": lambda g: g.won and g.with_computers,
    "pk": lambda g: g.bluffs - g.bluffs_caught >= POKER_FACE_BLUFFS,
    "ee": lambda g: g.calls_in_a_row >= EAGLE_EYE_CALLS,
    "sh": lambda g: g.right_calls >= 5 and g.wrong_calls == 0,
    "cb": lambda g: g.won and g.biggest_pile >= COMEBACK_PILE,
    "ha": lambda g: g.won and g.own_plays > 0 and g.bluffs == 0,
    "ut": lambda g: g.won and g.biggest_pile == 0 and g.own_plays > 0,
    "ll": lambda g: g.out_on_a_bluff,
    "lt": lambda g: g.won and g.plays <= LIGHTNING_PLAYS,
    "mr": lambda g: g.plays >= MARATHON_PLAYS,
    "mt": lambda g: g.biggest_pile >= MOUNTAIN_PILE,
    "fh": lambda g: g.players >= 10,
    "rh": lambda g: g.bluffs_caught >= 3,
    "pa": lambda g: g.wrong_calls >= 3,
    "mw": lambda g: g.match_won,
}
#: What a game with computer players may earn (the rest is for games between people).
_WITH_COMPUTERS = frozenset({"g1", "cw"})

_OVER_TIME: dict[str, Callable[[Row, int], bool]] = {
    "s3": lambda row, shown: row.best_streak >= 3,
    "s5": lambda row, shown: row.best_streak >= 5,
    "gx": lambda row, shown: row.games >= 25,
    "gc": lambda row, shown: row.games >= 100,
    "wx": lambda row, shown: row.wins >= 25,
    "rg": lambda row, shown: shown >= 1400,
    "rd": lambda row, shown: shown >= 1800,
}
assert set(_GAME) | set(_OVER_TIME) == set(CODES)


def earned_in_game(game: SeatGame) -> tuple[str, ...]:
    """The achievements the game itself earns the seat (whether earned before or not)."""
    return tuple(
        code
        for code, test in _GAME.items()
        if (not game.with_computers or code in _WITH_COMPUTERS) and test(game)
    )


def earned_over_time(row: Row, shown: int) -> tuple[str, ...]:
    """The achievements a person's figures after the game (across groups) and rating earn."""
    return tuple(code for code, test in _OVER_TIME.items() if test(row, shown))


def ordered(codes: set[str] | frozenset[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Codes in the profile's order (unknown codes left out)."""
    return tuple(code for code in CODES if code in codes)
