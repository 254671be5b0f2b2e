"""A computer player's memory (``tgcheat.engine.knowledge``): what it records, that it never
holds a fact the player did not see, and that it survives its plain-data form."""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Sequence

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tgcheat.engine.actions import Challenge, Leave, Pass, Play
from tgcheat.engine.cards import Card, Rank
from tgcheat.engine.events import (
    CardsPlayed,
    ChallengeCalled,
    Event,
    FinalAccepted,
    FinalPlayPending,
)
from tgcheat.engine.game import apply, new_game, random_seating
from tgcheat.engine.knowledge import (
    Knowledge,
    Memory,
    count_cards,
    new_knowledge,
    remember,
    slot,
)
from tgcheat.engine.rules import PRESETS, Passing, Rules
from tgcheat.engine.state import Claim, GameState, Phase
from tgcheat.engine.strategies import STRATEGIES, ComputerPlayers, remember_as
from tgcheat.engine.view import see

from .helpers import cards, random_action, state_with
from .test_properties import setups


def _hide_claim(claim: Claim, seat: int, filler: Card) -> Claim:
    if claim.seat == seat:
        return claim
    return dataclasses.replace(claim, cards=(filler,) * len(claim.cards))


def masked(state: GameState, seat: int, filler: Card) -> GameState:
    """``state`` as the player at ``seat`` sees it: every card it has not seen replaced by
    ``filler`` (other hands, the pile, the cards set aside, others' open plays)."""
    players = tuple(
        p if i == seat else dataclasses.replace(p, hand=(filler,) * len(p.hand))
        for i, p in enumerate(state.players)
    )
    return dataclasses.replace(
        state,
        players=players,
        pile=(filler,) * len(state.pile),
        set_aside=(filler,) * len(state.set_aside),
        open_claims=tuple(_hide_claim(c, seat, filler) for c in state.open_claims),
    )


def masked_events(events: Sequence[Event], seat: int, filler: Card) -> list[Event]:
    """The events with the cards of every unrevealed play of another seat replaced; a
    challenge's reveal stays, as the whole table sees it."""
    hidden: list[Event] = []
    for event in events:
        if isinstance(event, CardsPlayed | FinalPlayPending | FinalAccepted | ChallengeCalled):
            event = dataclasses.replace(event, claim=_hide_claim(event.claim, seat, filler))
        hidden.append(event)
    return hidden


Step = tuple[GameState, list[Event], GameState]


def _random_game(rules: Rules, players: int, seed: int, steps: int) -> list[Step]:
    rng = random.Random(seed)
    state, _ = new_game(rules, random_seating([(i, f"P{i}") for i in range(players)], rng), rng)
    history: list[Step] = []
    for step in range(steps):
        if state.phase is Phase.FINISHED:
            break
        action = random_action(state, rng, step * 700)
        if rng.random() < 0.003:
            action = Leave(rng.choice(state.active_seats()))
        after, events = apply(state, action)
        history.append((state, events, after))
        state = after
    return history


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setup=setups(), seed=st.integers(min_value=0, max_value=2**32))
def test_knowledge_never_holds_what_the_seat_did_not_see(
    setup: tuple[Rules, int], seed: int
) -> None:
    """Two games that differ only in cards the seat never saw give the same knowledge: here
    the real game and the same game with every unseen card replaced (two ways)."""
    rules, players = setup
    history = _random_game(rules, players, seed, 400)
    start = history[0][0]
    for memory in Memory:
        for seat in range(players):
            real = new_knowledge(start, seat, memory)
            views = [real, real]
            for before, events, after in history:
                real = remember(real, before, events, after)
                views = [
                    remember(
                        view,
                        masked(before, seat, filler),
                        masked_events(events, seat, filler),
                        masked(after, seat, filler),
                    )
                    for view, filler in zip(views, (Card(0), Card(51)), strict=True)
                ]
                assert views == [real, real]


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setup=setups(), seed=st.integers(min_value=0, max_value=2**32))
def test_strategies_decide_on_what_the_seat_sees(setup: tuple[Rules, int], seed: int) -> None:
    """A strategy is given only the seat's view (``view.see``): the view of the state with
    every unseen card replaced is the same view, so every strategy decides the same (the
    lockstep check: fair by construction, and checked). (Under ``passing=exhausted`` whether
    a pass is allowed is the referee's answer from the pile's faces, as a button press would
    be: left out.)"""
    rules, players = setup
    if rules.passing is Passing.EXHAUSTED:
        rules = dataclasses.replace(rules, passing=Passing.NEVER)
    history = _random_game(rules, players, seed, 150)
    start = history[0][0]
    for name, strategy in STRATEGIES.items():
        knowledge = [new_knowledge(start, s, strategy.memory) for s in range(players)]
        for before, events, after in history:
            for seat in before.active_seats():
                view = see(before, seat)
                for filler in (Card(0), Card(51)):
                    assert see(masked(before, seat, filler), seat) == view
                real = strategy.choose(view, knowledge[seat], random.Random(seat), 5)
                seen = strategy.choose(
                    see(masked(before, seat, Card(0)), seat),
                    knowledge[seat],
                    random.Random(seat),
                    5,
                )
                assert real == seen, (name, seat)
            knowledge = [remember_as(name, k, before, events, after) for k in knowledge]


def _redealt(state: GameState, seat: int, rng: random.Random) -> GameState:
    """``state`` with every card ``seat`` cannot see dealt again at random among the places
    it cannot see (the other hands, the pile's cards that are not its own, the cards set
    aside), each place keeping its number of cards; others' open plays keep their cards'
    places in the pile."""
    own = {c for claim in state.open_claims if claim.seat == seat for c in claim.cards}
    hidden = [
        *(c for i, p in enumerate(state.players) if i != seat for c in p.hand),
        *(c for c in state.pile if c not in own),
        *state.set_aside,
    ]
    rng.shuffle(hidden)
    cards = iter(hidden)
    players = tuple(
        p if i == seat else dataclasses.replace(p, hand=tuple(next(cards) for _ in p.hand))
        for i, p in enumerate(state.players)
    )
    swap = {c: c if c in own else next(cards) for c in state.pile}
    set_aside = tuple(next(cards) for _ in state.set_aside)
    claims = tuple(
        claim
        if claim.seat == seat
        else dataclasses.replace(claim, cards=tuple(swap[c] for c in claim.cards))
        for claim in state.open_claims
    )
    return dataclasses.replace(
        state,
        players=players,
        pile=tuple(swap[c] for c in state.pile),
        set_aside=set_aside,
        open_claims=claims,
    )


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setup=setups(), seed=st.integers(min_value=0, max_value=2**32))
def test_strategies_decide_the_same_when_unseen_cards_are_dealt_again(
    setup: tuple[Rules, int], seed: int
) -> None:
    """Lockstep: every strategy, at every step of a game, decides the same on the real
    state and on a copy where every card its seat cannot see is dealt again at random."""
    rules, players = setup
    if rules.passing is Passing.EXHAUSTED:
        rules = dataclasses.replace(rules, passing=Passing.NEVER)
    history = _random_game(rules, players, seed, 150)
    start = history[0][0]
    players_of = {name: ComputerPlayers.seat(start, [name] * players) for name in STRATEGIES}
    shuffler = random.Random(seed)
    decisions = 0
    for before, events, after in history:
        for name, table in players_of.items():
            for seat in before.active_seats():
                other = _redealt(before, seat, shuffler)
                real = table.choose(before, seat, random.Random(seat), 5)
                again = table.choose(other, seat, random.Random(seat), 5)
                assert real == again, (name, seat)
                decisions += 1
            players_of[name] = table.remember(before, events, after)
    assert decisions > 0


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setup=setups(), seed=st.integers(min_value=0, max_value=2**32))
def test_knowledge_round_trips_through_plain_data_and_stays_small(
    setup: tuple[Rules, int], seed: int
) -> None:
    rules, players = setup
    history = _random_game(rules, players, seed, 600)
    knowledge = [new_knowledge(history[0][0], s) for s in range(players)]
    for before, events, after in history:
        knowledge = [remember(k, before, events, after) for k in knowledge]
    for k in knowledge:
        text = json.dumps(k.to_data())
        assert Knowledge.from_data(json.loads(text)) == k
        # Counts per rank and a few tallies per seat: bounded whatever the game's length.
        assert len(text) < 150 * players + 400


def test_a_seat_remembers_its_own_cards_and_where_they_went() -> None:
    hands = [cards("7♣", "7♦", "K♦", "2♠"), cards("8♥", "3♣", "4♣"), cards("9♣", "10♦", "J♠")]
    state = state_with(hands, required=Rank.SEVEN, rest_to=2)
    k = new_knowledge(state, 0, Memory.OWN)
    before = state
    state, events = apply(state, Play(0, cards("7♣", "K♦"), Rank.SEVEN))
    k = remember(k, before, events, state)
    assert k.mine_on_pile == count_cards(cards("7♣", "K♦"))
    assert k.claimed_on_pile == (0,) * 14
    # Seat 1 calls Cheat!: the K proves the lie, so seat 0 takes its own cards back.
    before = state
    state, events = apply(state, Challenge(1, state.open_claims[-1].number))
    k = remember(k, before, events, state)
    assert k.mine_on_pile == (0,) * 14
    assert all(sum(record.held) == 0 for record in k.seats)
    # Seat 0 plays its 7s truly; seat 2 calls wrongly and takes them: seat 0 knows.
    state = dataclasses.replace(state, turn=0, required=Rank.SEVEN)
    before = state
    state, events = apply(state, Play(0, cards("7♣", "7♦"), Rank.SEVEN))
    k = remember(k, before, events, state)
    before = state
    state, events = apply(state, Challenge(2, state.open_claims[-1].number))
    k = remember(k, before, events, state)
    assert k.seats[2].held[slot(Rank.SEVEN)] == 2
    # The other seat at ``own`` memory learns the revealed cards went to the taker too.


def test_full_memory_keeps_each_seats_habits() -> None:
    hands = [cards("7♣", "K♦", "2♠", "5♥"), cards("8♥", "3♣", "4♣"), cards("9♣", "10♦", "J♠")]
    state = state_with(hands, required=Rank.SEVEN, rest_to=2)
    k = new_knowledge(state, 1, Memory.FULL)
    before = state
    state, events = apply(state, Play(0, cards("K♦", "2♠"), Rank.SEVEN))
    k = remember(k, before, events, state)
    assert k.claimed_on_pile[slot(Rank.SEVEN)] == 2
    assert k.seats[1].chances == 1 and k.seats[2].chances == 1
    assert k.seats[0].cleared == 1 << slot(Rank.SEVEN)
    before = state
    state, events = apply(state, Challenge(2, state.open_claims[-1].number))
    k = remember(k, before, events, state)
    assert (k.seats[0].multi_shown, k.seats[0].multi_lies) == (1, 1)
    assert (k.seats[2].calls, k.seats[2].right_calls) == (1, 1)
    # Seat 0 took the pile: the revealed K and 2 are known in its hand, its cleared ranks
    # forgotten.
    assert k.seats[0].held[slot(Rank.KING)] == 1 and k.seats[0].held[slot(Rank.TWO)] == 1
    assert k.seats[0].cleared == 0


def test_a_pass_when_exhausted_tells_where_every_copy_is() -> None:
    rules = Rules().with_option("passing", "exhausted")
    state = state_with(
        [cards("K♦", "2♠", "3♠"), cards("8♥", "3♣"), cards("5♦")],
        pile=cards("7♣", "7♦", "7♥", "7♠"),
        required=Rank.SEVEN,
        rules=rules,
        rest_to=2,
    )
    k = new_knowledge(state, 1)
    before = state
    state, events = apply(state, Pass(0))
    k = remember(k, before, events, state)
    assert k.traced_on_pile[slot(Rank.SEVEN)] == 4


def test_hand_memory_remembers_nothing() -> None:
    rng = random.Random(3)
    state, _ = new_game(PRESETS["cheat"], random_seating([(1, "a"), (2, "b"), (3, "c")], rng), rng)
    k = new_knowledge(state, 0, Memory.HAND)
    for step in range(60):
        before = state
        state, events = apply(state, random_action(state, rng, step * 700))
        assert remember(k, before, events, state) is k
        if state.phase is Phase.FINISHED:
            break


def test_an_unknown_format_is_refused() -> None:
    state = state_with([cards("7♣"), cards("8♥")], required=Rank.SEVEN)
    data = new_knowledge(state, 0).to_data()
    assert Knowledge.from_data(data) == new_knowledge(state, 0)
    for broken in ({**data, "v": 99}, {**data, "out": [1, 2]}, {**data, "out": [-1] * 14}):
        try:
            Knowledge.from_data(broken)
        except ValueError:
            continue
        raise AssertionError(f"accepted {broken}")


def test_a_memory_stored_before_the_calibration_tallies_is_read() -> None:
    """Knowledge of format 1 (a game stored before this version) is read with the new
    tallies at nothing, so a game in progress survives the upgrade."""
    state = state_with([cards("7♣"), cards("8♥")], required=Rank.SEVEN)
    current = new_knowledge(state, 0).to_data()
    old = {key: value for key, value in current.items() if key != "mine_open"}
    old["v"] = 1
    old["seats"] = [record[:11] for record in current["seats"]]
    assert Knowledge.from_data(json.loads(json.dumps(old))) == new_knowledge(state, 0)


def test_a_new_round_forgets_where_cards_were_and_keeps_how_seats_play() -> None:
    """Under the revolver every round is dealt anew: a pile a loser was said to take, its own
    cards on the pile and the ranks a seat cleared tell nothing of the new hands; how often
    each seat lied and called still does."""
    from tgcheat.engine.autoplay import next_action
    from tgcheat.engine.events import RoundDealt

    rng = random.Random(4)
    state, _ = new_game(
        PRESETS["liars"], random_seating([(i, f"P{i}") for i in range(4)], rng), rng
    )
    players = ComputerPlayers.seat(state, ["hard"] * 4)
    now = 0
    dealt = 0
    while state.phase is not Phase.FINISHED and dealt < 3:
        now += 1500
        action = next_action(state, rng, now, set(), players=players)
        assert action is not None
        before = state
        state, events = apply(state, action)
        players = players.remember(before, events, state)
        if any(isinstance(e, RoundDealt) for e in events):
            dealt += 1
            for knowledge in players.knowledge:
                assert knowledge is not None
                assert knowledge.mine_on_pile == knowledge.claimed_on_pile == (0,) * 14
                assert all(not any(r.held) and not r.cleared for r in knowledge.seats)
                assert sum(r.calls for r in knowledge.seats) >= dealt
    assert dealt == 3


def test_a_memory_is_folded_over_what_its_seat_saw_only() -> None:
    """``recall``, the fold of a memory, is given views and seen events: no type it receives
    has room for another hand or the pile's faces. ``seen_events`` keeps a play's cards only
    for the seat that made it, and turns them over only when a challenge reveals them."""
    import typing

    from tgcheat.engine.events import CardsPlayed, ChallengeResolved, FinalAccepted
    from tgcheat.engine.knowledge import recall
    from tgcheat.engine.view import SeenChallenge, SeenPlay, seen_events

    hints = typing.get_type_hints(recall)
    assert GameState not in hints.values()
    assert all("GameState" not in str(hint) for hint in hints.values())
    claim = Claim(number=3, seat=1, cards=tuple(cards("7♣", "K♦")), rank=Rank.SEVEN, final=False)
    played = CardsPlayed(claim)
    called = ChallengeResolved(2, claim, claim.cards, True, 1, 9)
    accepted = FinalAccepted(2, claim)
    others = seen_events([played, called, accepted], 0)
    assert isinstance(others[0], SeenPlay) and others[0].claim.cards == ()
    assert others[0].claim.count == 2
    assert isinstance(others[1], SeenChallenge) and others[1].revealed == claim.cards
    assert others[1].claim.cards == ()
    assert "claim" not in dir(others[2])
    own = seen_events([played], 1)
    assert isinstance(own[0], SeenPlay) and own[0].claim.cards == claim.cards
