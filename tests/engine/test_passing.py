"""RULES.md ``passing``: never, exhausted, vote (the Italian home variants)."""

from __future__ import annotations

import dataclasses

import pytest

from tgcheat.engine.actions import Challenge, Leave, Pass, PassVote, Play, Timeout
from tgcheat.engine.cards import Rank
from tgcheat.engine.events import (
    Passed,
    PassRefused,
    PassRequested,
    PassVoted,
    TurnStarted,
)
from tgcheat.engine.game import (
    IllegalAction,
    Refusal,
    apply,
    awaited,
    can_pass,
    can_vote,
    pass_voters,
    rank_exhausted,
    refusal,
)
from tgcheat.engine.rules import PRESETS, Rules
from tgcheat.engine.state import GameState, Phase

from .helpers import cards, state_with

SEVENS = cards("7♣", "7♦", "7♥", "7♠")


def _refused(state: GameState, action: Pass | PassVote | Play) -> Refusal:
    with pytest.raises(IllegalAction) as refused:
        apply(state, action)
    return refused.value.reason


def _sevens_in_pile(rules: Rules, required: Rank | None = Rank.SEVEN) -> GameState:
    """Every seven lies in the pile; A, to play, holds none."""
    hands = [cards("K♦", "2♠", "3♠"), cards("8♥", "3♣", "9♦"), cards("5♦", "9♣", "10♠")]
    return state_with(hands, pile=SEVENS, required=required, rules=rules, rest_to=2)


@pytest.mark.parametrize(("value", "reason"), [("never", Refusal.PASSING_OFF), ("exhausted", None)])
def test_passing_exhausted_lets_a_player_pass_when_every_copy_is_in_the_pile(
    value: str, reason: Refusal | None
) -> None:
    state = _sevens_in_pile(Rules().with_option("passing", value))
    assert rank_exhausted(state)
    assert refusal(state, Pass(0)) is reason
    if reason is not None:
        return
    state, events = apply(state, Pass(0))
    # The table learns why, the turn moves on, and the sequence with it.
    assert events == [Passed(0, Rank.SEVEN), TurnStarted(1, Rank.EIGHT)]
    assert state.turn == 1 and state.required is Rank.EIGHT and state.plays == 1


def test_passing_exhausted_is_refused_while_a_copy_is_outside_the_pile() -> None:
    rules = Rules().with_option("passing", "exhausted")
    hands = [cards("K♦", "2♠"), cards("8♥", "7♠"), cards("5♦", "9♣")]
    state = state_with(hands, pile=SEVENS[:3], required=Rank.SEVEN, rules=rules, rest_to=2)
    assert not rank_exhausted(state)
    assert _refused(state, Pass(0)) is Refusal.RANK_NOT_EXHAUSTED
    assert _refused(state, Pass(1)) is Refusal.NOT_YOUR_TURN


def test_passing_exhausted_counts_jokers_aside() -> None:
    rules = Rules().with_option("passing", "exhausted").with_option("jokers", "wild")
    state = _sevens_in_pile(rules)
    # The jokers are still in hands, but a joker is not a copy of the rank.
    assert any(c.rank is Rank.JOKER for p in state.players for c in p.hand)
    assert can_pass(state, 0)


def test_passing_exhausted_with_two_decks_needs_all_eight() -> None:
    rules = Rules().with_option("passing", "exhausted").with_option("decks", "2")
    state = _sevens_in_pile(rules)
    assert not can_pass(state, 0)
    pile = SEVENS + cards("7♣", "7♦", "7♥", "7♠", deck=1)
    hands = [cards("K♦", "2♠"), cards("8♥", "3♣"), cards("5♦", "9♣")]
    state = state_with(hands, pile=pile, required=Rank.SEVEN, rules=rules, rest_to=2)
    assert can_pass(state, 0)


def test_passing_exhausted_under_same_ends_the_round() -> None:
    rules = PRESETS["verju"].with_option("passing", "exhausted")
    state = _sevens_in_pile(rules)
    state, _ = apply(state, Pass(0))
    # Nobody could play sevens truly: the next player names a new rank on the same pile.
    assert state.required is None and state.turn == 1
    assert len(state.pile) == 4


def test_a_pass_closes_the_open_plays() -> None:
    rules = Rules().with_option("passing", "exhausted").with_option("challenge_window", "two")
    state = _sevens_in_pile(rules, required=Rank.SIX)
    state, _ = apply(state, Play(0, cards("K♦"), Rank.SIX))
    state, _ = apply(state, Pass(1))
    assert state.open_claims == ()
    assert _refused(state, Challenge(2, 1)) is Refusal.NO_SUCH_CLAIM  # type: ignore[arg-type]


def test_a_pass_counts_towards_the_move_cap() -> None:
    rules = Rules().with_option("passing", "exhausted")
    state = _sevens_in_pile(rules)
    state = dataclasses.replace(state, plays=299)
    state, _ = apply(state, Pass(0))
    assert state.phase is Phase.FINISHED


# --- vote -----------------------------------------------------------------------------------------


def _vote_table(rules: Rules | None = None) -> GameState:
    rules = rules or Rules().with_option("passing", "vote")
    hands = [
        cards("K♦", "2♠", "3♠"),
        cards("8♥", "3♣", "9♦"),
        cards("5♦", "9♣", "10♠"),
        cards("J♦", "J♣", "4♠"),
    ]
    return state_with(hands, required=Rank.SEVEN, rules=rules, rest_to=3)


def test_vote_every_other_player_agrees_and_the_player_passes() -> None:
    state = _vote_table()
    state, events = apply(state, Pass(0))
    assert events == [PassRequested(0, frozenset({1, 2, 3}))]
    assert awaited(state) == {1, 2, 3} == pass_voters(state)
    assert _refused(state, Pass(0)) is Refusal.VOTE_PENDING
    assert _refused(state, PassVote(0, True)) is Refusal.NOT_A_VOTER
    state, _ = apply(state, PassVote(2, True))
    assert _refused(state, PassVote(2, True)) is Refusal.ALREADY_VOTED
    state, _ = apply(state, PassVote(1, True))
    assert awaited(state) == {3}
    state, events = apply(state, PassVote(3, True))
    assert events == [
        PassVoted(3, True),
        Passed(0, Rank.SEVEN, by_vote=True),
        TurnStarted(1, Rank.EIGHT),
    ]
    assert state.vote_by is None and state.turn == 1


def test_vote_one_no_refuses_it_and_the_player_must_play() -> None:
    state = _vote_table()
    state, _ = apply(state, Pass(0))
    state, _ = apply(state, PassVote(1, True))
    state, events = apply(state, PassVote(2, False))
    assert events == [PassVoted(2, False), PassRefused(0, by=2)]
    assert state.vote_by is None and state.pass_refused
    assert awaited(state) == {0}
    assert not can_vote(state, 3)
    assert _refused(state, PassVote(3, True)) is Refusal.NO_VOTE
    assert _refused(state, Pass(0)) is Refusal.VOTE_REFUSED
    state, _ = apply(state, Play(0, cards("K♦"), Rank.SEVEN))
    # The next player may ask again.
    assert can_pass(state, 1)


def test_vote_under_same_keeps_the_round_rank() -> None:
    rules = PRESETS["verju"].with_option("passing", "vote")
    state = _vote_table(rules)
    state, _ = apply(state, Pass(0))
    for seat in (1, 2, 3):
        state, _ = apply(state, PassVote(seat, True))
    assert state.turn == 1 and state.required is Rank.SEVEN


def test_vote_ends_when_its_time_runs_out_silence_is_no() -> None:
    state = _vote_table()
    state, _ = apply(state, Pass(0))
    state, _ = apply(state, PassVote(1, True))
    state, events = apply(state, Timeout(state.plays, False))
    assert events == [PassRefused(0)]
    assert state.pass_refused and awaited(state) == {0}
    # Nobody was played for: the voters' silence is not the asker's timeout.
    assert state.open_claims == () and state.players[0].timeouts == 0


def test_vote_the_asker_may_play_instead_which_withdraws_it() -> None:
    state = _vote_table()
    state, _ = apply(state, Pass(0))
    state, events = apply(state, Play(0, cards("K♦"), Rank.SEVEN))
    assert events[0] == PassRefused(0, withdrawn=True)
    assert state.vote_by is None and state.turn == 1


def test_vote_a_voter_leaving_settles_it() -> None:
    state = _vote_table()
    state, _ = apply(state, Pass(0))
    state, _ = apply(state, PassVote(1, True))
    state, _ = apply(state, PassVote(2, True))
    state, events = apply(state, Leave(3))
    assert any(isinstance(e, Passed) for e in events)
    assert state.turn == 1


def test_vote_the_asker_leaving_ends_it() -> None:
    state = _vote_table()
    state, _ = apply(state, Pass(0))
    state, _ = apply(state, Leave(0))
    assert state.vote_by is None and state.turn == 1 and awaited(state) == {1}


def test_vote_a_challenge_interrupts_it() -> None:
    state = _vote_table()
    state, _ = apply(state, Play(0, cards("K♦"), Rank.SEVEN))
    state, _ = apply(state, Pass(1))
    state, events = apply(state, Challenge(2, 1))
    assert events[0] == PassRefused(1, withdrawn=True)
    assert state.vote_by is None and state.turn == 1 and not state.pass_refused
