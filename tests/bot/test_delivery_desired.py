"""What a place should show, drawn from a real game played by the engine's computer players
(human seats: their user ids are positive), synced to a model of Telegram that refuses
requests at random: every reveal and pass reaches the group once and in order, the table ends
as the group's last message showing the result, each player's last hand shows their cards."""

from __future__ import annotations

import dataclasses
import functools
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.model_telegram import ModelTelegram
from tests.table.builders import dealt
from tgcheat.bot import views
from tgcheat.bot.delivery.desired import TABLE, Drawing, desired, hand_slot
from tgcheat.bot.delivery.plan import Desired, OfLine, Shown, plan
from tgcheat.engine.autoplay import next_action
from tgcheat.engine.events import ChallengeResolved, Passed
from tgcheat.engine.game import apply
from tgcheat.engine.state import Phase
from tgcheat.engine.strategies import ComputerPlayers
from tgcheat.i18n import translator
from tgcheat.table.session import Session
from tgcheat.table.told import MAX_LINES, Told, told_after

DRAWING = Drawing(bot_username="cheat_test_bot")
#: Enough for a game between three computer players to end.
STEPS = 2_000


@functools.cache
def games(seed: int) -> tuple[tuple[Session, Told, int], ...]:
    """Each stored state of one game (session, its log, how many lines it has had)."""
    session, events = dealt(players=(1, 2, 3), seed=seed)
    state = session.game
    assert state is not None
    told = told_after(Told(), session.game_id, state, events)
    session = dataclasses.replace(session, told=told)
    rng = random.Random(seed)
    players = ComputerPlayers.seat(state, ["normal"] * len(state.players))
    asked: set[tuple[int, int]] = set()
    states = [(session, told, told.count)]
    now = 0
    for _ in range(STEPS):
        if state.phase is Phase.FINISHED:
            break
        now += 1_000
        action = next_action(state, rng, now, asked, players=players)
        assert action is not None
        before = state
        state, events = apply(state, action)
        players = players.remember(before, events, state)
        told = told_after(told, session.game_id, state, events)
        session = dataclasses.replace(session, game=state, told=told)
        states.append((session, told, told.count))
    assert state.phase is Phase.FINISHED
    return tuple(states)


@settings(max_examples=25)
@given(st.integers(0, 6), st.lists(st.booleans(), max_size=60))
def test_a_whole_game_reaches_every_chat_once_whatever_fails(
    seed: int, failures: list[bool]
) -> None:
    telegram = ModelTelegram(failures=failures)
    shown = Shown()
    group = None
    wanted: Desired | None = None
    for session, _, _ in games(seed):
        group = session.place
        wanted = desired(session, DRAWING)
        shown = telegram.sync(wanted, shown, group, group_tokens=6)
    assert wanted is not None and group is not None
    telegram.failures.clear()
    for _ in range(3):
        shown = telegram.sync(wanted, shown, group, group_tokens=100)
    assert plan(wanted, shown) == []
    # Every line of the game shown once, in order (none lost while the group was behind by
    # fewer than the log keeps).
    session, _, count = games(seed)[-1]
    shown_lines = [seq for log, seq in telegram.lines_shown if log == session.game_id]
    assert shown_lines == sorted(set(shown_lines))
    assert shown_lines[-min(count, MAX_LINES) :] == list(range(1, count + 1))[-MAX_LINES:]
    table = shown.slots[TABLE]
    messages = telegram.chats[group]
    assert max(messages) == table.message_id, "the result is the group's last message"
    state = session.game
    assert state is not None and state.result is not None
    final = views.table_view(translator("en"), session, state, DRAWING.bot_username)
    assert messages[table.message_id] == final
    for player in state.players:
        hand = shown.slots[hand_slot(player.user_id)]
        private = telegram.chats[player.user_id]
        assert private[hand.message_id].text.startswith("🃏")
        # Former hands stay as the story of the player's hands, the live one last; none
        # but the live one carries buttons.
        assert max(private) == hand.message_id
        assert [i for i, view in private.items() if view.markup is not None] in (
            [],
            [hand.message_id],
        )


def test_the_log_numbers_each_reveal_and_pass_and_moves_the_table() -> None:
    states = games(3)
    announcements = 0
    previous: Told | None = None
    for _, told, count in states:
        assert count == told.count
        if previous is not None and told.count > previous.count:
            assert told.table_epoch > previous.table_epoch
            new = told.lines[-(told.count - previous.count) :]
            assert [seq for seq, _ in new] == list(range(previous.count + 1, told.count + 1))
            assert all(isinstance(event, ChallengeResolved | Passed) for _, event in new)
        announcements = told.count
        previous = told
    assert announcements > 0


def test_desired_is_drawn_from_the_session_alone() -> None:
    session, told, _ = games(5)[10]
    first = desired(session, DRAWING)
    assert desired(session, DRAWING) == first
    (table,) = [slot for slot in first.slots if slot.name == TABLE]
    assert table.stays_last and table.chat == session.place
    hands = {slot.name for slot in first.slots} - {TABLE}
    assert hands == {hand_slot(user) for user in (1, 2, 3)}
    # A reveal or a pass line is a line of the game's log, in the group.
    roles = {
        request.role
        for step in plan(first, Shown())
        for request in step.requests
        if isinstance(request.role, OfLine)
    }
    assert {role.seq for role in roles} == {seq for seq, _ in told.lines}


def test_a_player_watching_in_the_mini_app_gets_no_hand_request_until_the_report_runs_out() -> None:
    """The hand of a player whose Mini App is visible is held: neither edited nor posted anew
    (their turn), nor retired; the place is looked at again when the report runs out, and
    then the turn's message goes out as it would have."""
    states = games(3)
    first, _, _ = states[0]
    telegram = ModelTelegram()
    shown = telegram.sync(desired(first, DRAWING), Shown(), first.place, group_tokens=100)
    assert first.game is not None
    watcher = first.game.players[0].user_id
    later = next(s for s, _, _ in states[1:] if s.game and s.game.turn == 0 and s.game.plays)
    held = desired(later, DRAWING, watching={watcher: 99_000})
    assert hand_slot(watcher) in held.held and held.again_ms == 99_000
    steps = plan(held, shown)
    chats = {request.chat for step in steps for request in step.requests}
    assert watcher not in chats, "a watching player's private chat got a request"
    assert all(
        getattr(request, "message_id", None) != shown.slots[hand_slot(watcher)].message_id
        for step in steps
        for request in step.requests
    )
    # Once the page is hidden (no report), the turn is announced anew in the private chat.
    released = plan(desired(later, DRAWING), shown)
    assert any(
        request.chat == watcher and type(request).__name__ == "Send"
        for step in released
        for request in step.requests
    )
