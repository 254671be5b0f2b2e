"""A quick game with anyone (/quick): who waits, when a table is made of them, and the game
dealt to it.

A person asks in private (or from the Mini App) and waits in a queue shared by every group and
language. A table is made as soon as ``SEATS`` people wait, or once the first of them has
waited ``FILL_AFTER_MS``: everyone waiting then (up to ``SEATS``) is seated, and computer
players fill the empty seats. So two people who ask within a few seconds play together, and one
alone plays computer players after the wait. An entry that nobody's clock matched within
``WAIT_MS`` (every process was down) is dropped, so the queue only ever holds people who asked
within the last minute.

The game is played at a place of its own (``Place.of_quick_game``): its table is shown in each
person's private chat, in their own language, with their hand below it, and in the Mini App.
Nobody sees anything of the others but the name they show in Telegram: no username, no link.
The queue itself lives in Redis (``tgcheat.store.quick``), where one script matches it, so any
number of processes may ask and match at once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from tgcheat.engine.game import RandomSource
from tgcheat.engine.rules import Rules
from tgcheat.table.access import Actor, refused
from tgcheat.table.computers import Level
from tgcheat.table.lobby import add_computer, deal_at_once, join, open_lobby
from tgcheat.table.place import Place
from tgcheat.table.progress import Events
from tgcheat.table.refusals import SessionRefusal
from tgcheat.table.session import Session

#: The seats of a quick game's table.
SEATS = 4
#: How long the first person waits for others before computer players fill the empty seats.
FILL_AFTER_MS = 20_000
#: How long an entry is good for: one older than this is dropped, not matched.
WAIT_MS = 60_000
#: The level of the computer players who fill a quick table.
LEVEL = Level.NORMAL
#: The longest a quick game keeps its players from asking for another: the most plays the
#: rules allow, each at a full turn's time, and some.
MAX_GAME_MS = 8 * 3600 * 1000
#: The longest name shown at a quick table (a display name is the person's to choose).
MAX_NAME = 64


def quick_rules() -> Rules:
    """The rules of every quick game: the classic rules at the normal pace (a turn a player
    leaves unanswered is played for them; three in a row and they are out), at ``SEATS``."""
    return Rules().with_option("players", f"2-{SEATS}")


@dataclass(frozen=True, slots=True)
class Seeker:
    """A person matched for a quick game: their id, the name others see, their language, and
    the message that told them they wait (0: none, e.g. asked in the Mini App)."""

    user_id: int
    name: str
    language: str
    waiting_message: int = 0


def quick_game(
    session: Session | None,
    *,
    place: Place,
    game_id: str,
    seekers: Sequence[Seeker],
    rng: RandomSource,
    now_ms: int,
) -> tuple[Session, Events]:
    """The game of the people matched for quick game ``place``, computer players in the seats
    left, dealt at once."""
    if session is not None or not place.quick or not 0 < len(seekers) <= SEATS:
        # A quick place holds one game, made once.
        raise refused(SessionRefusal.GAME_OPEN)
    first = seekers[0]
    opened = open_lobby(
        None,
        chat_id=place.chat_id,
        game_id=game_id,
        creator=first.user_id,
        rules=quick_rules(),
        title="",
        language=first.language,
        now_ms=now_ms,
    )
    seated = opened
    for seeker in seekers:
        seated = join(
            seated,
            user_id=seeker.user_id,
            name=seeker.name[:MAX_NAME],
            language=seeker.language,
            now_ms=now_ms,
        )
    creator = Actor(first.user_id)
    for _ in range(SEATS - len(seekers)):
        seated = add_computer(seated, game_id=game_id, actor=creator, level=LEVEL, now_ms=now_ms)
    dealt, events = deal_at_once(seated, rng, now_ms)
    return dataclasses.replace(dealt, title=""), events


def seated_in(session: Session | None, user_id: int) -> bool:
    """Whether the person plays the quick game of ``session`` now (seated, not out, the game
    not over): they may not ask for another meanwhile."""
    state = session.live_game if session is not None else None
    if state is None:
        return False
    seat = state.seat_of(user_id)
    return seat is not None and not state.players[seat].left and not state.players[seat].shot
