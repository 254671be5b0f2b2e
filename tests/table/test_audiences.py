"""Who is shown what: which hands come back with a notification and which are edited, what
the group is told, and where Cheat!, I believe you and the pass vote are answered."""

from __future__ import annotations

from collections.abc import Sequence

from tests.engine.helpers import cards, state_with
from tgcheat.engine.actions import Action, Challenge, Leave, Pass, PassVote, Play, Stop
from tgcheat.engine.cards import Card, Rank
from tgcheat.engine.events import ChallengeResolved, Event, Passed
from tgcheat.engine.game import apply
from tgcheat.engine.rules import Challengers, FinalCheck, Passing, Rules
from tgcheat.engine.state import Claim, GameState, Phase
from tgcheat.table.audiences import (
    Audience,
    PrivateAnswers,
    TableAnswer,
    audience,
    group_messages,
    private_answers,
    table_answer,
)

A_CLUBS, A_DIAMONDS, FIVE = cards("A♣", "A♦", "5♠")


def _game(
    rules: Rules | None = None, first: Sequence[Card] = (A_CLUBS, A_DIAMONDS, FIVE)
) -> GameState:
    """Three players, Ann (seat 0) to play aces; the rest of the deck in the pile."""
    return state_with([tuple(first), cards("2♣", "7♦"), cards("3♣", "8♦")], rules=rules)


def _after(state: GameState, *actions: Action) -> tuple[GameState, list[Event]]:
    """The state after ``actions`` and the events of the last one."""
    events: list[Event] = []
    for action in actions:
        state, events = apply(state, action)
    return state, events


def _shown(state: GameState, events: Sequence[Event]) -> Audience:
    """The audience, checked against the count ``group_messages`` makes from the events."""
    shown = audience(state, events)
    # The events alone cannot say whether last cards are answered in the group: counted as
    # if they were (one request more than spent under final_check=next), never fewer.
    assert group_messages(events) >= shown.group_messages
    return shown


def _claim(state: GameState) -> Claim:
    claim = state.last_claim
    assert claim is not None
    return claim


# --- plays ---------------------------------------------------------------------------------------


def test_a_play_notifies_the_next_player_and_edits_the_players_own_hand() -> None:
    state, events = _after(_game(), Play(0, (A_CLUBS,), Rank.ACE))
    shown = _shown(state, events)
    assert shown == Audience(
        announcements=(),
        ended=False,
        final_in_group=False,
        notified=frozenset({1}),
        edited=frozenset({0}),
    )
    assert shown.hands == {0, 1}
    assert shown.group_messages == 1 and not shown.table_moves


def test_under_anyone_the_table_answers_a_play_and_so_does_the_next_players_hand() -> None:
    """``challengers=anyone``: Cheat! is a button on the table; the player to play may doubt
    from their own turn message too, and nobody else answers in private."""
    state, _ = _after(_game(), Play(0, (A_CLUBS,), Rank.ACE))
    assert table_answer(state) == TableAnswer(_claim(state), believe=False)
    assert private_answers(state, 1) == PrivateAnswers(challengeable=(_claim(state),))
    assert private_answers(state, 2) == PrivateAnswers()


def test_under_challengers_next_only_the_next_player_answers_in_private() -> None:
    """``challengers=next``: no Cheat! button on the table; the next player's hand lists the
    play they may call Cheat! on, and nobody else's does."""
    state, _ = _after(_game(Rules(challengers=Challengers.NEXT)), Play(0, (FIVE,), Rank.ACE))
    claim = _claim(state)
    assert table_answer(state) is None
    assert private_answers(state, 1).challengeable == (claim,)
    assert private_answers(state, 2).challengeable == ()
    assert private_answers(state, 0).challengeable == ()


def test_no_claim_no_table_answer() -> None:
    assert table_answer(_game()) is None


# --- last cards ----------------------------------------------------------------------------------


def test_under_final_check_next_the_final_answerer_is_notified_and_answers_in_private() -> None:
    state, events = _after(
        _game(Rules(final_check=FinalCheck.NEXT), first=(A_CLUBS,)), Play(0, (A_CLUBS,), Rank.ACE)
    )
    assert state.phase is Phase.FINAL_CHECK
    shown = _shown(state, events)
    assert (shown.notified, shown.edited) == (frozenset({1}), frozenset({0}))
    assert table_answer(state) is None
    assert private_answers(state, 1) == PrivateAnswers(final=_claim(state))
    assert private_answers(state, 2) == PrivateAnswers()


def test_under_final_check_all_last_cards_are_answered_on_the_table() -> None:
    """Everyone answers with I believe you on the table, posted anew and naming them (a
    notification): nobody is notified in private, and only the claimant's hand changes."""
    state, events = _after(_game(first=(A_CLUBS,)), Play(0, (A_CLUBS,), Rank.ACE))
    shown = _shown(state, events)
    assert (shown.notified, shown.edited) == (frozenset(), frozenset({0}))
    # A new table names those who must answer (a notification); the old one goes.
    assert shown.final_in_group and shown.table_moves and shown.group_messages == 2
    assert table_answer(state) == TableAnswer(_claim(state), believe=True)
    assert private_answers(state, 1) == PrivateAnswers()
    assert private_answers(state, 2) == PrivateAnswers()
    assert private_answers(state, 0) == PrivateAnswers()


# --- passing -------------------------------------------------------------------------------------


def test_a_request_to_pass_notifies_the_voters() -> None:
    state, events = _after(_game(Rules(passing=Passing.VOTE)), Pass(0))
    shown = _shown(state, events)
    assert (shown.notified, shown.edited) == (frozenset({1, 2}), frozenset())
    assert private_answers(state, 1).vote_for == 0
    assert private_answers(state, 2).vote_for == 0
    assert private_answers(state, 0).vote_for is None


def test_a_vote_edits_every_hand_but_those_of_players_who_left() -> None:
    """Every hand shows how the vote stands; Dan (seat 3) left and is shown nothing."""
    rules = Rules(passing=Passing.VOTE)
    start = state_with(
        [cards("A♣", "5♠"), cards("2♣", "7♦"), cards("3♣", "8♦"), cards("4♣", "9♦")],
        rules=rules,
    )
    state, events = _after(start, Leave(3), Pass(0), PassVote(1, True))
    shown = _shown(state, events)
    assert (shown.notified, shown.edited) == (frozenset(), frozenset({0, 1, 2}))


def test_a_pass_is_announced_to_the_group() -> None:
    """``passing=exhausted`` with every ace in the pile: Ann passes; the group gets a message
    of its own, every hand is edited and Bob is notified of his turn."""
    state, events = _after(_game(Rules(passing=Passing.EXHAUSTED), first=(FIVE,)), Pass(0))
    shown = _shown(state, events)
    assert [type(a) for a in shown.announcements] == [Passed]
    assert shown.group_messages == 2
    assert (shown.notified, shown.edited) == (frozenset({1}), frozenset({0, 2}))


# --- challenges and the end ----------------------------------------------------------------------


def test_a_challenge_is_announced_and_the_taker_sees_their_new_hand() -> None:
    """Ann's lie is caught by Cara: the reveal is a group message; Ann takes the pile; Bob,
    still to play, is notified."""
    state, events = _after(_game(), Play(0, (FIVE,), Rank.ACE), Challenge(2, 1))
    shown = _shown(state, events)
    assert [type(a) for a in shown.announcements] == [ChallengeResolved]
    assert shown.group_messages == 2
    assert (shown.notified, shown.edited) == (frozenset({1}), frozenset({0}))
    assert not shown.ended


def test_a_finished_game_edits_every_hand_and_notifies_nobody() -> None:
    """Those who left too: every hand message says the game is over."""
    state, events = _after(_game(), Leave(2), Stop())
    shown = _shown(state, events)
    assert shown == Audience(
        announcements=(),
        ended=True,
        final_in_group=False,
        notified=frozenset(),
        edited=frozenset({0, 1, 2}),
    )
    # The final table is posted anew at the bottom; the old table message goes.
    assert shown.group_messages == 2
    assert table_answer(state) is None


def test_a_wrong_challenge_of_last_cards_sends_the_table_the_reveal_and_the_result() -> None:
    state, events = _after(_game(first=(A_CLUBS,)), Play(0, (A_CLUBS,), Rank.ACE), Challenge(1, 1))
    assert state.phase is Phase.FINISHED
    shown = _shown(state, events)
    assert shown.ended and len(shown.announcements) == 1
    # The old table becomes the reveal, the final table is posted below it.
    assert shown.group_messages == 2
    assert shown.notified == frozenset()


def test_group_messages_counts_the_table_the_announcements_and_the_result() -> None:
    assert group_messages(()) == 1
    _, play_events = _after(_game(), Play(0, (FIVE,), Rank.ACE))
    assert group_messages(play_events) == 1
    _, stop_events = _after(_game(), Stop())
    assert group_messages(stop_events) == 2
