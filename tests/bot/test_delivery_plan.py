"""The delivery plan against a model of Telegram: whatever fails on the way (a request
refused, a group out of budget), syncing again converges to what the session wants shown; no
chat ever shows two messages with a slot's buttons; every line is posted once, in order.

The model is Telegram as the plan sees it: chats of messages in the order they were sent,
each with a text and maybe buttons; a request either happens or fails having changed nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from hypothesis import given
from hypothesis import strategies as st

from tests.support.model_telegram import ModelTelegram, live
from tgcheat.bot.delivery.plan import (
    Delete,
    Desired,
    EditTo,
    OfLine,
    Send,
    Shown,
    WantedLine,
    WantedSlot,
    buried,
    digest,
    plan,
    unsure,
)
from tgcheat.bot.views.base import View
from tgcheat.store.send_budget import Priority

GROUP = -1001
PLAYERS = (11, 12, 13)


# --- a game's desired states -----------------------------------------------------------------


@dataclass(frozen=True)
class Move:
    """What one change of the session does to what should be shown."""

    table_moves: bool
    lines: int
    table_text: int
    hands_anew: frozenset[int]
    hands_edited: frozenset[int]
    notices: frozenset[int]
    #: Another bot message in the group after it (a reply to a command).
    reply: bool = False
    #: A person deleted the table message (Telegram does not tell the bot).
    table_deleted: bool = False
    #: A table edit of a sync whose lease ran out landed late, on the message that had become
    #: the last line (and that sync asked for a check of the messages).
    late_edit: bool = False


moves = st.builds(
    Move,
    table_moves=st.booleans(),
    lines=st.integers(0, 3),
    table_text=st.integers(0, 3),
    hands_anew=st.frozensets(st.sampled_from(PLAYERS), max_size=2),
    hands_edited=st.frozensets(st.sampled_from(PLAYERS)),
    notices=st.frozensets(st.sampled_from(PLAYERS), max_size=1),
    reply=st.booleans(),
    table_deleted=st.booleans(),
    late_edit=st.booleans(),
)


@dataclass
class Game:
    """The session's side: a log of lines and the epochs, moved by each ``Move``."""

    seq: int = 0
    lines: list[WantedLine] = field(default_factory=list)
    table_epoch: int = 1
    table_version: int = 0
    hand_epochs: dict[int, int] = field(default_factory=lambda: dict.fromkeys(PLAYERS, 1))
    hand_versions: dict[int, int] = field(default_factory=lambda: dict.fromkeys(PLAYERS, 0))
    over: bool = False

    def apply(self, move: Move) -> None:
        for _ in range(move.lines):
            self._line(GROUP)
        for user in sorted(move.notices):
            self._line(user)
        if move.table_moves:
            self.table_epoch += 1
        self.table_version += move.table_text
        for user in move.hands_anew:
            self.hand_epochs[user] += 1
        for user in move.hands_anew | move.hands_edited:
            self.hand_versions[user] += 1

    def finish(self) -> None:
        """The result is posted anew below everything."""
        self.over = True
        self.table_epoch += 1

    def _line(self, chat: int) -> None:
        self.seq += 1
        self.lines.append(WantedLine(self.seq, chat, View(f"line {self.seq}")))

    def desired(self) -> Desired:
        table = WantedSlot(
            "table",
            GROUP,
            str(self.table_epoch),
            live(f"table {self.table_epoch}.{self.table_version}"),
            stays_last=True,
        )
        hands = tuple(
            WantedSlot(
                f"hand:{user}",
                user,
                str(self.hand_epochs[user]),
                # A hand's buttons act on the game at even epochs only (its owner's turn, as
                # it were): a former hand that acts is deleted, one that does not is kept.
                (View if self.hand_epochs[user] % 2 else live)(
                    f"hand {user} {self.hand_epochs[user]}.{self.hand_versions[user]}"
                ),
                edit_priority=Priority.LATER,
                keep_former=True,
            )
            for user in PLAYERS
        )
        return Desired((table, *hands), "game", tuple(self.lines))


def outside_the_plan(move: Move, shown: Shown, telegram: ModelTelegram) -> Shown:
    """What happens to the chats besides the plan's requests."""
    group = telegram.chats.setdefault(GROUP, {})
    if move.table_deleted and "table" in shown.slots:
        group.pop(shown.slots["table"].message_id, None)
    if move.reply:
        group[telegram.next_id] = View("a reply to a command")
        telegram.next_id += 1
        shown = buried(shown, GROUP)
    if move.late_edit and shown.turned:
        former = shown.turned[-1]
        telegram.chats[former.chat][former.message_id] = live("table 0.0")
        telegram.strays.add((former.chat, former.message_id))
        shown = unsure(shown)
    return shown


def check_converged(desired: Desired, shown: Shown, telegram: ModelTelegram) -> None:
    assert plan(desired, shown) == [], "a converged place plans nothing more"
    for slot in desired.slots:
        current = shown.slots[slot.name]
        messages = telegram.chats[slot.chat]
        assert messages[current.message_id] == slot.view
        assert current.epoch == slot.epoch
        if slot.stays_last:
            assert max(messages) == current.message_id, f"{slot.name} is not the last message"
    for chat, messages in telegram.chats.items():
        lines = [int(v.text.split()[1]) for v in messages.values() if v.text.startswith("line ")]
        wanted = [line.seq for line in desired.lines if line.chat == chat]
        assert lines == wanted, f"chat {chat}: lines {lines}, wanted {wanted}"
        with_buttons = [i for i, v in messages.items() if v.markup is not None]
        live_ids = {s.message_id for s in shown.slots.values() if s.chat == chat}
        assert set(with_buttons) <= live_ids


@given(
    st.lists(moves, min_size=1, max_size=8),
    st.lists(st.booleans(), max_size=40),
    st.lists(st.integers(0, 5), min_size=1, max_size=8),
)
def test_a_place_converges_whatever_fails_on_the_way(
    game_moves: list[Move], failures: list[bool], budgets: list[int]
) -> None:
    game = Game()
    telegram = ModelTelegram(failures=list(failures))
    shown = Shown()
    shown = telegram.sync(game.desired(), shown, GROUP, group_tokens=budgets[0])
    for index, move in enumerate(game_moves):
        game.apply(move)
        shown = outside_the_plan(move, shown, telegram)
        tokens = budgets[index % len(budgets)]
        shown = telegram.sync(game.desired(), shown, GROUP, group_tokens=tokens)
    game.finish()
    telegram.failures.clear()
    desired = game.desired()
    # Failures over and the budget back: a few syncs bring the place to what is wanted.
    for _ in range(3):
        shown = telegram.sync(desired, shown, GROUP, group_tokens=100)
    check_converged(desired, shown, telegram)


@given(st.lists(moves, min_size=1, max_size=8))
def test_without_failures_each_change_is_shown_by_one_sync(game_moves: list[Move]) -> None:
    game = Game()
    telegram = ModelTelegram()
    shown = telegram.sync(game.desired(), Shown(), GROUP, group_tokens=100)
    for move in game_moves:
        game.apply(move)
        # A table deleted by a person is noticed at its next edit or move: not checked here.
        shown = outside_the_plan(replace(move, table_deleted=False), shown, telegram)
        shown = telegram.sync(game.desired(), shown, GROUP, group_tokens=100)
        check_converged(game.desired(), shown, telegram)


def test_a_reveal_moves_the_table_down_in_two_requests() -> None:
    """The old table becomes the reveal's line (an edit), and the table is posted below it:
    the group is notified once, and no request is spent deleting."""
    game = Game()
    telegram = ModelTelegram()
    shown = telegram.sync(game.desired(), Shown(), GROUP, group_tokens=100)
    old_table = shown.slots["table"].message_id
    game.apply(Move(True, 1, 1, frozenset(), frozenset(), frozenset()))
    steps = plan(game.desired(), shown)
    assert [step.chat for step in steps] == [GROUP]
    (step,) = steps
    assert step.priority is Priority.MUST
    edit, post = step.requests
    assert isinstance(edit, EditTo) and edit.message_id == old_table
    assert edit.role == OfLine("game", 1) and edit.view == View("line 1")
    assert isinstance(post, Send) and not post.silent and post.view.text == "table 2.1"


def test_an_unchanged_edit_is_not_sent() -> None:
    game = Game()
    telegram = ModelTelegram()
    desired = game.desired()
    shown = telegram.sync(desired, Shown(), GROUP, group_tokens=100)
    assert plan(desired, shown) == []
    changed = replace(
        desired, slots=(replace(desired.slots[0], view=live("table 1.1")), *desired.slots[1:])
    )
    (step,) = plan(changed, shown)
    assert step.priority is Priority.TABLE
    assert step.requests == (
        EditTo(GROUP, shown.slots["table"].message_id, live("table 1.1"), step.requests[0].role),
    )


def test_a_former_hand_without_acting_buttons_is_left_as_it_is_even_at_the_end() -> None:
    """A hand replaced by a new one whose buttons did not act stays in the player's chat,
    the story of their hands: no request retires it, then or when the game ends."""
    game = Game()
    telegram = ModelTelegram()
    shown = telegram.sync(game.desired(), Shown(), GROUP, group_tokens=100)
    first = shown.slots["hand:11"].message_id
    game.apply(Move(False, 0, 0, frozenset({11}), frozenset(), frozenset()))
    shown = telegram.sync(game.desired(), shown, GROUP, group_tokens=100)
    assert shown.slots["hand:11"].message_id != first
    assert first in telegram.chats[11]
    game.finish()
    steps = plan(game.desired(), shown)
    assert not any(
        isinstance(request, Delete) and request.chat == 11
        for step in steps
        for request in step.requests
    )


def test_digest_tells_views_apart() -> None:
    assert digest(live("a")) == digest(live("a"))
    assert digest(live("a")) != digest(View("a"))
    assert digest(View("a")) != digest(View("b"))


def test_the_groups_budget_lets_what_players_must_see_run_into_debt_and_edits_wait() -> None:
    from tgcheat.bot.delivery.plan import Step, within_group_budget
    from tgcheat.table.place import Place

    group = Place(GROUP)
    move = Step(
        (Send(group, View("a reveal"), OfLine("g", 1)), Delete(group, (5,))), Priority.MUST, group
    )
    edit = Step((EditTo(group, 7, View("table"), OfLine("g", 2)),), Priority.TABLE, group)
    hand = Step((Send(11, View("hand"), OfLine("g", 3)),), Priority.LATER, 11)
    allowance = within_group_budget(
        [move, edit, hand],
        tokens=0.5,
        debt_floor=-4.0,
        flood_until_ms=0,
        now_ms=1_000,
        refill_ms=lambda missing: int(missing * 3_000),
    )
    # The reveal goes into debt (a deletion costs the group nothing); the edit waits for the
    # token it needs; the private chat's step is not the group's.
    assert allowance.steps == (move, hand) and allowance.charged == (move,)
    assert allowance.spent == 1
    assert allowance.due_ms == 1_000 + int(1.5 * 3_000)
    flooded = within_group_budget(
        [move, hand],
        tokens=4.0,
        debt_floor=-4.0,
        flood_until_ms=9_000,
        now_ms=1_000,
        refill_ms=lambda missing: 0,
    )
    assert flooded.steps == (hand,) and flooded.spent == 0 and flooded.due_ms == 9_000


def test_steps_held_back_long_go_a_priority_up_then_all_overdue() -> None:
    from tgcheat.bot.delivery.plan import AGING_MS, Step, aged

    steps = [
        Step((Delete(GROUP, (1,)),), Priority.LATER, GROUP),
        Step((EditTo(GROUP, 2, View("t"), OfLine("g", 1)),), Priority.TABLE, GROUP),
        Step((Send(GROUP, View("r"), OfLine("g", 2)),), Priority.MUST, GROUP),
        Step((Send(11, View("h"), OfLine("g", 3)),), Priority.ALWAYS, 11),
    ]
    assert aged(steps, AGING_MS - 1) == steps
    by_wait = {
        wait: [step.priority for step in aged(steps, wait)] for wait in range(0, 60_000, 500)
    }
    once = [Priority.TABLE, Priority.MUST, Priority.OVERDUE, Priority.ALWAYS]
    assert all(by_wait[w] == once for w in by_wait if AGING_MS <= w < 3 * AGING_MS)
    overdue = [Priority.OVERDUE] * 3 + [Priority.ALWAYS]
    assert all(by_wait[w] == overdue for w in by_wait if w >= 3 * AGING_MS)
    assert [s.requests for s in aged(steps, 3 * AGING_MS)] == [s.requests for s in steps]
