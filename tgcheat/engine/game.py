"""The rules in motion: ``new_game`` deals, ``apply`` turns a state and an action into the next
state and the events that follow. Pure and deterministic: randomness comes in as an argument,
so a transaction that is retried on a version conflict computes the same result.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from tgcheat.engine.actions import Accept, Action, Challenge, Leave, Play, Stop, Timeout
from tgcheat.engine.cards import Card, Rank, full_deck
from tgcheat.engine.events import (
    CardsPlayed,
    ChallengeResolved,
    Event,
    FinalAccepted,
    FinalPlayPending,
    GameEnded,
    HandChanged,
    PlayerLeft,
    TurnStarted,
)
from tgcheat.engine.rules import (
    AfterChallenge,
    Challengers,
    ChallengeWindow,
    FinalCheck,
    Jokers,
    RankRule,
    Rules,
)
from tgcheat.engine.state import Claim, EndReason, GameState, Phase, Player, Result


class RandomSource(Protocol):
    """What dealing needs of a random generator (``random.SystemRandom`` in production)."""

    def shuffle(self, x: list[Any]) -> None: ...

    def randrange(self, start: int, stop: int | None = None, step: int = 1) -> int: ...


class Refusal(enum.StrEnum):
    """Why an action is refused; every code has a translated message in the bot."""

    GAME_OVER = "game_over"
    NOT_IN_GAME = "not_in_game"
    NOT_YOUR_TURN = "not_your_turn"
    WAITING_FOR_FINAL = "waiting_for_final"
    BAD_CARD_COUNT = "bad_card_count"
    CARDS_NOT_IN_HAND = "cards_not_in_hand"
    WRONG_RANK = "wrong_rank"
    NO_SUCH_CLAIM = "no_such_claim"
    OWN_CLAIM = "own_claim"
    NOT_NEXT_PLAYER = "not_next_player"
    NOT_FINAL = "not_final"
    ALREADY_ACCEPTED = "already_accepted"
    STALE_TIMEOUT = "stale_timeout"
    TOO_FEW_PLAYERS = "too_few_players"
    ALREADY_JOINED = "already_joined"
    LOBBY_FULL = "lobby_full"


class ActionRefused(Exception):
    """An action the engine will not apply; ``reason`` says why and never needs parsing."""

    def __init__(self, reason: Refusal) -> None:
        super().__init__(reason.value)
        self.reason = reason


class IllegalAction(ActionRefused):
    """Well-formed, but the rules do not allow it now (not your turn, claim already closed…)."""


class InvalidAction(ActionRefused):
    """Malformed: no such seat, cards the player does not hold, a claim of a joker."""


_INVALID = {Refusal.NOT_IN_GAME, Refusal.BAD_CARD_COUNT, Refusal.CARDS_NOT_IN_HAND}


@dataclass(frozen=True, slots=True)
class Seating:
    """Who plays, in seating order, and who deals."""

    players: tuple[tuple[int, str], ...]
    dealer: int


def random_seating(players: Sequence[tuple[int, str]], rng: RandomSource) -> Seating:
    """Random seats and a random dealer, as for the first game of a match (RULES.md)."""
    order = list(range(len(players)))
    rng.shuffle(order)
    return Seating(tuple(players[i] for i in order), rng.randrange(len(players)))


def new_game(rules: Rules, seating: Seating, rng: RandomSource) -> tuple[GameState, list[Event]]:
    """Shuffle and deal every card one at a time from the player after the dealer, so when the
    cards do not divide evenly the first players hold one more (RULES.md)."""
    count = len(seating.players)
    if count < 2:
        raise IllegalAction(Refusal.TOO_FEW_PLAYERS)
    deck = list(full_deck(rules.deck_count(count), rules.jokers is Jokers.WILD))
    rng.shuffle(deck)
    hands: list[list[Card]] = [[] for _ in range(count)]
    first = (seating.dealer + 1) % count
    for i, card in enumerate(deck):
        hands[(first + i) % count].append(card)
    players = tuple(
        Player(user_id=uid, name=name, hand=tuple(sorted(hand)))
        for (uid, name), hand in zip(seating.players, hands, strict=True)
    )
    state = GameState(
        rules=rules,
        players=players,
        dealer=seating.dealer,
        turn=first,
        required=Rank.ACE if rules.rank_rule is RankRule.ASCENDING else None,
    )
    events: list[Event] = [HandChanged(seat) for seat in range(count)]
    events.append(TurnStarted(first, state.required))
    return state, events


# --- legality: one predicate, shared by the validator and the list of legal actions ----------


def refusal(state: GameState, action: Action) -> Refusal | None:
    """Why ``action`` is refused in ``state``, or None when it is legal."""
    if state.phase is Phase.FINISHED:
        return Refusal.GAME_OVER
    match action:
        case Play():
            return _play_refusal(state, action)
        case Challenge():
            return _answer_refusal(state, action.seat, action.claim, challenge=True)
        case Accept():
            return _answer_refusal(state, action.seat, action.claim, challenge=False)
        case Timeout():
            final = state.phase is Phase.FINAL_CHECK
            if action.plays != state.plays or action.phase_final != final:
                return Refusal.STALE_TIMEOUT
            return None
        case Leave():
            return _seat_refusal(state, action.seat)
        case Stop():
            return None


def _seat_refusal(state: GameState, seat: int) -> Refusal | None:
    if not 0 <= seat < len(state.players) or state.players[seat].left:
        return Refusal.NOT_IN_GAME
    return None


def _play_refusal(state: GameState, play: Play) -> Refusal | None:
    if reason := _seat_refusal(state, play.seat):
        return reason
    if state.phase is Phase.FINAL_CHECK:
        return Refusal.WAITING_FOR_FINAL
    if play.seat != state.turn:
        return Refusal.NOT_YOUR_TURN
    hand = state.players[play.seat].hand
    if not 1 <= len(play.cards) <= state.rules.play_limit(len(hand)):
        return Refusal.BAD_CARD_COUNT
    if not _holds(hand, play.cards):
        return Refusal.CARDS_NOT_IN_HAND
    if play.rank is Rank.JOKER or (state.required is not None and play.rank is not state.required):
        return Refusal.WRONG_RANK
    return None


def _holds(hand: tuple[Card, ...], cards: tuple[Card, ...]) -> bool:
    return len(set(cards)) == len(cards) and set(cards) <= set(hand)


def _answer_refusal(state: GameState, seat: int, number: int, *, challenge: bool) -> Refusal | None:
    if reason := _seat_refusal(state, seat):
        return reason
    claim = next((c for c in state.open_claims if c.number == number), None)
    if claim is None or (state.phase is Phase.FINAL_CHECK and not claim.final):
        # While a final play waits for its answer, only that play is open: taking the pile
        # for an older claim would leave the final claimant in play with no cards.
        return Refusal.NO_SUCH_CLAIM
    if claim.seat == seat:
        return Refusal.OWN_CLAIM
    if claim.final:
        if seat not in final_answerers(state):
            return Refusal.NOT_NEXT_PLAYER
        if seat in state.accepted:
            return Refusal.ALREADY_ACCEPTED
        return None
    if not challenge:
        return Refusal.NOT_FINAL
    if state.rules.challengers is Challengers.NEXT and seat != state.next_active(claim.seat):
        return Refusal.NOT_NEXT_PLAYER
    return None


def final_answerers(state: GameState) -> frozenset[int]:
    """Who must answer the pending final play (RULES.md ``final_check``)."""
    claim = state.final_claim
    if claim is None:
        return frozenset()
    if state.rules.final_check is FinalCheck.NEXT:
        return frozenset({state.next_active(claim.seat)})
    return frozenset(s for s in state.active_seats() if s != claim.seat)


def awaited(state: GameState) -> frozenset[int]:
    """The seats whose action the game waits for: the player to play, or the final answerers
    who have not answered yet. Exactly one seat while playing; none once finished."""
    if state.phase is Phase.PLAYING:
        return frozenset({state.turn})
    if state.phase is Phase.FINAL_CHECK:
        return final_answerers(state) - state.accepted
    return frozenset()


def play_limit(state: GameState, seat: int) -> int:
    """How many cards ``seat`` may play now: 0 when it may not play."""
    if state.phase is not Phase.PLAYING or seat != state.turn or state.players[seat].left:
        return 0
    return state.rules.play_limit(len(state.players[seat].hand))


def claimable_ranks(state: GameState) -> tuple[Rank, ...]:
    """The ranks the player to play may claim (one when a rank is required)."""
    if state.required is not None:
        return (state.required,)
    return tuple(r for r in Rank if r is not Rank.JOKER)


def challengeable(state: GameState, seat: int) -> tuple[Claim, ...]:
    """The open claims ``seat`` may challenge now."""
    return tuple(
        claim
        for claim in state.open_claims
        if _answer_refusal(state, seat, claim.number, challenge=True) is None
    )


def can_accept(state: GameState, seat: int) -> bool:
    claim = state.final_claim
    return claim is not None and _answer_refusal(state, seat, claim.number, challenge=False) is None


# --- transitions ------------------------------------------------------------------------------


def apply(state: GameState, action: Action) -> tuple[GameState, list[Event]]:
    """The state after ``action`` and what happened; raises ActionRefused when it is refused."""
    reason = refusal(state, action)
    if reason is not None:
        raise (InvalidAction if reason in _INVALID else IllegalAction)(reason)
    events: list[Event] = []
    match action:
        case Play():
            state = _reset_timeouts(state, action.seat)
            state = _play(state, action, events, by_timeout=False)
        case Challenge():
            state = _reset_timeouts(state, action.seat)
            state = _challenge(state, action, events)
        case Accept():
            state = _reset_timeouts(state, action.seat)
            state = _accept(state, action.seat, events, by_timeout=False)
        case Timeout():
            state = _timeout(state, events)
        case Leave():
            state = _leave(state, action.seat, events, removed=False)
        case Stop():
            state = _finish(state, EndReason.STOPPED, events, winner=None)
    return state, events


def _replace_player(state: GameState, seat: int, **changes: object) -> GameState:
    players = list(state.players)
    players[seat] = dataclasses.replace(players[seat], **changes)  # type: ignore[arg-type]
    return dataclasses.replace(state, players=tuple(players))


def _reset_timeouts(state: GameState, seat: int) -> GameState:
    if state.players[seat].timeouts == 0:
        return state
    return _replace_player(state, seat, timeouts=0)


def _next_required(rules: Rules, claimed: Rank) -> Rank | None:
    match rules.rank_rule:
        case RankRule.ASCENDING:
            return claimed.next_in_sequence()
        case RankRule.SAME:
            return claimed
        case RankRule.FREE:
            return None


def _play(state: GameState, play: Play, events: list[Event], *, by_timeout: bool) -> GameState:
    player = state.players[play.seat]
    played = set(play.cards)
    hand = tuple(c for c in player.hand if c not in played)
    claim = Claim(
        number=state.plays + 1,
        seat=play.seat,
        cards=play.cards,
        rank=play.rank,
        final=not hand,
    )
    state = _replace_player(state, play.seat, hand=hand)
    # Only the last play, or the last two under the extended window, may still be challenged.
    keep = 1 if state.rules.challenge_window is ChallengeWindow.LAST else 2
    open_claims = (*state.open_claims, claim)[-keep:]
    state = dataclasses.replace(
        state,
        pile=state.pile + play.cards,
        open_claims=open_claims,
        plays=claim.number,
        required=_next_required(state.rules, play.rank),
        turn=state.next_active(play.seat),
    )
    events += [CardsPlayed(claim, by_timeout=by_timeout), HandChanged(play.seat)]
    if claim.final:
        state = dataclasses.replace(state, phase=Phase.FINAL_CHECK, accepted=frozenset())
        events.append(FinalPlayPending(claim, final_answerers(state)))
        return state
    if _cap_reached(state):
        return _finish_at_cap(state, events)
    events.append(TurnStarted(state.turn, state.required))
    return state


def _cap_reached(state: GameState) -> bool:
    return state.rules.move_cap > 0 and state.plays >= state.rules.move_cap


def _is_lie(rules: Rules, claim: Claim) -> bool:
    wild = rules.jokers is Jokers.WILD
    # RULES.md `jokers`: a wild joker never differs from the claimed rank.
    return any(
        card.rank is not claim.rank and not (wild and card.rank is Rank.JOKER)
        for card in claim.cards
    )


def _challenge(state: GameState, action: Challenge, events: list[Event]) -> GameState:
    claim = next(c for c in state.open_claims if c.number == action.claim)
    lie = _is_lie(state.rules, claim)
    taker = claim.seat if lie else action.seat
    taken = len(state.pile)
    taker_player = state.players[taker]
    state = _replace_player(state, taker, hand=tuple(sorted(taker_player.hand + state.pile)))
    # The whole pile is gone, so no earlier claim can be challenged any more.
    state = dataclasses.replace(state, pile=(), open_claims=(), accepted=frozenset())
    events += [
        ChallengeResolved(action.seat, claim, claim.cards, lie, taker, taken),
        HandChanged(taker),
    ]
    if claim.final and not lie:
        # A wrong challenge of a final play: the claimant goes out and wins (RULES.md).
        return _finish(state, EndReason.WENT_OUT, events, winner=claim.seat)
    winner = action.seat if lie else claim.seat
    rules = state.rules
    if rules.after_challenge is AfterChallenge.WINNER_OPENS:
        turn = winner
    elif claim.final:
        turn = state.next_active(claim.seat)
    else:
        turn = state.turn
    required = state.required
    if rules.rank_rule is RankRule.SAME or (
        rules.rank_rule is RankRule.FREE and rules.after_challenge is AfterChallenge.WINNER_OPENS
    ):
        # Under `same` any challenge ends the round: whoever plays next names a new rank.
        required = None
    state = dataclasses.replace(state, phase=Phase.PLAYING, turn=turn, required=required)
    if _cap_reached(state):
        return _finish_at_cap(state, events)
    events.append(TurnStarted(state.turn, state.required))
    return state


def _accept(state: GameState, seat: int, events: list[Event], *, by_timeout: bool) -> GameState:
    claim = state.final_claim
    assert claim is not None
    state = dataclasses.replace(state, accepted=state.accepted | {seat})
    events.append(FinalAccepted(seat, claim, by_timeout=by_timeout))
    if final_answerers(state) <= state.accepted:
        return _finish(state, EndReason.WENT_OUT, events, winner=claim.seat)
    return state


def _timeout(state: GameState, events: list[Event]) -> GameState:
    """RULES.md "Turn timer": the player is played for with one card claimed as the required
    rank (a true one when they hold it); an unanswered final play is accepted."""
    if state.phase is Phase.FINAL_CHECK:
        for seat in sorted(awaited(state)):
            if state.phase is not Phase.FINAL_CHECK:
                break
            state = _accept(state, seat, events, by_timeout=True)
        return state
    seat = state.turn
    player = state.players[seat]
    rank = state.required
    true_cards = [c for c in player.hand if rank is None or c.rank is rank]
    card = min(true_cards) if true_cards else min(player.hand)
    claimed = rank if rank is not None else card.rank
    if claimed is Rank.JOKER:
        claimed = Rank.ACE
    state = _replace_player(state, seat, timeouts=player.timeouts + 1)
    state = _play(state, Play(seat, (card,), claimed), events, by_timeout=True)
    if state.phase is not Phase.FINISHED and state.players[seat].timeouts >= state.rules.afk_limit:
        state = _leave(state, seat, events, removed=True)
    return state


def _leave(state: GameState, seat: int, events: list[Event], *, removed: bool) -> GameState:
    """RULES.md "Leaving": the hand is set aside and the seat skipped; one player left wins."""
    player = state.players[seat]
    state = _replace_player(state, seat, hand=(), left=True)
    # A leaver's open claims can no longer be challenged: nobody could take the pile for them.
    open_claims = tuple(c for c in state.open_claims if c.seat != seat)
    final_withdrawn = state.phase is Phase.FINAL_CHECK and state.final_claim not in open_claims
    state = dataclasses.replace(
        state,
        set_aside=state.set_aside + player.hand,
        open_claims=open_claims,
        accepted=state.accepted - {seat},
    )
    events.append(PlayerLeft(seat, removed_for_timeouts=removed))
    active = state.active_seats()
    if len(active) == 1:
        return _finish(state, EndReason.LAST_PLAYER, events, winner=active[0])
    if final_withdrawn:
        state = dataclasses.replace(state, phase=Phase.PLAYING, accepted=frozenset())
    if state.turn == seat:
        state = dataclasses.replace(state, turn=state.next_active(seat))
        if state.phase is Phase.PLAYING:
            events.append(TurnStarted(state.turn, state.required))
    elif final_withdrawn:
        events.append(TurnStarted(state.turn, state.required))
    if state.phase is Phase.FINAL_CHECK:
        claim = state.final_claim
        assert claim is not None
        if final_answerers(state) <= state.accepted:
            return _finish(state, EndReason.WENT_OUT, events, winner=claim.seat)
    return state


def _finish_at_cap(state: GameState, events: list[Event]) -> GameState:
    """RULES.md ``move_cap``: fewest cards wins; a tie for fewest is a draw."""
    return _finish(state, EndReason.MOVE_CAP, events, winner=None)


def _finish(
    state: GameState, reason: EndReason, events: list[Event], *, winner: int | None
) -> GameState:
    active = state.active_seats()
    sizes = {s: len(state.players[s].hand) for s in active}
    places: list[tuple[int, int]] = []
    for seat in active:
        if seat == winner:
            places.append((seat, 1))
            continue
        others = [s for s in active if s not in (seat, winner)]
        better = sum(1 for s in others if sizes[s] < sizes[seat])
        places.append((seat, better + (2 if winner is not None else 1)))
    if reason is EndReason.MOVE_CAP:
        firsts = [s for s, place in places if place == 1]
        winner = firsts[0] if len(firsts) == 1 else None
    places.sort(key=lambda sp: (sp[1], sp[0]))
    result = Result(reason=reason, winner=winner, places=tuple(places))
    state = dataclasses.replace(
        state, phase=Phase.FINISHED, result=result, open_claims=(), accepted=frozenset()
    )
    events.append(GameEnded(result))
    return state
