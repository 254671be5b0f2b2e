"""The session value: whose language, which rules, whether something is in progress; and the
ids of the messages that show it."""

from __future__ import annotations

from tgcheat.engine.rules import Rules
from tgcheat.table.session import Session
from tgcheat.table.transitions import Actor, stop

from .builders import CHAT, CREATOR, T0, dealt, lobby


def test_language_of_a_player_or_else_the_groups() -> None:
    session = Session(
        chat_id=CHAT,
        game_id="g1",
        creator=CREATOR,
        language="ru",
        player_languages=((2, "it"), (3, "en")),
    )
    assert [session.language_of(uid) for uid in (2, 3, 4)] == ["it", "en", "ru"]


def test_rules_are_the_lobbys_then_the_games() -> None:
    rules = Rules(turn_timeout_s=60)
    assert lobby(rules).rules == rules
    game, _ = dealt(rules)
    assert game.rules == rules and game.game is not None and game.game.rules == rules


def test_in_progress_and_live_game() -> None:
    """A lobby or a game being played is in progress; a finished game is not, and is no
    longer the live game (it stays until the next /new)."""
    game, _ = dealt()
    finished, _ = stop(game, actor=Actor(CREATOR), now_ms=T0)
    assert lobby().in_progress and lobby().live_game is None
    assert game.in_progress and game.live_game is game.game
    assert not finished.in_progress and finished.live_game is None
    assert finished.game is not None
