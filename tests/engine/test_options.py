"""One scenario per option of RULES.md: the same start, a different value, a different outcome."""

from __future__ import annotations

import dataclasses
import random

import pytest

from tgcheat.engine.actions import Accept, Challenge, Leave, Play, ResolveChallenges, Timeout
from tgcheat.engine.cards import Card, Rank
from tgcheat.engine.events import (
    ChallengeCalled,
    ChallengeResolved,
    GameEnded,
    PlayerLeft,
    TurnStarted,
)
from tgcheat.engine.game import (
    IllegalAction,
    InvalidAction,
    Refusal,
    Seating,
    apply,
    awaited,
    challengeable,
    is_lie,
    new_game,
    pending_deadline_ms,
    play_limit,
    refusal,
)
from tgcheat.engine.lobby import Lobby, join
from tgcheat.engine.rules import PRESETS, Rules
from tgcheat.engine.state import Claim, EndReason, GameState, Phase

from .helpers import card, cards, state_with


def _refused(state: GameState, action: object) -> Refusal:
    with pytest.raises((IllegalAction, InvalidAction)) as refused:
        apply(state, action)  # type: ignore[arg-type]
    return refused.value.reason


def _four_players(rules: Rules, required: Rank | None = Rank.SEVEN) -> GameState:
    hands = [
        cards("7♣", "K♦", "2♠", "3♠"),
        cards("8♥", "3♣", "9♦"),
        cards("5♦", "9♣", "10♠"),
        cards("J♠", "2♥", "4♣"),
    ]
    return state_with(hands, required=required, rules=rules)


# --- rank_rule ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "at_start", "after_play", "after_challenge"),
    [
        ("ascending", Rank.ACE, Rank.TWO, Rank.TWO),
        ("same", None, Rank.ACE, None),
        ("free", None, None, None),
    ],
)
def test_rank_rule(
    value: str, at_start: Rank | None, after_play: Rank | None, after_challenge: Rank | None
) -> None:
    rules = Rules().with_option("rank_rule", value)
    seating = Seating(tuple((i, f"P{i}") for i in range(4)), dealer=3)
    state, _ = new_game(rules, seating, random.Random(2))
    assert state.required is at_start
    hand = state.players[0].hand
    state, _ = apply(state, Play(0, hand[:1], Rank.ACE))
    assert state.required is after_play
    # Under `same` whoever opens names any rank, even one they do not hold.
    hand = state.players[1].hand
    state, _ = apply(state, Challenge(2, 1))
    assert state.required is after_challenge
    if after_challenge is None:
        nine = next(c for c in state.players[1].hand if c.rank is not Rank.NINE)
        state, _ = apply(state, Play(1, (nine,), Rank.NINE))
        assert state.open_claims[-1].rank is Rank.NINE


# --- challengers ----------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["anyone", "next"])
def test_challengers(value: str) -> None:
    state = _four_players(Rules().with_option("challengers", value))
    state, _ = apply(state, Play(0, cards("7♣", "K♦"), Rank.SEVEN))
    # C is not A's neighbour.
    if value == "anyone":
        state, events = apply(state, Challenge(2, 1))
        assert any(isinstance(e, ChallengeResolved) and e.lie for e in events)
    else:
        assert _refused(state, Challenge(2, 1)) is Refusal.NOT_NEXT_PLAYER
        assert challengeable(state, 1) == state.open_claims
        # B's own play means B believed it.
        state, _ = apply(state, Play(1, cards("8♥"), Rank.EIGHT))
        assert _refused(state, Challenge(1, 1)) is Refusal.NO_SUCH_CLAIM


# --- after_challenge ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "lie", "turn"),
    [
        ("continue", True, 1),
        ("continue", False, 1),
        ("winner_opens", True, 2),  # C unmasked the lie
        ("winner_opens", False, 0),  # A told the truth
    ],
)
def test_after_challenge(value: str, lie: bool, turn: int) -> None:
    state = _four_players(Rules().with_option("after_challenge", value))
    played = cards("7♣", "K♦") if lie else cards("7♣")
    state, _ = apply(state, Play(0, played, Rank.SEVEN))
    state, events = apply(state, Challenge(2, 1))
    assert state.turn == turn
    # The sequence goes on after a challenge under `ascending`, whoever opens.
    assert state.required is Rank.EIGHT
    assert TurnStarted(turn, Rank.EIGHT) in events
    assert state.pile == ()


def test_after_challenge_winner_opens_under_same_names_a_new_rank() -> None:
    rules = PRESETS["verju"]
    state = _four_players(rules, required=Rank.SEVEN)
    state, _ = apply(state, Play(0, cards("7♣", "K♦"), Rank.SEVEN))
    state, _ = apply(state, Challenge(1, 1))
    assert state.turn == 1 and state.required is None


# --- challenge_priority and challenge_grace_s -----------------------------------------------------


def _five_players(priority: str, grace: str = "3") -> GameState:
    rules = Rules().with_option("challenge_priority", priority)
    rules = rules.with_option("challenge_grace_s", grace)
    hands = [cards("7♣", "7♦", "2♠")] + [cards(f"{r}♥", f"{r}♣") for r in ("8", "9", "10", "J")]
    state = state_with(hands, required=Rank.SEVEN, rules=rules)
    state, _ = apply(state, Play(0, cards("7♣", "7♦"), Rank.SEVEN))  # a true claim
    return state


def test_challenge_priority_first_the_first_press_challenges_at_once() -> None:
    state = _five_players("first")
    state, events = apply(state, Challenge(3, 1, now_ms=0))
    reveal = next(e for e in events if isinstance(e, ChallengeResolved))
    assert reveal.challenger == 3 and reveal.taker == 3
    assert pending_deadline_ms(state) is None


def test_challenge_priority_clockwise_the_nearest_caller_in_the_grace_period_challenges() -> None:
    state = _five_players("clockwise")
    state, events = apply(state, Challenge(3, 1, now_ms=10_000))
    assert events == [ChallengeCalled(3, state.open_claims[-1], 13_000)]
    assert pending_deadline_ms(state) == 13_000
    # The game waits for the clock: nobody may play or accept meanwhile.
    assert awaited(state) == frozenset()
    assert play_limit(state, 1) == 0
    assert _refused(state, Play(1, cards("8♥"), Rank.EIGHT)) is Refusal.CHALLENGE_PENDING
    assert _refused(state, Timeout(state.plays, False)) is Refusal.CHALLENGE_PENDING
    assert _refused(state, Challenge(3, 1, now_ms=11_000)) is Refusal.ALREADY_CHALLENGED
    # C, nearer to A than D, joins within the grace period.
    state, events = apply(state, Challenge(2, 1, now_ms=12_000))
    assert isinstance(events[0], ChallengeCalled)
    # Too late for E.
    assert _refused(state, Challenge(4, 1, now_ms=13_001)) is Refusal.NO_SUCH_CLAIM
    assert _refused(state, ResolveChallenges(12_999)) is Refusal.TOO_EARLY
    state, events = apply(state, ResolveChallenges(13_000))
    reveal = next(e for e in events if isinstance(e, ChallengeResolved))
    assert reveal.challenger == 2 and reveal.taker == 2 and set(reveal.callers) == {2, 3}
    assert state.challenges == () and state.turn == 1
    assert _refused(state, ResolveChallenges(20_000)) is Refusal.STALE_TIMEOUT


def test_challenge_priority_clockwise_the_nearest_possible_caller_needs_no_wait() -> None:
    state = _five_players("clockwise")
    state, _ = apply(state, Challenge(3, 1, now_ms=0))
    # B sits next to A: nobody could press nearer, so waiting would change nothing.
    state, events = apply(state, Challenge(1, 1, now_ms=500))
    reveal = next(e for e in events if isinstance(e, ChallengeResolved))
    assert reveal.challenger == 1 and reveal.callers == (3, 1)


def test_challenge_grace_zero_settles_at_once() -> None:
    state = _five_players("clockwise", grace="0")
    state, events = apply(state, Challenge(3, 1))
    assert any(isinstance(e, ChallengeResolved) for e in events)


def test_clockwise_a_press_on_another_play_is_refused_while_one_is_collected() -> None:
    rules = Rules().with_option("challenge_window", "two")
    rules = rules.with_option("challenge_priority", "clockwise")
    hands = [cards("7♣", "7♦", "2♠"), cards("8♥", "8♣", "3♥")] + [
        cards(f"{r}♥", f"{r}♣") for r in ("9", "10", "J")
    ]
    state = state_with(hands, required=Rank.SEVEN, rules=rules)
    state, _ = apply(state, Play(0, cards("7♣"), Rank.SEVEN))
    state, _ = apply(state, Play(1, cards("8♥"), Rank.EIGHT))
    state, _ = apply(state, Challenge(4, 2, now_ms=0))
    assert _refused(state, Challenge(3, 1, now_ms=100)) is Refusal.NO_SUCH_CLAIM


def test_clockwise_final_play_waits_for_the_other_answerers() -> None:
    rules = Rules().with_option("challenge_priority", "clockwise")
    hands = [cards("Q♣", "Q♦"), cards("8♥", "9♣"), cards("5♦", "6♣"), cards("J♠")]
    state = state_with(hands, required=Rank.QUEEN, rules=rules)
    state, _ = apply(state, Play(0, cards("Q♣", "Q♦"), Rank.QUEEN))
    state, _ = apply(state, Accept(1, 1))
    state, events = apply(state, Challenge(3, 1, now_ms=0))
    # B accepted, so only C could still press nearer; the call waits for the grace period.
    assert isinstance(events[0], ChallengeCalled)
    assert _refused(state, Accept(2, 1)) is Refusal.CHALLENGE_PENDING
    state, events = apply(state, ResolveChallenges(3000))
    assert state.result is not None and state.result.winner == 0
    assert len(state.players[3].hand) > 1


# --- challenge_window -----------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["last", "two"])
def test_challenge_window(value: str) -> None:
    state = _four_players(Rules().with_option("challenge_window", value))
    state, _ = apply(state, Play(0, cards("7♣", "K♦"), Rank.SEVEN))
    state, _ = apply(state, Play(1, cards("8♥"), Rank.EIGHT))
    if value == "last":
        assert _refused(state, Challenge(3, 1)) is Refusal.NO_SUCH_CLAIM
        return
    # The extended window: A's play is still open while C is to play.
    state, events = apply(state, Challenge(3, 1))
    reveal = next(e for e in events if isinstance(e, ChallengeResolved))
    assert reveal.lie and reveal.taker == 0
    # A challenge never changes whose turn it is under `continue`.
    assert state.turn == 2 and state.required is Rank.NINE
    # Once the turn after the next one starts, the play is closed.
    state = _four_players(Rules().with_option("challenge_window", value))
    for seat, played, rank in ((0, "7♣", Rank.SEVEN), (1, "8♥", Rank.EIGHT), (2, "9♣", Rank.NINE)):
        state, _ = apply(state, Play(seat, (card(played),), rank))
    assert [c.number for c in state.open_claims] == [2, 3]
    assert _refused(state, Challenge(3, 1)) is Refusal.NO_SUCH_CLAIM


# --- final_check ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "answerers"), [("all", {1, 2, 3}), ("next", {1})])
def test_final_check(value: str, answerers: set[int]) -> None:
    rules = Rules().with_option("final_check", value)
    hands = [cards("Q♣", "3♦"), cards("8♥", "9♣"), cards("5♦", "6♣"), cards("J♠")]
    state = state_with(hands, required=Rank.QUEEN, rules=rules)
    state, _ = apply(state, Play(0, cards("Q♣", "3♦"), Rank.QUEEN))
    assert awaited(state) == answerers
    state, _ = apply(state, Accept(1, 1))
    if value == "next":
        assert state.result is not None and state.result.winner == 0
    else:
        assert state.phase is Phase.FINAL_CHECK and awaited(state) == {2, 3}
        assert _refused(state, Accept(1, 1)) is Refusal.ALREADY_ACCEPTED
        state, _ = apply(state, Challenge(3, 1))
        assert state.phase is Phase.PLAYING and len(state.players[0].hand) > 2


# --- max_cards ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "limit"), [("4", 4), ("2", 2), ("any", 6)])
def test_max_cards(value: str, limit: int) -> None:
    rules = Rules().with_option("max_cards", value)
    hand = cards("7♣", "7♦", "7♥", "7♠", "K♦", "2♠")
    state = state_with([hand, cards("8♥"), cards("9♣")], required=Rank.SEVEN, rules=rules)
    assert play_limit(state, 0) == limit
    if limit < len(hand):
        assert refusal(state, Play(0, hand[: limit + 1], Rank.SEVEN)) is Refusal.BAD_CARD_COUNT
    state, _ = apply(state, Play(0, hand[:limit], Rank.SEVEN))
    assert len(state.players[0].hand) == 6 - limit
    # "Any number up to the hand": all six go, a final play.
    assert state.phase is (Phase.FINAL_CHECK if limit == 6 else Phase.PLAYING)


# --- decks and jokers -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("decks", "jokers", "size"),
    [("auto", "off", 52), ("1", "wild", 54), ("2", "off", 104), ("2", "wild", 108)],
)
def test_decks_and_jokers_deal_every_card(decks: str, jokers: str, size: int) -> None:
    rules = Rules().with_option("decks", decks).with_option("jokers", jokers)
    seating = Seating(tuple((i, f"P{i}") for i in range(5)), dealer=0)
    state, _ = new_game(rules, seating, random.Random(9))
    every = [c for p in state.players for c in p.hand]
    assert len(every) == len(set(every)) == size
    decks_dealt = 2 if decks == "2" else 1
    assert sum(c.rank is Rank.JOKER for c in every) == (2 * decks_dealt if jokers == "wild" else 0)


@pytest.mark.parametrize(("value", "lie"), [("off", True), ("wild", False)])
def test_jokers_count_as_the_claimed_rank(value: str, lie: bool) -> None:
    rules = Rules().with_option("jokers", value)
    claim = Claim(1, 0, (card("7♣"), Card.make(Rank.JOKER)), Rank.SEVEN)
    assert is_lie(rules, claim) is lie


def test_a_joker_is_never_claimed() -> None:
    rules = Rules().with_option("jokers", "wild")
    hands = [(card("★0"), card("7♣")), cards("8♥"), cards("9♣")]
    state = state_with(hands, required=None, rules=rules)
    assert refusal(state, Play(0, (card("★0"),), Rank.JOKER)) is Refusal.WRONG_RANK


# --- move_cap -------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["300", "none"])
def test_move_cap(value: str) -> None:
    rules = Rules().with_option("move_cap", value)
    hands = [cards("7♣", "K♦", "2♠"), cards("8♥", "3♣"), cards("5♦", "9♣", "10♣")]
    state = state_with(hands, required=Rank.SEVEN, rules=rules, plays=299)
    state, events = apply(state, Play(0, cards("7♣"), Rank.SEVEN))
    if value == "none":
        assert state.phase is Phase.PLAYING and state.plays == 300
        return
    # Fewest cards wins: A and B hold two each, a tie for fewest is a draw.
    assert state.result is not None and state.result.reason is EndReason.MOVE_CAP
    assert state.result.winner is None
    assert dict(state.result.places) == {0: 1, 1: 1, 2: 3}
    assert any(isinstance(e, GameEnded) for e in events)


def test_move_cap_fewest_cards_wins() -> None:
    hands = [cards("7♣", "K♦"), cards("8♥", "3♣"), cards("5♦", "9♣", "10♣")]
    state = state_with(hands, required=Rank.SEVEN, plays=299)
    state, _ = apply(state, Play(0, cards("7♣"), Rank.SEVEN))
    assert state.result is not None and state.result.winner == 0


def test_a_final_play_withdrawn_at_the_cap_ends_the_game() -> None:
    """The last move the cap allows is a final play made by the clock, and its player is then
    removed for timeouts: the play is withdrawn and the cap ends the game (found by the
    property test: the game went on past the cap)."""
    rules = Rules().with_option("afk_limit", "1")
    hands = [cards("7♣"), cards("8♥", "3♣"), cards("5♦", "9♣", "10♣")]
    state = state_with(hands, required=Rank.SEVEN, rules=rules, plays=299)
    state, events = apply(state, Timeout(state.plays, False))
    assert any(isinstance(e, PlayerLeft) and e.removed_for_timeouts for e in events)
    assert state.result is not None and state.result.reason is EndReason.MOVE_CAP
    assert state.plays == 300


# --- players --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "fits", "starts"), [("3-6", 6, 3), ("2-10", 10, 2)])
def test_players(value: str, fits: int, starts: int) -> None:
    rules = Rules().with_option("players", value)
    lobby = Lobby(creator=1, rules=rules)
    for uid in range(fits):
        if len(lobby.players) == starts - 1:
            assert lobby.start_refusal() is Refusal.TOO_FEW_PLAYERS
        lobby = join(lobby, uid, f"P{uid}")
    assert lobby.start_refusal() is None
    with pytest.raises(IllegalAction) as refused:
        join(lobby, 99, "late")
    assert refused.value.reason is Refusal.LOBBY_FULL
    state, _ = new_game(rules, Seating(lobby.players, 0), random.Random(1))
    assert len(state.players) == fits


def test_more_than_ten_players_cannot_start() -> None:
    seating = Seating(tuple((i, f"P{i}") for i in range(11)), dealer=0)
    with pytest.raises(IllegalAction) as refused:
        new_game(Rules(decks=2), seating, random.Random(1))
    assert refused.value.reason is Refusal.TOO_MANY_PLAYERS


# --- turn timer, afk_limit, leaving ---------------------------------------------------------------


def test_timeout_plays_a_true_card_when_held() -> None:
    state = _four_players(Rules())
    state, _ = apply(state, Timeout(state.plays, False))
    claim = state.open_claims[-1]
    assert claim.cards == cards("7♣") and claim.rank is Rank.SEVEN
    assert not is_lie(state.rules, claim)
    assert state.players[0].timeouts == 1
    # A late or repeated deadline is stale.
    assert _refused(state, Timeout(0, False)) is Refusal.STALE_TIMEOUT


def test_timeout_without_the_rank_plays_one_card_as_the_required_rank() -> None:
    state = _four_players(Rules(), required=Rank.QUEEN)
    state, _ = apply(state, Timeout(state.plays, False))
    claim = state.open_claims[-1]
    assert len(claim.cards) == 1 and claim.rank is Rank.QUEEN and is_lie(state.rules, claim)


@pytest.mark.parametrize("preset", ["free", "verju"])
def test_timeout_naming_the_rank_claims_a_card_held(preset: str) -> None:
    state = _four_players(PRESETS[preset], required=None)
    state, _ = apply(state, Timeout(state.plays, False))
    claim = state.open_claims[-1]
    assert claim.rank is claim.cards[0].rank and not is_lie(state.rules, claim)


def test_timeout_with_wild_jokers_plays_a_joker_as_a_true_card() -> None:
    rules = Rules().with_option("jokers", "wild")
    hands = [(card("★1"), card("3♦")), cards("8♥", "9♣"), cards("5♦")]
    state = state_with(hands, required=Rank.QUEEN, rules=rules)
    state, _ = apply(state, Timeout(0, False))
    claim = state.open_claims[-1]
    assert claim.cards == (card("★1"),) and not is_lie(rules, claim)


@pytest.mark.parametrize(("value", "removed_after"), [("1", 1), ("3", 3)])
def test_afk_limit_removes_after_timeouts_in_a_row(value: str, removed_after: int) -> None:
    rules = Rules().with_option("afk_limit", value).with_option("rank_rule", "free")
    hands = [cards("2♠", "3♠", "4♠", "5♠", "6♠")] + [
        cards(f"{r}♥", f"{r}♣", f"{r}♦", f"{r}♠") for r in "789"
    ]
    state = state_with(hands, required=None, rules=rules)
    removed = 0
    for rounds in range(1, 4):
        # A times out; the others play in time.
        state, events = apply(state, Timeout(state.plays, False))
        if any(isinstance(e, PlayerLeft) and e.removed_for_timeouts for e in events):
            removed = rounds
            break
        for seat in (1, 2, 3):
            played = state.players[seat].hand[:1]
            state, _ = apply(state, Play(seat, played, played[0].rank))
    assert removed == removed_after
    assert state.players[0].left and state.players[0].hand == ()
    assert state.turn == 1


def test_an_own_action_resets_the_timeout_count() -> None:
    state = _four_players(Rules())
    state, _ = apply(state, Timeout(0, False))
    for seat in (1, 2, 3):
        hand = state.players[seat].hand
        state, _ = apply(state, Play(seat, hand[:1], state.required or Rank.ACE))
    state, _ = apply(state, Play(0, state.players[0].hand[:1], state.required or Rank.ACE))
    assert state.players[0].timeouts == 0


def test_an_unanswered_final_play_is_accepted_when_its_timer_runs_out() -> None:
    hands = [cards("Q♣", "3♦"), cards("8♥", "9♣"), cards("5♦", "6♣")]
    state = state_with(hands, required=Rank.QUEEN)
    state, _ = apply(state, Play(0, cards("Q♣", "3♦"), Rank.QUEEN))
    state, _ = apply(state, Accept(2, 1))
    state, _ = apply(state, Timeout(state.plays, True))
    assert state.result is not None and state.result.winner == 0


def test_leaving_sets_the_hand_aside_and_skips_the_seat() -> None:
    state = _four_players(Rules())
    hand = state.players[1].hand
    state, _ = apply(state, Play(0, cards("7♣"), Rank.SEVEN))
    state, events = apply(state, Leave(1))
    assert state.players[1].left and set(hand) <= set(state.set_aside)
    assert state.turn == 2 and TurnStarted(2, Rank.EIGHT) in events
    assert state.next_active(0) == 2
    state, _ = apply(state, Leave(3))
    state, events = apply(state, Leave(2))
    assert state.result is not None and state.result.reason is EndReason.LAST_PLAYER
    assert state.result.winner == 0


def test_the_final_claimant_leaving_withdraws_the_final_play() -> None:
    hands = [cards("Q♣", "3♦"), cards("8♥", "9♣"), cards("5♦", "6♣")]
    state = state_with(hands, required=Rank.QUEEN)
    state, _ = apply(state, Play(0, cards("Q♣", "3♦"), Rank.QUEEN))
    state, _ = apply(state, Leave(0))
    assert state.phase is Phase.PLAYING and state.turn == 1 and state.open_claims == ()


def test_leaving_clears_a_pending_call_on_the_leavers_play() -> None:
    state = _five_players("clockwise")
    state, _ = apply(state, Challenge(3, 1, now_ms=0))
    state, _ = apply(state, Leave(0))
    assert state.challenges == () and pending_deadline_ms(state) is None
    assert awaited(state) == {1}


def test_rules_md_defaults_need_no_clock() -> None:
    # Under `first` a Cheat! resolves at once: no deadline ever.
    state = dataclasses.replace(_four_players(Rules()), plays=5)
    state, _ = apply(state, Play(0, cards("7♣"), Rank.SEVEN))
    state, _ = apply(state, Challenge(2, 6, now_ms=123))
    assert pending_deadline_ms(state) is None
