"""Telegram handlers: parse → action → ``store.transact`` → render → send.

No game rule lives here: the engine decides, the views render, the sender delivers.
"""

from __future__ import annotations

import contextlib
import dataclasses
import html
import logging
import secrets
import string
from collections.abc import Callable
from random import SystemRandom

from telegram import (
    CallbackQuery,
    ChatMember,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Update,
    User,
)
from telegram.constants import ChatType, ParseMode
from telegram.ext import ContextTypes

from tgcheat.bot import views
from tgcheat.bot.callbacks import BadCallback, Op, Press, parse
from tgcheat.bot.publish import Publisher
from tgcheat.bot.sender import Sender
from tgcheat.engine.actions import Accept, Action, Challenge, Leave, Play, Stop
from tgcheat.engine.cards import pick_by_rank
from tgcheat.engine.events import Event
from tgcheat.engine.game import ActionRefused, Refusal, apply, new_game, play_limit, random_seating
from tgcheat.engine.lobby import Lobby, join, leave
from tgcheat.engine.rules import DEFAULT_PRESET, PRESETS
from tgcheat.engine.state import GameState, Phase
from tgcheat.i18n import N_, Translator, translator
from tgcheat.store.games import Committed, GameStore
from tgcheat.store.session import Session

log = logging.getLogger(__name__)

GROUP_TYPES = (ChatType.GROUP, ChatType.SUPERGROUP)
_GAME_ID_ALPHABET = string.ascii_lowercase + string.digits


class Refused(Exception):
    """A request the bot turns down before the engine is asked; ``message`` is a msgid."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


STALE = N_("This button is out of date.")
NO_GAME = N_("There is no game here. Send /new to open one.")
NOT_ALLOWED = N_("Only whoever opened the game, or a group admin, can do that.")


def new_game_id() -> str:
    return "".join(secrets.choice(_GAME_ID_ALPHABET) for _ in range(6))


def display_name(user: User) -> str:
    return user.full_name or user.username or str(user.id)


class Handlers:
    def __init__(self, store: GameStore, sender: Sender, publisher: Publisher) -> None:
        self.store = store
        self.sender = sender
        self.publisher = publisher
        self.rng = SystemRandom()

    # --- helpers ---------------------------------------------------------------------------

    @property
    def bot_username(self) -> str:
        return self.sender.bot.username

    async def _is_admin(self, chat_id: int, user_id: int) -> bool:
        member = await self.sender.bot.get_chat_member(chat_id, user_id)
        return member.status in (ChatMember.ADMINISTRATOR, ChatMember.OWNER)

    async def _may_manage(self, session: Session, user_id: int) -> bool:
        return user_id == session.creator or await self._is_admin(session.chat_id, user_id)

    async def _reply(self, update: Update, tr: Translator, text: str, **fmt: str) -> None:
        message = update.effective_message
        if message is None:
            return
        await message.reply_text(
            tr._(text).format(**fmt),
            parse_mode=ParseMode.HTML,
            do_quote=message.chat.type in GROUP_TYPES,
        )

    @staticmethod
    def _group_tr(update: Update, session: Session | None) -> Translator:
        if session is not None:
            return translator(session.language)
        user = update.effective_user
        return translator(user.language_code if user else None)

    # --- commands ---------------------------------------------------------------------------

    async def new(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        chat, user = update.effective_chat, update.effective_user
        if chat is None or user is None:
            return
        tr = translator(user.language_code)
        if chat.type not in GROUP_TYPES:
            await self._reply(update, tr, N_("Send /new in the group where you want to play."))
            return
        game_id = new_game_id()
        preset = PRESETS[DEFAULT_PRESET]

        def open_lobby(session: Session | None) -> tuple[Session | None, None]:
            if session is not None and _in_progress(session):
                raise Refused(N_("A game is already open here. /stop ends it."))
            return Session(
                chat_id=chat.id,
                game_id=game_id,
                creator=user.id,
                lobby=Lobby(creator=user.id, rules=preset),
                title=chat.title or "",
                language=tr.language,
            ), None

        try:
            committed = await self.store.transact(chat.id, open_lobby, update_id=update.update_id)
        except Refused as refused:
            await self._reply(update, tr, refused.message)
            return
        if committed.changed and committed.session is not None:
            await self.publisher.post_lobby(committed.session, committed.messages)

    async def start(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """/start: in the private chat, with a deep-link payload (join a game, show my cards)."""
        chat, user = update.effective_chat, update.effective_user
        if chat is None or user is None:
            return
        tr = translator(user.language_code)
        if chat.type != ChatType.PRIVATE:
            await self.help(update, context)
            return
        payload = context.args[0] if context.args else ""
        target = _chat_from_payload(payload[1:]) if payload[:1] in ("j", "h") else None
        if target is None:
            await self._reply(update, tr, HELP_TEXT)
            return
        if payload[0] == "j":
            await self._join(update, target, user, tr, via_private=True)
        else:
            await self._show_hand(update, target, user, tr)

    async def help(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        user = update.effective_user
        await self._reply(update, translator(user.language_code if user else None), HELP_TEXT)

    async def join_command(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        chat, user = update.effective_chat, update.effective_user
        if chat is None or user is None:
            return
        tr = translator(user.language_code)
        if chat.type not in GROUP_TYPES:
            await self._reply(update, tr, N_("Tap Join on the game's message in your group."))
            return
        await self._join(update, chat.id, user, tr, via_private=False)

    async def _join(
        self, update: Update, chat_id: int, user: User, tr: Translator, *, via_private: bool
    ) -> None:
        name = display_name(user)

        def add_player(session: Session | None) -> tuple[Session | None, None]:
            lobby = _open_lobby(session)
            assert session is not None
            return dataclasses.replace(
                session,
                lobby=join(lobby, user.id, name),
                player_languages=(*session.player_languages, (user.id, tr.language)),
            ), None

        try:
            committed = await self.store.transact(chat_id, add_player, update_id=update.update_id)
        except Refused as refused:
            await self._reply(update, tr, refused.message)
            return
        except ActionRefused as refused:
            await self._reply(update, tr, views.REFUSALS[refused.reason])
            return
        session = committed.session
        if session is None or not committed.changed:
            return
        confirmation = views.View(
            tr._("✅ You joined the game in {group}. Your cards will arrive here.").format(
                group=f"<b>{html.escape(session.title)}</b>"
            )
        )
        if via_private:
            await self.sender.send(user.id, confirmation)
        elif await self.sender.send(user.id, confirmation) is None:
            # The bot may message only people who started it: undo, and show them the way.
            await self._unjoin(chat_id, user.id)
            await self._tell_to_start_bot(update, session, user)
            return
        await self.publisher.refresh_lobby(chat_id)

    async def _unjoin(self, chat_id: int, user_id: int) -> None:
        def remove_player(session: Session | None) -> tuple[Session | None, None]:
            lobby = _open_lobby(session)
            assert session is not None
            return dataclasses.replace(session, lobby=leave(lobby, user_id)), None

        with contextlib.suppress(Refused, ActionRefused):
            await self.store.transact(chat_id, remove_player)

    async def _tell_to_start_bot(self, update: Update, session: Session, user: User) -> None:
        tr = translator(session.language)
        message = update.effective_message
        if message is None:
            return
        link = views.deep_link(self.bot_username, views.join_payload(session.chat_id))
        await message.reply_text(
            tr._(
                "{name}, I can't send you your cards yet: tap the button, press "
                "<b>Start</b> in our private chat, and you are in."
            ).format(name=views.name_html(display_name(user))),
            parse_mode=ParseMode.HTML,
            reply_markup=InlineKeyboardMarkup(
                [[InlineKeyboardButton(tr._("🔓 Open the chat with me"), url=link)]]
            ),
        )

    async def _show_hand(self, update: Update, chat_id: int, user: User, tr: Translator) -> None:
        session, messages = await self.store.load(chat_id)
        game = session.game if session is not None else None
        if session is None or game is None or game.seat_of(user.id) is None:
            await self._reply(update, tr, N_("You are not playing in a game there."))
            return
        await self.publisher.repost_hand(session, game, user.id, messages)

    async def leave_command(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        chat, user = update.effective_chat, update.effective_user
        if chat is None or user is None:
            return
        tr = translator(user.language_code)
        if chat.type not in GROUP_TYPES:
            await self._reply(update, tr, N_("Send /leave in the group of the game."))
            return
        session, _ = await self.store.load(chat.id)
        if session is not None and session.lobby is not None:
            await self._unjoin_reply(update, chat.id, user, tr)
            return
        await self._game_action(update, chat.id, None, lambda s, g: Leave(_seat(g, user.id)), tr=tr)

    async def _unjoin_reply(self, update: Update, chat_id: int, user: User, tr: Translator) -> None:
        def remove_player(session: Session | None) -> tuple[Session | None, None]:
            lobby = _open_lobby(session)
            assert session is not None
            return dataclasses.replace(session, lobby=leave(lobby, user.id)), None

        try:
            await self.store.transact(chat_id, remove_player, update_id=update.update_id)
        except Refused as refused:
            await self._reply(update, tr, refused.message)
            return
        except ActionRefused as refused:
            await self._reply(update, tr, views.REFUSALS[refused.reason])
            return
        await self.publisher.refresh_lobby(chat_id)

    async def stop(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        chat, user = update.effective_chat, update.effective_user
        if chat is None or user is None:
            return
        tr = translator(user.language_code)
        if chat.type not in GROUP_TYPES:
            await self._reply(update, tr, N_("Send /stop in the group of the game."))
            return
        session, _ = await self.store.load(chat.id)
        if session is None or not _in_progress(session):
            await self._reply(update, tr, NO_GAME)
            return
        if not await self._may_manage(session, user.id):
            await self._reply(update, tr, NOT_ALLOWED)
            return
        if session.lobby is not None:
            await self._cancel_lobby(update, session, tr)
            return
        await self._game_action(update, chat.id, session.game_id, lambda s, g: Stop(), tr=tr)

    # --- buttons ----------------------------------------------------------------------------

    async def button(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        if query is None:
            return
        tr = translator(query.from_user.language_code)
        try:
            press = parse(query.data)
        except BadCallback:
            await self.sender.answer(query, tr._("This button is not valid."))
            return
        try:
            await self._dispatch(update, query, press, tr)
        except Refused as refused:
            await self.sender.answer(query, tr._(refused.message))
        except ActionRefused as refused:
            await self.sender.answer(query, views.refusal_text(tr, refused.reason))

    async def _dispatch(
        self, update: Update, query: CallbackQuery, press: Press, tr: Translator
    ) -> None:
        user_id = query.from_user.id
        match press.op:
            case Op.START:
                await self._start_game(update, query, press, tr)
            case Op.CANCEL:
                session, _ = await self.store.load(press.chat_id)
                if session is None or session.game_id != press.game_id or session.lobby is None:
                    raise Refused(STALE)
                if not await self._may_manage(session, user_id):
                    raise Refused(NOT_ALLOWED)
                await self._cancel_lobby(update, session, tr, query=query)
            case Op.CHALLENGE:
                await self._game_action(
                    update,
                    press.chat_id,
                    press.game_id,
                    lambda s, g: Challenge(_seat(g, user_id), press.number),
                    tr=tr,
                    query=query,
                )
            case Op.ACCEPT:
                await self._game_action(
                    update,
                    press.chat_id,
                    press.game_id,
                    lambda s, g: Accept(_seat(g, user_id), press.number),
                    tr=tr,
                    query=query,
                    answer=N_("You believe it."),
                )
            case Op.PICK | Op.CLEAR:
                await self._pick(query, press, tr)
            case Op.PLAY:
                await self._game_action(
                    update,
                    press.chat_id,
                    press.game_id,
                    lambda s, g: _play_from_press(g, user_id, press),
                    tr=tr,
                    query=query,
                )

    async def _start_game(
        self, update: Update, query: CallbackQuery, press: Press, tr: Translator
    ) -> None:
        session, _ = await self.store.load(press.chat_id)
        if session is None or session.game_id != press.game_id or session.lobby is None:
            raise Refused(STALE)
        if not await self._may_manage(session, query.from_user.id):
            raise Refused(NOT_ALLOWED)

        def deal(current: Session | None) -> tuple[Session | None, tuple[Event, ...]]:
            lobby = _open_lobby(current, press.game_id)
            assert current is not None
            if (reason := lobby.start_refusal()) is not None:
                raise ActionRefused(reason)
            seating = random_seating(lobby.players, self.rng)
            state, events = new_game(lobby.rules, seating, self.rng)
            return dataclasses.replace(current, lobby=None, game=state), tuple(events)

        committed = await self.store.transact(press.chat_id, deal, update_id=update.update_id)
        await self.sender.answer(query)
        await self._publish(committed, first_deal=True)

    async def _cancel_lobby(
        self,
        update: Update,
        session: Session,
        tr: Translator,
        query: CallbackQuery | None = None,
    ) -> None:
        def close(current: Session | None) -> tuple[Session | None, None]:
            _open_lobby(current, session.game_id)
            assert current is not None
            return dataclasses.replace(current, lobby=None, game=None), None

        committed = await self.store.transact(session.chat_id, close, update_id=update.update_id)
        if query is not None:
            await self.sender.answer(query)
        if committed.changed:
            await self.publisher.close_lobby(session, committed.messages)

    async def _pick(self, query: CallbackQuery, press: Press, tr: Translator) -> None:
        """Picking cards changes nothing stored: the selection travels in the buttons."""
        session, _ = await self.store.load(press.chat_id)
        game = _current_game(session, press.game_id)
        assert session is not None
        seat = _seat(game, query.from_user.id)
        if game.plays != press.number or play_limit(game, seat) == 0:
            raise Refused(STALE)
        selection = ""
        if press.op is Op.PICK and press.rank is not None:
            selected = press.selected()
            selected[press.rank] += 1
            held = sum(1 for card in game.players[seat].hand if card.rank is press.rank)
            if selected[press.rank] > held:
                raise Refused(N_("You have no more cards of that rank."))
            if sum(selected.values()) > play_limit(game, seat):
                raise ActionRefused(Refusal.BAD_CARD_COUNT)
            selection = "".join(rank.code for rank in sorted(selected.elements()))
        await self.sender.answer(query)
        view = views.hand_view(tr, session, game, seat, session.title, selection)
        message = query.message
        if message is not None:
            await self.sender.edit(message.chat.id, message.message_id, view)

    async def _game_action(
        self,
        update: Update,
        chat_id: int,
        game_id: str | None,
        make_action: Callable[[Session, GameState], Action],
        *,
        tr: Translator,
        query: CallbackQuery | None = None,
        answer: str | None = None,
    ) -> None:
        def act(session: Session | None) -> tuple[Session | None, tuple[Event, ...]]:
            game = _current_game(session, game_id)
            assert session is not None
            state, events = apply(game, make_action(session, game))
            return dataclasses.replace(session, game=state), tuple(events)

        try:
            committed = await self.store.transact(chat_id, act, update_id=update.update_id)
        except (Refused, ActionRefused) as refused:
            if query is not None:
                raise
            text = (
                refused.message if isinstance(refused, Refused) else views.REFUSALS[refused.reason]
            )
            await self._reply(update, tr, text)
            return
        if query is not None:
            await self.sender.answer(query, tr._(answer) if answer and committed.changed else None)
        await self._publish(committed)

    async def _publish(
        self, committed: Committed[tuple[Event, ...]], *, first_deal: bool = False
    ) -> None:
        session = committed.session
        if not committed.changed or session is None or session.game is None:
            return
        await self.publisher.publish(
            session, session.game, committed.result or (), committed.messages, first_deal
        )


HELP_TEXT = N_(
    "🃏 <b>Cheat</b>, the bluffing card game.\n"
    "Add me to a group and send /new there. Everyone taps <b>Join</b>, then "
    "<b>Start</b>. Your cards come here, in our private chat; on your turn you play "
    "1–4 cards face down and say which rank they are, truly or not. Anyone who doubts it "
    "taps <b>Cheat!</b>: a liar takes the pile, and so does a wrong accuser. "
    "The first to get rid of all their cards wins.\n\n"
    "/new opens a game · /join · /leave · /stop ends it"
)


def _in_progress(session: Session) -> bool:
    return session.lobby is not None or (
        session.game is not None and session.game.phase is not Phase.FINISHED
    )


def _open_lobby(session: Session | None, game_id: str | None = None) -> Lobby:
    if session is None or session.lobby is None:
        raise Refused(N_("No game is open to join here."))
    if game_id is not None and session.game_id != game_id:
        raise Refused(STALE)
    return session.lobby


def _current_game(session: Session | None, game_id: str | None) -> GameState:
    if session is None or session.game is None:
        raise Refused(STALE if game_id is not None else NO_GAME)
    if game_id is not None and session.game_id != game_id:
        raise Refused(STALE)
    return session.game


def _seat(game: GameState, user_id: int) -> int:
    seat = game.seat_of(user_id)
    if seat is None:
        raise ActionRefused(Refusal.NOT_IN_GAME)
    return seat


def _play_from_press(game: GameState, user_id: int, press: Press) -> Play:
    seat = _seat(game, user_id)
    if game.plays != press.number or press.rank is None:
        raise Refused(STALE)
    cards = pick_by_rank(game.players[seat].hand, press.selected())
    if cards is None:
        raise ActionRefused(Refusal.CARDS_NOT_IN_HAND)
    return Play(seat, cards, press.rank)


def _chat_from_payload(text: str) -> int | None:
    try:
        chat_id = int(text)
    except ValueError:
        return None
    return chat_id if chat_id < 0 else None


__all__ = ["HELP_TEXT", "Handlers", "Refused"]
