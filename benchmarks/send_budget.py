"""Many games at once on one bot, against Telegram's limits, with the bot-wide send budget on
and off.

    python benchmarks/send_budget.py [--games 50 200 1000] [--minutes 2] [--players 4]
                                     [--tap-s 2 3] [--open-over-s S] [--redis-connections N]
                                     [--seed 1] [--json] [--flood-private]

Many groups play Cheat at a human pace at the same time on one bot, as one process runs it: one
application (``tgcheat.bot.app.build_application``), one Redis (a throwaway server), one offline
Bot API (``tests.support.fake_telegram``) that enforces Telegram's flood limits
(``tests.support.rate_limits``: a private chat 1 message a second with bursts of 3, a group 20 a
minute with bursts of 8, all chats together 30 a second; beyond them 429 "retry after N"). Each
group has its own players. Every clock (the handlers', the sender's and so the send budget's,
the store's, the game clock's, the offline API's) is one virtual clock.

Virtual time moves a tenth of a second at a time. In each tenth, every group whose next tap is due
makes it, all of them at once (concurrent updates): the opener's ``/new``, each player's Join link,
the opener's Start, then each move as the taps a person makes (a rank on the hand keyboard per card
and Play, Cheat! or I believe you, Pass, a vote), the move being the computer player's choice
(``tgcheat.engine.ai``) of whoever has one. A person taps every ``--tap-s`` seconds (a number drawn
between the two given, rounded to a tenth); a button that does not show yet (its message held for a
budget or a flood wait) is looked for again a second later. At the start of each second the game
clock runs once (due deadlines, then what waited), as a process's does. A group whose game is over
opens the next one. The groups' first taps (their ``/new``) are spread at random over the first
``--open-over-s`` seconds (by default the longest ``--tap-s``: all groups open at once).

Each number of games runs ``--minutes`` virtual minutes twice: with the bot's send budget at 30
messages a second (``send_rate=30``, Telegram's limit) and without it (``send_rate=0``); the group
budget is the production one (20 a minute). For each run:

* requests: every Bot API request the bot made; ``messages`` those Telegram's limits count
  (sendMessage, editMessageText, editMessageReplyMarkup, deleteMessage(s));
* refused: the requests the offline API answered 429, by the limit that refused them;
* turn notification delay (p50, p99, max; seconds): for each turn that began (a committed change
  whose events start a player's turn, ``TurnStarted``), the virtual time from that commit to the
  first new message with buttons (a sendMessage whose keyboard has buttons to press, answered
  200) in that player's private chat after it: the hand that tells them to play. In tenths
  of a second, as the clock moves (0: sent while the change was handled). A player whose turn began
  again before they were told counts from the first time. Turns nobody was told of by the end
  are counted apart (``untold``, with the longest wait so far), not in the percentiles but in
  ``p99_with_untold``, which counts each at its wait so far (a lower bound of the p99);
* plays per minute per game: cards played (``CardsPlayed``) per group per virtual minute;
* logged: the warnings and errors the bot logged, counted by logger and message (not printed);
  failed taps: updates whose handling raised;
* wall time: seconds on this machine for the run (its setup excluded).

Telegram hands a webhook at most 40 updates at once (setWebhook's default ``max_connections``),
and so does the run. The Redis client is the bot's (``tgcheat.redis_connection.CLIENT_OPTIONS``,
redis-py's pool of 100 connections) unless ``--redis-connections`` says otherwise.

Each group's players choose with a generator of their own (``--seed``), but the concurrent
updates meet Redis and the budgets in an order that varies from run to run, and so do the deals:
the same arguments give figures a few percent apart, the p99 further.

With ``--flood-private`` it measures one person instead: while the groups play (the send budget
on), someone who plays in none of them sends ``/help`` in their private chat with the bot 10
times a second for 3 seconds (from the run's second ``FLOOD_AT_S``, once the games are under
way). Each number of games runs
twice, without the flood and with it, the same seed; for each it counts what the groups' players
must see to act (their turns, reveals, tables posted anew: the send budget's ``MUST`` requests)
from the flood's start to 2 seconds after its end, and how many of those the budget refused
(``turns_and_reveals``), then prints both shares and their difference: what the flood
changed of other games' turn and reveal delivery. The flood's own requests and their 429s are
counted apart (``flood``).

It asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import math
import random
import sys
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import _paths  # noqa: F401  (the repository root on sys.path)
import redis.asyncio as aioredis
from telegram import Update

from tests.support.buttons import press_matcher
from tests.support.fake_telegram import FakeTelegram, JsonDict, MessageRecord
from tests.support.rate_limits import COUNTED_METHODS, TelegramLimits
from tests.support.redis_server import throwaway_redis_server
from tests.support.updates import UpdateFactory, User, group, private
from tgcheat.bot.app import CheatApplication, build_application
from tgcheat.bot.callbacks import ClaimPress, Op, Press
from tgcheat.bot.taps import tap_from_json
from tgcheat.config import Config
from tgcheat.engine.actions import Accept, Challenge, Pass, PassVote, Play
from tgcheat.engine.ai import choose_action
from tgcheat.engine.cards import Rank
from tgcheat.engine.events import CardsPlayed, GameEnded, TurnStarted
from tgcheat.engine.state import Phase
from tgcheat.redis_connection import CLIENT_OPTIONS
from tgcheat.store.games import Committed, GameStore
from tgcheat.store.send_budget import TELEGRAM_SEND_RATE, Priority, SendBudget
from tgcheat.table.place import Place
from tgcheat.table.session import Session
from tools.transcript import NAMES, START_MS, Clock, _hand_press, _one_tap_play

TOKEN = "123456:SENDBUDGET-token-offline"
FIRST_GROUP_ID = -1001100000000
FIRST_USER_ID = 2_000_001
#: The send budget of the runs with it on: Telegram's limit across all chats (a second).
BUDGET_ON = TELEGRAM_SEND_RATE
STEP_MS = 1_000
#: Taps fall on tenths of a second: within a second, the budget refills between them, as it
#: does in real time (taps all at the second's start would meet a bucket refilled once a
#: second).
TAP_STEP_MS = 100
#: The connections redis-py's client opens at most, unless told otherwise (as the bot's is).
DEFAULT_REDIS_CONNECTIONS = 100
#: Updates handled at the same time, at most: Telegram's default for a webhook
#: (setWebhook's max_connections).
UPDATES_AT_ONCE = 40
#: Seconds a person looks for a button that does not show before choosing their move anew.
GIVE_UP_S = 30
#: Every so many seconds, the offline API forgets deleted messages and old versions (a thousand
#: groups send a lot; nothing it answers depends on them).
FORGET_EVERY_S = 30
QUESTIONS = frozenset({"getchatmember", "getchatadministrators", "getme", "getchat"})
CALLBACK_ANSWER = "answercallbackquery"
#: The flood of ``--flood-private``: when it starts (the run's second), how many /help a
#: second, for how long, and how long after it its effect on the games is still counted.
FLOOD_AT_S = 60
FLOOD_PER_SECOND = 10  # one in each tenth of a second the run moves by
FLOOD_FOR_S = 3
FLOOD_AFTERMATH_S = 2
#: The one who floods: a person in no group of the run.
FLOODER = User(1_999_999, "Flo", language_code="en")
#: What a player's move is, among the computer player's choices: each is a button someone taps.
PlayerMove = Play | Challenge | Accept | Pass | PassVote


class LogCount(logging.Handler):
    """The warnings and errors the bot logged in a run, counted by logger and message (a
    thousand groups would print thousands of lines)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.counts: Counter[str] = Counter()
        #: The first message of each kind, as it was logged.
        self.first: dict[str, str] = {}

    def emit(self, record: logging.LogRecord) -> None:
        kind = f"{record.name}: {record.msg}"
        self.counts[kind] += 1
        self.first.setdefault(kind, record.getMessage())

    def summary(self) -> dict[str, Any]:
        return {
            kind: {"count": count, "first": self.first[kind]}
            for kind, count in self.counts.most_common()
        }

    @contextlib.contextmanager
    def counting(self) -> Iterator[None]:
        root = logging.getLogger()
        handlers, level = root.handlers[:], root.level
        root.handlers[:] = [self]
        root.setLevel(logging.WARNING)
        try:
            yield
        finally:
            root.handlers[:] = handlers
            root.setLevel(level)


class ManyChatsTelegram(FakeTelegram):
    """The offline Bot API with each chat's messages at hand: a button is looked for among
    one chat's messages, not every chat's."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._by_chat: dict[int, dict[int, MessageRecord]] = {}

    def _send(self, method: str, params: JsonDict) -> MessageRecord:
        record = super()._send(method, params)
        self._by_chat.setdefault(record.chat_id, {})[record.message_id] = record
        return record

    def bot_messages(self, chat_id: int, *, include_deleted: bool = False) -> list[MessageRecord]:
        records = self._by_chat.get(chat_id, {}).values()
        return sorted(
            (record for record in records if include_deleted or not record.deleted),
            key=lambda record: record.message_id,
        )

    def forget_the_past(self) -> None:
        """Forget deleted messages and the versions before each message's current one: a
        deleted message answers as one never sent, and an edit compares with the current."""
        for chat_id, records in self._by_chat.items():
            for message_id, record in list(records.items()):
                if record.deleted:
                    del records[message_id]
                    self.messages.pop((chat_id, message_id), None)
                elif len(record.history) > 1:
                    del record.history[:-1]


@dataclass
class Notifications:
    """Turns begun and the first hand with buttons sent to their player after that."""

    #: Per player: when their turn began (ms) and the index in the offline API's calls of this
    #: second from which a hand counts (0 for a turn begun in an earlier second).
    waiting: dict[int, tuple[int, int]] = field(default_factory=dict)
    delays_s: list[float] = field(default_factory=list)

    def turn_began(self, user_id: int, now_ms: int, mark: int) -> None:
        self.waiting.setdefault(user_id, (now_ms, mark))

    def hand_sent(self, user_id: int, now_ms: int, index: int) -> None:
        began = self.waiting.get(user_id)
        if began is not None and index >= began[1]:
            del self.waiting[user_id]
            self.delays_s.append((now_ms - began[0]) / 1000)

    def next_second(self) -> None:
        self.waiting = {user: (began, 0) for user, (began, _) in self.waiting.items()}


@dataclass
class Figures:
    """What one run counts."""

    requests: Counter[str] = field(default_factory=Counter)
    statuses: Counter[int] = field(default_factory=Counter)
    plays: int = 0
    games_opened: int = 0
    games_finished: int = 0
    seconds_waited_for_a_button: int = 0
    #: Taps whose handling (or the look at the game before them) raised (the first few kept).
    failures: list[str] = field(default_factory=list)
    failure_count: int = 0
    notifications: Notifications = field(default_factory=Notifications)


Tap = Callable[[], Awaitable[bool]]


class Bench:
    """One bot, one offline Bot API with Telegram's limits, one virtual clock, many groups."""

    def __init__(
        self,
        app: CheatApplication,
        fake: ManyChatsTelegram,
        clock: Clock,
        tap_s: tuple[float, float],
    ) -> None:
        assert app.routes is not None and app.timers is not None
        self.app = app
        self.fake = fake
        self.clock = clock
        self.tap_s = tap_s
        self.updates = UpdateFactory(fake)
        self.store: GameStore = app.routes.shell.store
        self.timers = app.timers
        self.figures = Figures()
        self._slots = asyncio.Semaphore(UPDATES_AT_ONCE)

    async def in_a_slot(self, tap: Awaitable[None]) -> None:
        """A group's tap, once one of the slots for updates is free; a failure is counted (the
        first few kept), as the webhook would answer it with an error."""
        async with self._slots:
            try:
                await tap
            except Exception as error:
                figures = self.figures
                figures.failure_count += 1
                if len(figures.failures) < 5:
                    figures.failures.append(f"{type(error).__name__}: {error}")

    def pace_ms(self, rng: random.Random) -> int:
        """How long a person takes for their next tap (in tenths of a second, as taps fall)."""
        return max(1, round(rng.uniform(*self.tap_s) * 10)) * TAP_STEP_MS

    async def feed(self, update: JsonDict) -> None:
        """An update as the webhook hands it over (a button press straight from its JSON)."""
        tap = tap_from_json(update)
        if tap is not None:
            await self.app.handle_tap(tap)
        else:
            await self.app.process_update(Update.de_json(update, self.app.bot))

    def observe(self, committed: Committed[Any]) -> None:
        """A committed change: the turns it began and the cards it played."""
        session = committed.session
        result = committed.result
        if not committed.changed or session is None or session.game is None:
            return
        if not isinstance(result, Sequence):
            return
        for event in result:
            if isinstance(event, TurnStarted):
                user_id = session.game.players[event.seat].user_id
                self.figures.notifications.turn_began(
                    user_id, self.clock.now_ms, len(self.fake.calls)
                )
            elif isinstance(event, CardsPlayed):
                self.figures.plays += 1
            elif isinstance(event, GameEnded):
                self.figures.games_finished += 1

    def count_requests(self) -> None:
        """This second's requests; the hands with buttons that told a player of their turn."""
        now = self.clock.now_ms
        notifications = self.figures.notifications
        for index, call in enumerate(self.fake.calls):
            method = call.method.lower()
            self.figures.requests[method] += 1
            self.figures.statuses[call.status] += 1
            chat_id = call.params.get("chat_id")
            if (
                method == "sendmessage"
                and call.status == 200
                and isinstance(chat_id, int)
                and chat_id > 0
                and has_buttons(call.params.get("reply_markup"))
            ):
                notifications.hand_sent(chat_id, now, index)
        self.fake.calls.clear()
        notifications.next_second()


def moment(session: Session | None) -> tuple[Any, ...]:
    """Where a game is: a move chosen at one moment is stale at another."""
    if session is None or session.game is None:
        return ()
    state = session.game
    return (
        session.game_id,
        state.plays,
        state.turn,
        state.phase,
        len(state.open_claims),
        len(state.challenges),
        state.vote_by,
        len(state.accepted),
    )


def has_buttons(markup: Any) -> bool:
    if not isinstance(markup, dict):
        return False
    rows = markup.get("inline_keyboard") or []
    return any("callback_data" in button for row in rows for button in row)


class Group:
    """A group and its players, who make one tap at a time."""

    def __init__(
        self, bench: Bench, index: int, players: int, first_tap_ms: int, seed: int
    ) -> None:
        self.bench = bench
        #: The players' choices and pace, the group's own: whatever order the groups' updates
        #: are handled in, each plays the same.
        self.rng = random.Random(seed * 1_000_003 + index)
        self.chat_id = FIRST_GROUP_ID - index
        self.place = Place(self.chat_id)
        self.chat = group(self.chat_id, f"Cards {index + 1}")
        first_user = FIRST_USER_ID + index * players
        self.users = [
            User(first_user + seat, NAMES["en"][seat], language_code="en")
            for seat in range(players)
        ]
        self.by_id = {user.id: user for user in self.users}
        bench.fake.set_members(self.chat_id, [user.id for user in self.users])
        self.due_ms = first_tap_ms
        #: The taps left of a move under way (a play's picks), and the game as it was when the
        #: move was chosen.
        self.plan: deque[Tap] = deque()
        self.planned_at: tuple[Any, ...] = ()
        self.looked_s = 0

    async def turn(self, now_ms: int) -> None:
        """The tap due now: the next of the move under way, or the first of a move chosen from
        the game as it is; a button not shown yet is looked for again in a second."""
        session, _ = await self.bench.store.load(self.place)
        if self.plan and moment(session) != self.planned_at:
            self.plan.clear()  # the game moved on (the clock played): the move is chosen anew
        if not self.plan:
            self.plan.extend(await self.choose(session))
            self.planned_at = moment(session)
            self.looked_s = 0
        if not self.plan:
            self.due_ms = now_ms + STEP_MS  # everyone waits for the clock
            return
        if await self.plan[0]():
            self.plan.popleft()
            self.looked_s = 0
            self.due_ms = now_ms + self.bench.pace_ms(self.rng)
            return
        self.bench.figures.seconds_waited_for_a_button += 1
        self.looked_s += 1
        if self.looked_s >= GIVE_UP_S:
            self.plan.clear()
        self.due_ms = now_ms + STEP_MS

    async def choose(self, session: Session | None) -> list[Tap]:
        """The taps of the next move."""
        opener = self.users[0]
        if session is None or (session.lobby is None and session.game is None):
            return [lambda: self.command(opener, "/new")]
        if session.lobby is not None:
            waiting = [user for user in self.users if not session.lobby.has(user.id)]
            if waiting and not session.lobby.full:
                return [lambda: self.join(waiting[0])]
            return [lambda: self.tap(opener, self.chat_id, lambda p: p.op is Op.START)]
        state = session.game
        assert state is not None
        if state.phase is Phase.FINISHED:
            return [lambda: self.command(opener, "/new")]
        seats = list(state.active_seats())
        self.rng.shuffle(seats)
        now = self.bench.clock.now_ms
        action = next((a for s in seats if (a := choose_action(state, s, self.rng, now))), None)
        if action is None or not isinstance(action, PlayerMove):
            return []  # a Cheat! call's grace period, an unanswered final play: the clock's
        user = self.by_id[state.players[action.seat].user_id]
        return self.taps_of(user, action)

    def taps_of(self, user: User, action: PlayerMove) -> list[Tap]:
        match action:
            case Play(cards=played, rank=claimed):
                return [lambda: self.play(user, Counter(card.rank for card in played), claimed)]
            case Challenge(claim=number) | Accept(claim=number):
                op = Op.CHALLENGE if isinstance(action, Challenge) else Op.ACCEPT

                def answers(p: Press) -> bool:
                    return isinstance(p, ClaimPress) and p.op is op and p.claim == number

                return [lambda: self.tap_anywhere(user, answers)]
            case Pass():
                return [lambda: self.tap(user, user.id, lambda p: p.op is Op.PASS)]
            case PassVote(yes=yes):
                vote = Op.VOTE_YES if yes else Op.VOTE_NO
                return [lambda: self.tap(user, user.id, lambda p: p.op is vote)]
        raise AssertionError(f"a move no button makes: {action}")

    async def play(self, user: User, ranks: Counter[Rank], claimed: Rank | None) -> bool:
        """Play these cards: at once when the hand keyboard has a Play button for them, else a
        pick per card (the next taps), then Play."""
        one_tap = _one_tap_play(ranks, claimed)
        if await self.tap(user, user.id, one_tap):
            return True
        if self.bench.fake.find_button(user.id, press_matcher(lambda p: p.op is Op.PICK)) is None:
            return False  # the hand is not shown yet
        # This tap becomes the picks and Play: the first pick is the tap made now.
        taps = [self.hand_tap(user, Op.PICK, rank) for rank in ranks.elements()]
        taps.append(self.hand_tap(user, Op.PLAY, claimed))
        self.plan.popleft()
        self.plan.extendleft(reversed(taps))
        return await self.plan[0]()

    def hand_tap(self, user: User, op: Op, rank: Rank | None) -> Tap:
        """A tap on the hand keyboard: pick a card of ``rank``, or play claiming it."""
        return lambda: self.tap(user, user.id, _hand_press(op, rank))

    async def command(self, user: User, text: str) -> bool:
        if text == "/new":
            self.bench.figures.games_opened += 1
        name, _, args = text.partition(" ")
        await self.feed(self.bench.updates.command(self.chat, user, name, args or None))
        return True

    async def join(self, user: User) -> bool:
        """Tap the lobby's Join link: the private chat opens with ``/start j<chat>``."""
        found = self.bench.fake.find_button(
            self.chat_id, lambda button: "start=j" in str(button.get("url", ""))
        )
        if found is None:
            return False
        payload = str(found[1]["url"]).partition("start=")[2]
        await self.feed(self.bench.updates.start_private(user, payload))
        return True

    async def tap_anywhere(self, user: User, wanted: Callable[[Press], bool]) -> bool:
        """Tap the button on the table, or else in the person's private chat."""
        return await self.tap(user, self.chat_id, wanted) or await self.tap(user, user.id, wanted)

    async def tap(self, user: User, chat_id: int, wanted: Callable[[Press], bool]) -> bool:
        fake = self.bench.fake
        found = fake.find_button(chat_id, press_matcher(wanted))
        if found is None:
            return False
        message_id, button = found
        record = fake.message(chat_id, message_id)
        update = self.bench.updates.callback(user, record, str(button["callback_data"]))
        await self.feed(update)
        return True

    async def feed(self, update: JsonDict) -> None:
        await self.bench.feed(update)


@dataclass
class BudgetWatch:
    """What the send budget took and refused of what players must see to act (``MUST``),
    counted between ``from_ms`` and ``until_ms``."""

    from_ms: int
    until_ms: int
    asked: int = 0
    refused: int = 0

    def share_refused(self) -> float | None:
        return round(self.refused / self.asked, 4) if self.asked else None


def watch_budget(budget: SendBudget, watch: BudgetWatch, clock: Clock) -> None:
    """Let ``watch`` count the budget's answers to what players must see (its own path, as it
    is)."""
    take_many = budget.take_many

    async def watched(
        now_ms: int, wanted: Sequence[tuple[Priority, int]]
    ) -> tuple[list[bool], int]:
        granted, wait_ms = await take_many(now_ms, wanted)
        if watch.from_ms <= clock.now_ms < watch.until_ms:
            for (priority, count), taken in zip(wanted, granted, strict=True):
                if priority is Priority.MUST:
                    watch.asked += count
                    watch.refused += 0 if taken else count
        return granted, wait_ms

    budget.take_many = watched  # type: ignore[method-assign]


def observe_commits(store: GameStore, observe: Callable[[Committed[Any]], None]) -> None:
    """Let ``observe`` see every change the store commits (the bot's own path, untouched)."""
    transact = store.transact

    async def observed(*args: Any, **kwargs: Any) -> Committed[Any]:
        committed = await transact(*args, **kwargs)
        observe(committed)
        return committed

    store.transact = observed  # type: ignore[method-assign]


async def run(
    url: str,
    games: int,
    send_rate: float,
    *,
    minutes: float,
    players: int,
    tap_s: tuple[float, float],
    open_over_s: float | None,
    redis_connections: int | None,
    seed: int,
    flood: bool = False,
    flood_at_s: int = FLOOD_AT_S,
) -> dict[str, Any]:
    """One run: ``games`` groups for ``minutes`` virtual minutes with this send budget; with
    ``flood``, one private chat sends /help ``FLOOD_PER_SECOND`` times a second meanwhile."""
    clock = Clock(START_MS)
    limits = TelegramLimits()
    fake = ManyChatsTelegram(clock=clock.seconds, limits=limits)
    pool = {"max_connections": redis_connections} if redis_connections else {}
    redis = aioredis.from_url(url, **CLIENT_OPTIONS, **pool)
    await redis.flushdb()
    app = build_application(
        Config(telegram_bot_token=TOKEN), redis, request=fake, send_rate=send_rate
    )
    assert isinstance(app, CheatApplication) and app.routes is not None
    assert app.timers is not None
    await app.initialize()
    try:
        rng = random.Random(seed)
        shell = app.routes.shell
        shell.rng = rng
        shell.clock = clock
        shell.sender.clock = clock
        shell.store.sessions.clock = clock
        app.timers.clock = clock
        app.timers.rng = rng
        bench = Bench(app, fake, clock, tap_s)
        observe_commits(shell.store, bench.observe)
        flood_from_ms = START_MS + flood_at_s * STEP_MS
        flood_until_ms = flood_from_ms + FLOOD_FOR_S * STEP_MS
        if flood:
            fake.started_users.add(FLOODER.id)  # they have the bot's private chat open
        watch = BudgetWatch(flood_from_ms, flood_until_ms + FLOOD_AFTERMATH_S * STEP_MS)
        if shell.sender.budget is not None:
            watch_budget(shell.sender.budget, watch, clock)
        flood_calls: Counter[int] = Counter()
        spread_ms = max(1, math.ceil(open_over_s or tap_s[1])) * 1000
        groups = [
            Group(bench, index, players, START_MS + rng.randrange(0, spread_ms, STEP_MS), seed)
            for index in range(games)
        ]
        fake.calls.clear()
        logged = LogCount()
        started = time.perf_counter()
        with logged.counting():
            for second in range(round(minutes * 60)):
                for tenth in range(STEP_MS // TAP_STEP_MS):
                    clock.now_ms = now = START_MS + second * STEP_MS + tenth * TAP_STEP_MS
                    due = [g for g in groups if g.due_ms <= now]
                    taps = [bench.in_a_slot(g.turn(now)) for g in due]
                    if flood and flood_from_ms <= now < flood_until_ms:
                        helps = bench.updates.command(private(FLOODER), FLOODER, "/help")
                        taps.append(bench.in_a_slot(bench.feed(helps)))
                    await asyncio.gather(*taps)
                    if tenth == 0:
                        # The game clock looks once a second, as a process's does.
                        await app.timers.fire_due(now)
                        await app.timers.sync_due(now)
                flood_calls.update(
                    call.status for call in fake.calls if call.params.get("chat_id") == FLOODER.id
                )
                bench.count_requests()
                if second % FORGET_EVERY_S == FORGET_EVERY_S - 1:
                    fake.forget_the_past()
        wall_s = time.perf_counter() - started
    finally:
        await app.shutdown()
        await redis.aclose()
    result = summary(bench, limits, games, send_rate, minutes, wall_s, fake.violations)
    result["pace"] = {
        "players": players,
        "tap_s": list(tap_s),
        "opened_over_s": spread_ms / 1000,
    }
    result["redis_connections"] = redis_connections or DEFAULT_REDIS_CONNECTIONS
    result["logged"] = logged.summary()
    result["flooded"] = flood
    result["turns_and_reveals"] = {
        "counted_from_s": (watch.from_ms - START_MS) / 1000,
        "counted_until_s": (watch.until_ms - START_MS) / 1000,
        "asked": watch.asked,
        "refused": watch.refused,
        "share_refused": watch.share_refused(),
    }
    result["flood"] = {"requests": sum(flood_calls.values()), "refused_429": flood_calls[429]}
    return result


def percentile(values: Sequence[float], share: float) -> float | None:
    """The nearest-rank percentile (``share`` of 1): the smallest value that at least that
    share of the values do not exceed."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def summary(
    bench: Bench,
    limits: TelegramLimits,
    games: int,
    send_rate: float,
    minutes: float,
    wall_s: float,
    violations: list[str],
) -> dict[str, Any]:
    figures = bench.figures
    requests = figures.requests
    notifications = figures.notifications
    delays = notifications.delays_s
    now = bench.clock.now_ms
    untold = [(now - began) / 1000 for began, _ in notifications.waiting.values()]
    return {
        "games": games,
        "send_rate": send_rate,
        "virtual_minutes": minutes,
        "requests": {
            "all": sum(requests.values()),
            "messages": sum(n for method, n in requests.items() if method in COUNTED_METHODS),
            "callback_answers": requests[CALLBACK_ANSWER],
            "questions": sum(n for method, n in requests.items() if method in QUESTIONS),
            "by_method": dict(requests.most_common()),
        },
        "refused": {"all": sum(limits.refused.values()), **dict(limits.refused.most_common())},
        "other_errors": sum(
            n for status, n in figures.statuses.items() if status not in (200, 429)
        ),
        "turn_notification_delay_s": {
            "turns_told": len(delays),
            "p50": percentile(delays, 0.50),
            "p99": percentile(delays, 0.99),
            # The untold counted at their wait so far: what p99 is at least.
            "p99_with_untold": percentile([*delays, *untold], 0.99),
            "max": max(delays, default=None),
            "untold": len(untold),
            "longest_untold": max(untold, default=None),
        },
        "plays": figures.plays,
        "plays_per_minute_per_game": round(figures.plays / games / minutes, 2),
        "games_opened": figures.games_opened,
        "games_finished": figures.games_finished,
        "seconds_waited_for_a_button": figures.seconds_waited_for_a_button,
        "failed_taps": figures.failure_count,
        "failures": figures.failures,
        "violations": len(violations),
        "wall_s": round(wall_s, 1),
    }


async def measure(
    games: Sequence[int],
    *,
    minutes: float = 2.0,
    players: int = 4,
    tap_s: tuple[float, float] = (2.0, 3.0),
    open_over_s: float | None = None,
    redis_connections: int | None = None,
    seed: int = 1,
    send_rates: Sequence[float] = (BUDGET_ON, 0.0),
    floods: Sequence[bool] = (False,),
    flood_at_s: int = FLOOD_AT_S,
) -> list[dict[str, Any]]:
    """Every run: each number of games with each send budget, without and with the flood as
    ``floods`` says."""
    results = []
    with throwaway_redis_server() as url:
        for count in games:
            for send_rate in send_rates:
                for flood in floods:
                    result = await run(
                        url,
                        count,
                        send_rate,
                        minutes=minutes,
                        players=players,
                        tap_s=tap_s,
                        open_over_s=open_over_s,
                        redis_connections=redis_connections,
                        seed=seed,
                        flood=flood,
                        flood_at_s=flood_at_s,
                    )
                    results.append(result)
    return results


def print_table(results: Sequence[dict[str, Any]]) -> None:
    print(
        "| games | send budget | requests | messages | refused (429) | by limit | "
        "turn told p50 / p99 / max (s) | untold | p99 with untold (s) | plays/min/game | "
        "finished | logged | wall (s) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for result in results:
        refused = result["refused"]
        kinds = ", ".join(f"{kind}: {n}" for kind, n in refused.items() if kind != "all")
        delay = result["turn_notification_delay_s"]
        budget = f"{result['send_rate']:g}/s" if result["send_rate"] else "off"
        print(
            f"| {result['games']} | {budget} | {result['requests']['all']} | "
            f"{result['requests']['messages']} | {refused['all']} | {kinds or '-'} | "
            f"{delay['p50']} / {delay['p99']} / {delay['max']} | {delay['untold']} | "
            f"{delay['p99_with_untold']} | "
            f"{result['plays_per_minute_per_game']} | {result['games_finished']} | "
            f"{sum(kind['count'] for kind in result['logged'].values())} | {result['wall_s']} |"
        )


def print_flood_table(results: Sequence[dict[str, Any]]) -> None:
    """Without the flood and with it: the share of turns and reveals the budget refused."""
    print(
        "| games | private flood | turns and reveals asked | refused by the budget | share | "
        "change | flood's requests | flood's 429s | all 429s |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    quiet: dict[int, float] = {}
    for result in results:
        counted = result["turns_and_reveals"]
        share = counted["share_refused"] or 0.0
        change = ""
        if not result["flooded"]:
            quiet[result["games"]] = share
        elif result["games"] in quiet:
            change = f"{(share - quiet[result['games']]) * 100:+.2f} pp"
        flood = result["flood"]
        print(
            f"| {result['games']} | {'/help 10/s for 3 s' if result['flooded'] else 'none'} | "
            f"{counted['asked']} | {counted['refused']} | {share * 100:.2f}% | {change} | "
            f"{flood['requests']} | {flood['refused_429']} | {result['refused']['all']} |"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--games", type=int, nargs="+", default=[50, 200, 1000])
    parser.add_argument("--minutes", type=float, default=2.0, help="virtual minutes a run")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument(
        "--tap-s",
        type=float,
        nargs="+",
        default=[2.0, 3.0],
        help="seconds between a person's taps: one number, or two to draw between",
    )
    parser.add_argument(
        "--open-over-s",
        type=float,
        default=None,
        help="seconds over which the groups open their first game (default: the longest --tap-s)",
    )
    parser.add_argument(
        "--redis-connections",
        type=int,
        default=None,
        help=f"the Redis client's pool (default {DEFAULT_REDIS_CONNECTIONS}, the bot's)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--flood-private",
        action="store_true",
        help="one private chat sends /help 10 times a second for 3 s while the groups play "
        "(budget on; each number of games without and with it)",
    )
    args = parser.parse_args(argv)
    if len(args.tap_s) > 2:
        parser.error("--tap-s takes one number or two")
    tap_s = (min(args.tap_s), max(args.tap_s))
    # A 429 is news the bot logs at INFO; a thousand groups make it noise here.
    results = asyncio.run(
        measure(
            args.games,
            minutes=args.minutes,
            players=args.players,
            tap_s=tap_s,
            open_over_s=args.open_over_s,
            redis_connections=args.redis_connections,
            seed=args.seed,
            **({"send_rates": (BUDGET_ON,), "floods": (False, True)} if args.flood_private else {}),
        )
    )
    if args.json:
        print(json.dumps({"runs": results}, indent=2))
    elif args.flood_private:
        print_flood_table(results)
    else:
        print_table(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
