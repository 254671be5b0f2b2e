"""CPU time per computer-player decision, by strategy: ``python benchmarks/ai_move.py``.

Plays games of the named strategies (default: four ``hard``; ``--seats``) through the engine
as ``tgcheat simulate`` does, and times every call of a strategy (its view built, its
decision made) with ``time.process_time``; prints microseconds per decision by strategy
(mean, median, 99th percentile and the slowest). The target for ``hard``: under 2 ms.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Sequence

from tgcheat.engine.actions import Action
from tgcheat.engine.ai import AIRandom
from tgcheat.engine.autoplay import next_action
from tgcheat.engine.events import Event
from tgcheat.engine.game import apply, new_game, random_seating
from tgcheat.engine.rules import PRESETS
from tgcheat.engine.state import GameState, Phase
from tgcheat.engine.strategies import STRATEGIES, ComputerPlayers

#: CPU seconds of each decision, by strategy.
SAMPLES: dict[str, list[float]] = {}


class _Timed(ComputerPlayers):
    """``ComputerPlayers`` that records the CPU time of each decision in ``SAMPLES``."""

    def choose(self, state: GameState, seat: int, rng: AIRandom, now_ms: int) -> Action | None:
        started = time.process_time()
        action = super().choose(state, seat, rng, now_ms)
        name = self.strategies[seat]
        if name is not None:
            SAMPLES.setdefault(name, []).append(time.process_time() - started)
        return action

    def remember(
        self, before: GameState, events: Sequence[Event], after: GameState
    ) -> ComputerPlayers:
        players = super().remember(before, events, after)
        return _Timed(players.strategies, players.knowledge)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seats", default="hard,hard,hard,hard")
    parser.add_argument("--preset", default="cheat", choices=sorted(PRESETS))
    parser.add_argument("--games", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    seats = args.seats.split(",")
    assert all(name in STRATEGIES for name in seats)
    preset = PRESETS[args.preset]
    rules = preset.with_option(
        "players", f"{min(preset.min_players, len(seats))}-{max(preset.max_players, len(seats))}"
    )
    rng = random.Random(args.seed)
    for _ in range(args.games):
        seating = random_seating([(i, f"P{i}") for i in range(len(seats))], rng)
        state, _ = new_game(rules, seating, rng)
        names = [seats[uid] for uid, _ in seating.players]
        base = ComputerPlayers.seat(state, names)
        players = _Timed(base.strategies, base.knowledge)
        asked: set[tuple[int, int]] = set()
        now = 0
        while state.phase is not Phase.FINISHED:
            now += 1500
            action = next_action(state, rng, now, asked, players=players)
            assert action is not None
            before = state
            state, events = apply(state, action)
            players = players.remember(before, events, state)
    print(f"preset {args.preset}, seats {args.seats}, {args.games} games")
    for name, times in sorted(SAMPLES.items()):
        micros = sorted(t * 1e6 for t in times)
        p99 = micros[int(0.99 * (len(micros) - 1))]
        print(
            f"{name}: {len(micros)} decisions, µs per decision: mean "
            f"{statistics.fmean(micros):.0f}, median {statistics.median(micros):.0f}, "
            f"p99 {p99:.0f}, max {micros[-1]:.0f}"
        )


if __name__ == "__main__":
    main()
