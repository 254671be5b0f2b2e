"""The bot behind its webhook endpoint, built as in production (``build_application``), fed
real update JSON over HTTP; Telegram is the offline FakeTelegram."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
from redis.asyncio import Redis

from tests.bot.conftest import TOKEN, UNLIMITED
from tests.bot.play import has_op
from tests.support.buttons import press_matcher
from tests.support.fake_telegram import ApiCall, FakeTelegram, JsonDict
from tests.support.updates import UpdateFactory, User, group
from tgcheat.bot.app import CheatApplication, build_application
from tgcheat.bot.callbacks import HandPress, Op
from tgcheat.config import Config
from tgcheat.engine.state import GameState
from tgcheat.store.games import GameStore
from tgcheat.table.session import Session
from tgcheat.web import SECRET_HEADER, create_web_app

SECRET = "webhook-tests_secret"
#: How long a player waits for their hand to show the card they picked.
PICK_SHOWN_WITHIN_S = 20.0
CONFIG = Config(
    telegram_bot_token=TOKEN,
    webhook_url="https://cheat.example.com/telegram",
    webhook_secret=SECRET,
)


@dataclass
class Served:
    """The bot behind its webhook, and what a test reads of it."""

    client: httpx.AsyncClient
    app: CheatApplication
    fake: FakeTelegram
    updates: UpdateFactory
    store: GameStore
    #: The web app (its state holds the webhook's and the Mini App's settings).
    web: Any = None

    async def post(self, update: JsonDict) -> int:
        """Deliver an update as Telegram does (the call its answer carries is made too)."""
        return (await self.respond(update)).status_code

    async def respond(self, update: JsonDict) -> httpx.Response:
        """Deliver an update; the webhook's response (the call it carries is made too)."""
        response = await self.client.post("/telegram", json=update, headers={SECRET_HEADER: SECRET})
        await self.fake.webhook_answer(
            response.status_code, response.headers.get("content-type"), response.content
        )
        return response

    async def install(self, state: GameState, chat_id: int, game_id: str = "rigged1") -> None:
        """A game with explicit hands in the group (as if dealt), its players' hands shown."""

        def put(_: Session | None) -> tuple[Session | None, None]:
            session = Session(chat_id, game_id, state.players[0].user_id, game=state, title="T")
            return session, None

        await self.store.transact(chat_id, put)
        for player in state.players:
            self.fake.started_users.add(player.user_id)

    async def open_game(self, chat_id: int, players: tuple[User, ...]) -> None:
        table = group(chat_id, f"Table {chat_id}")
        assert await self.post(self.updates.command(table, players[0], "/new")) == 200
        for user in players:
            # Only members of the group join by the link.
            self.fake.note_member(chat_id, user.id)
            assert await self.post(self.updates.start_private(user, f"j{chat_id}")) == 200
        start = self.updates.press(self.fake, players[0], chat_id, has_op(Op.START))
        assert await self.post(start) == 200

    async def game(self, chat_id: int) -> GameState:
        session, _ = await self.store.load(chat_id)
        assert session is not None and session.game is not None
        return session.game

    async def deadline(self, chat_id: int) -> int:
        session, _ = await self.store.load(chat_id)
        assert session is not None
        return session.deadline_ms

    async def play_one(self, chat_id: int, players: tuple[User, ...]) -> list[int]:
        """The player whose turn it is picks one card and plays it; the webhook's answers."""
        state = await self.game(chat_id)
        user = next(u for u in players if u.id == state.players[state.turn].user_id)
        rank = state.players[state.turn].hand[0].rank
        pick = self.updates.press(self.fake, user, user.id, has_op(Op.PICK, rank))
        answers = [await self.post(pick)]
        # As a person does, they play once their hand shows the card picked (a sync of the
        # place under way shows it in its next round).
        picked = press_matcher(
            lambda p: (
                isinstance(p, HandPress) and p.op is Op.PLAY and p.selected() == Counter({rank: 1})
            )
        )
        async with asyncio.timeout(PICK_SHOWN_WITHIN_S):
            while self.fake.find_button(user.id, picked) is None:
                await asyncio.sleep(0.01)
        play = self.updates.press(self.fake, user, user.id, picked)
        answers.append(await self.post(play))
        return answers

    def table_text(self, chat_id: int) -> str:
        """The group's table: its last message with buttons."""
        tables = [m for m in self.fake.visible_messages(chat_id) if m.buttons]
        assert tables, f"no table in {chat_id}"
        return tables[-1].plain_text or ""

    def last_text(self, chat_id: int) -> str:
        return self.fake.visible_messages(chat_id)[-1].plain_text or ""


@asynccontextmanager
async def served(
    redis: Redis, *, per_minute: int = UNLIMITED, send_rate: float = 0, config: Config = CONFIG
) -> AsyncIterator[Served]:
    fake = FakeTelegram()
    application = build_application(
        config,
        redis,
        request=fake,
        group_messages_per_minute=per_minute,
        send_rate=send_rate,
        replies_per_second=0,
    )
    assert isinstance(application, CheatApplication)
    web = create_web_app(application, redis, config)
    async with web.router.lifespan_context(web):
        transport = httpx.ASGITransport(app=web)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            yield Served(client, application, fake, UpdateFactory(fake), GameStore(redis), web)
    fake.assert_clean()


def to_chat(chat_id: int, method: str | None = None) -> Callable[[ApiCall], bool]:
    def matches(call: ApiCall) -> bool:
        named = method is None or call.method.lower() == method.lower()
        return named and call.params.get("chat_id") == chat_id and call.status == 200

    return matches
