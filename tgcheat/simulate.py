"""``tgcheat simulate``: games between computer players, through the engine alone.

A benchmark and a referee's check in one: it prints figures (plays and challenges per game,
how often a challenge caught a lie, wins by seat) and the number of invariant violations
(cards conserved, exactly one player to act, the game ended within its cap), which must be 0.
The same seed gives the same figures; only the speed, printed last, varies.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from tgcheat.engine.autoplay import next_action
from tgcheat.engine.events import CardsPlayed, ChallengeResolved, Event, Passed
from tgcheat.engine.game import Seating, apply, new_game, random_seating
from tgcheat.engine.invariants import violations
from tgcheat.engine.rules import MAX_PLAYERS, MIN_PLAYERS, PRESETS, InvalidRules, Rules
from tgcheat.engine.state import GameState, Phase

#: Steps after which a game without a move cap counts as never ending (a violation).
STEP_LIMIT = 50_000
#: Simulated time between two actions.
ACTION_MS = 1500


@dataclass
class Tally:
    games: int = 0
    plays: int = 0
    passes: int = 0
    challenges: int = 0
    lies_caught: int = 0
    violations: int = 0
    wins: list[int] = field(default_factory=list)
    draws: int = 0
    endings: dict[str, int] = field(default_factory=dict)
    examples: list[str] = field(default_factory=list)

    def count(self, events: list[Event]) -> None:
        for event in events:
            if isinstance(event, CardsPlayed):
                self.plays += 1
            elif isinstance(event, Passed):
                self.passes += 1
            elif isinstance(event, ChallengeResolved):
                self.challenges += 1
                self.lies_caught += event.lie

    def report(self) -> dict[str, Any]:
        games = max(self.games, 1)
        return {
            "games": self.games,
            "plays_per_game": round(self.plays / games, 2),
            "passes_per_game": round(self.passes / games, 2),
            "challenges_per_game": round(self.challenges / games, 2),
            "lies_caught_share": round(self.lies_caught / self.challenges, 4)
            if self.challenges
            else 0.0,
            "wins_by_seat": list(self.wins),
            "draws": self.draws,
            "endings": dict(sorted(self.endings.items())),
            "invariant_violations": self.violations,
        }


def play_game(rules: Rules, seating: Seating, rng: random.Random, tally: Tally) -> GameState:
    """One game between computer players; every state is checked against the invariants."""
    state, events = new_game(rules, seating, rng)
    deck_size = state.deck_size
    tally.count(events)
    now = 0
    asked: set[tuple[int, int]] = set()
    for _ in range(STEP_LIMIT):
        if state.phase is Phase.FINISHED:
            break
        now += ACTION_MS
        action = next_action(state, rng, now, asked)
        if action is None:
            raise AssertionError(f"nobody can act: {state}")
        state, events = apply(state, action)
        tally.count(events)
        problems = violations(state, deck_size)
        if problems:
            tally.violations += 1
            if len(tally.examples) < 5:
                tally.examples.append(f"after {action}: {', '.join(problems)}")
    if state.phase is not Phase.FINISHED:
        tally.violations += 1
        tally.examples.append("a game did not end")
    return state


def simulate(rules: Rules, players: int, games: int, seed: int) -> tuple[dict[str, Any], list[str]]:
    """The figures of ``games`` games (deterministic for a seed) and a few violation notes."""
    tally = Tally(wins=[0] * players)
    names = [(1000 + i, f"AI{i + 1}") for i in range(players)]
    seeder = random.Random(seed)
    for _ in range(games):
        rng = random.Random(seeder.getrandbits(64))
        seating = random_seating(names, rng)
        state = play_game(rules, seating, rng, tally)
        tally.games += 1
        result = state.result
        if result is None:
            continue
        tally.endings[result.reason.value] = tally.endings.get(result.reason.value, 0) + 1
        if result.winner is None:
            tally.draws += 1
        else:
            # Wins are counted by position from the dealer: seat 1 plays first.
            tally.wins[(result.winner - seating.dealer - 1) % players] += 1
    return tally.report(), tally.examples


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``simulate`` on an ``argparse`` sub-parsers object."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "simulate",
        help="play games between computer players and print figures",
        description=__doc__,
    )
    parser.add_argument("--preset", default="cheat", choices=sorted(PRESETS))
    parser.add_argument("--players", type=int, default=4)
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


def run(args: argparse.Namespace) -> int:
    """Run ``tgcheat simulate``: 0 when no invariant was violated, 1 otherwise, 2 on bad
    arguments."""
    if not MIN_PLAYERS <= args.players <= MAX_PLAYERS or args.games < 1:
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
            f"{min(rules.min_players, args.players)}-{max(rules.max_players, args.players)}",
        )
    except InvalidRules as invalid:
        print(f"invalid rules: {invalid.reason.value} ({invalid.option})", file=sys.stderr)
        return 2
    started = time.perf_counter()
    report, examples = simulate(rules, args.players, args.games, args.seed)
    elapsed = max(time.perf_counter() - started, 1e-9)
    speed = round(args.games / elapsed, 1)
    head = {
        "preset": args.preset,
        "options": list(args.options),
        "players": args.players,
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
    print(f"games: {report['games']}")
    print(f"plays per game: {report['plays_per_game']}")
    print(f"passes per game: {report['passes_per_game']}")
    print(f"challenges per game: {report['challenges_per_game']}")
    print(f"challenges that caught a lie: {100 * report['lies_caught_share']:.1f}%")
    wins = "  ".join(f"{i + 1}:{w}" for i, w in enumerate(report["wins_by_seat"]))
    print(f"wins by seat (1 plays first): {wins}  draws:{report['draws']}")
    endings = ", ".join(f"{k} {v}" for k, v in report["endings"].items())
    print(f"endings: {endings}")
    print(f"invariant violations: {report['invariant_violations']}")
