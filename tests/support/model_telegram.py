"""Telegram as the delivery plan sees it: chats of messages in the order they were sent, each
with a text and maybe buttons; a request either happens or fails having changed nothing. The
checks that must hold after every request (never two messages with buttons in one chat, a line
shown at most once) are made as each request is answered."""

from __future__ import annotations

from dataclasses import dataclass, field

from tgcheat.bot.delivery.plan import (
    GONE,
    Chat,
    Desired,
    EditTo,
    OfLine,
    Request,
    Send,
    Shown,
    confirmed,
    plan,
)
from tgcheat.bot.delivery.shown_codec import decode_shown, encode_shown
from tgcheat.bot.views.base import View, button, keyboard

#: How often one sync plans again after finding a message gone.
MAX_PLANS = 3


def live(text: str) -> View:
    """A view with a button."""
    return View(text, keyboard([[button("go", callback_data=text[:60])]]))


class Refused(Exception):
    """Telegram refused a request (a 429, a 5xx, a timeout): nothing changed."""


@dataclass
class ModelTelegram:
    #: chat -> message id -> what it shows, in the order sent (ids grow).
    chats: dict[Chat, dict[int, View]] = field(default_factory=dict)
    next_id: int = 1
    #: Whether each next request fails (consumed in order; then all go through).
    failures: list[bool] = field(default_factory=list)
    #: Each line (its log and number), each time it was shown (sent, or a message edited
    #: into it).
    lines_shown: list[tuple[str, int]] = field(default_factory=list)
    #: Messages a late edit (of a sync whose lease ran out) gave another view: Telegram's
    #: doing, not the plan's, until the plan edits them again.
    strays: set[tuple[Chat, int]] = field(default_factory=set)

    def answer(self, request: Request) -> int | None:
        if self.failures and self.failures.pop(0):
            raise Refused
        chat = self.chats.setdefault(request.chat, {})
        if isinstance(request, Send):
            message_id, self.next_id = self.next_id, self.next_id + 1
            chat[message_id] = request.view
            self._check(request)
            return message_id
        if isinstance(request, EditTo):
            if request.message_id not in chat:
                return GONE
            chat[request.message_id] = request.view
            self.strays.discard((request.chat, request.message_id))
            self._check(request)
            return None
        for message_id in request.message_ids:
            chat.pop(message_id, None)
        return None

    def _check(self, request: Send | EditTo) -> None:
        """What must hold after every request, not only in the end."""
        chat = request.chat
        with_buttons = [
            v
            for i, v in self.chats[chat].items()
            if v.markup is not None and (chat, i) not in self.strays
        ]
        assert len(with_buttons) <= 1, f"chat {chat} shows two messages with buttons"
        if isinstance(request.role, OfLine):
            line = (request.role.log, request.role.seq)
            assert line not in self.lines_shown, f"line {line} shown twice"
            self.lines_shown.append(line)

    def sync(self, desired: Desired, shown: Shown, group: Chat, group_tokens: int) -> Shown:
        """One sync as the bot runs it, ending with the shown record as the store keeps it
        (written and read back)."""
        synced = self._sync(desired, shown, group, group_tokens)
        stored = decode_shown(encode_shown(synced))
        assert stored == synced, "the shown record changed on its way through the store"
        return stored

    def _sync(self, desired: Desired, shown: Shown, group: Chat, group_tokens: int) -> Shown:
        """The plan's steps in order, each paid for whole from the group's budget when it is
        the group's; the first failure ends the sync (the rest is due); a message found gone
        ends its step, and the place is planned again."""
        for _ in range(MAX_PLANS):
            for step in plan(desired, shown):
                if step.chat == group:
                    if step.cost > group_tokens:
                        continue
                    group_tokens -= step.cost
                for request in step.requests:
                    try:
                        answer = self.answer(request)
                    except Refused:
                        return shown
                    shown = confirmed(shown, request, answer)
                    if answer == GONE:
                        break
                else:
                    continue
                break
            else:
                return shown
        return shown
