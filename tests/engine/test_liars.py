"""Liar's Bar (the ``liars`` preset): the short deck, the table's rank, the revolver."""

from __future__ import annotations

import random

import pytest

from tests.engine.helpers import random_action
from tests.engine.test_properties import UNCAPPED_STEPS, _drive, _start
from tgcheat.engine.actions import Challenge, Leave, Play, PullTrigger, Timeout
from tgcheat.engine.cards import Card, Rank, Suit
from tgcheat.engine.deal import RoundRandom
from tgcheat.engine.events import ChallengeResolved, RoundDealt, TriggerPulled, TurnStarted
from tgcheat.engine.game import (
    PULL_PAUSE_MS,
    IllegalAction,
    Refusal,
    Seating,
    apply,
    awaited,
    deck_of,
    must_call,
    new_game,
    pending_deadline_ms,
    refusal,
)
from tgcheat.engine.invariants import violations
from tgcheat.engine.rules import (
    PRESETS,
    AfterChallenge,
    ChallengePriority,
    Challengers,
    ChallengeWindow,
    DeckKind,
    FinalCheck,
    InvalidRules,
    Jokers,
    MatchKind,
    Passing,
    Penalty,
    RankRule,
    Rules,
    RulesProblem,
    with_preset,
)
from tgcheat.engine.state import EndReason, GameState, Phase, evolve

LIARS = PRESETS["liars"]


def _game(players: int = 3, seed: int = 7) -> GameState:
    seating = Seating(tuple((100 + i, f"P{i}") for i in range(players)), dealer=players - 1)
    state, _ = new_game(LIARS, seating, random.Random(seed))
    return state


def _card(rank: Rank, copy: int = 0) -> Card:
    return Card.make(rank, Suit(copy % 4), copy // 4)


def _with_hands(state: GameState, hands: list[tuple[Card, ...]], bullets: list[int]) -> GameState:
    """``state`` with explicit hands and bullets; every other card in the stock."""
    held = {c for hand in hands for c in hand}
    players = tuple(
        evolve(p, hand=tuple(sorted(hand)), bullet=bullet)
        for p, hand, bullet in zip(state.players, hands, bullets, strict=True)
    )
    stock = tuple(c for c in deck_of(state.rules, len(players)) if c not in held)
    return evolve(state, players=players, stock=stock, pile=(), turn=0, required=Rank.ACE)


def test_a_new_game_deals_five_of_the_short_deck_to_each_and_draws_the_tables_rank() -> None:
    for players in (2, 3, 4):
        state = _game(players)
        assert state.deck_size == 20
        assert {c.rank for c in deck_of(LIARS, players)} == {
            Rank.ACE,
            Rank.KING,
            Rank.QUEEN,
            Rank.JOKER,
        }
        assert [len(p.hand) for p in state.players] == [5] * players
        assert len(state.stock) == 20 - 5 * players
        assert state.required in (Rank.ACE, Rank.KING, Rank.QUEEN)
        assert all(0 <= p.bullet < 6 and p.pulls == 0 for p in state.players)
        assert violations(state, 20) == []


def test_bullets_and_round_deals_are_spread_over_every_chamber_and_rank() -> None:
    bullets = {_game(2, seed).players[0].bullet for seed in range(200)}
    ranks = {_game(2, seed).required for seed in range(200)}
    assert bullets == set(range(6))
    assert ranks == {Rank.ACE, Rank.KING, Rank.QUEEN}


def test_more_than_four_seats_are_refused_when_the_rules_are_set() -> None:
    with pytest.raises(InvalidRules) as refused:
        LIARS.with_option("players", "2-6")
    assert refused.value.reason is RulesProblem.SHORT_DECK_TOO_MANY_PLAYERS
    # Without its jokers the short deck holds 18 cards: three players of five.
    with pytest.raises(InvalidRules):
        LIARS.with_option("jokers", "off")
    assert LIARS.with_option("players", "2-3").with_option("jokers", "off").max_players == 3
    with pytest.raises(InvalidRules) as passing:
        LIARS.with_option("passing", "vote")
    assert passing.value.reason is RulesProblem.REVOLVER_WITHOUT_PASSING


def test_choosing_the_preset_and_leaving_it() -> None:
    group = Rules(turn_timeout_s=60)
    liars = with_preset(group, "liars")
    assert (liars.deck, liars.penalty, liars.max_cards, liars.max_players) == (
        LIARS.deck,
        LIARS.penalty,
        3,
        4,
    )
    assert liars.turn_timeout_s == 60
    back = with_preset(liars, "cheat")
    assert back == Rules(turn_timeout_s=60)


def test_claims_name_the_tables_rank_with_one_to_three_cards() -> None:
    a, k, q = _card(Rank.ACE), _card(Rank.KING), _card(Rank.QUEEN)
    k2, q2 = _card(Rank.KING, 1), _card(Rank.QUEEN, 1)
    state = _with_hands(_game(3), [(a, k, q, k2, q2), (), ()], [5, 5, 5])
    assert refusal(state, Play(0, (k,), Rank.KING)) is Refusal.WRONG_RANK
    assert refusal(state, Play(0, (k, q, k2, q2), Rank.ACE)) is Refusal.BAD_CARD_COUNT
    assert refusal(state, Play(0, (k, q, k2), Rank.ACE)) is None


def _three_at_table() -> GameState:
    """Seat 0 holds a joker and a king, seat 1 kings, seat 2 queens; the round's rank is A."""
    hands = [
        (_card(Rank.JOKER, 0), _card(Rank.KING, 0)),
        (_card(Rank.KING, 1), _card(Rank.KING, 2)),
        (_card(Rank.QUEEN, 0), _card(Rank.QUEEN, 1)),
    ]
    return _with_hands(_game(3), hands, [0, 2, 5])


def test_only_the_next_player_may_call_and_a_joker_is_always_true() -> None:
    state = _three_at_table()
    joker = next(c for c in state.players[0].hand if c.rank is Rank.JOKER)
    state, _ = apply(state, Play(0, (joker,), Rank.ACE))
    number = state.open_claims[-1].number
    assert refusal(state, Challenge(2, number)) is Refusal.NOT_NEXT_PLAYER
    state, events = apply(state, Challenge(1, number, now_ms=10_000))
    resolved = next(e for e in events if isinstance(e, ChallengeResolved))
    assert not resolved.lie and resolved.taker == 1
    # The round ends at the call: the caller of a true claim pulls the trigger after the pause.
    assert state.pull_by == 1 and pending_deadline_ms(state) == 10_000 + PULL_PAUSE_MS
    assert awaited(state) == frozenset()
    assert state.players[1].hand, "the cards stay until the next deal"
    assert violations(state, 20) == []


def test_the_pull_waits_for_its_moment_then_a_click_deals_a_new_round() -> None:
    state = _three_at_table()
    king = next(c for c in state.players[0].hand if c.rank is Rank.KING)
    state, _ = apply(state, Play(0, (king,), Rank.ACE))
    state, _ = apply(state, Challenge(1, state.open_claims[-1].number, now_ms=0))
    assert state.pull_by == 0
    for action in (Play(1, state.players[1].hand[:1], Rank.ACE), Timeout(state.plays, False)):
        with pytest.raises(IllegalAction) as refused:
            apply(state, action)
        assert refused.value.reason is Refusal.PULL_PENDING
    with pytest.raises(IllegalAction) as early:
        apply(state, PullTrigger(PULL_PAUSE_MS - 1))
    assert early.value.reason is Refusal.TOO_EARLY
    round_before = state.round
    # Seat 0's bullet is in chamber 0: the first pull is the shot. Move it one on for a click.
    state = evolve(state, players=(evolve(state.players[0], bullet=1), *state.players[1:]))
    state, events = apply(state, PullTrigger(PULL_PAUSE_MS))
    assert TriggerPulled(0, 1, False) in events
    dealt = next(e for e in events if isinstance(e, RoundDealt))
    assert dealt.round == round_before + 1 and state.required == dealt.required
    assert [len(p.hand) for p in state.players] == [5, 5, 5]
    # Whoever pulled opens the new round.
    assert events[-1] == TurnStarted(0, state.required) and state.turn == 0
    assert violations(state, 20) == []
    with pytest.raises(IllegalAction):
        apply(state, PullTrigger(10**9))


def test_a_hit_puts_the_player_out_and_the_last_alive_wins() -> None:
    state = _with_hands(
        _game(2),
        [(_card(Rank.KING),), (_card(Rank.QUEEN), _card(Rank.ACE))],
        [0, 5],
    )
    state, _ = apply(state, Play(0, state.players[0].hand, Rank.ACE))
    # Seat 0 has no cards left: seat 1 alone holds any, so calling is all it may do.
    assert must_call(state)
    assert refusal(state, Play(1, state.players[1].hand[:1], Rank.ACE)) is Refusal.MUST_CALL
    state, _ = apply(state, Challenge(1, state.open_claims[-1].number, now_ms=0))
    state, events = apply(state, PullTrigger(PULL_PAUSE_MS))
    assert TriggerPulled(0, 1, True) in events
    assert state.phase is Phase.FINISHED and state.result is not None
    assert state.result.reason is EndReason.LAST_ALIVE and state.result.winner == 1
    assert dict(state.result.places) == {1: 1, 0: 2}
    assert state.players[0].shot and state.fallen == (0,)
    assert violations(state, 20) == []


def test_the_clock_calls_for_a_player_who_must_call() -> None:
    state = _with_hands(
        _game(2),
        [(_card(Rank.KING),), (_card(Rank.QUEEN), _card(Rank.ACE))],
        [3, 3],
    )
    state, _ = apply(state, Play(0, state.players[0].hand, Rank.ACE))
    state, events = apply(state, Timeout(state.plays, False, now_ms=5_000))
    resolved = next(e for e in events if isinstance(e, ChallengeResolved))
    assert resolved.challenger == 1 and resolved.lie and state.pull_by == 0
    assert state.pull_at_ms == 5_000 + PULL_PAUSE_MS


def test_a_player_with_no_cards_sits_the_round_out() -> None:
    hands = [
        (_card(Rank.ACE),),
        (_card(Rank.ACE, 1), _card(Rank.KING)),
        (_card(Rank.ACE, 2), _card(Rank.QUEEN)),
    ]
    state = _with_hands(_game(3), hands, [5, 5, 5])
    state, _ = apply(state, Play(0, state.players[0].hand, Rank.ACE))
    state, _ = apply(state, Play(1, state.players[1].hand[:1], Rank.ACE))
    state, _ = apply(state, Play(2, state.players[2].hand[:1], Rank.ACE))
    # Seat 0 is skipped: seat 1 plays next, and only it may call seat 2's play.
    assert state.turn == 1
    number = state.open_claims[-1].number
    assert refusal(state, Challenge(0, number)) is Refusal.NOT_NEXT_PLAYER
    assert refusal(state, Challenge(1, number)) is None


def test_the_one_who_must_pull_leaving_deals_a_new_round() -> None:
    state = _three_at_table()
    king = next(c for c in state.players[0].hand if c.rank is Rank.KING)
    state, _ = apply(state, Play(0, (king,), Rank.ACE))
    state, _ = apply(state, Challenge(1, state.open_claims[-1].number, now_ms=0))
    state, events = apply(state, Leave(0))
    assert state.pull_by is None and any(isinstance(e, RoundDealt) for e in events)
    assert [len(p.hand) for p in state.players] == [0, 5, 5]
    assert violations(state, 20) == []


def test_round_deals_are_reproducible_from_the_seed_and_differ_by_round() -> None:
    def order(seed: int, number: int) -> list[int]:
        cards = list(range(20))
        RoundRandom(seed, number).shuffle(cards)
        return cards

    assert order(5, 2) == order(5, 2)
    assert order(5, 2) != order(5, 3) and order(5, 2) != order(6, 2)
    draws = [RoundRandom(9, n).randrange(3) for n in range(300)]
    assert set(draws) == {0, 1, 2}


def test_a_player_leaving_while_a_trigger_waits_keeps_the_invariants() -> None:
    """A leaver whose turn it was while a trigger waited, every other hand empty: the turn
    moves to a player without cards, which is no violation while nobody plays (found by
    ``test_random_games_under_any_valid_options_keep_the_invariants``)."""
    rules = Rules(
        rank_rule=RankRule.TABLE,
        challengers=Challengers.ANYONE,
        after_challenge=AfterChallenge.CONTINUE,
        challenge_priority=ChallengePriority.FIRST,
        challenge_grace_s=0,
        challenge_window=ChallengeWindow.LAST,
        final_check=FinalCheck.ALL,
        max_cards=0,
        decks=0,
        jokers=Jokers.OFF,
        passing=Passing.NEVER,
        move_cap=10,
        min_players=2,
        max_players=8,
        match=MatchKind.SINGLE,
        afk_limit=1,
        deck=DeckKind.STANDARD,
        penalty=Penalty.REVOLVER,
    ).validate()
    state, rng = _start(rules, 8, 14003)
    _drive(state, rng, random_action, 0.005, 0.0, UNCAPPED_STEPS)
