"""Opening a game, joining it, leaving the lobby, the deal, cancelling, a match's next game;
and /start and /help in the private chat."""

from __future__ import annotations

import contextlib
import html
import logging
from collections.abc import Callable

from telegram.error import BadRequest

from tgcheat.bot import views
from tgcheat.bot.callbacks import ComputerPress, Op, TablePress
from tgcheat.bot.handlers.shell import (
    MAX_ECHO,
    Answer,
    Asker,
    Command,
    Events,
    Shell,
    new_game_id,
)
from tgcheat.bot.settings_texts import RULES_PROBLEMS
from tgcheat.bot.taps import Tap
from tgcheat.bot.views.lobby import level_name
from tgcheat.engine.game import ActionRefused
from tgcheat.engine.rules import PRESETS, InvalidRules, Pace, Rules, with_pace
from tgcheat.i18n import N_, translator
from tgcheat.store.games import Committed
from tgcheat.table import transitions as table
from tgcheat.table.access import played_by
from tgcheat.table.computers import Level
from tgcheat.table.lobby import SOLO_OPPONENTS
from tgcheat.table.place import Place
from tgcheat.table.refusals import SessionRefusal, SessionRefused
from tgcheat.table.session import Session
from tgcheat.table.transitions import Actor

HELP_TEXT = N_(
    "🃏 <b>Cheat</b>, the bluffing card game.\n"
    "Add me to a group and send /new there. Everyone taps <b>Join</b>, then <b>Start</b>; "
    "your cards come here, to our private chat.\n\n"
    "On your turn, play 1–4 cards face down and claim them, like “two 7s”: the number is "
    "always true, the rank may be a lie. In the classic rules the rank to claim goes up "
    "each turn: A, 2, 3 … K, then A again.\n\n"
    "Bluffing is the point: you often hold no card of the rank. Doubt a claim? Tap "
    "<b>Cheat!</b>: a liar takes the pile, and so does a wrong accuser. The first to get rid "
    "of all their cards wins.\n\n"
    "/new opens a game · /join · /leave · /stop ends it · /rules"
)

PING_ON = N_("🔔 I will tell you in private when the next game opens here.")
PING_OFF = N_("🔕 I won't tell you about the next game here.")
STATS_HINT = N_("📊 /stats: your statistics · /top: a group's best · /forgetme deletes yours")
PROFILE_HINT = N_("👤 /profile: your rating and achievements, and a card to share")
SOLO_HINT = N_("🤖 No group at hand? /play starts a game against computer players right here.")

log = logging.getLogger(__name__)


#: Someone who is not in the group asks for one of its games.
OUTSIDER = N_("You can join only games of groups you are in.")


class LobbyHandlers:
    def __init__(self, shell: Shell) -> None:
        self.shell = shell

    async def new(self, command: Command) -> None:
        if not command.in_group:
            raise Answer(N_("Send /new in the group where you want to play."))
        shell = self.shell
        choice: str | None = None
        pace: Pace | None = None
        # "/new liars blitz": a preset, a pace, or both, in any order.
        for arg in (a.lower() for a in command.args):
            if arg in PRESETS:
                choice = arg
            elif arg in tuple(Pace):
                pace = Pace(arg)
            else:
                raise Answer(
                    N_("Unknown rules {name}. Choose one of: {presets}."),
                    name=html.escape(arg[:MAX_ECHO]),
                    presets=", ".join([*PRESETS, *Pace]),
                )
        chat_id = command.chat_id
        saved = await shell.store.settings.group_rules(chat_id)
        rules = PRESETS[choice] if choice else saved
        if pace is not None:
            rules = with_pace(rules or Rules(), pace)
        language = await shell.store.settings.group_language(chat_id)
        if language is None:
            language = (await shell.language_of(command.asker)).language
        now, game_id = shell.clock(), new_game_id()
        committed = await shell.store.transact(
            command.place,
            lambda session: (
                table.open_lobby(
                    session,
                    chat_id=chat_id,
                    game_id=game_id,
                    creator=command.user_id,
                    rules=rules or Rules(),
                    title=command.title,
                    language=language,
                    now_ms=now,
                    topic=command.topic,
                    topic_title=command.topic_title,
                ),
                None,
            ),
            update_id=command.update_id,
            lease=True,
        )
        if committed.changed and committed.session is not None:
            await shell.show(command.place, committed)
            await shell.ping_signed_up(committed.session)

    async def solo(self, command: Command) -> None:
        """/play [1-5] [easy|normal|hard] [preset]: a game against computer players in the
        private chat, dealt at once."""
        if command.in_group:
            raise Answer(N_("Send /play in our private chat to play against computer players."))
        shell = self.shell
        tr = await shell.language_of(command.asker)
        # A level in English or in the player's words ("/play 3 schwer").
        levels = {level.value: level for level in Level}
        levels |= {level_name(tr, level).lower(): level for level in Level}
        opponents, level = SOLO_DEFAULTS
        preset: str | None = None
        for arg in (a.lower() for a in command.args):
            number = table.typed_number(arg)
            if number is not None:
                opponents = number
            elif arg in levels:
                level = levels[arg]
            elif arg in PRESETS:
                preset = arg
            else:
                raise Answer(
                    N_("I don't know {word}. For example: {example}."),
                    word=html.escape(arg[:MAX_ECHO]),
                    example=f"/play 3 {html.escape(level_name(tr, Level.HARD))}",
                )
        chat_id, now, game_id = command.chat_id, shell.clock(), new_game_id()
        # A preset named, else the rules saved with /settings in this chat, else the classic.
        saved = await shell.store.settings.group_rules(chat_id)
        rules = PRESETS[preset] if preset is not None else saved or Rules()
        try:
            rules.with_option("players", str(opponents + 1))
        except InvalidRules as invalid:
            # Liar's Bar's short deck seats four at most: said before anything is dealt.
            least, most = SOLO_OPPONENTS
            if invalid.option == "players" and least <= opponents <= most:
                raise Answer(RULES_PROBLEMS[invalid.reason]) from None
        committed = await shell.store.transact(
            chat_id,
            lambda session: table.solo_game(
                session,
                chat_id=chat_id,
                game_id=game_id,
                user_id=command.user_id,
                name=command.name,
                opponents=opponents,
                level=level,
                rules=rules,
                title="",
                language=tr.language,
                rng=shell.rng,
                now_ms=now,
            ),
            update_id=command.update_id,
            lease=True,
        )
        await shell.show(Place(chat_id), committed)

    async def notify(self, command: Command) -> None:
        """/notify in a group: be told in private when its next game opens (once), or not."""
        if not command.in_group:
            raise Answer(N_("Send /notify in the group whose next game you want to hear of."))
        signed_up = await self.shell.store.pings.toggle(command.chat_id, command.user_id)
        await self.shell.reply(command.asker, PING_ON if signed_up else PING_OFF)

    async def notify_press(self, tap: Tap, press: TablePress) -> None:
        """🔔 on a finished game's table: /notify with a tap, answered in a pop-up. Only for a
        game the group really has (a press naming any other chat writes nothing), and only for
        its players or, asked of Telegram, the group's members: an outsider learns nothing of
        the group and is never pinged for it."""
        shell = self.shell
        session, _ = await shell.store.load(press.place)
        if session is None or session.game_id != press.game_id:
            raise SessionRefused(SessionRefusal.STALE)
        played = session.game is not None and session.game.seat_of(tap.user_id) is not None
        if not played and not await shell.is_member(press.chat_id, tap.user_id):
            raise Answer(OUTSIDER)
        signed_up = await shell.store.pings.toggle(press.chat_id, tap.user_id)
        tr = await self.shell.language_of(Asker(tap.user_id, tap.language_code))
        await self.shell.sender.answer(tap.query_id, tr._(PING_ON if signed_up else PING_OFF))

    async def start(self, command: Command) -> None:
        """/start: in the private chat, with a deep-link payload (join a game, show my cards);
        in a group, the help."""
        if command.in_group:
            await self.help(command)
            return
        payload = command.args[0] if command.args else ""
        target = _group_of_payload(payload[1:]) if payload[:1] in ("j", "h") else None
        if payload == f"h{command.user_id}":
            target = Place(command.user_id)  # My cards of a game against the computer, here
        if target is None:
            await self.help(command)
        elif payload[0] == "j":
            await self.join_by_link(command, target)
        else:
            await self.show_hand(command.asker, target)

    async def help(self, command: Command) -> None:
        tr = await self.shell.language_of(command.asker)
        text = tr._(HELP_TEXT) + "\n" + tr._(STATS_HINT) + "\n" + tr._(PROFILE_HINT)
        if not command.in_group:
            text += "\n\n" + tr._(SOLO_HINT)
        # A page, as every message: in Arabic its lines (and /commands) read right to left.
        await self.shell.tell(command.asker, views.page(tr, text))

    async def join_command(self, command: Command) -> None:
        if not command.in_group:
            raise Answer(N_("Tap Join on the game's message in your group."))
        await self.join(command, command.place, via_private=False)

    async def join_by_link(self, command: Command, place: Place) -> None:
        """The Join link, opened in the private chat: anyone may open it (it can be shared
        anywhere), so only the group's members join through it."""
        if not await self.shell.is_member(place.chat_id, command.user_id):
            # The same answer for every group, open game or not: it tells an outsider nothing.
            raise Answer(OUTSIDER)
        await self.join(command, place, via_private=True)

    async def join(self, command: Command, place: Place, *, via_private: bool) -> None:
        shell = self.shell
        tr = await shell.language_of(command.asker)
        user_id, now = command.user_id, shell.clock()
        committed = await shell.store.transact(
            place,
            lambda session: (
                table.join(
                    session, user_id=user_id, name=command.name, language=tr.language, now_ms=now
                ),
                None,
            ),
            update_id=command.update_id,
        )
        session = committed.session
        if committed.duplicate:
            # A duplicate may be the retry of a delivery that failed before the lobby was shown.
            await shell.show(place)
        if session is None or not committed.changed:
            return
        confirmation = views.page(
            tr,
            tr._("✅ You joined the game in {group}. Your cards will arrive here.").format(
                group=views.title_html(session.place_title)
            ),
        )
        try:
            reached = await shell.sender.send(user_id, confirmation) is not None
        except BadRequest as error:
            # Telegram refused the message, not the chat (that is a 403): the join stands.
            log.warning("join confirmation to %s refused: %s", user_id, error.message)
            reached = True
        if not reached and not via_private:
            # The bot may message only people who started it: undo, and show them the way.
            await self._unjoin(place, user_id)
            await self._show_the_way(command, session.language)
            return
        await shell.show(place)

    async def _unjoin(self, place: Place, user_id: int) -> None:
        # The lobby may have closed, or they left, meanwhile: nothing to undo then.
        with contextlib.suppress(SessionRefused, ActionRefused):
            await self.shell.store.transact(
                place, lambda session: (table.leave(session, user_id), None)
            )

    async def _show_the_way(self, command: Command, language: str) -> None:
        tr = translator(language)
        link = views.deep_link(self.shell.bot_username, views.join_payload(command.place))
        view = views.page(
            tr,
            tr._(
                "{name}, I can't send you your cards yet: tap the button, press "
                "<b>Start</b> in our private chat, and you are in."
            ).format(name=views.name_html(command.name)),
            views.keyboard([[views.button(tr._("🔓 Open the chat with me"), url=link)]]),
        )
        await self.shell.tell(command.asker, view)

    async def show_hand(self, asker: Asker, place: Place) -> None:
        """My cards: the hand posted anew, a reply to the person's own command."""
        if not await self.shell.may_reply(asker):
            return
        shell = self.shell
        stored, _ = await shell.store.load(place)
        played_by(stored, asker.user_id)
        # A hand asked for anew starts from no selection (a person who picked cards and
        # changed their mind starts over this way too).
        committed = await shell.store.transact(
            place, lambda session: (table.unpicked(session, asker.user_id), None), lease=True
        )
        # The player asked for it: an answer to their own action.
        await shell.show(place, committed, answering=asker.user_id, reach=asker.user_id)

    # --- buttons -------------------------------------------------------------------------------

    async def deal(self, tap: Tap, press: TablePress) -> None:
        shell = self.shell
        now = shell.clock()

        async def attempt(actor: Actor) -> Committed[Events]:
            return await shell.store.transact(
                press.place,
                lambda current: table.start(
                    current, game_id=press.game_id, actor=actor, rng=shell.rng, now_ms=now
                ),
                update_id=tap.update_id,
                lease=True,
            )

        committed = await shell.as_actor(press.chat_id, tap.user_id, attempt)
        await shell.sender.answer(tap.query_id)
        await shell.show(press.place, committed)

    async def computer_seat(self, tap: Tap, press: ComputerPress) -> None:
        """A computer player added to the lobby, or the last one removed (its creator or an
        admin)."""
        shell = self.shell
        now = shell.clock()

        def change(actor: Actor) -> Callable[[Session | None], tuple[Session | None, None]]:
            if press.op is Op.ADD_COMPUTER:
                return lambda current: (
                    table.add_computer(
                        current, game_id=press.game_id, actor=actor, level=press.level, now_ms=now
                    ),
                    None,
                )
            return lambda current: (
                table.remove_computer(current, game_id=press.game_id, actor=actor),
                None,
            )

        async def attempt(actor: Actor) -> Committed[None]:
            return await shell.store.transact(
                press.place, change(actor), update_id=tap.update_id, lease=True
            )

        committed = await shell.as_actor(press.chat_id, tap.user_id, attempt)
        await shell.sender.answer(tap.query_id)
        if committed.changed or committed.duplicate:
            await shell.show(press.place, committed)

    async def leave(self, tap: Tap, press: TablePress) -> None:
        """Leave on the lobby: out of it before the deal, as /leave, with a tap."""
        shell = self.shell
        user_id = tap.user_id
        committed = await shell.store.transact(
            press.place,
            lambda current: (table.leave(current, user_id, game_id=press.game_id), None),
            update_id=tap.update_id,
            lease=True,
        )
        tr = await shell.language_of(Asker(user_id, tap.language_code))
        await shell.sender.answer(tap.query_id, tr._("You left the game."))
        if committed.changed or committed.duplicate:
            # A duplicate may be the retry of a delivery that failed before the lobby was shown.
            await shell.show(press.place, committed)

    async def cancel(self, tap: Tap, press: TablePress) -> None:
        shell = self.shell

        async def attempt(actor: Actor) -> Committed[None]:
            return await shell.store.transact(
                press.place,
                lambda current: (table.cancel(current, game_id=press.game_id, actor=actor), None),
                update_id=tap.update_id,
                lease=True,
            )

        committed = await shell.as_actor(press.chat_id, tap.user_id, attempt)
        await shell.sender.answer(tap.query_id)
        if committed.changed or committed.duplicate:
            await shell.show(press.place, committed)

    async def next_game(self, tap: Tap, press: TablePress) -> None:
        """The next game of a match: same seats, the dealer one seat on."""
        shell = self.shell
        now, game_id = shell.clock(), new_game_id()

        async def attempt(actor: Actor) -> Committed[Events]:
            return await shell.store.transact(
                press.place,
                lambda current: table.next_game(
                    current,
                    game_id=press.game_id,
                    actor=actor,
                    new_game_id=game_id,
                    rng=shell.rng,
                    now_ms=now,
                ),
                update_id=tap.update_id,
                lease=True,
            )

        committed = await shell.as_actor(press.chat_id, tap.user_id, attempt)
        await shell.sender.answer(tap.query_id)
        # The result's buttons are spent (never those of a message the press was forged on).
        pressed = tap.pressed_message()
        if committed.changed and pressed is not None:
            await shell.sender.edit_markup(*pressed, None)
        # The new game (a new game id) gets a new table message at the bottom of the chat.
        await shell.show(press.place, committed)

    async def play_again(self, tap: Tap, press: TablePress) -> None:
        """A new lobby with the finished game's players already in it."""
        shell = self.shell
        now, game_id = shell.clock(), new_game_id()

        async def attempt(actor: Actor) -> Committed[None]:
            return await shell.store.transact(
                press.place,
                lambda current: (
                    table.play_again(
                        current,
                        game_id=press.game_id,
                        actor=actor,
                        new_game_id=game_id,
                        now_ms=now,
                    ),
                    None,
                ),
                update_id=tap.update_id,
                lease=True,
            )

        committed = await shell.as_actor(press.chat_id, tap.user_id, attempt)
        await shell.sender.answer(tap.query_id)
        if not committed.changed or committed.session is None:
            return
        if (pressed := tap.pressed_message()) is not None:
            await shell.sender.edit_markup(*pressed, None)
        await shell.show(press.place, committed)
        await shell.ping_signed_up(committed.session)


#: /play without arguments: three computer players of the normal level.
SOLO_DEFAULTS = (3, Level.NORMAL)


def _group_of_payload(text: str) -> Place | None:
    """The place a /start link names: "<chat id>", or "<chat id>_<topic>" for a topic's game
    (``views.join_payload``)."""
    chat, _, topic = text.partition("_")
    try:
        place = Place(int(chat), int(topic) if topic else None)
    except ValueError:
        return None
    valid_topic = place.topic is None or place.topic > 0
    return place if place.chat_id < 0 and valid_topic else None
