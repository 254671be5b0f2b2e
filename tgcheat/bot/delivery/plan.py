"""What a place's chats should show, what Telegram has confirmed they show, and the requests
that bring the one to the other: pure functions, no I/O.

A place (a group, or a forum topic) shows a few **slots** — the table in the group, each
player's hand in their private chat — each one message kept up to date in place, and **lines**:
messages of their own posted once each, in order (a reveal, a pass, a notice). ``Desired`` is
what the stored session says should be there; ``Shown`` is what Telegram confirmed; ``plan``
lists the requests, most urgent first, grouped in ``Step``s that take their budget tokens
together; ``confirmed`` folds what Telegram answered into ``Shown``. A request answered
``GONE`` (a message a person deleted) ends its step: the rest of it was planned on that
message, and the place is planned again. Running the plan again after
any failure (a 429, a timeout, a process that died) continues from what was confirmed: the same
desired state and the same shown record always give the same plan.

The request savings are rules of ``plan``, in one place:

- an edit whose content matches what is shown is not sent;
- a slot's message is sent anew only when its epoch moved (a notification is owed: the table
  moving below a reveal, a player's turn) or when it was buried or lost, else edited;
- when the table moves below new lines, its old message becomes the first of them (one edit
  instead of a deletion and a message);
- a former message that should leave is retired before its successor is posted, so a chat
  never shows two messages with a slot's buttons;
- the last few former messages that became lines are remembered (``Shown.turned``): an edit
  of the slot made by a process that lost its lease can land on one of them late, so a check
  of the messages edits them back into their lines;
- a slot posted anew only because others' messages buried it goes at its edit's priority;
- a former message whose buttons do not act on the game (a hand shown while it was not the
  player's turn, or one that only opens the Mini App) is left as it is: the player's chat
  keeps it as the story of their hands, as the group keeps its lines;
- a place's messages of another game (the last game's table with its result, its hands) are
  left as they are and forgotten (``of_this_game``): their buttons name their game, which
  refuses them;
- a hand that could not be sent (the person never started the bot, or blocked it) is not
  tried again until the person asks for it (``Shown.unreachable``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import orjson

from tgcheat.bot.views.base import View
from tgcheat.store.send_budget import Priority
from tgcheat.table.place import Place, Where

#: Where a message is: a group (a topic of it), or a person's private chat (their user id).
Chat = Where


def acts(view: View) -> bool:
    """Whether a message's buttons act on the game (their data goes out of date), rather than
    only open a link or the Mini App."""
    rows = view.markup["inline_keyboard"] if view.markup else []
    return any("callback_data" in button for row in rows for button in row)


def digest(view: View) -> str:
    """What a message shows, in a few bytes: equal views have equal digests."""
    payload = orjson.dumps([view.text, view.markup], option=orjson.OPT_SORT_KEYS)
    return hashlib.blake2b(payload, digest_size=12).hexdigest()


# --- desired ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WantedSlot:
    """One message a chat should show, kept up to date in place."""

    #: Which slot: ``"table"``, or ``"hand:<user id>"``.
    name: str
    chat: Chat
    #: A new message at each epoch (it notifies); within an epoch, edits. Epochs are
    #: compared for equality only: a new game's start from anything.
    epoch: str
    view: View
    #: The priority of posting it anew (an edit within its epoch goes at ``edit_priority``).
    priority: Priority = Priority.MUST
    edit_priority: Priority = Priority.TABLE
    #: The slot stays the chat's last message: a line posted below it moves it down.
    stays_last: bool = False
    #: Its former message, when a new one replaces it and its buttons do not act on the game,
    #: is left as it is; else it is deleted.
    keep_former: bool = False


@dataclass(frozen=True, slots=True)
class WantedLine:
    """A message of its own, posted once (a reveal, a pass, a notice)."""

    #: Its number in the session's log (``Desired.log``): lines are posted in this order,
    #: each once.
    seq: int
    chat: Chat
    view: View


@dataclass(frozen=True, slots=True)
class Desired:
    slots: tuple[WantedSlot, ...] = ()
    #: Which log the lines are numbered in (a game's): another log's numbers start again.
    log: str = ""
    #: The log's lines (those posted already are skipped by their numbers).
    lines: tuple[WantedLine, ...] = ()
    #: Only these slots are drawn (a change that can have changed nothing else, a card
    #: picked): the others are left as they are, none retired; no line is drawn.
    partial: bool = False
    #: Slots left as they are for now, neither drawn nor retired (a player who watches the
    #: game in the Mini App gets no hand edits and no turn message).
    held: frozenset[str] = frozenset()
    #: When the place is to be looked at again though nothing is left to show (ms; 0: never):
    #: the earliest time a held slot stops being held.
    again_ms: int = 0


# --- shown -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ShownSlot:
    chat: Chat
    message_id: int
    epoch: str
    digest: str
    #: A message was posted in its chat below it.
    buried: bool = False
    #: Its buttons act on the game (their data goes out of date once it is replaced).
    acts: bool = True


@dataclass(frozen=True, slots=True)
class TurnedLine:
    """A slot's former message that became line ``seq`` of ``log`` (the table moved below a
    reveal)."""

    chat: Chat
    message_id: int
    log: str
    seq: int
    #: Known to show its line; unsure after a check of the messages is asked for (a late edit
    #: of its former slot may have landed on it).
    sure: bool = True


#: How many former messages turned into lines are remembered: a late edit comes from a sync
#: whose lease ran out a few seconds ago, a move or two before.
TURNED_KEPT = 4


@dataclass(frozen=True, slots=True)
class Shown:
    """What Telegram confirmed the place's chats show."""

    slots: Mapping[str, ShownSlot] = field(default_factory=dict)
    #: The last line posted in each chat: its log, and its number there.
    last_line: Mapping[Chat, tuple[str, int]] = field(default_factory=dict)
    #: People whose hand could not be sent (the group was told): not tried again until they
    #: ask for it.
    unreachable: frozenset[int] = frozenset()
    #: How many messages others posted below the table had been counted (the store's count:
    #: a larger one buries the table).
    buried_seen: int = 0
    #: The game whose result was counted in the statistics, and what counting it brought its
    #: players (``tgcheat.table.standing.GameNews``, encoded): its result shows it.
    counted: str = ""
    news: str = ""
    #: How many checks of the messages (the store's count) were made: a larger one has
    #: every message edited again.
    recheck_seen: int = 0
    #: The last former messages that became lines, oldest first.
    turned: tuple[TurnedLine, ...] = ()
    #: Since when a budget has held back part of what the place should show (ms; 0: nothing
    #: is held back).
    held_since_ms: int = 0

    def posted_up_to(self, chat: Chat, log: str) -> int:
        """The number of the last line of ``log`` posted in ``chat`` (0: none)."""
        last = self.last_line.get(chat)
        return last[1] if last is not None and last[0] == log else 0

    def drawn_after(self, chat: Chat, log: str) -> int:
        """The number after which ``log``'s lines in ``chat`` are wanted: those not posted yet,
        and those to be edited back into former messages that became them."""
        unsure = [t.seq for t in self.turned if not t.sure and t.chat == chat and t.log == log]
        return min([self.posted_up_to(chat, log), *(seq - 1 for seq in unsure)])


# --- the requests ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OfSlot:
    """A request that shows a slot's message at ``epoch``."""

    name: str
    epoch: str


@dataclass(frozen=True, slots=True)
class OfLine:
    """A request that shows line ``seq`` of ``log``."""

    log: str
    seq: int


@dataclass(frozen=True, slots=True)
class OfTurned:
    """A request that edits a former message back into line ``seq`` of ``log``, which it
    became before (``Shown.turned``)."""

    log: str
    seq: int


Role = OfSlot | OfLine | OfTurned


@dataclass(frozen=True, slots=True)
class Send:
    chat: Chat
    view: View
    role: OfSlot | OfLine
    #: Without a notification.
    silent: bool = False


@dataclass(frozen=True, slots=True)
class EditTo:
    chat: Chat
    message_id: int
    view: View
    #: The slot's own message edited, a former message becoming a line, or one edited back
    #: into the line it became.
    role: Role


@dataclass(frozen=True, slots=True)
class Delete:
    chat: Chat
    message_ids: tuple[int, ...]


Request = Send | EditTo | Delete


@dataclass(frozen=True, slots=True)
class Step:
    """Requests made in order, whose budget tokens are taken together: refused whole or not
    at all (a table never loses its old message without its new one being paid for)."""

    requests: tuple[Request, ...]
    priority: Priority
    #: The chat whose budget pays (a group's budget counts all of its requests).
    chat: Chat

    @property
    def cost(self) -> int:
        """Its requests, as the bot's budget across all chats counts them."""
        return len(self.requests)

    @property
    def group_cost(self) -> int:
        """Its messages, as a group's budget counts them: what is sent or edited there
        (deleting a message posts nothing)."""
        return sum(1 for request in self.requests if not isinstance(request, Delete))


def plan(desired: Desired, shown: Shown) -> list[Step]:
    """The steps that bring ``shown`` to ``desired``, most urgent first: what a player must
    see to act (lines and slots posted anew), then edits, then clearing up."""
    steps: list[Step] = []
    pending = _pending_lines(desired, shown)
    slots_by_chat: dict[Chat, list[WantedSlot]] = {}
    reachable = [slot for slot in desired.slots if slot.chat not in shown.unreachable]
    for slot in reachable:
        slots_by_chat.setdefault(slot.chat, []).append(slot)
    wanted_names = {slot.name for slot in desired.slots}
    moving: list[Step] = []
    edits: list[Step] = []
    for chat in _chats(desired, shown, pending):
        lines = pending.get(chat, [])
        slots = slots_by_chat.get(chat, [])
        anew = [slot for slot in slots if _needs_new_message(slot, shown, bool(lines))]
        if lines or anew:
            moving.append(_move(chat, desired.log, lines, anew, shown))
        for slot in slots:
            if slot in anew:
                continue
            current = shown.slots.get(slot.name)
            if current is not None and current.digest != digest(slot.view):
                edit = EditTo(chat, current.message_id, slot.view, OfSlot(slot.name, slot.epoch))
                edits.append(Step((edit,), slot.edit_priority, chat))
    steps.extend(sorted(moving, key=lambda step: step.priority))
    steps.extend(sorted(edits, key=lambda step: step.priority))
    if desired.partial:
        return steps
    steps.extend(_turned_back(desired, shown))
    steps.extend(_retire_unwanted(shown, wanted_names | desired.held))
    return steps


def _chats(desired: Desired, shown: Shown, pending: Mapping[Chat, list[WantedLine]]) -> list[Chat]:
    """The place's chats, the group (the table's) first, in a stable order."""
    chats: list[Chat] = []
    for chat in [slot.chat for slot in desired.slots] + list(pending):
        if chat not in chats:
            chats.append(chat)
    return chats


def _pending_lines(desired: Desired, shown: Shown) -> dict[Chat, list[WantedLine]]:
    pending: dict[Chat, list[WantedLine]] = {}
    for line in sorted(desired.lines, key=lambda line: line.seq):
        if line.seq > shown.posted_up_to(line.chat, desired.log):
            pending.setdefault(line.chat, []).append(line)
    return pending


def _needs_new_message(slot: WantedSlot, shown: Shown, lines_below: bool) -> bool:
    current = shown.slots.get(slot.name)
    if current is None or current.epoch != slot.epoch:
        return True
    return slot.stays_last and (current.buried or lines_below)


def _move(
    chat: Chat, log: str, lines: list[WantedLine], anew: list[WantedSlot], shown: Shown
) -> Step:
    """One chat's lines and the slots posted anew below them. Each former message is retired
    first (so two messages never carry a slot's buttons): a former message of a slot
    kept last (the table) becomes the first line instead of being deleted (one request saved)."""
    requests: list[Request] = []
    rest = list(lines)
    for slot in anew:
        current = shown.slots.get(slot.name)
        if current is None or _left_as_it_is(slot, current):
            continue
        if rest and slot.stays_last:
            # Kept below every line posted, it is where the next line goes.
            line = rest.pop(0)
            requests.append(EditTo(chat, current.message_id, line.view, OfLine(log, line.seq)))
        else:
            requests.append(Delete(chat, (current.message_id,)))
    requests.extend(Send(chat, line.view, silent=True, role=OfLine(log, line.seq)) for line in rest)
    requests.extend(
        Send(chat, slot.view, silent=False, role=OfSlot(slot.name, slot.epoch)) for slot in anew
    )
    priority = min((_anew_priority(slot, shown) for slot in anew), default=Priority.MUST)
    return Step(tuple(requests), priority, chat)


def _anew_priority(slot: WantedSlot, shown: Shown) -> Priority:
    """A slot posted anew at its epoch is a notification; one posted anew only because it was
    buried shows nothing new, as an edit would."""
    current = shown.slots.get(slot.name)
    if current is not None and current.epoch == slot.epoch:
        return slot.edit_priority
    return slot.priority


#: Once a place's requests have been held back by the budgets this long, they go one priority
#: up (a later hand as a table edit, a table edit as what players must see, that as overdue:
#: ``Priority.OVERDUE``, ahead of every other game's but for answers to people's own taps);
#: after three times as long, all of them go as overdue. A bot over its budget then slows every
#: game down together, rather than starving a quiet group while busy games take every token,
#: and what waits only a little keeps its place (each step up costs the busy games' turns).
AGING_MS = 5_000


def aged(steps: Sequence[Step], held_for_ms: int) -> list[Step]:
    """``steps`` of a place whose requests were held back for ``held_for_ms``, at the
    priority that long a wait earns them."""
    if held_for_ms < AGING_MS:
        return list(steps)
    return [replace(step, priority=_aged(step.priority, held_for_ms)) for step in steps]


def _aged(priority: Priority, held_for_ms: int) -> Priority:
    if priority <= Priority.OVERDUE:
        return priority
    if held_for_ms >= 3 * AGING_MS:
        return Priority.OVERDUE
    return Priority(priority - 1)


@dataclass(frozen=True, slots=True)
class GroupAllowance:
    """What a group's budget allows of a plan now."""

    #: The steps that go now (those of other chats too), in order.
    steps: tuple[Step, ...]
    #: The group's messages they cost, and the steps that cost them.
    spent: int
    charged: tuple[Step, ...]
    #: When the steps held back may go (ms; 0: none was).
    due_ms: int


def within_group_budget(
    steps: Sequence[Step],
    *,
    tokens: float,
    debt_floor: float,
    flood_until_ms: int,
    now_ms: int,
    refill_ms: Callable[[float], int],
) -> GroupAllowance:
    """The group's budget as a rule of the plan: what players must see to act may run the
    bucket (``tokens`` now) down to ``debt_floor``; any other step needs whole tokens; nothing
    goes while Telegram's flood wait lasts. Steps of other chats are not the group's."""
    allowed: list[Step] = []
    charged: list[Step] = []
    spent, due = 0, 0

    def due_at(ms: int) -> None:
        nonlocal due
        due = ms if due == 0 else min(due, ms)

    for step in steps:
        if not (isinstance(step.chat, Place) and step.chat.chat_id < 0):
            allowed.append(step)
            continue
        if flood_until_ms > now_ms:
            due_at(flood_until_ms)
            continue
        lowest = debt_floor if step.priority <= Priority.MUST else 0.0
        cost = step.group_cost
        if tokens - cost >= lowest:
            tokens -= cost
            spent += cost
            charged.append(step)
            allowed.append(step)
        else:
            due_at(now_ms + refill_ms(lowest + cost - tokens))
    return GroupAllowance(tuple(allowed), spent, tuple(charged), due)


def of_this_game(shown: Shown, log: str) -> Shown:
    """``shown`` without the slots of another game than ``log`` (a new game's slots start
    afresh; the old messages stay as they are) and, for a new game, without those the last
    one could not reach (they are tried again)."""
    slots = {name: slot for name, slot in shown.slots.items() if log_of(slot.epoch) == log}
    turned = tuple(line for line in shown.turned if line.log == log)
    if len(slots) == len(shown.slots) and len(turned) == len(shown.turned):
        return shown
    fresh = not slots
    return replace(
        shown,
        slots=slots,
        turned=turned,
        unreachable=frozenset() if fresh else shown.unreachable,
    )


def without_chat(shown: Shown, chat: Chat) -> Shown:
    """``shown`` without what it knows of ``chat``: nothing more is shown there, nothing
    retired (the chat cannot be written to)."""
    slots = {name: slot for name, slot in shown.slots.items() if slot.chat != chat}
    return replace(shown, slots=slots)


def unsure(shown: Shown) -> Shown:
    """``shown`` without knowing what its messages show: each is edited again to what it
    should show (an older edit may have landed last)."""
    slots = {name: replace(slot, digest="") for name, slot in shown.slots.items()}
    turned = tuple(replace(line, sure=False) for line in shown.turned)
    return replace(shown, slots=slots, turned=turned)


def log_of(epoch: str) -> str:
    """The game an epoch ("<game>:<n>") is of."""
    return epoch.rpartition(":")[0]


def _turned_back(desired: Desired, shown: Shown) -> Iterable[Step]:
    """Former messages that became lines, edited back into them after a check of the messages
    was asked for (a late edit of the table may have given one the table's buttons)."""
    lines = {(line.chat, line.seq): line for line in desired.lines}
    for turned in shown.turned:
        line = lines.get((turned.chat, turned.seq))
        if turned.sure or turned.log != desired.log or line is None:
            continue
        edit = EditTo(turned.chat, turned.message_id, line.view, OfTurned(turned.log, turned.seq))
        yield Step((edit,), Priority.TABLE, turned.chat)


def _retire_unwanted(shown: Shown, wanted: set[str]) -> Iterable[Step]:
    """Slots shown that the session no longer has (a finished lobby's, a player who left):
    their messages go."""
    for name, current in sorted(shown.slots.items()):
        if name not in wanted:
            chat = current.chat
            yield Step((Delete(chat, (current.message_id,)),), Priority.LATER, chat)


# --- what Telegram confirmed -----------------------------------------------------------------


#: An edit's or a deletion's answer: the message is not there (deleted by a person, too old).
GONE = -1


def confirmed(shown: Shown, request: Request, answer: int | None) -> Shown:
    """``shown`` once Telegram answered ``request``: a sent message's id, ``None`` for an edit
    or a deletion done, ``GONE`` for a message that was not there."""
    if isinstance(request, Send):
        assert answer is not None and answer != GONE
        return _sent(shown, request, answer)
    if isinstance(request, EditTo):
        return _edited(shown, request, answer)
    gone = set(request.message_ids)
    slots = {
        name: slot
        for name, slot in shown.slots.items()
        if not (slot.chat == request.chat and slot.message_id in gone)
    }
    return replace(shown, slots=slots)


def buried(shown: Shown, chat: Chat) -> Shown:
    """``shown`` once another message was posted in ``chat`` (a reply to a command): the
    slots there are no longer its last messages."""
    slots = {
        name: replace(slot, buried=True) if slot.chat == chat else slot
        for name, slot in shown.slots.items()
    }
    return replace(shown, slots=slots)


def _sent(shown: Shown, request: Send, message_id: int) -> Shown:
    slots = dict(buried(shown, request.chat).slots)
    last_line = dict(shown.last_line)
    role = request.role
    if isinstance(role, OfLine):
        last_line[request.chat] = (role.log, role.seq)
    else:
        slots[role.name] = ShownSlot(
            request.chat, message_id, role.epoch, digest(request.view), acts=acts(request.view)
        )
    return replace(shown, slots=slots, last_line=last_line)


def _edited(shown: Shown, request: EditTo, answer: int | None) -> Shown:
    slots = dict(shown.slots)
    role = request.role
    if isinstance(role, OfSlot):
        if answer == GONE:
            slots.pop(role.name, None)
        elif role.name in slots:
            slots[role.name] = replace(
                slots[role.name], digest=digest(request.view), acts=acts(request.view)
            )
        return replace(shown, slots=slots)
    if isinstance(role, OfTurned):
        # Edited back into its line: it shows it (or is gone, and nothing is left to check).
        at = (request.chat, request.message_id)
        turned = tuple(
            replace(t, sure=True) if (t.chat, t.message_id) == at else t
            for t in shown.turned
            if answer != GONE or (t.chat, t.message_id) != at
        )
        return replace(shown, turned=turned)
    # A former message became the line: it is no longer its slot's.
    for name, slot in shown.slots.items():
        if slot.chat == request.chat and slot.message_id == request.message_id:
            del slots[name]
    if answer == GONE:
        # It was gone, and did not become the line: the line is posted on its own.
        return replace(shown, slots=slots)
    last_line = {**shown.last_line, request.chat: (role.log, role.seq)}
    turned = (*shown.turned, TurnedLine(request.chat, request.message_id, role.log, role.seq))
    return replace(shown, slots=slots, last_line=last_line, turned=turned[-TURNED_KEPT:])


def _left_as_it_is(slot: WantedSlot, current: ShownSlot | None) -> bool:
    """A former message left as it is (no request): its buttons do not act on the game."""
    return slot.keep_former and current is not None and not current.acts
