"""What every handler shares: the store, the sender and delivery, who is asking and in which
language, whether they are an admin, and the one refusal path.

A handler is short: read the update (a ``Command`` or a press), compute the change with a pure
function of ``tgcheat.table`` inside ``store.transact``, then ``show`` it: the place is synced
(``tgcheat.bot.delivery.sync``), whatever the change was. Any
refusal — the table's (``SessionRefused``), the engine's (``ActionRefused``) or the bot's own
(``Answer``: a wrong chat, bad input; ``SelectionTooLong``: more cards picked than a button
carries) — is raised, and ``refuse`` turns it into a pop-up for a button or a reply for a
command, in the asker's language.

A reply to a command costs the one who asked (``may_reply``): about a reply a second, a few at
once, wherever they write; beyond it they get none. A reply in a group is also one of the
group's messages: it is sent only while the group's budget allows (members who repeat /rules
spend that group's budget, and the reply is dropped once it is spent; the table is then not
posted again either).
"""

from __future__ import annotations

import logging
import secrets
import string
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from random import SystemRandom
from typing import TypeVar

from telegram import ChatMember, ChatMemberRestricted, Message, Update, User
from telegram.constants import ChatID, ChatType
from telegram.error import BadRequest, Forbidden, RetryAfter
from telegram.ext import ContextTypes

from tgcheat.bot import views
from tgcheat.bot.callbacks import SelectionTooLong
from tgcheat.bot.delivery.sync import Delivery
from tgcheat.bot.sender import ChatFlooded, Sender, TopicGone, wall_clock_ms
from tgcheat.bot.taps import Tap
from tgcheat.engine.events import Event
from tgcheat.engine.game import ActionRefused
from tgcheat.i18n import N_, Translator, translator
from tgcheat.metrics import note_refused
from tgcheat.store.games import Committed, GameStore
from tgcheat.table.computers import TableRandom
from tgcheat.table.place import Place, Where
from tgcheat.table.refusals import AdminUnknown, SessionRefusal, SessionRefused
from tgcheat.table.session import Session
from tgcheat.table.transitions import Actor, end_without_group

log = logging.getLogger(__name__)

GROUP_TYPES = (ChatType.GROUP, ChatType.SUPERGROUP)
#: The accounts Telegram shows as the sender of a message written on behalf of a chat (a
#: channel, the group itself by an anonymous admin, a channel's post forwarded to its
#: discussion group): shared by everyone who writes so, they are nobody in particular.
SHARED_ACCOUNTS = frozenset({ChatID.FAKE_CHANNEL, ChatID.ANONYMOUS_ADMIN, ChatID.SERVICE_CHAT})
#: How much of a person's own (wrong) input a reply quotes back.
MAX_ECHO = 32
_GAME_ID_ALPHABET = string.ascii_lowercase + string.digits

Events = tuple[Event, ...]
T = TypeVar("T")


class Answer(Exception):
    """A request the bot answers with a message instead of doing it (sent in the wrong chat,
    bad input): ``message`` is a msgid, ``fields`` its placeholders (already HTML-safe)."""

    def __init__(self, message: str, **fields: str) -> None:
        super().__init__(message)
        self.message = message
        self.fields = fields


#: Everything a handler may raise to turn a request down.
REFUSALS = (SessionRefused, ActionRefused, Answer, SelectionTooLong)


def refusal_reason(refusal: Exception) -> str:
    """A refusal's reason as the metrics count it: a code of a bounded set."""
    if isinstance(refusal, SessionRefused | ActionRefused):
        return str(refusal.reason.value)
    if isinstance(refusal, SelectionTooLong):
        return "selection_too_long"
    return "answer"


SELECTION_TOO_LONG = N_(
    "You have picked as many cards as the buttons can hold: play them, or tap ✖️ Clear."
)
TAP_NOT_SHOWN = N_(
    "Telegram asks the bot to slow down: your tap did not show. Tap again in a moment."
)


@dataclass(frozen=True, slots=True)
class Asker:
    """Who sent a command or pressed a button, and where an answer to them goes: a pop-up for
    a press (``query_id``), else a message in ``chat_id`` (a reply in a group)."""

    user_id: int
    #: The language of their Telegram app, if Telegram tells it.
    language_code: str | None
    chat_id: int | None = None
    #: The message a reply in a group answers.
    message_id: int | None = None
    #: The forum topic the message was written in (None: no topic, or General).
    topic: int | None = None
    query_id: str | None = None
    #: The message was written on behalf of a chat (``SHARED_ACCOUNTS``): the sender is no
    #: person, and has no language but the group's.
    as_chat: bool = False


@dataclass(frozen=True, slots=True)
class Command:
    """A command message, as much of it as the handlers read."""

    update_id: int | None
    asker: Asker
    chat_id: int
    in_group: bool
    #: The group's title (empty in private).
    title: str
    #: The sender's name as others see it.
    name: str
    args: tuple[str, ...]
    #: The author of the message this command replies to, if any.
    replied_user: int | None = None
    #: The forum topic it was sent in (None: a chat without topics, or General).
    topic: int | None = None
    #: The topic's name, when the message shows it.
    topic_title: str = ""
    #: The sender's name in Telegram, without their username (what a quick game shows).
    full_name: str = ""

    @property
    def user_id(self) -> int:
        return self.asker.user_id

    @property
    def place(self) -> Place:
        """Where the command's game lives: the chat, and its topic."""
        return Place(self.chat_id, self.topic)


def command_from(update: Update, context: ContextTypes.DEFAULT_TYPE) -> Command | None:
    message, chat, user = update.effective_message, update.effective_chat, update.effective_user
    if message is None or chat is None or user is None:
        return None
    in_group = chat.type in GROUP_TYPES
    replied = message.reply_to_message
    topic, topic_title = topic_of(message) if in_group else (None, "")
    if replied is not None and replied.forum_topic_created is not None:
        # A message in a topic that replies to nothing "replies" to the topic's creation.
        replied = None
    return Command(
        update_id=update.update_id,
        asker=Asker(
            user.id,
            user.language_code,
            chat_id=chat.id,
            message_id=message.message_id if in_group else None,
            topic=topic,
            as_chat=written_as_chat(message, user),
        ),
        topic=topic,
        topic_title=topic_title,
        chat_id=chat.id,
        in_group=in_group,
        title=chat.title or "",
        name=display_name(user.full_name, user.username, user.id),
        full_name=user.full_name,
        args=tuple(context.args or ()),
        # A message written on behalf of a chat names no person to kick.
        replied_user=(
            replied.from_user.id
            if replied is not None
            and replied.from_user is not None
            and not written_as_chat(replied, replied.from_user)
            else None
        ),
    )


def topic_of(message: Message) -> tuple[int | None, str]:
    """The forum topic a message was written in, and its name when the message shows it (the
    topic's creation, which a message in a topic replies to unless it replies to another).
    A reply in a group without topics carries a thread too: only a topic message counts."""
    if not message.is_topic_message or message.message_thread_id is None:
        return None, ""
    created = message.forum_topic_created
    replied = message.reply_to_message
    if created is None and replied is not None:
        created = replied.forum_topic_created
    return message.message_thread_id, created.name if created is not None else ""


def written_as_chat(message: Message, sender: User) -> bool:
    """Whether ``message`` was written on behalf of a chat, not by ``sender`` as a person."""
    return message.sender_chat is not None or sender.id in SHARED_ACCOUNTS


def display_name(full_name: str | None, username: str | None, user_id: int) -> str:
    return full_name or username or str(user_id)


def new_game_id() -> str:
    return "".join(secrets.choice(_GAME_ID_ALPHABET) for _ in range(6))


class Shell:
    def __init__(self, store: GameStore, sender: Sender, delivery: Delivery) -> None:
        self.store = store
        self.sender = sender
        self.delivery = delivery
        #: Deals the cards (a seeded generator in tests that replay a game).
        self.rng: TableRandom = SystemRandom()
        #: The time in Unix milliseconds (tests move it to a deadline instead of waiting).
        self.clock: Callable[[], int] = wall_clock_ms

    @property
    def bot_username(self) -> str:
        return self.sender.bot.username

    # --- who asks ------------------------------------------------------------------------------

    async def is_admin(self, chat_id: int, user_id: int) -> bool:
        try:
            member = await self.sender.bot.get_chat_member(chat_id, user_id)
        except (BadRequest, Forbidden):
            # A chat we are not in (forged button data, or the bot was removed): nobody is.
            return False
        except RetryAfter as error:
            # The group's flood wait: the request is not waited for (see ChatFlooded).
            raise self.sender.flooded(chat_id, error) from error
        return member.status in (ChatMember.ADMINISTRATOR, ChatMember.OWNER)

    def menu_message(self, tap: Tap, chat_id: int) -> int:
        """The id of the menu message a press of a menu (/settings, /language) changes: the
        pressed message itself, only when it is in the chat the press's data names and really
        carries the pressed button. Anything else (a menu's data sent from a custom client on
        the group's table or lobby) is refused with a pop-up, before any request: it changes
        nothing and costs the group no message."""
        pressed = tap.pressed_message()
        if pressed is None or pressed[0] != chat_id:
            raise SessionRefused(SessionRefusal.STALE)
        return pressed[1]

    async def is_member(self, chat_id: int, user_id: int) -> bool:
        """Whether the person is in the group now (a restricted member too)."""
        try:
            member = await self.sender.bot.get_chat_member(chat_id, user_id)
        except (BadRequest, Forbidden):
            # No such chat, or one the bot is not in: nobody is a member as far as we know.
            return False
        if isinstance(member, ChatMemberRestricted):
            return member.is_member
        return member.status in (ChatMember.MEMBER, ChatMember.ADMINISTRATOR, ChatMember.OWNER)

    async def as_actor(
        self, chat_id: int, user_id: int, attempt: Callable[[Actor], Awaitable[T]]
    ) -> T:
        """``attempt`` as the person, first without knowing whether they are an admin of the
        group; asked of Telegram only when the table says it matters (``AdminUnknown``)."""
        try:
            return await attempt(Actor(user_id))
        except AdminUnknown:
            return await attempt(Actor(user_id, admin=await self.is_admin(chat_id, user_id)))

    async def language_of(self, asker: Asker) -> Translator:
        """A person's language: their /language choice, else Telegram's, else English; for a
        message written on behalf of a chat, the group's."""
        if asker.as_chat and asker.chat_id is not None:
            return await self.group_language(asker.chat_id, None)
        chosen = await self.store.settings.user_language(asker.user_id)
        return translator(chosen or asker.language_code)

    async def group_language(self, chat_id: int, fallback: str | None) -> Translator:
        return translator(await self.store.settings.group_language(chat_id) or fallback)

    # --- answers -------------------------------------------------------------------------------

    async def may_reply(self, asker: Asker) -> bool:
        """Whether a reply to the person's command may go: each person's replies are limited
        (``tgcheat.store.send_budget.ReplyBudget``), so that nobody's commands take what the
        games need of the bot's budget. Those who write as a chat share one allowance per
        group: the account Telegram shows for them is the same in every group."""
        replies = self.store.replies
        asker_id = asker.chat_id if asker.as_chat and asker.chat_id is not None else asker.user_id
        if replies is None or await replies.take(asker_id, self.clock()):
            return True
        log.info("%s asks faster than they are answered: a reply dropped", asker_id)
        return False

    async def tell(self, asker: Asker, view: views.View) -> int | None:
        """A message to whoever asked: in the chat they wrote in, as a reply in a group (and
        the live table comes back below it), while their replies and the group's budget
        allow. The message's id; None when none was sent."""
        chat_id = asker.chat_id
        if chat_id is None:
            return None
        in_group = chat_id < 0
        place = Place(chat_id, asker.topic)
        if not await self.may_reply(asker):
            return None
        if in_group and not await self.store.budget.take_for_reply(place, self.clock()):
            log.info("chat %s over its budget: a reply to %s dropped", place, asker.user_id)
            return None
        sent = await self.sender.send(place, view, reply_to=asker.message_id)
        if in_group:
            # The reply counted a message below the place's table: its sync brings it down.
            await self.delivery.sync(place)
        return sent

    async def reply(self, asker: Asker, text: str, **fields: str) -> None:
        tr = await self.language_of(asker)
        await self.tell(asker, views.page(tr, tr._(text).format(**fields)))

    async def refuse(self, asker: Asker, refusal: Exception) -> None:
        """The one refusal path: a pop-up for a press, a reply for a command, in the asker's
        language."""
        if not isinstance(refusal, REFUSALS):
            raise refusal
        note_refused(refusal_reason(refusal))
        tr = await self.language_of(asker)
        if isinstance(refusal, Answer):
            text = tr._(refusal.message).format(**refusal.fields)
        elif isinstance(refusal, SelectionTooLong):
            text = tr._(SELECTION_TOO_LONG)
        else:
            assert isinstance(refusal, SessionRefused | ActionRefused)
            text = views.refusal_text(tr, refusal.reason)
        if asker.query_id is not None:
            await self.sender.answer(asker.query_id, text)
        else:
            await self.tell(asker, views.page(tr, text))

    async def held_back(self, flooded: ChatFlooded, asker: Asker | None = None) -> None:
        """A flood wait met on the way (``ChatFlooded``): not a failure. When it kept a press's
        own message from changing (a card picked, a menu), a pop-up says to tap again."""
        log.info("chat %s in a flood wait until %s", flooded.chat_id, flooded.until_ms)
        if asker is not None and asker.query_id is not None and asker.chat_id == flooded.chat_id:
            tr = await self.language_of(asker)
            await self.sender.answer(asker.query_id, tr._(TAP_NOT_SHOWN))

    # --- showing what was committed ------------------------------------------------------------

    async def show(
        self,
        place: Place,
        committed: Committed[T] | None = None,
        *,
        answering: int | None = None,
        only_hand: bool = False,
        reach: int | None = None,
    ) -> frozenset[Where]:
        """Show the place's stored session: a committed change (whose compare-and-set took the
        place's lease), a re-delivered update's (nothing committed: only synced), anything.
        The chats a flood wait held requests back in."""
        if committed is not None and committed.duplicate:
            committed = None
        return await self.delivery.sync(
            place,
            committed,  # type: ignore[arg-type]
            answering=answering,
            only_hand=only_hand,
            reach=reach,
        )

    async def end_game_at(self, place: Place) -> None:
        """The game at ``place`` ends without its group (the bot was removed, or the topic
        was closed or deleted): no winner, no deadline left; the players learn it in private
        (the group's part of the sync fails there, which is expected)."""
        committed = await self.store.transact(place, end_without_group, lease=True)
        if committed.changed:
            await self.show(place, committed)

    async def end_topic(self, place: Place) -> None:
        """A forum topic closed or deleted: its game ends (``end_game_at``) and nothing of it
        is kept or retried (a reopened topic starts afresh with /new)."""
        try:
            await self.end_game_at(place)
        except TopicGone:
            log.info("topic %s gone while its game ended", place)
        finally:
            await self.store.forget_place(place)

    async def ping_signed_up(self, session: Session) -> None:
        """Those who asked (/notify) hear in private that the group's next game is open, with
        its Join link: once each, then they are signed off."""
        lobby = session.lobby
        if lobby is None:
            return
        for user_id in await self.store.pings.take(session.chat_id):
            if lobby.has(user_id) or user_id == session.creator:
                continue
            language = await self.store.settings.user_language(user_id) or session.language
            view = views.ping_view(translator(language), session, self.bot_username)
            try:
                await self.sender.send(user_id, view)
            except ChatFlooded:
                log.info("private chat %s in a flood wait: a next-game ping dropped", user_id)
