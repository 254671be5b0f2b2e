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
    Chat,
    ChatMember,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Message,
    Update,
    User,
)
from telegram.constants import ChatType, ParseMode
from telegram.error import BadRequest, Forbidden
from telegram.ext import ContextTypes

from tgcheat.bot import views
from tgcheat.bot.callbacks import BadCallback, Op, Press, parse
from tgcheat.bot.deadlines import lobby_deadline, now_ms
from tgcheat.bot.progress import advance
from tgcheat.bot.publish import Publisher, group_messages
from tgcheat.bot.sender import Sender
from tgcheat.bot.settings_texts import RULES_PROBLEMS
from tgcheat.bot.taps import Tap, tap_from_update
from tgcheat.engine.actions import (
    Accept,
    Action,
    Challenge,
    Leave,
    Pass,
    PassVote,
    Play,
    Stop,
)
from tgcheat.engine.cards import pick_by_rank
from tgcheat.engine.events import Event
from tgcheat.engine.game import ActionRefused, Refusal, apply, new_game, play_limit, random_seating
from tgcheat.engine.lobby import Lobby, join, leave
from tgcheat.engine.match import is_over, new_match, next_seating
from tgcheat.engine.rules import (
    OPTION_NAMES,
    OPTION_VALUES,
    PRESETS,
    InvalidRules,
    MatchKind,
    Rules,
    with_preset,
)
from tgcheat.engine.state import GameState, Phase
from tgcheat.i18n import N_, Translator, available_languages, translator
from tgcheat.store.games import Committed, GameStore
from tgcheat.table.session import Session

log = logging.getLogger(__name__)

GROUP_TYPES = (ChatType.GROUP, ChatType.SUPERGROUP)
#: How much of a person's own (wrong) input a reply quotes back.
MAX_ECHO = 32
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
        try:
            member = await self.sender.bot.get_chat_member(chat_id, user_id)
        except (BadRequest, Forbidden):
            # A chat we are not in (forged button data, or the bot was removed): nobody is.
            return False
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

    # --- commands ---------------------------------------------------------------------------

    async def _in_group(
        self, update: Update, wrong_chat: str
    ) -> tuple[Chat, User, Translator] | None:
        """The chat, the user and their language for a command that works in groups only;
        None (and the user told where to send it) elsewhere."""
        chat, user = update.effective_chat, update.effective_user
        if chat is None or user is None:
            return None
        tr = await self._user_tr(user)
        if chat.type not in GROUP_TYPES:
            await self._reply(update, tr, wrong_chat)
            return None
        return chat, user, tr

    async def new(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        found = await self._in_group(update, N_("Send /new in the group where you want to play."))
        if found is None:
            return
        chat, user, tr = found
        game_id = new_game_id()
        choice = context.args[0].lower() if context.args else ""
        if choice and choice not in PRESETS:
            await self._reply(
                update,
                tr,
                N_("Unknown rules {name}. Choose one of: {presets}."),
                name=html.escape(choice[:MAX_ECHO]),
                presets=", ".join(PRESETS),
            )
            return
        rules = PRESETS[choice] if choice else await self.store.group_rules(chat.id) or Rules()
        language = await self.store.group_language(chat.id) or tr.language
        now = now_ms()

        def open_lobby(session: Session | None) -> tuple[Session | None, None]:
            if session is not None and _in_progress(session):
                raise Refused(N_("A game is already open here. /stop ends it."))
            return Session(
                chat_id=chat.id,
                game_id=game_id,
                creator=user.id,
                lobby=Lobby(creator=user.id, rules=rules),
                title=chat.title or "",
                language=language,
                deadline_ms=lobby_deadline(now),
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
        tr = await self._user_tr(user)
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
        tr = await self._user_tr(user) if user else translator(None)
        await self._reply(update, tr, HELP_TEXT)

    async def join_command(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        found = await self._in_group(update, N_("Tap Join on the game's message in your group."))
        if found is None:
            return
        chat, user, tr = found
        await self._join(update, chat.id, user, tr, via_private=False)

    async def _join(
        self, update: Update, chat_id: int, user: User, tr: Translator, *, via_private: bool
    ) -> None:
        name = display_name(user)
        language = tr.language
        now = now_ms()

        def add_player(session: Session | None) -> tuple[Session | None, None]:
            lobby = _open_lobby(session)
            assert session is not None
            return dataclasses.replace(
                session,
                lobby=join(lobby, user.id, name),
                player_languages=(*session.player_languages, (user.id, language)),
                deadline_ms=lobby_deadline(now),
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
        found = await self._in_group(update, N_("Send /leave in the group of the game."))
        if found is None:
            return
        chat, user, tr = found
        session, _ = await self.store.load(chat.id)
        if session is not None and session.lobby is not None:
            await self._unjoin_reply(update, chat.id, user, tr)
            return
        await self._game_action(
            update.update_id,
            chat.id,
            None,
            lambda s, g: Leave(_seat(g, user.id)),
            tr=tr,
            reply_to=update,
        )

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

    async def _managed_session(
        self, update: Update, wrong_chat: str
    ) -> tuple[Session, User, Translator] | None:
        """The group's lobby or game when the user may manage it (its creator or an admin);
        else None, and the user has been told why."""
        found = await self._in_group(update, wrong_chat)
        if found is None:
            return None
        chat, user, tr = found
        session, _ = await self.store.load(chat.id)
        if session is None or not _in_progress(session):
            await self._reply(update, tr, NO_GAME)
            return None
        if not await self._may_manage(session, user.id):
            await self._reply(update, tr, NOT_ALLOWED)
            return None
        return session, user, tr

    async def stop(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        managed = await self._managed_session(update, N_("Send /stop in the group of the game."))
        if managed is None:
            return
        session, _user, tr = managed
        if session.lobby is not None:
            await self._cancel_lobby(update.update_id, session)
            return
        await self._game_action(
            update.update_id,
            session.chat_id,
            session.game_id,
            lambda s, g: Stop(),
            tr=tr,
            reply_to=update,
        )

    # --- buttons ----------------------------------------------------------------------------

    async def button(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        tap = tap_from_update(update)
        if tap is not None:
            await self.tap(tap)

    async def tap(self, tap: Tap) -> None:
        """A button press, from the webhook's JSON or from polling's Update."""
        tr = translator(tap.language_code)
        try:
            press = parse(tap.data)
        except BadCallback:
            await self.sender.answer(tap.query_id, tr._("This button is not valid."))
            return
        try:
            await self._dispatch(tap, press, tr)
        except Refused as refused:
            tr = await self._language_of(tap.user_id, tap.language_code)
            await self.sender.answer(tap.query_id, tr._(refused.message))
        except ActionRefused as refused:
            tr = await self._language_of(tap.user_id, tap.language_code)
            await self.sender.answer(tap.query_id, views.refusal_text(tr, refused.reason))

    async def _dispatch(self, tap: Tap, press: Press, tr: Translator) -> None:
        user_id = tap.user_id
        match press.op:
            case Op.START:
                await self._start_game(tap, press)
            case Op.CANCEL:
                session, _ = await self.store.load(press.chat_id)
                if session is None or session.game_id != press.game_id or session.lobby is None:
                    raise Refused(STALE)
                if not await self._may_manage(session, user_id):
                    raise Refused(NOT_ALLOWED)
                await self._cancel_lobby(tap.update_id, session, tap=tap)
            case Op.CHALLENGE:
                now = now_ms()
                await self._game_action(
                    tap.update_id,
                    press.chat_id,
                    press.game_id,
                    lambda s, g: Challenge(_seat(g, user_id), press.number, now),
                    tr=tr,
                    tap=tap,
                )
            case Op.PASS:
                await self._game_action(
                    tap.update_id,
                    press.chat_id,
                    press.game_id,
                    lambda s, g: Pass(_current_seat(g, user_id, press.number)),
                    tr=tr,
                    tap=tap,
                )
            case Op.VOTE_YES | Op.VOTE_NO:
                await self._game_action(
                    tap.update_id,
                    press.chat_id,
                    press.game_id,
                    lambda s, g: PassVote(
                        _current_seat(g, user_id, press.number), press.op is Op.VOTE_YES
                    ),
                    tr=tr,
                    tap=tap,
                    answer=N_("Your vote is in."),
                )
            case Op.NEXT_GAME:
                await self._next_game(tap, press)
            case Op.SETTINGS_SHOW | Op.SETTINGS_SET:
                await self._settings_press(tap, press, tr)
            case Op.LANGUAGE:
                await self._language_press(tap, press)
            case Op.ACCEPT:
                await self._game_action(
                    tap.update_id,
                    press.chat_id,
                    press.game_id,
                    lambda s, g: Accept(_seat(g, user_id), press.number),
                    tr=tr,
                    tap=tap,
                    answer=N_("You believe it."),
                )
            case Op.PICK | Op.CLEAR:
                await self._pick(tap, press, tr)
            case Op.PLAY:
                await self._game_action(
                    tap.update_id,
                    press.chat_id,
                    press.game_id,
                    lambda s, g: _play_from_press(g, user_id, press),
                    tr=tr,
                    tap=tap,
                )

    async def _start_game(self, tap: Tap, press: Press) -> None:
        session, _ = await self.store.load(press.chat_id)
        if session is None or session.game_id != press.game_id or session.lobby is None:
            raise Refused(STALE)
        if not await self._may_manage(session, tap.user_id):
            raise Refused(NOT_ALLOWED)
        now = now_ms()

        def deal(current: Session | None) -> tuple[Session | None, tuple[Event, ...]]:
            lobby = _open_lobby(current, press.game_id)
            assert current is not None
            if (reason := lobby.start_refusal()) is not None:
                raise ActionRefused(reason)
            seating = random_seating(lobby.players, self.rng)
            state, events = new_game(lobby.rules, seating, self.rng)
            match = (
                None if lobby.rules.match is MatchKind.SINGLE else new_match(lobby.rules, seating)
            )
            started = dataclasses.replace(current, lobby=None, match=match, deadline_ms=0)
            return advance(started, state, events, now), tuple(events)

        committed = await self.store.transact(
            press.chat_id, deal, update_id=tap.update_id, group_messages=group_messages
        )
        await self.sender.answer(tap.query_id)
        await self._publish(committed)

    async def _cancel_lobby(
        self,
        update_id: int,
        session: Session,
        *,
        tap: Tap | None = None,
    ) -> None:
        def close(current: Session | None) -> tuple[Session | None, None]:
            _open_lobby(current, session.game_id)
            assert current is not None
            return dataclasses.replace(current, lobby=None, game=None), None

        committed = await self.store.transact(session.chat_id, close, update_id=update_id)
        if tap is not None:
            await self.sender.answer(tap.query_id)
        if committed.changed:
            await self.publisher.close_lobby(session, committed.messages)

    async def _pick(self, tap: Tap, press: Press, tr: Translator) -> None:
        """Picking cards changes nothing stored: the selection travels in the buttons."""
        if tap.chat_id is None or tap.message_id is None or tap.chat_id != tap.user_id:
            # A hand is only ever drawn in its owner's private chat (forged data elsewhere).
            raise Refused(STALE)
        session, _ = await self.store.load(press.chat_id)
        game = _current_game(session, press.game_id)
        assert session is not None
        seat = _seat(game, tap.user_id)
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
        await self.sender.answer(tap.query_id)
        view = views.hand_view(tr, session, game, seat, session.title, selection)
        await self.sender.edit(tap.chat_id, tap.message_id, view)

    async def _game_action(
        self,
        update_id: int,
        chat_id: int,
        game_id: str | None,
        make_action: Callable[[Session, GameState], Action],
        *,
        tr: Translator,
        tap: Tap | None = None,
        reply_to: Update | None = None,
        answer: str | None = None,
    ) -> None:
        now = now_ms()

        def act(session: Session | None) -> tuple[Session | None, tuple[Event, ...]]:
            game = _current_game(session, game_id)
            assert session is not None
            state, events = apply(game, make_action(session, game))
            return advance(session, state, events, now), tuple(events)

        try:
            committed = await self.store.transact(
                chat_id, act, update_id=update_id, group_messages=group_messages
            )
        except (Refused, ActionRefused) as refused:
            if tap is not None or reply_to is None:
                raise
            text = (
                refused.message if isinstance(refused, Refused) else views.REFUSALS[refused.reason]
            )
            await self._reply(reply_to, tr, text)
            return
        if tap is not None:
            if answer and committed.changed and committed.session is not None:
                own = translator(committed.session.language_of(tap.user_id))
                await self.sender.answer(tap.query_id, own._(answer))
            else:
                await self.sender.answer(tap.query_id)
        await self._publish(committed)

    async def _publish(self, committed: Committed[tuple[Event, ...]]) -> None:
        session = committed.session
        if committed.duplicate and session is not None and session.game is not None:
            # Telegram delivers an update again when handling it failed, perhaps after its
            # change was saved but before it was shown: show the current state now.
            await self.publisher.catch_up(session, session.game, committed.messages)
            return
        if not committed.changed or session is None or session.game is None:
            return
        await self.publisher.publish(
            session,
            session.game,
            committed.result or (),
            committed.messages,
            table_deferred=committed.table_deferred,
        )

    async def _next_game(self, tap: Tap, press: Press) -> None:
        """The next game of a match: same seats, the dealer one seat on."""
        user_id = tap.user_id
        session, _ = await self.store.load(press.chat_id)
        if session is None or session.game_id != press.game_id or session.match is None:
            raise Refused(STALE)
        if user_id not in dict(session.match.players) and not await self._is_admin(
            press.chat_id, user_id
        ):
            raise ActionRefused(Refusal.NOT_IN_GAME)
        now = now_ms()

        def deal(current: Session | None) -> tuple[Session | None, tuple[Event, ...]]:
            if current is None or current.game_id != press.game_id or current.match is None:
                raise Refused(STALE)
            game = current.game
            if is_over(current.match) or game is None or game.phase is not Phase.FINISHED:
                raise Refused(STALE)
            state, events = new_game(current.match.rules, next_seating(current.match), self.rng)
            fresh = dataclasses.replace(current, game_id=new_game_id(), deadline_ms=0)
            return advance(fresh, state, events, now), tuple(events)

        committed = await self.store.transact(
            press.chat_id, deal, update_id=tap.update_id, group_messages=group_messages
        )
        await self.sender.answer(tap.query_id)
        if committed.changed and tap.chat_id is not None and tap.message_id is not None:
            await self.sender.edit_markup(tap.chat_id, tap.message_id, None)
        if committed.changed and committed.session is not None:
            # The new game gets a new table message at the bottom of the chat.
            await self.store.clear_messages(press.chat_id)
            committed = dataclasses.replace(committed, messages={})
        await self._publish(committed)

    # --- languages --------------------------------------------------------------------------

    async def language(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """/language: in a group (an admin) the game messages' language; in private, your own."""
        chat, user = update.effective_chat, update.effective_user
        if chat is None or user is None:
            return
        tr = await self._user_tr(user)
        if chat.type in GROUP_TYPES:
            if not await self._is_admin(chat.id, user.id):
                await self._reply(update, tr, N_("Only a group admin can change its language."))
                return
            current = await self.store.group_language(chat.id) or tr.language
            await self.sender.send(chat.id, views.language_view(tr, chat.id, current, True))
        else:
            await self.sender.send(chat.id, views.language_view(tr, chat.id, tr.language, False))

    async def _language_press(self, tap: Tap, press: Press) -> None:
        language = press.game_id
        if language not in available_languages():
            raise Refused(STALE)
        user_id = tap.user_id
        chosen = translator(language)
        if press.chat_id < 0:
            if not await self._is_admin(press.chat_id, user_id):
                raise Refused(NOT_ALLOWED)
            await self.store.save_group_language(press.chat_id, language)
            await self._set_session_language(press.chat_id, language)
        elif press.chat_id == user_id:
            await self.store.save_user_language(user_id, language)
        else:
            raise Refused(STALE)
        await self.sender.answer(tap.query_id, chosen._("Language saved."))
        if tap.chat_id is not None and tap.message_id is not None:
            view = views.language_view(chosen, press.chat_id, language, press.chat_id < 0)
            await self.sender.edit(tap.chat_id, tap.message_id, view)

    async def _set_session_language(self, chat_id: int, language: str) -> None:
        """The open lobby or game switches too: its table is re-drawn whole in the new
        language, never half in one and half in another."""

        def change(session: Session | None) -> tuple[Session | None, None]:
            if session is None or not _in_progress(session) or session.language == language:
                return session, None
            return dataclasses.replace(session, language=language), None

        committed = await self.store.transact(chat_id, change)
        session = committed.session
        if not committed.changed or session is None:
            return
        if session.lobby is not None:
            await self.publisher.refresh_lobby(chat_id)
        elif session.game is not None:
            await self.publisher.refresh_table(session, session.game, committed.messages)

    async def _user_tr(self, user: User) -> Translator:
        return await self._language_of(user.id, user.language_code)

    async def _language_of(self, user_id: int, language_code: str | None) -> Translator:
        """A person's language: their /language choice, else Telegram's, else English."""
        return translator(await self.store.user_language(user_id) or language_code)

    # --- settings ---------------------------------------------------------------------------

    async def settings(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        found = await self._in_group(update, N_("Send /settings in the group whose rules you set."))
        if found is None:
            return
        chat, user, tr = found
        if not await self._may_change_settings(chat.id, user.id):
            await self._reply(update, tr, NOT_ALLOWED)
            return
        rules = await self.store.group_rules(chat.id) or Rules()
        group_tr = translator(await self.store.group_language(chat.id) or user.language_code)
        await self.sender.send(chat.id, views.settings_view(group_tr, chat.id, rules))

    async def rules(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        chat, user = update.effective_chat, update.effective_user
        if chat is None or user is None:
            return
        tr = await self._user_tr(user)
        rules = Rules()
        if chat.type in GROUP_TYPES:
            session, _ = await self.store.load(chat.id)
            if session is not None and _in_progress(session):
                rules = session.rules
            else:
                rules = await self.store.group_rules(chat.id) or rules
            tr = translator(await self.store.group_language(chat.id) or user.language_code)
        await self.sender.send(chat.id, views.rules_view(tr, rules))

    async def _may_change_settings(self, chat_id: int, user_id: int) -> bool:
        """The creator of the open lobby, or a group admin (RULES.md: chosen per group)."""
        session, _ = await self.store.load(chat_id)
        if session is not None and session.lobby is not None and session.creator == user_id:
            return True
        return await self._is_admin(chat_id, user_id)

    async def _settings_press(self, tap: Tap, press: Press, tr: Translator) -> None:
        chat_id = press.chat_id
        if not await self._may_change_settings(chat_id, tap.user_id):
            raise Refused(NOT_ALLOWED)
        rules = await self.store.group_rules(chat_id) or Rules()
        group_tr = translator(await self.store.group_language(chat_id) or tr.language)
        if press.op is Op.SETTINGS_SHOW:
            if press.game_id == "m":
                view = views.settings_view(group_tr, chat_id, rules)
            else:
                view = views.option_view(group_tr, chat_id, rules, _option_index(press.game_id))
            await self.sender.answer(tap.query_id)
        else:
            try:
                rules = _changed_rules(rules, press)
            except InvalidRules as invalid:
                # Refused when chosen, with the reason, never at play time (RULES.md).
                await self.sender.answer(tap.query_id, tr._(RULES_PROBLEMS[invalid.reason]))
                return
            await self.store.save_group_rules(chat_id, rules)
            await self._apply_to_open_lobby(chat_id, rules)
            await self.sender.answer(tap.query_id, tr._("Saved for the next games."))
            view = views.settings_view(group_tr, chat_id, rules)
        if tap.chat_id is not None and tap.message_id is not None:
            await self.sender.edit(tap.chat_id, tap.message_id, view)

    async def _apply_to_open_lobby(self, chat_id: int, rules: Rules) -> None:
        """An open lobby is the group's next game: it takes the new rules too."""

        def change(session: Session | None) -> tuple[Session | None, None]:
            if session is None or session.lobby is None:
                return session, None
            players = session.lobby.players[: rules.max_players]
            lobby = dataclasses.replace(session.lobby, rules=rules, players=players)
            return dataclasses.replace(session, lobby=lobby), None

        committed = await self.store.transact(chat_id, change)
        if committed.changed:
            await self.publisher.refresh_lobby(chat_id)

    # --- membership: players and the bot coming and going --------------------------------------

    async def member_left(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A player who leaves the group leaves its game (RULES.md "Leaving")."""
        message, chat = update.effective_message, update.effective_chat
        if message is None or chat is None or message.left_chat_member is None:
            return
        gone = message.left_chat_member
        if gone.id == self.sender.bot.id:
            await self._bot_removed(chat.id)
            return
        await self._remove_player(update, chat.id, gone.id)

    async def kick(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """/kick as a reply to the player's message, or /kick <seat number> from the table."""
        message = update.effective_message
        managed = await self._managed_session(update, N_("Send /kick in the group of the game."))
        if managed is None or message is None:
            return
        session, _user, tr = managed
        target = _kick_target(session, message.reply_to_message, context.args or [])
        if target is None:
            await self._reply(
                update,
                tr,
                N_("Reply to a message of the player with /kick, or give their seat number."),
            )
            return
        await self._remove_player(update, session.chat_id, target, tr=tr)

    async def _remove_player(
        self, update: Update, chat_id: int, user_id: int, tr: Translator | None = None
    ) -> None:
        session, _ = await self.store.load(chat_id)
        if session is None:
            return
        if session.lobby is not None:
            if session.lobby.has(user_id):
                await self._unjoin(chat_id, user_id)
                await self.publisher.refresh_lobby(chat_id)
            return
        game = session.game
        if game is None or game.phase is Phase.FINISHED:
            return
        seat = game.seat_of(user_id)
        if seat is None or game.players[seat].left:
            if tr is not None:
                await self._reply(update, tr, views.REFUSALS[Refusal.NOT_IN_GAME])
            return
        await self._game_action(
            update.update_id,
            chat_id,
            session.game_id,
            lambda s, g: Leave(_seat(g, user_id)),
            tr=tr or translator(session.language),
            reply_to=update,
        )

    async def bot_membership(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """The bot removed from a group: that game ends and nothing of it is kept."""
        change = update.my_chat_member
        if change is None or change.chat.type not in GROUP_TYPES:
            return
        if change.new_chat_member.status in (ChatMember.LEFT, ChatMember.BANNED):
            await self._bot_removed(change.chat.id)

    async def _bot_removed(self, chat_id: int) -> None:
        def end(session: Session | None) -> tuple[Session | None, tuple[Event, ...]]:
            if session is None or not _in_progress(session):
                return session, ()
            if session.game is None:
                return dataclasses.replace(session, lobby=None, deadline_ms=0), ()
            state, events = apply(session.game, Stop())
            return dataclasses.replace(session, game=state, deadline_ms=0), tuple(events)

        committed = await self.store.transact(chat_id, end)
        session = committed.session
        if committed.changed and session is not None and session.game is not None:
            # The group cannot be written to any more; the players learn it in private.
            await self.publisher.publish_hands_only(session, session.game, committed.messages)
        await self.store.forget_chat(chat_id)

    async def migrated(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A group that becomes a supergroup gets a new chat id: its game moves with it."""
        message = update.effective_message
        if message is None or message.migrate_to_chat_id is None:
            return
        old_id, new_id = message.chat.id, message.migrate_to_chat_id
        session, _ = await self.store.load(old_id)
        if session is None or not _in_progress(session):
            return
        moved = dataclasses.replace(session, chat_id=new_id, game_id=new_game_id())

        def arrive(current: Session | None) -> tuple[Session | None, None]:
            if current is not None and _in_progress(current):
                return current, None
            return moved, None

        committed = await self.store.transact(new_id, arrive, update_id=update.update_id)
        await self.store.forget_chat(old_id)
        if not committed.changed or committed.session is None:
            return
        # Buttons name the chat: everything is shown anew under the new id.
        if moved.lobby is not None:
            await self.publisher.post_lobby(moved, {})
        elif moved.game is not None:
            await self.publisher.show_anew(moved, moved.game)


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


def _current_seat(game: GameState, user_id: int, plays: int) -> int:
    """The user's seat, for a button drawn at play count ``plays`` (else the button is stale)."""
    seat = _seat(game, user_id)
    if game.plays != plays:
        raise Refused(STALE)
    return seat


def _option_index(text: str) -> int:
    index = int(text) if text.isdigit() else -1
    if not 0 <= index < len(OPTION_NAMES):
        raise Refused(STALE)
    return index


def _changed_rules(rules: Rules, press: Press) -> Rules:
    if press.game_id == "p":
        if not 0 <= press.number < len(PRESETS):
            raise Refused(STALE)
        return with_preset(rules, list(PRESETS)[press.number])
    option = OPTION_NAMES[_option_index(press.game_id)]
    values = OPTION_VALUES[option]
    if not 0 <= press.number < len(values):
        raise Refused(STALE)
    return rules.with_option(option, values[press.number])


def _play_from_press(game: GameState, user_id: int, press: Press) -> Play:
    seat = _seat(game, user_id)
    if game.plays != press.number or press.rank is None:
        raise Refused(STALE)
    cards = pick_by_rank(game.players[seat].hand, press.selected())
    if cards is None:
        raise ActionRefused(Refusal.CARDS_NOT_IN_HAND)
    return Play(seat, cards, press.rank)


def _kick_target(session: Session, replied: Message | None, args: list[str]) -> int | None:
    if replied is not None and replied.from_user is not None:
        return replied.from_user.id
    game = session.game
    if args and args[0].isdigit() and game is not None:
        seat = int(args[0]) - 1
        if 0 <= seat < len(game.players):
            return game.players[seat].user_id
    return None


def _chat_from_payload(text: str) -> int | None:
    try:
        chat_id = int(text)
    except ValueError:
        return None
    return chat_id if chat_id < 0 else None


__all__ = ["HELP_TEXT", "Handlers", "Refused"]
