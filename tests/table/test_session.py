"""The session value: whose language, which rules, whether something is in progress; and the
ids of the messages that show it."""

from __future__ import annotations

from tgcheat.engine.rules import Rules
from tgcheat.table.session import MessageIds, Session
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


def test_message_ids_merge_what_was_sent_since() -> None:
    stored = MessageIds(table=10, hands={1: 11, 2: 12}, told=frozenset({3}))
    sent = MessageIds(hands={1: 31}, told=frozenset({4}))
    assert stored.merged(sent) == MessageIds(10, {1: 31, 2: 12}, frozenset({3, 4}))
    assert stored.merged(MessageIds(table=40)).table == 40
    assert stored.hand(2) == 12 and stored.hand(9) is None


def test_message_ids_empty() -> None:
    assert MessageIds().empty
    assert not MessageIds(told=frozenset({1})).empty
    assert not MessageIds(buried=True).empty


def test_a_table_is_buried_until_a_new_table_is_sent() -> None:
    """Another bot message in the group buries the table; posting a new table unburies it,
    and hands sent meanwhile change nothing of that."""
    stored = MessageIds(table=10)
    buried = stored.merged(MessageIds(buried=True))
    assert buried.buried and buried.table == 10
    assert buried.merged(MessageIds(hands={1: 5})).buried
    reposted = buried.merged(MessageIds(table=11))
    assert reposted.table == 11 and not reposted.buried
