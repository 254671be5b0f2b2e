"""Bot API requests per play, over whole games at a human pace.

    python benchmarks/requests_per_play.py [--games 20] [--players 4] [--preset cheat]
                                           [--tap-s 2] [--seed 1] [--json] [--quick]

Each game is played through the bot as in ``tools/transcript.py`` (real update JSON, the offline
Bot API of the tests, a throwaway Redis): ``/new``, every player's Join link, Start, then each
move as the taps a person makes — a rank on the hand keyboard per card and Play, Cheat! or I
believe you, Pass, a vote. Unlike the transcript, nothing is forced (no turn left to run out, no
Cheat! call made for show) and everything runs as in production: the group's message budget
(20 a minute, bursts of 4) is on, and every clock — the handlers', delivery's, the sender's,
the game clock's, the offline API's — is one virtual clock that moves ``--tap-s`` seconds per
tap, with the game clock's tick run once a second of it in between, as a process does.

It prints every request the games cost, per play, by method and by kind of chat (the group, the
players' private chats), with and without the callback answers (one per button press; Telegram
counts them apart from messages), and the questions the bot asks Telegram (getChatMember) apart.
It asserts nothing.

``--quick``: quick games (/quick) instead: the players each send /quick in their private chat
(``--players`` of them, at most a quick table's seats, so nobody waits for computer players),
and the table, its lines and each hand are in every player's private chat.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import random
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import _paths  # noqa: F401  (the repository root on sys.path)
import redis.asyncio as aioredis

from tests.support.buttons import press_matcher
from tests.support.fake_telegram import FakeTelegram, JsonDict
from tests.support.redis_server import throwaway_redis_server
from tests.support.updates import User, private
from tgcheat.bot.app import CheatApplication, build_application
from tgcheat.bot.callbacks import BadCallback, Op, Press, parse
from tgcheat.config import Config
from tgcheat.engine.rules import PRESETS
from tgcheat.engine.state import GameState, Phase
from tgcheat.redis_connection import CLIENT_OPTIONS
from tgcheat.table.place import Place
from tgcheat.table.session import Session
from tools.transcript import GROUP_ID, MAX_MOVES, NAMES, START_MS, TITLES, Clock, Table

TOKEN = "123456:REQUESTS-token-offline"
#: Questions the bot asks Telegram: nobody sees them, and they are not messages.
QUESTIONS = frozenset({"getChatMember", "getChatAdministrators", "getMe", "getChat"})
CALLBACK_ANSWER = "answerCallbackQuery"
#: How long a person waits for a button to show before the run is called broken.
BUTTON_WAIT_S = 120


class NotShownYet(Exception):
    """The button a person wants to tap is not on their screen yet."""


class PacedTable(Table):
    """A table whose taps come ``tap_ms`` apart, with the game clock ticking in between."""

    tap_ms = 2_000
    #: The seconds people waited for a button to show.
    waits = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: Requests by what caused them (a button's kind, a command, the clock), method and
        #: kind of chat.
        self.by_cause: Counter[tuple[str, str, str]] = Counter()

    async def _feed(self, update: JsonDict, cause: str) -> None:
        before, mark = self.clock.now_ms, len(self.fake.calls)
        await super()._feed(update, cause)  # moves the clock by the transcript's TAP_MS
        self._count(cause_of(update), mark)
        self.clock.now_ms = before
        await self.wait(self.tap_ms)

    def _count(self, cause: str, mark: int) -> None:
        for call in self.fake.calls[mark:]:
            self.by_cause[(cause, call.method, chat_kind(call.params))] += 1

    async def tap(self, user: User, chat_id: int, wanted: Callable[[Press], bool]) -> None:
        """Tap the button if it shows, in the group or in the person's private chat; else
        the person waits a second (a table edit held for the group's budget shows later)."""
        chats = (chat_id, GROUP_ID) if chat_id != GROUP_ID else (GROUP_ID, user.id)
        for chat in chats:
            if self.fake.find_button(chat, press_matcher(wanted)) is not None:
                await super().tap(user, chat, wanted)
                return
        self.waits += 1
        await self.wait(1_000)
        raise NotShownYet

    async def move(self) -> None:
        """One person's move by the buttons; when its button is not shown yet, a second
        passes and the next move is chosen anew from the game as it is then."""
        with contextlib.suppress(NotShownYet):
            await super().move()

    async def wait(self, ms: int) -> None:
        """Let ``ms`` pass, the game clock looking once a second as a process does."""
        end = self.clock.now_ms + ms
        while self.clock.now_ms < end:
            self.clock.now_ms = min(end, self.clock.now_ms + 1_000)
            mark = len(self.fake.calls)
            await self.timers.fire_due(self.clock.now_ms)
            await self.timers.sync_due(self.clock.now_ms)
            self._count("the clock", mark)


class QuickTable(PacedTable):
    """A quick game's table: the game is at its quick place, shown in private chats only."""

    place: Place | None = None

    async def state(self) -> tuple[Session, GameState]:
        if self.place is None:
            number = await self.store.quick.playing(self.users[0].id)
            assert number is not None, "no quick game was made"
            self.place = Place.of_quick_game(number)
        session, _ = await self.store.load(self.place)
        assert session is not None and session.game is not None
        return session, session.game


async def play_quick(table: QuickTable) -> int:
    """One whole quick game of the table's people; returns its number of plays."""
    for user in table.users:
        await table._feed(table.updates.command(private(user), user, "quick", None), "/quick")
    return await play_to_the_end(table)


def cause_of(update: JsonDict) -> str:
    """What a person did: the kind of button pressed, or the command sent."""
    query = update.get("callback_query")
    if query is not None:
        try:
            return f"press {parse(str(query.get('data', ''))).op.name.lower()}"
        except BadCallback:
            return "press (unknown)"
    text = str(update.get("message", {}).get("text", ""))
    return text.split(" ")[0] or "a message"


def chat_kind(params: JsonDict) -> str:
    chat_id = params.get("chat_id")
    if not isinstance(chat_id, int):
        return "none"
    return "group" if chat_id < 0 else "private"


async def play_one(table: PacedTable, preset: str) -> int:
    """One whole game; returns its number of plays."""
    opener = table.users[0]
    await table.command(opener, "/new" if preset == "cheat" else f"/new {preset}")
    for user in table.users:
        await table.join(user)
    await table.tap(opener, GROUP_ID, lambda p: p.op is Op.START)
    return await play_to_the_end(table)


async def play_to_the_end(table: PacedTable) -> int:
    """The dealt game played move by move to its end; returns its number of plays."""
    for _ in range(MAX_MOVES):
        _, state = await table.state()
        if state.phase is Phase.FINISHED:
            return table.moves["plays"]
        await table.move()
    raise RuntimeError(f"a game did not end within {MAX_MOVES} moves")


async def measure(
    games: int, players: int, preset: str, tap_ms: int, seed: int, quick: bool = False
) -> dict[str, Any]:
    clock = Clock(START_MS)
    users = [User(1001 + i, name, language_code="en") for i, name in enumerate(NAMES["en"])]
    users = users[:players]
    by_method: Counter[tuple[str, str]] = Counter()
    by_cause: Counter[tuple[str, str, str]] = Counter()
    plays = waits = played_ms = 0
    game_requests = 0
    with throwaway_redis_server() as url:
        for game in range(games):
            fake = FakeTelegram(clock=clock.seconds)
            fake.set_members(GROUP_ID, [user.id for user in users])
            redis = aioredis.from_url(url, **CLIENT_OPTIONS)
            await redis.flushdb()
            app = build_application(Config(telegram_bot_token=TOKEN), redis, request=fake)
            assert isinstance(app, CheatApplication) and app.routes is not None
            assert app.timers is not None
            await app.initialize()
            try:
                shell = app.routes.shell
                shell.rng = random.Random(seed + game)
                shell.clock = clock
                shell.sender.clock = clock
                shell.store.sessions.clock = clock
                app.timers.clock = clock
                app.timers.rng = shell.rng
                kind = QuickTable if quick else PacedTable
                table = kind(app, fake, clock, users, TITLES["en"], random.Random(seed + game))
                table.tap_ms = tap_ms
                # Before the game: the players open their private chats with the bot.
                for user in users:
                    await table._feed(table.updates.start_private(user, None), "/start")
                table.by_cause.clear()
                mark = len(fake.calls)
                started_ms = clock.now_ms
                if isinstance(table, QuickTable):
                    plays += await play_quick(table)
                else:
                    plays += await play_one(table, preset)
                played_ms += clock.now_ms - started_ms
                # What the clock still shows after the last tap (the result held for the
                # group's budget, hands).
                await table.wait(60_000)
                by_cause.update(table.by_cause)
                waits += table.waits
                for call in fake.calls[mark:]:
                    by_method[(call.method, chat_kind(call.params))] += 1
                    game_requests += 1
                if fake.violations:
                    raise RuntimeError(f"requests Telegram refuses: {fake.violations[:3]}")
            finally:
                await app.shutdown()
                await redis.aclose()
    return summary(by_method, by_cause, plays, games, waits, played_ms)


def summary(
    by_method: Counter[tuple[str, str]],
    by_cause: Counter[tuple[str, str, str]],
    plays: int,
    games: int,
    waits: int,
    played_ms: int = 0,
) -> dict[str, Any]:
    def per_play(count: int) -> float:
        return round(count / plays, 3) if plays else 0.0

    messages = {key: n for key, n in by_method.items() if key[0] not in QUESTIONS}
    answers = sum(n for (method, _), n in messages.items() if method == CALLBACK_ANSWER)
    total = sum(messages.values())
    by_kind: Counter[str] = Counter()
    for (method, kind), n in messages.items():
        if method != CALLBACK_ANSWER:
            by_kind[kind] += n
    return {
        "games": games,
        "plays": plays,
        # The pace: a game's plays a minute, and the requests a game in progress costs a
        # second (without callback answers), from /new to the last play.
        "plays_per_minute_per_game": round(plays / (played_ms / 60_000), 2) if played_ms else 0,
        "requests_per_second_per_game": (
            round((total - answers) / (played_ms / 1000), 3) if played_ms else 0
        ),
        "seconds_waited_for_a_button": waits,
        "per_play": {
            "all_requests": per_play(total),
            "without_callback_answers": per_play(total - answers),
            "callback_answers": per_play(answers),
            "group": per_play(by_kind["group"]),
            "private": per_play(by_kind["private"]),
            "questions": per_play(sum(n for (m, _), n in by_method.items() if m in QUESTIONS)),
        },
        "by_method": {
            f"{method} ({kind})": {"count": n, "per_play": per_play(n)}
            for (method, kind), n in sorted(by_method.items(), key=lambda item: -item[1])
        },
        "by_cause": {
            f"{cause}: {method} ({kind})": {"count": n, "per_play": per_play(n)}
            for (cause, method, kind), n in sorted(by_cause.items(), key=lambda item: -item[1])
        },
    }


def print_table(result: dict[str, Any]) -> None:
    print(
        f"{result['games']} games, {result['plays']} plays; people waited "
        f"{result['seconds_waited_for_a_button']} s in all for a button to show; "
        f"{result['plays_per_minute_per_game']} plays a minute in a game, "
        f"{result['requests_per_second_per_game']} requests a second per game\n"
    )
    print("| per play | requests |")
    print("|---|---|")
    for name, value in result["per_play"].items():
        print(f"| {name.replace('_', ' ')} | {value} |")
    for title, key in (("method (chat)", "by_method"), ("cause: method (chat)", "by_cause")):
        print(f"\n| {title} | count | per play |")
        print("|---|---|---|")
        for name, figures in result[key].items():
            print(f"| {name} | {figures['count']} | {figures['per_play']} |")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--preset", default="cheat", choices=sorted(PRESETS))
    parser.add_argument("--tap-s", type=float, default=2.0, help="seconds between two taps")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--quick", action="store_true", help="quick games (/quick)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    result = asyncio.run(
        measure(
            args.games,
            args.players,
            args.preset,
            int(args.tap_s * 1000),
            args.seed,
            args.quick,
        )
    )
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_table(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
