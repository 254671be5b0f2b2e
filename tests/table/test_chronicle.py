"""What a game remembers beyond the rules: the notice of what happened without anyone's press,
and the tally for the summary at its end."""

from __future__ import annotations

from tests.engine.helpers import cards, state_with
from tgcheat.engine.actions import Challenge, Play, Timeout
from tgcheat.engine.cards import Rank
from tgcheat.engine.game import apply
from tgcheat.engine.rules import Rules
from tgcheat.engine.state import GameState
from tgcheat.table.audiences import audience
from tgcheat.table.chronicle import GameTally, Notice, NoticeKind, notice_of, tallied

A_CLUBS, FIVE = cards("A♣", "5♠")


def _game(afk_limit: int = 3) -> GameState:
    return state_with(
        [(A_CLUBS, FIVE), cards("2♣", "7♦"), cards("3♣", "8♦")], rules=Rules(afk_limit=afk_limit)
    )


def test_a_timeout_is_noticed_and_its_player_notified() -> None:
    state, events = apply(_game(), Timeout(0, False))
    notice = notice_of(events)
    assert notice == Notice(NoticeKind.TIMED_OUT, 0, 1)
    shown = audience(state, events, notice)
    assert 0 in shown.notified and 1 in shown.notified


def test_the_last_missed_turn_removes_the_player() -> None:
    state, events = apply(_game(afk_limit=1), Timeout(0, False))
    assert notice_of(events) == Notice(NoticeKind.REMOVED_FOR_TIMEOUTS, 0)
    assert state.players[0].left


def test_a_persons_own_move_is_no_notice() -> None:
    _, events = apply(_game(), Play(0, (A_CLUBS,), Rank.ACE))
    assert notice_of(events) is None


def test_the_tally_counts_bluffs_calls_and_the_biggest_pile() -> None:
    state, played = apply(_game(), Play(0, (FIVE,), Rank.ACE))
    tally = tallied(GameTally(), state.rules, 3, played)
    assert tally.of(0).plays == 1 and tally.of(0).bluffs == 1 and tally.of(0).bluffs_unseen == 1
    state, called = apply(state, Challenge(2, 1))
    tally = tallied(tally, state.rules, 3, called)
    assert tally.of(0).bluffs_caught == 1 and tally.of(0).bluffs_unseen == 0
    assert tally.of(2).right_calls == 1 and tally.of(2).wrong_calls == 0
    assert tally.biggest_pile is not None and tally.biggest_pile[1] == 0
    assert tally.of(0).cards_taken == tally.biggest_pile[0] > 0
    assert tally.bluffs_caught == 1 and tally.wrong_calls == 0


def test_a_true_claim_challenged_is_a_wrong_call() -> None:
    state, played = apply(_game(), Play(0, (A_CLUBS,), Rank.ACE))
    state, called = apply(state, Challenge(1, 1))
    tally = tallied(tallied(GameTally(), state.rules, 3, played), state.rules, 3, called)
    assert tally.of(0).bluffs == 0 and tally.of(1).wrong_calls == 1
    assert tally.biggest_pile is not None and tally.biggest_pile[1] == 1
