"""What counting a finished game brought its players (their rating before and after it, the
achievements it earned them for the first time, and a group's season that turned with it), and
a person's standing (their profile). Pure: the store counts (tgcheat.store.stats); the views
show it on the game's result and on /profile.

The news of a game is kept with the game's count (in the chat's statistics, and in what its
place shows), so that the result drawn again (the clock, another process) shows the same."""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from tgcheat.table.rating import Skill
from tgcheat.table.stats import Row


@dataclass(frozen=True, slots=True)
class PersonNews:
    user_id: int
    #: The rating shown before and after the game (equal: the game did not move it; 0 and 0:
    #: not a rated game).
    before: int = 0
    after: int = 0
    #: Achievements earned for the first time (codes, tgcheat.table.achievements).
    earned: tuple[str, ...] = ()

    @property
    def rated(self) -> bool:
        return self.after > 0

    @property
    def change(self) -> int:
        return self.after - self.before


@dataclass(frozen=True, slots=True)
class GameNews:
    people: tuple[PersonNews, ...] = ()
    #: A group's season that ended before this game (its first of a new season), and its best
    #: players there (display names and ratings), best first.
    season_over: int = 0
    season_top: tuple[tuple[str, int], ...] = ()

    def of(self, user_id: int) -> PersonNews | None:
        for person in self.people:
            if person.user_id == user_id:
                return person
        return None

    @property
    def empty(self) -> bool:
        return not self.season_top and not any(p.rated or p.earned for p in self.people)

    def encode(self) -> str:
        """Compact JSON (the store and the shown record keep it)."""
        if self.empty:
            return ""
        document: dict[str, object] = {
            "p": [[p.user_id, p.before, p.after, " ".join(p.earned)] for p in self.people]
        }
        if self.season_top:
            document["s"] = self.season_over
            document["t"] = [list(place) for place in self.season_top]
        return orjson.dumps(document).decode()

    @classmethod
    def decode(cls, raw: str | bytes | None) -> GameNews:
        """The news ``raw`` holds; none for nothing (or something unreadable)."""
        if not raw:
            return cls()
        try:
            document = orjson.loads(raw)
            people = tuple(
                PersonNews(int(user), int(before), int(after), tuple(str(codes).split()))
                for user, before, after, codes in document.get("p", ())
            )
            top = tuple((str(name), int(score)) for name, score in document.get("t", ()))
            return cls(people, int(document.get("s", 0)), top)
        except (orjson.JSONDecodeError, TypeError, ValueError):
            return cls()


@dataclass(frozen=True, slots=True)
class Profile:
    """A person's standing: their figures across groups, their rating, where they rank on this
    season's global board (None: not on it), their achievements, and their last game's news."""

    name: str
    row: Row
    skill: Skill | None
    achievements: tuple[str, ...]
    season_rank: int | None
    #: They asked to be left off the global board.
    hidden: bool
    last: PersonNews | None = None
    #: How many players the last game had and their place in it (0: not known).
    last_place: int = 0
    last_players: int = 0

    @property
    def shown(self) -> int:
        return self.skill.shown if self.skill is not None else 0
