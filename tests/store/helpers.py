"""Sessions to store, for the store's tests."""

from __future__ import annotations

import random

from tgcheat.engine.game import new_game, random_seating
from tgcheat.engine.rules import PRESETS
from tgcheat.table.session import Session

CHAT = -100123


def game_session(players: int = 6, seed: int = 1, chat_id: int = CHAT) -> Session:
    """A dealt game of the cheat preset."""
    rng = random.Random(seed)
    names = [(1000 + i, f"Player number {i}") for i in range(players)]
    state, _ = new_game(PRESETS["cheat"], random_seating(names, rng), rng)
    return Session(
        chat_id=chat_id, game_id="abc123", creator=1000, game=state, title="Friday cards"
    )


def replace_with(new: Session):  # type: ignore[no-untyped-def]
    """A change that stores ``new`` whatever was there."""

    def change(current: Session | None) -> tuple[Session | None, None]:
        return new, None

    return change
