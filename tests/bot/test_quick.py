"""A quick game with anyone (/quick): the queue in Redis, the tables it makes (people who asked
within the same wait together, computer players in the seats left), the game shown in each
player's private chat in their own language, and nothing of the others but their names. Driven
with update JSON over an explicit clock."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import redis.asyncio as aioredis
from redis.asyncio import Redis

from tests.bot.conftest import BotHarness, make_harness
from tests.bot.play import has_op, play
from tests.support.fake_telegram import FakeTelegram
from tests.support.updates import User, private
from tgcheat.bot.app import CheatApplication
from tgcheat.bot.callbacks import Op
from tgcheat.bot.timers import Timers
from tgcheat.engine.game import can_accept, play_limit
from tgcheat.engine.state import EndReason, GameState, Phase
from tgcheat.store.quick import DEAL_WITHIN_MS
from tgcheat.table.computers import is_computer
from tgcheat.table.place import Place
from tgcheat.table.quick import FILL_AFTER_MS, SEATS, WAIT_MS
from tgcheat.table.session import Session

ANN = User(71, "Ann", username="ann_secret", language_code="en", last_name="Lee")
BOB = User(72, "Bruno", username="bruno_secret", language_code="de")
CY = User(73, "Cy", username="cy_secret", language_code="fr")
START_MS = 1_700_000_000_000


class Clock:
    """The one clock of a test: moved by hand, never read from the wall."""

    def __init__(self) -> None:
        self.now = START_MS

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> None:
        self.now += ms


def _timers(bot: BotHarness) -> Timers:
    app = bot.app
    assert isinstance(app, CheatApplication) and app.timers is not None
    return app.timers


def _on(bot: BotHarness, clock: Clock) -> None:
    """The bot's handlers, delivery and clock on ``clock``."""
    bot.shell.clock = clock
    bot.shell.delivery.clock = clock
    _timers(bot).clock = clock


@asynccontextmanager
async def quick_bot(redis: Redis) -> AsyncIterator[tuple[BotHarness, Clock]]:
    bot = await make_harness(redis)
    clock = Clock()
    _on(bot, clock)
    try:
        yield bot, clock
    finally:
        await bot.app.shutdown()
    bot.fake.assert_clean()


async def _ask(bot: BotHarness, user: User) -> None:
    await bot.start_private(user)
    await bot.command(user, "/quick", chat=private(user))


async def _quick_session(bot: BotHarness, user: User) -> Session:
    number = await bot.store.quick.playing(user.id)
    assert number is not None, f"{user.first_name} plays no quick game"
    session, _ = await bot.store.load(Place.of_quick_game(number))
    assert session is not None and session.game is not None
    return session


def _humans(state: GameState) -> list[int]:
    return [p.user_id for p in state.players if not is_computer(p.user_id)]


async def test_two_people_who_ask_within_seconds_play_one_game(redis: Redis) -> None:
    async with quick_bot(redis) as (bot, clock):
        await _ask(bot, ANN)
        assert "Looking for players" in bot.fake.last_message(ANN.id).seen_text
        clock.advance(5_000)
        await _ask(bot, BOB)
        assert await bot.store.quick.waiting() == [ANN.id, BOB.id]
        # Before the wait is over, nobody is dealt.
        clock.advance(FILL_AFTER_MS - 5_001)
        assert await _timers(bot).quick_tables() == 0
        clock.advance(1)
        assert await _timers(bot).quick_tables() == 1
        assert await bot.store.quick.waiting() == []
        ann, bob = await _quick_session(bot, ANN), await _quick_session(bot, BOB)
        assert ann.place == bob.place and ann.quick
        # The message that said each waits now says the table was made, without its 🚪.
        for user, found in ((ANN, "Found a table"), (BOB, "Tisch gefunden")):
            waiting = next(m for m in bot.fake.bot_messages(user.id) if "⚡" in (m.seen_text or ""))
            assert found in (waiting.seen_text or ""), waiting.seen_text
            assert waiting.buttons == []
        state = ann.game
        assert state is not None and state.phase is not Phase.FINISHED
        assert sorted(_humans(state)) == [ANN.id, BOB.id]
        assert len(state.players) == SEATS
        # Each sees the table in their own private chat, in their own language, and their
        # hand below it.
        ann_texts = bot.fake.texts(ANN.id)
        bob_texts = bot.fake.texts(BOB.id)
        assert any("pile:" in t and "A quick game" in t for t in ann_texts)
        assert any("Stapel" in t for t in bob_texts), bob_texts
        assert any("Your cards (" in t for t in ann_texts)
        # Nothing of the others but their names: no username, no link to a profile.
        everything = "\n".join(
            str(call.params) for call in bot.fake.calls if call.params.get("chat_id") in (71, 72)
        )
        for secret in ("ann_secret", "bruno_secret", "tg://user", "t.me/ann", "t.me/bruno"):
            assert secret not in everything
        assert "Ann Lee" in "\n".join(bob_texts)


async def test_one_alone_plays_computer_players_after_the_wait(redis: Redis) -> None:
    async with quick_bot(redis) as (bot, clock):
        await _ask(bot, CY)
        clock.advance(FILL_AFTER_MS)
        assert await _timers(bot).quick_tables() == 1
        session = await _quick_session(bot, CY)
        assert session.game is not None
        assert _humans(session.game) == [CY.id]
        assert sum(is_computer(p.user_id) for p in session.game.players) == SEATS - 1
        assert any("Vos cartes" in t or "cartes" in t for t in bot.fake.texts(CY.id))


async def test_quick_again_leaves_the_queue_and_a_player_cannot_queue(redis: Redis) -> None:
    async with quick_bot(redis) as (bot, clock):
        await _ask(bot, ANN)
        await bot.command(ANN, "/quick", chat=private(ANN))
        assert await bot.store.quick.waiting() == []
        assert "no longer wait" in bot.fake.last_message(ANN.id).seen_text
        # The button asks again, and the waiting message's button leaves.
        await bot.press(ANN, ANN.id, has_op(Op.QUICK))
        assert await bot.store.quick.waiting() == [ANN.id]
        await bot.press(ANN, ANN.id, "Stop waiting")
        assert await bot.store.quick.waiting() == []
        # Playing, she cannot queue again; once she left her game, she can.
        await bot.command(ANN, "/quick", chat=private(ANN))
        clock.advance(FILL_AFTER_MS)
        await _timers(bot).quick_tables()
        await bot.command(ANN, "/quick", chat=private(ANN))
        assert "playing a quick game already" in bot.fake.last_message(ANN.id).seen_text
        assert await bot.store.quick.waiting() == []
        await bot.command(ANN, "/leave", chat=private(ANN))
        await bot.command(ANN, "/quick", chat=private(ANN))
        assert await bot.store.quick.waiting() == [ANN.id]


async def test_the_queue_forgets_who_asked_over_a_minute_ago(redis: Redis) -> None:
    async with quick_bot(redis) as (bot, clock):
        await _ask(bot, ANN)
        # No clock ran meanwhile (every process was down): the entry is too old to match.
        clock.advance(WAIT_MS + 1)
        assert await _timers(bot).quick_tables() == 0
        assert await bot.store.quick.waiting() == []


async def test_a_full_table_is_dealt_at_once_across_two_processes(
    redis: Redis, redis_url: str
) -> None:
    fake = FakeTelegram()
    second_client = aioredis.from_url(redis_url, decode_responses=False)
    first = await make_harness(redis, fake)
    second = await make_harness(second_client, fake)
    second.updates = first.updates
    clock = Clock()
    _on(first, clock)
    _on(second, clock)
    people = [User(80 + i, f"P{i}", language_code="en") for i in range(SEATS + 1)]
    try:
        for i, person in enumerate(people):
            await _ask(first if i % 2 else second, person)
        # The fourth filled a table at once, in whichever process asked; the fifth waits.
        numbers = {await first.store.quick.playing(p.id) for p in people[:SEATS]}
        assert len(numbers) == 1 and None not in numbers
        assert await second.store.quick.waiting() == [people[SEATS].id]
        clock.advance(FILL_AFTER_MS)
        # Both clocks tick: the last person gets one table, not two.
        made = await _timers(first).quick_tables() + await _timers(second).quick_tables()
        assert made == 1
        assert await first.store.quick.playing(people[SEATS].id) not in numbers
    finally:
        await first.app.shutdown()
        await second.app.shutdown()
        await second_client.aclose()
    fake.assert_clean()


async def _play_out(bot: BotHarness, clock: Clock, people: list[User]) -> Session:
    """People play true cards when they can (else one card), believe last cards and call
    Cheat! on the table in their private chat now and then; the clock plays the computers."""
    by_id = {p.id: p for p in people}
    session = await _quick_session(bot, people[0])
    place = session.place
    for step in range(3000):
        session, _ = await bot.store.load(place)  # type: ignore[assignment]
        assert session is not None and session.game is not None
        state = session.game
        if state.phase is Phase.FINISHED:
            return session
        if state.phase is Phase.PLAYING and not state.challenges and state.pull_by is None:
            player = state.players[state.turn]
            if player.user_id in by_id:
                hand = player.hand
                true = [c.rank for c in hand if c.rank is state.required]
                ranks = true[: play_limit(state, state.turn)] or [hand[0].rank]
                await play(bot, by_id[player.user_id], ranks)
                continue
            last = state.last_claim
            caller = by_id.get(state.players[state.next_active(state.turn)].user_id)
            if last is not None and caller is not None and step % 7 == 0:
                await bot.press(caller, caller.id, has_op(Op.CHALLENGE))
                continue
        if state.phase is Phase.FINAL_CHECK:
            waiting = [
                by_id[p.user_id]
                for s, p in enumerate(state.players)
                if p.user_id in by_id and can_accept(state, s)
            ]
            if waiting:
                await bot.press(waiting[0], waiting[0].id, has_op(Op.ACCEPT))
                continue
        due = session.next_deadline_ms
        assert due, f"nobody is to act at play {state.plays}"
        clock.now = max(clock.now, due)
        await _timers(bot).fire_due(due)
    raise AssertionError("the game did not end")


async def test_a_quick_game_is_played_to_its_result_in_private_chats(redis: Redis) -> None:
    async with quick_bot(redis) as (bot, clock):
        await _ask(bot, ANN)
        await _ask(bot, BOB)
        clock.advance(FILL_AFTER_MS)
        await _timers(bot).quick_tables()
        session = await _play_out(bot, clock, [ANN, BOB])
        assert session.game is not None and session.game.result is not None
        # The result is in each person's chat, each with the way to another quick game.
        for user in (ANN, BOB):
            last = bot.fake.find_button(user.id, lambda b: b.get("text", "").startswith("⚡"))
            assert last is not None
        # Nobody but the two was written to, and no group.
        chats = {call.params.get("chat_id") for call in bot.fake.calls if "chat_id" in call.params}
        assert chats <= {ANN.id, BOB.id}
        # Counted the way games against the computer are: no group's table, no rating.
        await bot.command(ANN, "/stats", chat=private(ANN))
        stats = bot.fake.last_message(ANN.id).seen_text
        assert "computer" in stats, stats
        # The result's button asks for another.
        await bot.press(ANN, ANN.id, lambda b: b.get("text", "").startswith("⚡"))
        assert await bot.store.quick.waiting() == [ANN.id]
        # 📜 How it went comes to whoever of its players asks, in their chat.
        await bot.press(BOB, BOB.id, has_op(Op.STORY))
        assert "📜" in bot.fake.last_message(BOB.id).seen_text


async def test_forgetme_takes_a_person_out_of_the_queue(redis: Redis) -> None:
    async with quick_bot(redis) as (bot, _):
        await _ask(bot, ANN)
        await bot.command(ANN, "/forgetme", chat=private(ANN))
        await bot.press(ANN, ANN.id, has_op(Op.FORGET))
        assert await bot.store.quick.waiting() == []
        keys = [key async for key in redis.scan_iter(match="tgc:{quick}:*")]
        for key in keys:
            kind = await redis.type(key)
            if kind == b"zset":
                assert await redis.zscore(key, str(ANN.id)) is None
            elif kind == b"hash":
                assert not await redis.hexists(key, str(ANN.id))


async def test_a_table_left_to_computer_players_alone_stops(redis: Redis) -> None:
    """The only person at a quick table leaves it: the computer players do not play on for
    nobody (the clock would keep their game going; the person could make one a minute)."""
    async with quick_bot(redis) as (bot, clock):
        await _ask(bot, CY)
        clock.advance(FILL_AFTER_MS)
        assert await _timers(bot).quick_tables() == 1
        place = (await _quick_session(bot, CY)).place
        await bot.command(CY, "/leave", chat=private(CY))
        session, _ = await bot.store.load(place)
        assert session is not None and session.game is not None
        assert session.game.phase is Phase.FINISHED
        assert session.game.result is not None
        assert session.game.result.reason is EndReason.STOPPED
        assert session.next_deadline_ms == 0


async def test_a_table_whose_process_died_before_dealing_it_is_dealt_by_the_clock(
    redis: Redis,
) -> None:
    """A process makes a table of the queue and dies before dealing it: the people are out of
    the queue and marked as playing, so they would wait for nothing. The clock of any process
    deals that table once the first had its time; a table dealt whose process died before
    saying so is not dealt twice."""
    async with quick_bot(redis) as (bot, clock):
        queue = bot.store.quick
        await _ask(bot, ANN)
        await _ask(bot, BOB)
        clock.advance(FILL_AFTER_MS)
        lost = await queue.match(clock())
        assert lost is not None and await queue.waiting() == []
        assert await _timers(bot).quick_tables() == 0, "dealt while its process may still"
        clock.advance(DEAL_WITHIN_MS)
        assert await _timers(bot).quick_tables() == 1
        ann, bob = await _quick_session(bot, ANN), await _quick_session(bot, BOB)
        assert ann.place == bob.place == Place.of_quick_game(lost.number)
        assert any("Your cards (" in t for t in bot.fake.texts(ANN.id))

        await _ask(bot, CY)
        clock.advance(FILL_AFTER_MS)
        made = await queue.match(clock())
        assert made is not None
        place = Place.of_quick_game(made.number)
        assert await _timers(bot)._quick._deal(place, made.seekers)
        dealt = await _quick_session(bot, CY)
        clock.advance(DEAL_WITHIN_MS)
        assert await _timers(bot).quick_tables() == 0
        again = await _quick_session(bot, CY)
        assert again.game_id == dealt.game_id, "the table was dealt a second time"
        clock.advance(DEAL_WITHIN_MS)
        assert await _timers(bot).quick_tables() == 0
        assert await redis.hlen(bot.store.keys.quick_made()) == 0
