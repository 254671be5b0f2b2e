"""Computer players of every level (``tgcheat.engine.strategies``): legal under every option,
deterministic for a seed, and the levels decide as their names promise."""

from __future__ import annotations

import dataclasses
import json
import random
import typing

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tgcheat.engine.actions import Accept, Action, Challenge, Pass, Play
from tgcheat.engine.ai import AIRandom
from tgcheat.engine.autoplay import next_action
from tgcheat.engine.cards import Card, Rank
from tgcheat.engine.game import apply, new_game, pending_deadline_ms, random_seating, refusal
from tgcheat.engine.invariants import violations
from tgcheat.engine.knowledge import (
    BIN_EDGES,
    BINS,
    KINDS,
    Knowledge,
    Memory,
    claim_kind,
    new_knowledge,
)
from tgcheat.engine.rules import (
    CHAMBERS,
    PRESETS,
    AfterChallenge,
    Challengers,
    Passing,
    Penalty,
    RankRule,
    Rules,
)
from tgcheat.engine.state import GameState, Phase
from tgcheat.engine.strategies import (
    DEFAULT_STRATEGY,
    LEVELS,
    STRATEGIES,
    ComputerPlayers,
    HardStrategy,
    calibrated,
    call_chance,
    lie_probability,
    remember_as,
    strategy,
)
from tgcheat.engine.view import SeatView, SeenClaim, see, seen_claim
from tgcheat.simulate import Tally, simulate

from .helpers import cards, state_with
from .test_properties import setups

NAMES = sorted(STRATEGIES)


def _play(
    state: GameState, names: list[str], rng: random.Random, max_steps: int
) -> tuple[GameState, list[object]]:
    """A game of computer players with bystanders asked, as ``tgcheat simulate`` plays it;
    at every step every seat's choice must be legal (or None)."""
    players = ComputerPlayers.seat(state, names)
    asked: set[tuple[int, int]] = set()
    deck_size = state.deck_size
    actions: list[object] = []
    now = 0
    for _ in range(max_steps):
        if state.phase is Phase.FINISHED:
            break
        now += 700
        # A press is never stamped after the deadline of a call being collected (the
        # driver's clock settles it then).
        deadline = pending_deadline_ms(state)
        press = now if deadline is None else min(now, deadline)
        for seat in state.active_seats():
            choice = players.choose(state, seat, random.Random(now + seat), press)
            assert choice is None or refusal(state, choice) is None, (names[seat], choice)
        action = next_action(state, rng, now, asked, players=players)
        assert action is not None
        before = state
        state, events = apply(state, action)
        players = players.remember(before, events, state)
        assert violations(state, deck_size) == []
        actions.append(action)
    return state, actions


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    setup=setups(),
    seed=st.integers(min_value=0, max_value=2**32),
    picks=st.lists(st.sampled_from(NAMES), min_size=10, max_size=10),
)
# Under the revolver a game outlasts its play limit: this one takes 159 actions.
@example(
    setup=(
        dataclasses.replace(
            PRESETS["cheat"],
            rank_rule=RankRule.ASCENDING,
            challengers=Challengers.ANYONE,
            after_challenge=AfterChallenge.CONTINUE,
            passing=Passing.NEVER,
            move_cap=10,
            penalty=Penalty.REVOLVER,
        ),
        2,
    ),
    seed=3,
    picks=["counter", "honest"] + ["counter"] * 8,
)
def test_every_strategy_acts_legally_under_any_valid_options(
    setup: tuple[Rules, int], seed: int, picks: list[str]
) -> None:
    rules, players = setup
    rng = random.Random(seed)
    state, _ = new_game(rules, random_seating([(i, f"P{i}") for i in range(players)], rng), rng)
    per_move = 4 * players + 4
    if rules.revolver:
        # Bullets end the game, not a play limit: at most one pull per chamber and player,
        # and a round lasts until a call, at most a play per card dealt.
        moves = players * CHAMBERS * (state.deck_size + 2)
    else:
        moves = rules.move_cap
    state, _ = _play(state, picks[:players], rng, per_move * moves)
    assert state.phase is Phase.FINISHED


def test_same_seed_same_game_for_every_strategy() -> None:
    def game(seed: int) -> list[object]:
        rng = random.Random(seed)
        rules = PRESETS["cheat"].with_option("players", f"2-{len(NAMES)}")
        seating = random_seating([(i, f"P{i}") for i in range(len(NAMES))], rng)
        state, _ = new_game(rules, seating, rng)
        return _play(state, NAMES, rng, 5000)[1]

    assert game(5) == game(5)
    assert game(5) != game(6)


def test_the_registry() -> None:
    assert set(NAMES) == {"easy", "normal", "hard", "random", "honest", "never", "counter"}
    assert DEFAULT_STRATEGY in LEVELS and set(LEVELS) <= set(NAMES)
    for name in NAMES:
        assert strategy(name).name == name
    with pytest.raises(KeyError):
        strategy("perfect")
    # The levels differ by what they remember, not only by how they decide.
    assert [strategy(level).memory for level in LEVELS] == [Memory.HAND, Memory.OWN, Memory.FULL]


def test_computer_players_round_trip_through_plain_data() -> None:
    rng = random.Random(2)
    state, _ = new_game(PRESETS["cheat"], random_seating([(1, "a"), (2, "b"), (3, "c")], rng), rng)
    players = ComputerPlayers.seat(state, ["hard", None, "normal"])
    asked: set[tuple[int, int]] = set()
    for step in range(40):
        if state.phase is Phase.FINISHED:
            break
        action = next_action(state, rng, step * 700, asked, players=players)
        if action is None:
            # The person's turn: play for them.
            hand = state.players[state.turn].hand
            assert state.required is not None
            action = Play(state.turn, hand[:1], state.required)
        before = state
        state, events = apply(state, action)
        players = players.remember(before, events, state)
    data = json.loads(json.dumps(players.to_data()))
    assert ComputerPlayers.from_data(data) == players
    assert players.choose(state, 1, rng, 0) is None
    with pytest.raises(ValueError):
        ComputerPlayers.from_data({**data, "strategies": ["perfect", None, None]})
    with pytest.raises(ValueError):
        ComputerPlayers.seat(state, ["hard"])


def _after_claim(played: tuple[object, ...], rank: Rank, rules: Rules | None = None) -> GameState:
    hands = [
        cards("7♣", "K♦", "2♠", "3♠", "4♥", "5♥", "9♦", "10♣", "J♥"),
        cards("7♦", "7♥", "3♣", "4♣", "5♣", "6♣"),
        cards("9♣", "10♦"),
    ]
    state = state_with(hands, required=rank, rest_to=2, rules=rules)
    state, _ = apply(state, Play(0, played, rank))  # type: ignore[arg-type]
    return state


def test_a_claim_needing_copies_it_holds_is_a_sure_lie_for_everyone_who_counts() -> None:
    # Seat 1 holds two 7s: three 7s claimed by seat 0, who holds one, is impossible.
    state = _after_claim(cards("7♣", "K♦", "2♠"), Rank.SEVEN)
    for name in ("normal", "hard"):
        knowledge = new_knowledge(state, 1, strategy(name).memory)
        assert (
            lie_probability(see(state, 1), knowledge, seen_claim(state.open_claims[-1], 1)) == 1.0
        )
        action = strategy(name).choose(see(state, 1), knowledge, random.Random(0), 0)
        assert action == Challenge(1, state.open_claims[-1].number)
    for name in ("honest", "never"):
        knowledge = new_knowledge(state, 1, strategy(name).memory)
        action = strategy(name).choose(see(state, 1), knowledge, random.Random(0), 0)
        assert isinstance(action, Play)


def test_a_likely_true_claim_is_let_stand() -> None:
    state = _after_claim(cards("9♦", "10♣"), Rank.NINE)
    for name in ("normal", "hard"):
        knowledge = new_knowledge(state, 1, strategy(name).memory)
        assert lie_probability(see(state, 1), knowledge, seen_claim(state.open_claims[-1], 1)) < 0.5
        action = strategy(name).choose(see(state, 1), knowledge, random.Random(0), 0)
        assert isinstance(action, Play)


def test_a_final_play_is_challenged_unless_surely_true() -> None:
    rules = PRESETS["verju"]
    hands = [cards("Q♣", "3♦"), cards("8♥", "9♣", "Q♥"), cards("5♦", "6♣")]
    state = state_with(hands, required=Rank.QUEEN, rules=rules)
    state, _ = apply(state, Play(0, cards("Q♣", "3♦"), Rank.QUEEN))
    assert state.phase is Phase.FINAL_CHECK
    for name in ("normal", "hard"):
        knowledge = new_knowledge(state, 1, strategy(name).memory)
        assert strategy(name).choose(see(state, 1), knowledge, random.Random(0), 0) == Challenge(
            1, state.open_claims[-1].number
        )
    for name in ("honest", "never"):
        knowledge = new_knowledge(state, 1, strategy(name).memory)
        assert strategy(name).choose(see(state, 1), knowledge, random.Random(0), 0) == Accept(
            1, state.open_claims[-1].number
        )


def test_honest_plays_every_true_card_and_bluffs_only_when_it_must() -> None:
    hand = cards("7♣", "7♦", "K♦", "2♠", "3♠")
    state = state_with([hand, cards("8♥"), cards("9♣")], required=Rank.SEVEN)
    honest = strategy("honest")
    knowledge = new_knowledge(state, 0, honest.memory)
    assert honest.choose(see(state, 0), knowledge, random.Random(0), 0) == Play(
        0, cards("7♣", "7♦"), Rank.SEVEN
    )
    state = state_with([hand, cards("8♥"), cards("9♣")], required=Rank.QUEEN)
    action = honest.choose(see(state, 0), knowledge, random.Random(0), 0)
    assert isinstance(action, Play) and len(action.cards) == 1
    rules = Rules().with_option("passing", "exhausted")
    state = state_with(
        [hand, cards("8♥"), cards("5♦")],
        pile=cards("Q♣", "Q♦", "Q♥", "Q♠"),
        required=Rank.QUEEN,
        rules=rules,
        rest_to=2,
    )
    assert honest.choose(see(state, 0), knowledge, random.Random(0), 0) == Pass(0)


def _hard_turn(state: GameState, never_called: bool) -> Play:
    """Hard's play after a game in which the others let 20 of its claims of each kind
    stand and never called (or called every lie among them, and none of its true claims)."""
    hard = strategy("hard")
    knowledge = new_knowledge(state, 0, hard.memory)
    seats = []
    for record in knowledge.seats:
        calls = 0 if never_called else 30
        lies = (0, 0, 0, 0, 0) if never_called else (0, 0, 20, 20, 20)
        seats.append(
            dataclasses.replace(
                record,
                chances=100,
                calls=calls,
                right_calls=calls,
                final_chances=5,
                on_mine=(20,) * KINDS + lies,
            )
        )
    knowledge = type(knowledge)(seat=0, memory=Memory.FULL, seats=tuple(seats))
    action = hard.choose(see(state, 0), knowledge, random.Random(0), 0)
    assert isinstance(action, Play)
    return action


def test_hard_bluffs_when_it_pays_and_not_when_it_does_not() -> None:
    hand = cards("7♣", "K♦", "2♠", "3♠", "4♥", "5♥", "9♦", "10♣", "J♥", "Q♠")
    state = state_with(
        [hand, cards("8♥", "3♣", "4♣", "5♣", "6♣"), cards("9♣", "10♦")],
        required=Rank.SEVEN,
        pile=cards("A♣", "A♦", "A♥", "A♠", "6♦", "6♥", "8♣", "8♦"),
    )
    # Against a table that never calls, shedding the cards it cannot play soon is free.
    bold = _hard_turn(state, never_called=True)
    assert len(bold.cards) == 4 and cards("7♣")[0] in bold.cards
    # Against players who catch lies, it plays its true card alone.
    careful = _hard_turn(state, never_called=False)
    assert careful.cards == cards("7♣")


def test_hard_keeps_an_honest_last_play() -> None:
    # Four players: this player's next turn asks for 7 + 4 = J. Playing the 7 alone keeps
    # J J for an honest final play; bluffing them away would leave nothing true.
    hand = cards("7♣", "J♦", "J♥")
    others = [cards("8♥", "3♣", "4♣"), cards("9♣", "10♦", "2♦"), cards("5♦", "6♣", "K♣")]
    state = state_with([hand, *others], required=Rank.SEVEN)
    play = _hard_turn(state, never_called=False)
    assert play.cards == cards("7♣")


def test_hard_beats_a_table_of_honest_players_clearly() -> None:
    """Over 200 games (a fixed seed), hard wins far more than its fair quarter against
    three honest players (docs/benchmarks.md's 2,000-game figure is over 40%)."""
    report, _ = simulate(PRESETS["cheat"], 4, 200, 11, ["hard", "honest", "honest", "honest"])
    hard = report["wins_by_strategy"]["hard"]
    assert hard["low"] > 0.3
    assert report["invariant_violations"] == 0


def test_the_tally_counts_guessed_and_final_calls_apart() -> None:
    tally = Tally()
    tally.count_call("hard", final=False, guessed=False, right=True)
    tally.count_call("hard", final=False, guessed=True, right=False)
    tally.count_call("hard", final=False, guessed=True, right=True)
    tally.count_call("hard", final=True, guessed=True, right=False)
    calls = tally.calls["hard"]
    assert (calls.calls, calls.right, calls.guessed, calls.guessed_right) == (4, 2, 2, 1)
    assert (calls.finals, calls.finals_right) == (1, 0)


def test_remember_is_what_computer_players_use() -> None:
    """``ComputerPlayers.remember`` is ``knowledge.remember``, with ``hard``'s own judgement
    of each revealed claim (``remember_as``)."""
    rng = random.Random(9)
    state, _ = new_game(PRESETS["free"], random_seating([(1, "a"), (2, "b")], rng), rng)
    players = ComputerPlayers.seat(state, ["hard", "normal"])
    names = ["hard", "normal"]
    knowledge = [new_knowledge(state, s, strategy(n).memory) for s, n in enumerate(names)]
    for step in range(30):
        action = next_action(state, rng, step * 700, set(), players=players)
        assert action is not None
        before = state
        state, events = apply(state, action)
        players = players.remember(before, events, state)
        knowledge = [
            remember_as(n, k, before, events, state) for n, k in zip(names, knowledge, strict=True)
        ]
        assert list(players.knowledge) == knowledge
        if state.phase is Phase.FINISHED:
            break


# --- what a strategy is given ----------------------------------------------------------------


class _Spy:
    """A strategy that records what it is given and does what ``honest`` does."""

    name = "spy"
    memory = Memory.FULL

    def __init__(self) -> None:
        self.given: list[object] = []

    def choose(
        self, view: SeatView, knowledge: Knowledge, rng: AIRandom, now_ms: int
    ) -> Action | None:
        self.given.append(view)
        return strategy("honest").choose(view, knowledge, rng, now_ms)


def test_a_strategy_is_given_only_the_seats_view(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every strategy is called with a ``SeatView`` (no other hand, no pile faces), never
    the game state: what it may read is limited by its type, not by its discipline."""
    spy = _Spy()
    monkeypatch.setitem(STRATEGIES, "spy", spy)
    rng = random.Random(4)
    state, _ = new_game(
        PRESETS["cheat"], random_seating([(i, f"P{i}") for i in range(4)], rng), rng
    )
    state, _ = _play(state, ["spy", "hard", "spy", "counter"], rng, 300)
    assert spy.given and all(type(v) is SeatView for v in spy.given)
    names = {f.name for f in dataclasses.fields(SeatView)}
    assert not names & {"players", "pile", "set_aside"}
    for view in spy.given:
        assert isinstance(view, SeatView)
        own = set(view.hand)
        for claim in view.open_claims:
            assert claim.cards == () or claim.seat == view.seat
            own |= set(claim.cards)
        # The only cards in a view are the seat's own.
        cards_in_view = {
            c for value in (view.hand, *(c.cards for c in view.open_claims)) for c in value
        }
        assert cards_in_view <= own
    for name, played in STRATEGIES.items():
        hints = typing.get_type_hints(type(played).choose)
        assert hints["view"] is SeatView, name


# --- hard's beliefs ------------------------------------------------------------------------------


def _reveal(
    hard_seat: int, claimant: int, caller: int, played: tuple[Card, ...]
) -> tuple[Knowledge, Knowledge, GameState]:
    """Hard's knowledge before and after ``caller`` challenges ``claimant``'s play of
    ``played`` claimed as 7s (three players; ``claimant`` plays first)."""
    hands = [
        cards("7♣", "K♦", "2♠", "3♠", "4♥", "5♥", "9♦"),
        cards("7♦", "8♥", "3♣", "4♣", "5♣", "6♣", "J♥"),
        cards("9♣", "10♦", "Q♥", "Q♠", "2♦", "3♦", "4♦"),
    ]
    state = state_with(hands, required=Rank.SEVEN, turn=claimant)
    players = ComputerPlayers.seat(
        state, ["hard" if s == hard_seat else "normal" for s in range(3)]
    )
    before = state
    state, events = apply(state, Play(claimant, played, Rank.SEVEN))
    players = players.remember(before, events, state)
    knowledge = players.knowledge[hard_seat]
    before = state
    state, events = apply(state, Challenge(caller, state.open_claims[-1].number))
    players = players.remember(before, events, state)
    after = players.knowledge[hard_seat]
    assert knowledge is not None and after is not None
    return knowledge, after, state


def test_hard_judges_every_reveal_and_its_belief_moves() -> None:
    """A reveal updates hard's calibration: the claimant's revealed claim is tallied with
    the chance hard had judged it, and a claim judged alike is then believed otherwise: more
    likely a lie after a lie was shown, less after a true claim."""
    hard = strategy("hard")
    assert isinstance(hard, HardStrategy)
    for played, lie in ((cards("K♦"), True), (cards("7♣"), False)):
        before, after, state = _reveal(1, 0, 2, played)
        assert sum(before.seats[0].judged) == 0
        shown = after.seats[0].judged
        assert sum(shown[:BINS]) == 1 and sum(shown[BINS:]) == lie
        index = shown.index(1)
        chance = BIN_EDGES[index] + 0.01
        assert calibrated(chance, before, 0) == pytest.approx(chance)
        if lie:
            assert calibrated(chance, after, 0) > chance
        else:
            assert calibrated(chance, after, 0) < chance
    # Through the strategy itself: the same claim, judged before and after a lie was shown.
    before, after, state = _reveal(1, 0, 2, cards("K♦"))
    probe = SeenClaim(number=99, seat=0, count=1, rank=Rank.SEVEN, final=False)
    view = see(state, 1)
    assert hard.lie_chance(view, after, probe) > hard.lie_chance(view, before, probe)


def test_hard_learns_how_each_opponent_treats_its_own_claims() -> None:
    """Hard's own lie called by one opponent: that opponent's call on that kind of claim
    is tallied, and hard then expects its next such lie to be called more often."""
    before, after, state = _reveal(0, 0, 2, cards("K♦"))
    # It held a 7: a lie nobody could prove, tallied as such.
    kind = claim_kind(True, 1, covered=True)
    assert before.seats[2].on_mine == (0,) * (2 * KINDS)
    assert after.seats[2].on_mine[kind] == 1 and after.seats[2].on_mine[KINDS + kind] == 1
    assert call_chance(after.seats[2], kind) > call_chance(before.seats[2], kind)
    # A claim that nobody called is a chance each could-be caller let pass.
    hands = [cards("7♣", "K♦", "2♠"), cards("8♥", "3♣", "4♣"), cards("9♣", "10♦", "Q♥")]
    state = state_with(hands, required=Rank.SEVEN)
    players = ComputerPlayers.seat(state, ["hard", "normal", "normal"])
    for action in (Play(0, cards("K♦"), Rank.SEVEN), Play(1, cards("8♥"), Rank.EIGHT)):
        previous = state
        state, events = apply(state, action)
        players = players.remember(previous, events, state)
    knowledge = players.knowledge[0]
    assert knowledge is not None
    assert [knowledge.seats[s].on_mine[kind] for s in (1, 2)] == [1, 1]
    assert [knowledge.seats[s].on_mine[KINDS + kind] for s in (1, 2)] == [0, 0]


# --- counter -------------------------------------------------------------------------------------


def test_counter_calls_a_sure_lie_and_believes_a_likely_truth() -> None:
    counter = strategy("counter")
    state = _after_claim(cards("7♣", "K♦", "2♠"), Rank.SEVEN)
    knowledge = new_knowledge(state, 1, counter.memory)
    assert counter.choose(see(state, 1), knowledge, random.Random(0), 0) == Challenge(
        1, state.open_claims[-1].number
    )
    # One 9 claimed, four it cannot place among many cards: likely true, and a wrong call
    # would cost it the pile.
    state = _after_claim(cards("9♦"), Rank.NINE)
    knowledge = new_knowledge(state, 1, counter.memory)
    assert isinstance(counter.choose(see(state, 1), knowledge, random.Random(0), 0), Play)


def test_counter_plays_every_true_card_and_one_card_when_it_must_bluff() -> None:
    counter = strategy("counter")
    hand = cards("7♣", "7♦", "K♦", "2♠", "3♠")
    state = state_with([hand, cards("8♥"), cards("9♣")], required=Rank.SEVEN)
    knowledge = new_knowledge(state, 0, counter.memory)
    assert counter.choose(see(state, 0), knowledge, random.Random(0), 0) == Play(
        0, cards("7♣", "7♦"), Rank.SEVEN
    )
    state = state_with([hand, cards("8♥"), cards("9♣")], required=Rank.QUEEN)
    action = counter.choose(see(state, 0), knowledge, random.Random(0), 0)
    assert isinstance(action, Play) and len(action.cards) == 1
