"""``tgcheat simulate``: games between computer players, through the engine alone.

A benchmark and a referee's check in one: it prints figures (plays and challenges per game,
how often a challenge caught a lie, wins by seat) and the number of invariant violations
(cards conserved, exactly one player to act, the game ended within its cap), which must be 0.
The same seed gives the same figures; only the speed, printed last, varies.

``--seats hard,honest,honest,honest`` names each player's strategy (``--players`` alone: every
player plays the default one). A player keeps its strategy wherever the random seating puts
it; who plays first goes round the players in turn (game ``g``: player ``g mod n`` of
``--seats``), so that each opens as many games as the others (playing first is worth much
with two players). The wins are shown by player (in the order of ``--seats``), by position
from the dealer, and by strategy with a 95% (Wilson) interval.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tgcheat.engine.autoplay import next_action
from tgcheat.engine.events import CardsPlayed, ChallengeResolved, Event, Passed, TriggerPulled
from tgcheat.engine.game import Seating, apply, new_game, random_seating
from tgcheat.engine.invariants import violations
from tgcheat.engine.rules import MAX_PLAYERS, MIN_PLAYERS, PRESETS, InvalidRules, Rules
from tgcheat.engine.state import GameState, Phase
from tgcheat.engine.strategies import DEFAULT_STRATEGY, STRATEGIES, ComputerPlayers, sure_lie
from tgcheat.engine.view import see, seen_claim

#: Steps after which a game without a move cap counts as never ending (a violation).
STEP_LIMIT = 50_000
#: Simulated time between two actions.
ACTION_MS = 1500
#: The normal quantile of a 95% interval.
Z95 = 1.96


@dataclass
class Calls:
    """One strategy's Cheat! calls: all of them; those on a final play apart (called because
    a final play that stands wins, whatever the odds); and, of the others, those on a claim it
    could not prove false from its own cards (guesses)."""

    calls: int = 0
    right: int = 0
    finals: int = 0
    finals_right: int = 0
    guessed: int = 0
    guessed_right: int = 0


@dataclass
class Tally:
    games: int = 0
    plays: int = 0
    passes: int = 0
    challenges: int = 0
    lies_caught: int = 0
    #: ``penalty=revolver``: triggers pulled, and how many of them shot.
    pulls: int = 0
    shots: int = 0
    violations: int = 0
    #: Wins by player, in the order of ``--seats``.
    wins: list[int] = field(default_factory=list)
    #: Wins by position from the dealer (1 plays first).
    wins_by_position: list[int] = field(default_factory=list)
    #: Games each player opened (played first), in the order of ``--seats``.
    opened: list[int] = field(default_factory=list)
    draws: int = 0
    endings: dict[str, int] = field(default_factory=dict)
    examples: list[str] = field(default_factory=list)
    calls: dict[str, Calls] = field(default_factory=dict)

    def count(self, events: list[Event]) -> None:
        for event in events:
            if isinstance(event, CardsPlayed):
                self.plays += 1
            elif isinstance(event, Passed):
                self.passes += 1
            elif isinstance(event, ChallengeResolved):
                self.challenges += 1
                self.lies_caught += event.lie
            elif isinstance(event, TriggerPulled):
                self.pulls += 1
                self.shots += event.hit

    def count_call(self, strategy: str, *, final: bool, guessed: bool, right: bool) -> None:
        calls = self.calls.setdefault(strategy, Calls())
        calls.calls += 1
        calls.right += right
        if final:
            calls.finals += 1
            calls.finals_right += right
        elif guessed:
            calls.guessed += 1
            calls.guessed_right += right

    def report(self, seats: Sequence[str]) -> dict[str, Any]:
        games = max(self.games, 1)
        by_strategy: dict[str, Any] = {}
        for name in dict.fromkeys(seats):
            count = seats.count(name)
            wins = sum(w for w, s in zip(self.wins, seats, strict=True) if s == name)
            low, high = wilson(wins, self.games)
            by_strategy[name] = {
                "seats": count,
                "wins": wins,
                "share": round(wins / games, 4),
                "low": round(low, 4),
                "high": round(high, 4),
                "fair_share": round(count / len(seats), 4),
            }
        guesses = {
            name: {
                "calls": c.calls,
                "right_share": round(c.right / c.calls, 4) if c.calls else 0.0,
                "finals": c.finals,
                "finals_right_share": round(c.finals_right / c.finals, 4) if c.finals else 0.0,
                "guessed": c.guessed,
                "guessed_right_share": round(c.guessed_right / c.guessed, 4) if c.guessed else 0.0,
            }
            for name, c in sorted(self.calls.items())
        }
        return {
            "games": self.games,
            "plays_per_game": round(self.plays / games, 2),
            "passes_per_game": round(self.passes / games, 2),
            "challenges_per_game": round(self.challenges / games, 2),
            "lies_caught_share": round(self.lies_caught / self.challenges, 4)
            if self.challenges
            else 0.0,
            "pulls_per_game": round(self.pulls / games, 2),
            "shots_per_game": round(self.shots / games, 2),
            "seats": list(seats),
            "wins_by_seat": list(self.wins),
            "wins_by_position": list(self.wins_by_position),
            "opened_by_seat": list(self.opened),
            "wins_by_strategy": by_strategy,
            "calls_by_strategy": guesses,
            "draws": self.draws,
            "endings": dict(sorted(self.endings.items())),
            "cap_share": round(self.endings.get("move_cap", 0) / games, 4),
            "invariant_violations": self.violations,
        }


def wilson(successes: int, trials: int) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion (sound near 0 and 1, unlike p ± 2σ)."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    centre = p + Z95 * Z95 / (2 * trials)
    spread = Z95 * math.sqrt(p * (1 - p) / trials + Z95 * Z95 / (4 * trials * trials))
    scale = 1 + Z95 * Z95 / trials
    return max(0.0, (centre - spread) / scale), min(1.0, (centre + spread) / scale)


def play_game(
    rules: Rules,
    seating: Seating,
    rng: random.Random,
    tally: Tally,
    strategies: Sequence[str] | None = None,
) -> GameState:
    """One game between computer players (``strategies`` by seat; the default strategy for
    every seat without); every state is checked against the invariants."""
    state, events = new_game(rules, seating, rng)
    names = list(strategies or [DEFAULT_STRATEGY] * len(state.players))
    players = ComputerPlayers.seat(state, names)
    deck_size = state.deck_size
    tally.count(events)
    now = 0
    asked: set[tuple[int, int]] = set()
    for _ in range(STEP_LIMIT):
        if state.phase is Phase.FINISHED:
            break
        now += ACTION_MS
        action = next_action(state, rng, now, asked, players=players)
        if action is None:
            raise AssertionError(f"nobody can act: {state}")
        before = state
        state, events = apply(state, action)
        tally.count(events)
        for event in events:
            if isinstance(event, ChallengeResolved):
                knowledge = players.knowledge[event.challenger]
                assert knowledge is not None
                seat = event.challenger
                guessed = not sure_lie(see(before, seat), knowledge, seen_claim(event.claim, seat))
                tally.count_call(
                    names[event.challenger],
                    final=event.claim.final,
                    guessed=guessed,
                    right=event.lie,
                )
        players = players.remember(before, events, state)
        problems = violations(state, deck_size)
        if problems:
            tally.violations += 1
            if len(tally.examples) < 5:
                tally.examples.append(f"after {action}: {', '.join(problems)}")
    if state.phase is not Phase.FINISHED:
        tally.violations += 1
        tally.examples.append("a game did not end")
    return state


def simulate(
    rules: Rules, players: int, games: int, seed: int, seats: Sequence[str] | None = None
) -> tuple[dict[str, Any], list[str]]:
    """The figures of ``games`` games (deterministic for a seed) and a few violation notes.

    ``seats``: each player's strategy (default: every player the default strategy). Player
    ``i`` keeps ``seats[i]`` wherever the random seating puts it.
    """
    seats = list(seats or [DEFAULT_STRATEGY] * players)
    if len(seats) != players:
        raise ValueError("one strategy per player is expected")
    tally = Tally(wins=[0] * players, wins_by_position=[0] * players, opened=[0] * players)
    names = [(1000 + i, f"AI{i + 1}") for i in range(players)]
    seeder = random.Random(seed)
    for game in range(games):
        rng = random.Random(seeder.getrandbits(64))
        seating = opened_by(random_seating(names, rng), game % players)
        tally.opened[game % players] += 1
        # The strategy of each seat is its player's, wherever the seating put them.
        player_at = [uid - 1000 for uid, _ in seating.players]
        state = play_game(rules, seating, rng, tally, [seats[p] for p in player_at])
        tally.games += 1
        result = state.result
        if result is None:
            continue
        tally.endings[result.reason.value] = tally.endings.get(result.reason.value, 0) + 1
        if result.winner is None:
            tally.draws += 1
        else:
            tally.wins[player_at[result.winner]] += 1
            # Seat 1 plays first: the seat after the dealer.
            tally.wins_by_position[(result.winner - seating.dealer - 1) % players] += 1
    return tally.report(seats), tally.examples


def opened_by(seating: Seating, player: int) -> Seating:
    """``seating`` with the dealer moved so that ``player`` (an index into the names given to
    ``simulate``, whose ids are ``1000 + index``) plays first."""
    seat = next(i for i, (uid, _) in enumerate(seating.players) if uid - 1000 == player)
    return Seating(seating.players, (seat - 1) % len(seating.players))


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``simulate`` on an ``argparse`` sub-parsers object."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "simulate",
        help="play games between computer players and print figures",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--preset", default="cheat", choices=sorted(PRESETS))
    parser.add_argument(
        "--players", type=int, default=None, help="number of players (default 4, or --seats)"
    )
    parser.add_argument(
        "--seats",
        default=None,
        metavar="NAME,NAME,...",
        help="each player's strategy, one name per player: " + ", ".join(STRATEGIES),
    )
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--set",
        dest="options",
        action="append",
        default=[],
        metavar="OPTION=VALUE",
        help="change one option of the preset (repeatable), e.g. passing=vote",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(run=run)
    return parser


def parse_seats(text: str | None, players: int | None) -> tuple[list[str], str | None]:
    """The strategy of each player from ``--seats`` and ``--players``, or a message saying
    what is wrong with them."""
    if text is None:
        count = 4 if players is None else players
        return [DEFAULT_STRATEGY] * count, None
    seats = [name.strip() for name in text.split(",")]
    unknown = [name for name in seats if name not in STRATEGIES]
    if unknown:
        known = ", ".join(STRATEGIES)
        return [], f"--seats: unknown strategy {', '.join(map(repr, unknown))} (known: {known})"
    if players is not None and players != len(seats):
        return [], f"--seats names {len(seats)} players but --players is {players}"
    return seats, None


def run(args: argparse.Namespace) -> int:
    """Run ``tgcheat simulate``: 0 when no invariant was violated, 1 otherwise, 2 on bad
    arguments."""
    seats, problem = parse_seats(args.seats, args.players)
    if problem is not None:
        print(problem, file=sys.stderr)
        return 2
    players = len(seats)
    if not MIN_PLAYERS <= players <= MAX_PLAYERS or args.games < 1:
        print(
            f"--players must be {MIN_PLAYERS}–{MAX_PLAYERS} and --games at least 1",
            file=sys.stderr,
        )
        return 2
    rules = PRESETS[args.preset]
    try:
        for option in args.options:
            name, _, value = option.partition("=")
            rules = rules.with_option(name, value)
        rules = rules.with_option(
            "players",
            f"{min(rules.min_players, players)}-{max(rules.max_players, players)}",
        )
    except InvalidRules as invalid:
        print(f"invalid rules: {invalid.reason.value} ({invalid.option})", file=sys.stderr)
        return 2
    started = time.perf_counter()
    report, examples = simulate(rules, players, args.games, args.seed, seats)
    elapsed = max(time.perf_counter() - started, 1e-9)
    speed = round(args.games / elapsed, 1)
    head = {
        "preset": args.preset,
        "options": list(args.options),
        "players": players,
        "seed": args.seed,
    }
    if args.json:
        print(json.dumps({**head, **report, "timing": {"games_per_second": speed}}))
    else:
        _print_text(head, report)
        for example in examples:
            print(f"  {example}")
        print(f"games per second: {speed}")
    return 0 if report["invariant_violations"] == 0 else 1


def _print_text(head: dict[str, Any], report: dict[str, Any]) -> None:
    options = " ".join(head["options"])
    print(
        f"preset {head['preset']}{' ' + options if options else ''}, "
        f"{head['players']} players, seed {head['seed']}"
    )
    print(f"seats: {','.join(report['seats'])}")
    print(f"games: {report['games']}")
    print(f"plays per game: {report['plays_per_game']}")
    print(f"passes per game: {report['passes_per_game']}")
    print(f"challenges per game: {report['challenges_per_game']}")
    print(f"challenges that caught a lie: {100 * report['lies_caught_share']:.1f}%")
    if report["pulls_per_game"]:
        print(
            f"triggers pulled per game: {report['pulls_per_game']}, "
            f"shots per game: {report['shots_per_game']}"
        )
    wins = "  ".join(
        f"{i + 1} {name}:{w}"
        for i, (name, w) in enumerate(zip(report["seats"], report["wins_by_seat"], strict=True))
    )
    print(f"wins by player (as in --seats): {wins}  draws:{report['draws']}")
    positions = "  ".join(f"{i + 1}:{w}" for i, w in enumerate(report["wins_by_position"]))
    print(f"wins by position (1 plays first): {positions}")
    for name, figures in report["wins_by_strategy"].items():
        print(
            f"wins of {name} ({figures['seats']} of {len(report['seats'])} seats): "
            f"{100 * figures['share']:.1f}% "
            f"[95% {100 * figures['low']:.1f}–{100 * figures['high']:.1f}] "
            f"(fair share {100 * figures['fair_share']:.1f}%)"
        )
    for name, calls in report["calls_by_strategy"].items():
        print(
            f"calls of {name}: {calls['calls']}, {100 * calls['right_share']:.1f}% right; "
            f"on final plays {calls['finals']}, {100 * calls['finals_right_share']:.1f}% right; "
            f"guessed (others it could not prove) {calls['guessed']}, "
            f"{100 * calls['guessed_right_share']:.1f}% right"
        )
    endings = ", ".join(f"{k} {v}" for k, v in report["endings"].items())
    print(f"endings: {endings} (at the move cap: {100 * report['cap_share']:.1f}%)")
    print(f"invariant violations: {report['invariant_violations']}")
