"""The rules in motion: ``new_game`` deals, ``apply`` turns a state and an action into the next
state and the events that follow. Pure and deterministic: randomness and the time come in as
arguments, so a transaction that is retried on a version conflict computes the same result.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from tgcheat.engine.actions import (
    Accept,
    Action,
    Challenge,
    Leave,
    Pass,
    PassVote,
    Play,
    PullTrigger,
    ResolveChallenges,
    Stop,
    Timeout,
)
from tgcheat.engine.cards import CLAIMABLE_RANKS, Card, Rank, Suit, full_deck
from tgcheat.engine.deal import SEED_BITS, RoundRandom
from tgcheat.engine.events import (
    CardsPlayed,
    ChallengeCalled,
    ChallengeResolved,
    Event,
    FinalAccepted,
    FinalPlayPending,
    GameEnded,
    HandChanged,
    Passed,
    PassRefused,
    PassRequested,
    PassVoted,
    PlayerLeft,
    RoundDealt,
    TriggerPulled,
    TurnStarted,
)
from tgcheat.engine.rules import (
    CHAMBERS,
    MAX_PLAYERS,
    SHORT_DECK_COPIES,
    SHORT_DECK_RANKS,
    SHORT_HAND,
    AfterChallenge,
    ChallengePriority,
    Challengers,
    ChallengeWindow,
    DeckKind,
    FinalCheck,
    Jokers,
    Passing,
    Penalty,
    RankRule,
    Rules,
)
from tgcheat.engine.state import (
    Claim,
    EndReason,
    GameState,
    PendingChallenge,
    Phase,
    Player,
    Result,
    evolve,
)

#: Copies of each rank in one deck (suits never matter).
COPIES_PER_DECK = 4
#: ``penalty=revolver``: the pause between a call's reveal and the pull of the trigger, so the
#: table sees who must pull before it learns whether they live (the moment of the game).
PULL_PAUSE_MS = 2500


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
    #: A Cheat! call is being settled (``challenge_priority=clockwise``): wait for the reveal.
    CHALLENGE_PENDING = "challenge_pending"
    #: This seat already called Cheat! on this play.
    ALREADY_CHALLENGED = "already_challenged"
    #: The clock fired before the deadline (``ResolveChallenges``).
    TOO_EARLY = "too_early"
    #: ``passing=never``: a player may not pass.
    PASSING_OFF = "passing_off"
    #: ``passing=exhausted``: some card of the required rank is still outside the pile.
    RANK_NOT_EXHAUSTED = "rank_not_exhausted"
    #: ``passing=vote``: a request to pass is already being voted on.
    VOTE_PENDING = "vote_pending"
    #: ``passing=vote``: this turn's request to pass was refused; the player must play.
    VOTE_REFUSED = "vote_refused"
    #: There is no request to pass to vote on.
    NO_VOTE = "no_vote"
    #: The player asking to pass does not vote on their own request.
    NOT_A_VOTER = "not_a_voter"
    ALREADY_VOTED = "already_voted"
    #: More players than any option allows (``MAX_PLAYERS``).
    TOO_MANY_PLAYERS = "too_many_players"
    #: ``penalty=revolver``: nobody else holds cards this round: the player must call the
    #: last play ("Liar!").
    MUST_CALL = "must_call"
    #: ``penalty=revolver``: a trigger is about to be pulled; wait for it.
    PULL_PENDING = "pull_pending"
    #: ``deck=short``: the deck has no such rank.
    RANK_NOT_IN_DECK = "rank_not_in_deck"


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
    if count > MAX_PLAYERS:
        raise IllegalAction(Refusal.TOO_MANY_PLAYERS)
    first = (seating.dealer + 1) % count
    # The revolver's bullets and the seed of later rounds' deals come from ``rng`` (a
    # cryptographically secure generator in production), like the first deal.
    revolver = rules.penalty is Penalty.REVOLVER
    table_rank = rules.rank_rule is RankRule.TABLE
    players = tuple(
        Player(user_id=uid, name=name, hand=(), bullet=rng.randrange(CHAMBERS) if revolver else -1)
        for uid, name in seating.players
    )
    state = GameState(
        rules=rules,
        players=players,
        dealer=seating.dealer,
        turn=first,
        required=None,
        stock=deck_of(rules, count),
        seed=rng.randrange(1, 2**SEED_BITS) if revolver or table_rank else 0,
    )
    events: list[Event] = []
    state = _deal_round(state, first, rng, events)
    return state, events


def deck_of(rules: Rules, players: int) -> tuple[Card, ...]:
    """Every card of a game of ``players`` under ``rules``, in order."""
    wild = rules.jokers is Jokers.WILD
    if rules.deck is not DeckKind.SHORT:
        return full_deck(rules.deck_count(players), wild)
    cards = [
        Card.make(Rank(rank), Suit(copy % 4), copy // 4)
        for rank in SHORT_DECK_RANKS
        for copy in range(SHORT_DECK_COPIES)
    ]
    if wild:
        cards += [Card.make(Rank.JOKER, Suit(j)) for j in range(2)]
    return tuple(sorted(cards))


def deck_ranks(rules: Rules) -> tuple[Rank, ...]:
    """The ranks a claim may name under ``rules``: those the deck has (jokers aside)."""
    if rules.deck is DeckKind.SHORT:
        return tuple(sorted(Rank(r) for r in SHORT_DECK_RANKS))
    return CLAIMABLE_RANKS


def rank_copies(rules: Rules, players: int, rank: Rank) -> int:
    """How many cards of ``rank`` a game of ``players`` has."""
    if rank is Rank.JOKER:
        return 2 * rules.deck_count(players) if rules.jokers is Jokers.WILD else 0
    if rules.deck is DeckKind.SHORT:
        return SHORT_DECK_COPIES if rank in SHORT_DECK_RANKS else 0
    return COPIES_PER_DECK * rules.deck_count(players)


def _deal_round(state: GameState, opener: int, rng: RandomSource, events: list[Event]) -> GameState:
    """A round dealt: every card not set aside for good is gathered, shuffled by ``rng`` and
    dealt one at a time from ``opener`` to every player in the game, at most ``SHORT_HAND``
    each under ``deck=short`` (the rest stays in the stock); the rank of the round drawn
    under ``rank_rule=table``."""
    rules = state.rules
    gathered = [c for p in state.players for c in p.hand] + [*state.pile, *state.stock]
    if rules.penalty is Penalty.REVOLVER:
        # A new round takes every card back, those of players gone too.
        gathered += state.set_aside
        set_aside: tuple[Card, ...] = ()
    else:
        set_aside = state.set_aside
    deck = sorted(gathered)
    rng.shuffle(deck)
    count = len(state.players)
    seats = sorted(state.active_seats(), key=lambda s: (s - opener) % count)
    limit = SHORT_HAND if rules.deck is DeckKind.SHORT else len(deck)
    dealt = min(len(deck), limit * len(seats))
    hands: dict[int, list[Card]] = {s: [] for s in seats}
    for i, card in enumerate(deck[:dealt]):
        hands[seats[i % len(seats)]].append(card)
    players = tuple(
        evolve(p, hand=tuple(sorted(hands.get(seat, ())))) for seat, p in enumerate(state.players)
    )
    required: Rank | None
    match rules.rank_rule:
        case RankRule.ASCENDING:
            required = Rank.ACE if state.round == 0 else state.required
        case RankRule.TABLE:
            ranks = deck_ranks(rules)
            required = ranks[rng.randrange(len(ranks))]
        case RankRule.SAME | RankRule.FREE:
            required = None
    state = _new_turn(
        state,
        opener,
        players=players,
        pile=(),
        stock=tuple(sorted(deck[dealt:])),
        set_aside=set_aside,
        open_claims=(),
        accepted=frozenset(),
        challenges=(),
        round=state.round + 1,
        required=required,
        phase=Phase.PLAYING,
    )
    if state.round > 1 or rules.rank_rule is RankRule.TABLE:
        events.append(RoundDealt(state.round, required))
    events += [HandChanged(seat) for seat in seats]
    events.append(TurnStarted(opener, required))
    return state


# --- legality: one predicate, shared by the validator and the list of legal actions ----------


def refusal(state: GameState, action: Action) -> Refusal | None:
    """Why ``action`` is refused in ``state``, or None when it is legal."""
    if state.phase is Phase.FINISHED:
        return Refusal.GAME_OVER
    match action:
        case Play():
            return _play_refusal(state, action)
        case Challenge():
            return _challenge_refusal(state, action)
        case Accept():
            return _answer_refusal(state, action.seat, action.claim, challenge=False) or (
                Refusal.CHALLENGE_PENDING if state.challenges else None
            )
        case Timeout():
            final = state.phase is Phase.FINAL_CHECK
            if action.plays != state.plays or action.phase_final != final:
                return Refusal.STALE_TIMEOUT
            if state.pull_by is not None:
                return Refusal.PULL_PENDING
            # The grace period of a Cheat! call is far shorter than a turn: the clock action
            # that settles it comes first.
            return Refusal.CHALLENGE_PENDING if state.challenges else None
        case ResolveChallenges():
            if not state.challenges:
                return Refusal.STALE_TIMEOUT
            deadline = pending_deadline_ms(state)
            assert deadline is not None
            return Refusal.TOO_EARLY if action.now_ms < deadline else None
        case PullTrigger():
            if state.pull_by is None:
                return Refusal.STALE_TIMEOUT
            return Refusal.TOO_EARLY if action.now_ms < state.pull_at_ms else None
        case Pass():
            return _pass_refusal(state, action.seat)
        case PassVote():
            return _vote_refusal(state, action.seat)
        case Leave():
            return _seat_refusal(state, action.seat)
        case Stop():
            return None


def _seat_refusal(state: GameState, seat: int) -> Refusal | None:
    if not 0 <= seat < len(state.players) or state.players[seat].left:
        return Refusal.NOT_IN_GAME
    return None


def _turn_refusal(state: GameState, seat: int) -> Refusal | None:
    """What keeps ``seat`` from playing or passing now."""
    if reason := _seat_refusal(state, seat):
        return reason
    if state.phase is Phase.FINAL_CHECK:
        return Refusal.WAITING_FOR_FINAL
    if state.pull_by is not None:
        return Refusal.PULL_PENDING
    if seat != state.turn:
        return Refusal.NOT_YOUR_TURN
    if state.challenges:
        return Refusal.CHALLENGE_PENDING
    if must_call(state):
        return Refusal.MUST_CALL
    return None


def must_call(state: GameState) -> bool:
    """``penalty=revolver``: the player to play is the only one this round who still holds
    cards, so they may only call the last play (Liar's Bar)."""
    if state.rules.penalty is not Penalty.REVOLVER or not state.open_claims:
        return False
    return all(not state.players[s].hand for s in state.active_seats() if s != state.turn)


def next_in_round(state: GameState, seat: int) -> int:
    """The seat that plays after ``seat``: the next one still in the game, and under
    ``penalty=revolver`` holding cards (a player with none sits the round out); ``seat``
    itself when there is none."""
    if state.rules.penalty is not Penalty.REVOLVER:
        return state.next_active(seat)
    count = len(state.players)
    for step in range(1, count):
        candidate = (seat + step) % count
        player = state.players[candidate]
        if not player.left and player.hand:
            return candidate
    return seat


def _play_refusal(state: GameState, play: Play) -> Refusal | None:
    if reason := _turn_refusal(state, play.seat):
        return reason
    hand = state.players[play.seat].hand
    if not 1 <= len(play.cards) <= state.rules.play_limit(len(hand)):
        return Refusal.BAD_CARD_COUNT
    if not _holds(hand, play.cards):
        return Refusal.CARDS_NOT_IN_HAND
    if play.rank is Rank.JOKER or (state.required is not None and play.rank is not state.required):
        return Refusal.WRONG_RANK
    if play.rank not in deck_ranks(state.rules):
        return Refusal.RANK_NOT_IN_DECK
    return None


def _holds(hand: tuple[Card, ...], cards: tuple[Card, ...]) -> bool:
    return len(set(cards)) == len(cards) and set(cards) <= set(hand)


def _answer_refusal(state: GameState, seat: int, number: int, *, challenge: bool) -> Refusal | None:
    if reason := _seat_refusal(state, seat):
        return reason
    if state.pull_by is not None:
        return Refusal.PULL_PENDING
    claim = _open_claim(state, number)
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
    if state.rules.challengers is Challengers.NEXT and seat != next_in_round(state, claim.seat):
        return Refusal.NOT_NEXT_PLAYER
    return None


def _challenge_refusal(state: GameState, action: Challenge) -> Refusal | None:
    if reason := _answer_refusal(state, action.seat, action.claim, challenge=True):
        return reason
    if state.challenges:
        deadline = pending_deadline_ms(state)
        assert deadline is not None
        # RULES.md `challenge_priority`: only presses within the grace period of the first
        # one, on the play it called, are collected; once that play is revealed the pile is
        # gone, so a press on another play (window `two`) could never be settled.
        if action.claim != state.challenges[0].claim or action.now_ms > deadline:
            return Refusal.NO_SUCH_CLAIM
        if any(pending.seat == action.seat for pending in state.challenges):
            return Refusal.ALREADY_CHALLENGED
    return None


def _pass_refusal(state: GameState, seat: int) -> Refusal | None:
    if reason := _turn_refusal(state, seat):
        return reason
    match state.rules.passing:
        case Passing.NEVER:
            return Refusal.PASSING_OFF
        case Passing.EXHAUSTED:
            return None if rank_exhausted(state) else Refusal.RANK_NOT_EXHAUSTED
        case Passing.VOTE:
            if state.vote_by is not None:
                return Refusal.VOTE_PENDING
            return Refusal.VOTE_REFUSED if state.pass_refused else None


def _vote_refusal(state: GameState, seat: int) -> Refusal | None:
    if reason := _seat_refusal(state, seat):
        return reason
    if state.vote_by is None:
        return Refusal.NO_VOTE
    if seat == state.vote_by:
        return Refusal.NOT_A_VOTER
    if seat in state.votes_yes:
        return Refusal.ALREADY_VOTED
    return None


def _open_claim(state: GameState, number: int) -> Claim | None:
    return next((c for c in state.open_claims if c.number == number), None)


def rank_exhausted(state: GameState) -> bool:
    """RULES.md ``passing=exhausted``: every copy of the required rank lies in the pile, jokers
    aside. Cards set aside by players who left count with the pile: like the pile's, they are
    out of every hand, so nobody could play the rank truly either."""
    rank = state.required
    if rank is None:
        return False
    copies = rank_copies(state.rules, len(state.players), rank)
    out_of_hands = sum(1 for c in (*state.pile, *state.set_aside) if c.rank is rank)
    return out_of_hands >= copies


def final_answerers(state: GameState) -> frozenset[int]:
    """Who must answer the pending final play (RULES.md ``final_check``)."""
    claim = state.final_claim
    if claim is None:
        return frozenset()
    if state.rules.final_check is FinalCheck.NEXT:
        return frozenset({state.next_active(claim.seat)})
    return frozenset(s for s in state.active_seats() if s != claim.seat)


def pass_voters(state: GameState) -> frozenset[int]:
    """Who votes on the open request to pass: every other active player (RULES.md
    ``passing=vote``); empty when no request is open."""
    if state.vote_by is None:
        return frozenset()
    return frozenset(s for s in state.active_seats() if s != state.vote_by)


def awaited(state: GameState) -> frozenset[int]:
    """The seats whose action the game waits for: the player to play, the voters on a request
    to pass who have not voted, or the final answerers who have not answered. Exactly one seat
    while playing with no vote open; none while a Cheat! call or a trigger's pull waits for
    the clock (``pending_deadline_ms``) and once finished."""
    if state.phase is Phase.FINISHED or state.challenges or state.pull_by is not None:
        return frozenset()
    if state.phase is Phase.FINAL_CHECK:
        return final_answerers(state) - state.accepted
    if state.vote_by is not None:
        return pass_voters(state) - set(state.votes_yes)
    return frozenset({state.turn})


def pending_deadline_ms(state: GameState) -> int | None:
    """When the clock acts on what waits for it rather than for a player: the collected
    Cheat! presses are settled (``ResolveChallenges``, ``challenge_priority=clockwise``), or
    the trigger is pulled (``PullTrigger``, ``penalty=revolver``); None when nothing waits."""
    if state.phase is Phase.FINISHED:
        return None
    if state.pull_by is not None:
        return state.pull_at_ms
    if not state.challenges:
        return None
    return state.challenges[0].at_ms + 1000 * state.rules.challenge_grace_s


def play_limit(state: GameState, seat: int) -> int:
    """How many cards ``seat`` may play now: 0 when it may not play."""
    if _turn_refusal(state, seat) is not None:
        return 0
    return state.rules.play_limit(len(state.players[seat].hand))


def claimable_ranks(state: GameState) -> tuple[Rank, ...]:
    """The ranks the player to play may claim (one when a rank is required)."""
    if state.required is not None:
        return (state.required,)
    return deck_ranks(state.rules)


def challengeable(state: GameState, seat: int) -> tuple[Claim, ...]:
    """The open claims ``seat`` may challenge now (join, while a Cheat! call is collected)."""
    now = state.challenges[0].at_ms if state.challenges else 0
    return tuple(
        claim
        for claim in state.open_claims
        if refusal(state, Challenge(seat, claim.number, now)) is None
    )


def can_accept(state: GameState, seat: int) -> bool:
    claim = state.final_claim
    return claim is not None and refusal(state, Accept(seat, claim.number)) is None


def can_pass(state: GameState, seat: int) -> bool:
    """Whether ``seat`` may pass now (under ``vote``: ask the table to let them pass)."""
    return refusal(state, Pass(seat)) is None


def can_vote(state: GameState, seat: int) -> bool:
    return refusal(state, PassVote(seat, True)) is None


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
            state = _withdraw_vote(state, events)
            state = _play(state, action, events, by_timeout=False)
        case Challenge():
            state = _reset_timeouts(state, action.seat)
            state = _withdraw_vote(state, events)
            state = _challenge(state, action, events)
        case Accept():
            state = _reset_timeouts(state, action.seat)
            state = _accept(state, action.seat, events, by_timeout=False)
        case Timeout():
            state = _timeout(state, events, action.now_ms)
        case ResolveChallenges():
            state = _resolve_pending(state, events, action.now_ms)
        case PullTrigger():
            state = _pull(state, events)
        case Pass():
            state = _reset_timeouts(state, action.seat)
            state = _ask_to_pass(state, action.seat, events)
        case PassVote():
            state = _reset_timeouts(state, action.seat)
            state = _vote(state, action.seat, action.yes, events)
        case Leave():
            state = _leave(state, action.seat, events, removed=False)
        case Stop():
            state = _finish(state, EndReason.STOPPED, events, winner=None)
    return state, events


def _replace_player(state: GameState, seat: int, **changes: object) -> GameState:
    players = list(state.players)
    players[seat] = evolve(players[seat], **changes)
    return evolve(state, players=tuple(players))


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
        case RankRule.TABLE:
            return claimed


def _new_turn(state: GameState, turn: int, **changes: Any) -> GameState:
    """A turn starts (or restarts after a challenge): no request to pass is open or refused."""
    return evolve(state, turn=turn, vote_by=None, votes_yes=(), pass_refused=False, **changes)


def _play(state: GameState, play: Play, events: list[Event], *, by_timeout: bool) -> GameState:
    player = state.players[play.seat]
    played = set(play.cards)
    hand = tuple(c for c in player.hand if c not in played)
    claim = Claim(
        number=state.plays + 1,
        seat=play.seat,
        cards=play.cards,
        rank=play.rank,
        # Under the revolver emptying a hand wins nothing: the player sits the round out.
        final=not hand and state.rules.penalty is Penalty.PILE,
    )
    state = _replace_player(state, play.seat, hand=hand)
    # Only the last play, or the last two under the extended window, may still be challenged.
    keep = 1 if state.rules.challenge_window is ChallengeWindow.LAST else 2
    open_claims = (*state.open_claims, claim)[-keep:]
    state = _new_turn(
        state,
        next_in_round(state, play.seat),
        pile=state.pile + play.cards,
        open_claims=open_claims,
        plays=claim.number,
        required=_next_required(state.rules, play.rank),
    )
    events += [CardsPlayed(claim, by_timeout=by_timeout), HandChanged(play.seat)]
    if claim.final:
        state = evolve(state, phase=Phase.FINAL_CHECK, accepted=frozenset())
        events.append(FinalPlayPending(claim, final_answerers(state)))
        return state
    if _cap_reached(state):
        return _finish_at_cap(state, events)
    if state.turn == play.seat and state.rules.penalty is Penalty.REVOLVER:
        # Nobody else holds cards and nobody could call this play (a player left): the
        # round cannot go on, and is dealt anew without a penalty.
        return _deal_round(state, play.seat, _round_random(state), events)
    events.append(TurnStarted(state.turn, state.required))
    return state


def _cap_reached(state: GameState) -> bool:
    # Under the revolver a game is bounded by its bullets, not by a count of plays.
    return (
        state.rules.move_cap > 0
        and state.rules.penalty is Penalty.PILE
        and state.plays >= state.rules.move_cap
    )


def is_lie(rules: Rules, claim: Claim) -> bool:
    """Whether a revealed play proves the claim false (RULES.md "A challenge")."""
    wild = rules.jokers is Jokers.WILD
    # RULES.md `jokers`: a wild joker never differs from the claimed rank.
    return any(
        card.rank is not claim.rank and not (wild and card.rank is Rank.JOKER)
        for card in claim.cards
    )


def _clockwise_distance(state: GameState, start: int, seat: int) -> int:
    return (seat - start) % len(state.players)


def _challenge(state: GameState, action: Challenge, events: list[Event]) -> GameState:
    claim = _open_claim(state, action.claim)
    assert claim is not None
    rules = state.rules
    if rules.challenge_priority is ChallengePriority.FIRST or rules.challenge_grace_s == 0:
        return _resolve(state, claim, action.seat, (), events, action.now_ms)
    pressed = (*state.challenges, PendingChallenge(action.seat, claim.number, action.now_ms))
    collecting = evolve(state, challenges=pressed)
    callers = tuple(pending.seat for pending in pressed)
    nearest = min(callers, key=lambda s: _clockwise_distance(state, claim.seat, s))
    first_ms = pressed[0].at_ms
    could_still_press = [
        seat
        for seat in state.active_seats()
        if seat not in callers
        and refusal(collecting, Challenge(seat, claim.number, first_ms)) is None
    ]
    if all(
        _clockwise_distance(state, claim.seat, seat)
        > _clockwise_distance(state, claim.seat, nearest)
        for seat in could_still_press
    ):
        # Nobody who could still press sits nearer the claimant: waiting out the grace period
        # could not change who challenges (RULES.md `challenge_priority`), so settle it now.
        return _resolve(
            state, claim, nearest, callers if len(callers) > 1 else (), events, action.now_ms
        )
    deadline = pending_deadline_ms(collecting)
    assert deadline is not None
    events.append(ChallengeCalled(action.seat, claim, deadline))
    return collecting


def _resolve_pending(state: GameState, events: list[Event], now_ms: int) -> GameState:
    """RULES.md `challenge_priority=clockwise`: of the callers within the grace period, the
    nearest one clockwise from the claimant challenges."""
    number = state.challenges[0].claim
    claim = _open_claim(state, number)
    assert claim is not None
    callers = tuple(pending.seat for pending in state.challenges)
    nearest = min(callers, key=lambda s: _clockwise_distance(state, claim.seat, s))
    return _resolve(state, claim, nearest, callers, events, now_ms)


def _resolve(
    state: GameState,
    claim: Claim,
    challenger: int,
    callers: tuple[int, ...],
    events: list[Event],
    now_ms: int,
) -> GameState:
    lie = is_lie(state.rules, claim)
    taker = claim.seat if lie else challenger
    if state.rules.penalty is Penalty.REVOLVER:
        # The round ends at the call: whoever was wrong pulls the trigger after the pause,
        # and the cards stay where they are until the next deal.
        state = _new_turn(
            state,
            state.turn,
            open_claims=(),
            accepted=frozenset(),
            challenges=(),
            pull_by=taker,
            pull_at_ms=now_ms + PULL_PAUSE_MS,
        )
        events.append(ChallengeResolved(challenger, claim, claim.cards, lie, taker, 0, callers))
        return state
    taken = len(state.pile)
    taker_player = state.players[taker]
    state = _replace_player(state, taker, hand=tuple(sorted(taker_player.hand + state.pile)))
    # The whole pile is gone, so no earlier claim can be challenged any more.
    state = evolve(state, pile=(), open_claims=(), accepted=frozenset(), challenges=())
    events += [
        ChallengeResolved(challenger, claim, claim.cards, lie, taker, taken, callers=callers),
        HandChanged(taker),
    ]
    if claim.final and not lie:
        # A wrong challenge of a final play: the claimant goes out and wins (RULES.md).
        return _finish(state, EndReason.WENT_OUT, events, winner=claim.seat)
    winner = challenger if lie else claim.seat
    rules = state.rules
    if rules.after_challenge is AfterChallenge.WINNER_OPENS:
        turn = winner
    elif claim.final:
        turn = state.next_active(claim.seat)
    else:
        # RULES.md `challenge_window`: a challenge never changes whose turn it is under
        # `continue`, even of the older of two open plays.
        turn = state.turn
    required = state.required
    if rules.rank_rule is RankRule.SAME:
        # Under `same` any challenge ends the round: whoever plays next names a new rank.
        required = None
    elif rules.rank_rule is RankRule.TABLE:
        # A challenge ends the round: the table draws the next round's rank.
        ranks = deck_ranks(rules)
        required = ranks[_round_random(state).randrange(len(ranks))]
        state = evolve(state, round=state.round + 1)
    # Under `ascending` the sequence goes on after a challenge, whoever opens (RULES.md; the
    # French text's classic variant: «la suite continue même après une contestation»).
    state = _new_turn(state, turn, phase=Phase.PLAYING, required=required)
    if _cap_reached(state):
        return _finish_at_cap(state, events)
    events.append(TurnStarted(state.turn, state.required))
    return state


def _accept(state: GameState, seat: int, events: list[Event], *, by_timeout: bool) -> GameState:
    claim = state.final_claim
    assert claim is not None
    state = evolve(state, accepted=state.accepted | {seat})
    events.append(FinalAccepted(seat, claim, by_timeout=by_timeout))
    if final_answerers(state) <= state.accepted:
        return _finish(state, EndReason.WENT_OUT, events, winner=claim.seat)
    return state


# --- passing (RULES.md `passing`, the Italian home variants) -----------------------------------


def _ask_to_pass(state: GameState, seat: int, events: list[Event]) -> GameState:
    if state.rules.passing is Passing.EXHAUSTED:
        return _pass(state, seat, events, by_vote=False)
    state = evolve(state, vote_by=seat, votes_yes=())
    events.append(PassRequested(seat, pass_voters(state)))
    return state


def _vote(state: GameState, seat: int, yes: bool, events: list[Event]) -> GameState:
    asker = state.vote_by
    assert asker is not None
    events.append(PassVoted(seat, yes))
    if not yes:
        # RULES.md `vote`: the pass needs every other player's consent, so one No ends it.
        events.append(PassRefused(asker, by=seat))
        return evolve(state, vote_by=None, votes_yes=(), pass_refused=True)
    state = evolve(state, votes_yes=tuple(sorted({*state.votes_yes, seat})))
    return _settle_vote(state, events)


def _settle_vote(state: GameState, events: list[Event]) -> GameState:
    """The request passes once every voter still in the game has agreed."""
    asker = state.vote_by
    if asker is None or not pass_voters(state) <= set(state.votes_yes):
        return state
    return _pass(state, asker, events, by_vote=True)


def _withdraw_vote(state: GameState, events: list[Event]) -> GameState:
    """A play by the asker, or a Cheat! call, ends an open request to pass."""
    if state.vote_by is None:
        return state
    events.append(PassRefused(state.vote_by, withdrawn=True))
    return evolve(state, vote_by=None, votes_yes=())


def _pass(state: GameState, seat: int, events: list[Event], *, by_vote: bool) -> GameState:
    """What a pass does, where RULES.md is silent (``passing``; the Italian text's home rule
    is for its ascending game), decided as those players would expect:

    - a pass is a move: the turn goes to the next player and counts towards ``move_cap``;
    - the rank moves on: under ``ascending`` the next player claims the next rank of the
      sequence, as after a play (the sequence advances once per turn, «il giocatore 2 dichiara
      2»); otherwise, with every copy in the pile, the next player would have to pass too,
      forever. Under ``same`` the round keeps its rank, unless every copy lies in the pile:
      then the round ends and the next player names a new rank (the pile stays, as nobody was
      challenged). Under ``free`` the next player names any rank, as always;
    - the pass ends the window of the open plays: the next turn has started, so under
      ``challenge_window=two`` the last play is past its window too, and under ``last`` the
      passer had their chance to call Cheat! and moved on, as with a play.
    """
    rank = state.required
    exhausted = rank_exhausted(state)
    required: Rank | None
    match state.rules.rank_rule:
        case RankRule.ASCENDING:
            required = rank.next_in_sequence() if rank is not None else None
        case RankRule.SAME:
            required = None if exhausted else rank
        case RankRule.FREE:
            required = None
        case RankRule.TABLE:
            # The table's rank holds for the round; with every copy in the pile the round
            # ends (as under `same`) and the table draws the next one.
            required = rank
            if exhausted:
                ranks = deck_ranks(state.rules)
                required = ranks[_round_random(state).randrange(len(ranks))]
                state = evolve(state, round=state.round + 1)
    state = _new_turn(
        state,
        next_in_round(state, seat),
        open_claims=(),
        plays=state.plays + 1,
        required=required,
    )
    events.append(Passed(seat, rank, by_vote=by_vote))
    if _cap_reached(state):
        return _finish_at_cap(state, events)
    events.append(TurnStarted(state.turn, state.required))
    return state


# --- the clock and leaving ----------------------------------------------------------------------


def timeout_play(state: GameState) -> Play:
    """RULES.md "Turn timer": one card, claimed as the required rank, a true one when the player
    holds one (a wild joker is true too); when the player names the rank (``free``, or opening
    a round under ``same``), a card they hold, claimed as its own rank."""
    seat = state.turn
    hand = state.players[seat].hand
    naturals = sorted(c for c in hand if c.rank is not Rank.JOKER)
    jokers = sorted(c for c in hand if c.rank is Rank.JOKER)
    wild = state.rules.jokers is Jokers.WILD
    rank = state.required
    if rank is None:
        card = naturals[0] if naturals else jokers[0]
        # A lone joker stands for any claimed rank: claim the first of the sequence.
        return Play(seat, (card,), card.rank if naturals else Rank.ACE)
    true_cards = [c for c in naturals if c.rank is rank] + (jokers if wild else [])
    card = true_cards[0] if true_cards else min(hand)
    return Play(seat, (card,), rank)


def _timeout(state: GameState, events: list[Event], now_ms: int) -> GameState:
    """RULES.md "Turn timer": the player is played for; an unanswered final play is accepted.
    A voter who lets the time run out has not agreed, so the request to pass fails."""
    if state.phase is Phase.FINAL_CHECK:
        for seat in sorted(awaited(state)):
            if state.phase is not Phase.FINAL_CHECK:
                break
            state = _accept(state, seat, events, by_timeout=True)
        return state
    if state.vote_by is not None:
        events.append(PassRefused(state.vote_by))
        return evolve(state, vote_by=None, votes_yes=(), pass_refused=True)
    seat = state.turn
    state = _replace_player(state, seat, timeouts=state.players[seat].timeouts + 1)
    if must_call(state):
        claim = state.open_claims[-1]
        state = _resolve(state, claim, seat, (), events, now_ms)
    else:
        state = _play(state, timeout_play(state), events, by_timeout=True)
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
    challenges = tuple(
        pending
        for pending in state.challenges
        if pending.seat != seat and _open_in(open_claims, pending.claim)
    )
    state = evolve(
        state,
        set_aside=state.set_aside + player.hand,
        open_claims=open_claims,
        accepted=state.accepted - {seat},
        challenges=challenges,
        votes_yes=tuple(s for s in state.votes_yes if s != seat),
    )
    events.append(PlayerLeft(seat, removed_for_timeouts=removed))
    active = state.active_seats()
    if len(active) == 1:
        return _finish(state, EndReason.LAST_PLAYER, events, winner=active[0])
    if state.rules.penalty is Penalty.REVOLVER:
        return _left_round(state, seat, events)
    if final_withdrawn:
        state = evolve(state, phase=Phase.PLAYING, accepted=frozenset())
        if _cap_reached(state):
            # The withdrawn final play was the last move the cap allows.
            return _finish_at_cap(state, events)
    if state.turn == seat:
        state = _new_turn(state, state.next_active(seat))
        if state.phase is Phase.PLAYING:
            events.append(TurnStarted(state.turn, state.required))
    elif final_withdrawn:
        events.append(TurnStarted(state.turn, state.required))
    if state.phase is Phase.FINAL_CHECK and not state.challenges:
        claim = state.final_claim
        assert claim is not None
        if final_answerers(state) <= state.accepted:
            return _finish(state, EndReason.WENT_OUT, events, winner=claim.seat)
    return _settle_vote(state, events)


def _left_round(state: GameState, seat: int, events: list[Event]) -> GameState:
    """``penalty=revolver``: the round after ``seat`` left. A pull of theirs is not made; the
    round goes on from the next player holding cards, or is dealt anew when it cannot go on
    (nobody left to play, or one player holding cards with nothing to call)."""
    if state.pull_by == seat:
        state = evolve(state, pull_by=None, pull_at_ms=0)
        return _deal_round(state, state.next_active(seat), _round_random(state), events)
    if state.pull_by is not None:
        # The pull decides who opens the next round; the turn only moves off the empty seat.
        return state if state.turn != seat else evolve(state, turn=state.next_active(seat))
    turn = state.turn if state.turn != seat else next_in_round(state, seat)
    holders = [s for s in state.active_seats() if state.players[s].hand]
    others_claims = [c for c in state.open_claims if c.seat != turn]
    if turn not in holders or (holders == [turn] and not others_claims):
        return _deal_round(state, state.next_active(seat), _round_random(state), events)
    if turn != state.turn:
        state = _new_turn(state, turn)
        events.append(TurnStarted(turn, state.required))
    return state


def _round_random(state: GameState) -> RoundRandom:
    """The draws of the next round's deal (``tgcheat.engine.deal``)."""
    return RoundRandom(state.seed, state.round + 1)


def _pull(state: GameState, events: list[Event]) -> GameState:
    """``penalty=revolver``: the trigger of the next chamber; hit, the player is out (their
    cards are gathered with the rest at the next deal). The last alive wins; else a new round
    is dealt, opened by the player who pulled, or after them if they fell."""
    seat = state.pull_by
    assert seat is not None
    player = state.players[seat]
    hit = player.pulls == player.bullet
    state = _replace_player(state, seat, pulls=player.pulls + 1)
    state = evolve(state, pull_by=None, pull_at_ms=0)
    events.append(TriggerPulled(seat, player.pulls + 1, hit))
    if hit:
        state = _replace_player(state, seat, hand=(), left=True)
        state = evolve(state, set_aside=state.set_aside + player.hand, fallen=(*state.fallen, seat))
        events.append(HandChanged(seat))
        active = state.active_seats()
        if len(active) == 1:
            return _finish(state, EndReason.LAST_ALIVE, events, winner=active[0])
    opener = seat if not hit else state.next_active(seat)
    return _deal_round(state, opener, _round_random(state), events)


def _open_in(claims: tuple[Claim, ...], number: int) -> bool:
    return any(c.number == number for c in claims)


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
    if state.rules.penalty is Penalty.REVOLVER and winner is not None:
        # The later a player fell, the better their place.
        places += [(s, 2 + i) for i, s in enumerate(reversed(state.fallen))]
    places.sort(key=lambda sp: (sp[1], sp[0]))
    result = Result(reason=reason, winner=winner, places=tuple(places))
    state = evolve(
        state,
        phase=Phase.FINISHED,
        result=result,
        open_claims=(),
        accepted=frozenset(),
        challenges=(),
        vote_by=None,
        votes_yes=(),
        pass_refused=False,
        pull_by=None,
        pull_at_ms=0,
    )
    events.append(GameEnded(result))
    return state
