"""The random draws of a round dealt during a game (``penalty=revolver`` deals anew every
round), derived from the game's secret seed and the round's number.

The engine is pure: a transition cannot ask a generator for randomness. The seed is drawn from
a cryptographically secure generator when the game starts (RULES.md "Fairness"), kept secret in
the state, and each round's draws are SHA-256 of the seed, the round and a counter: as
unpredictable as the seed to anyone who does not hold it, and the same on a retried
transaction.
"""

from __future__ import annotations

import hashlib
from typing import Any

#: Bits of the seed drawn when a game starts.
SEED_BITS = 128


class RoundRandom:
    """A generator for one round's deal, with the two methods dealing uses."""

    __slots__ = ("_counter", "_prefix")

    def __init__(self, seed: int, round_number: int) -> None:
        self._prefix = f"{seed}:{round_number}:".encode()
        self._counter = 0

    def _bits(self, k: int) -> int:
        digest = hashlib.sha256(self._prefix + str(self._counter).encode()).digest()
        self._counter += 1
        return int.from_bytes(digest, "big") >> (256 - k)

    def _below(self, n: int) -> int:
        """A uniform number in [0, n), by rejection (no modulo bias)."""
        if n <= 1:
            return 0
        k = n.bit_length()
        while True:
            value = self._bits(k)
            if value < n:
                return value

    def randrange(self, start: int, stop: int | None = None, step: int = 1) -> int:
        if stop is None:
            start, stop = 0, start
        width = (stop - start + step - 1) // step
        if width <= 0:
            raise ValueError("empty range")
        return start + step * self._below(width)

    def shuffle(self, x: list[Any]) -> None:
        """Fisher–Yates, as ``random.shuffle``."""
        for i in range(len(x) - 1, 0, -1):
            j = self._below(i + 1)
            x[i], x[j] = x[j], x[i]
