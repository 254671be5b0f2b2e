"""Two bot processes serving one bot: one Redis, conflicting updates at the same instant.

Each process is its own Application with its own Redis client (as two `tgcheat serve` would
be); they share one FakeTelegram, because they share one Telegram: a table message one process
posts is edited by the other (its id is in Redis), and a callback query one answers cannot be
answered again by the other. Two fakes would refuse every cross-process edit as "message to edit
not found" and each process would post tables of its own, which is not what happens.

Some scenarios go through the real webhook endpoint (``tgcheat.web.create_web_app`` behind
httpx's ASGI transport), the way Telegram delivers updates.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import redis.asyncio as aioredis
from redis.asyncio import Redis

from tests.bot.conftest import GROUP_ID, TOKEN, UNLIMITED, BotHarness, make_harness
from tests.support.fake_telegram import FakeTelegram, JsonDict
from tests.support.updates import UpdateFactory, User, group
from tgcheat.bot.app import CheatApplication, build_application
from tgcheat.bot.callbacks import BadCallback, ClaimPress, HandPress, Op, Press, parse
from tgcheat.config import Config
from tgcheat.engine.actions import Accept, Challenge, Play
from tgcheat.engine.ai import choose_action
from tgcheat.engine.game import awaited
from tgcheat.engine.invariants import violations
from tgcheat.engine.state import GameState, Phase
from tgcheat.store.games import GameStore
from tgcheat.store.keys import Keys
from tgcheat.table.session import Session
from tgcheat.web import SECRET_HEADER, create_web_app

PLAYERS = (User(501, "Ann"), User(502, "Bob"), User(503, "Cy"), User(504, "Di"))
SECRET = "two-processes_secret"
TOO_LATE = "Too late: that play can no longer be challenged."
STALE = "This button is out of date."
REVEAL = " calls Cheat on "


# --- two processes --------------------------------------------------------------------------------


@asynccontextmanager
async def two_harnesses(redis: Redis, redis_url: str) -> AsyncIterator[tuple[BotHarness, ...]]:
    """Two Applications fed directly (``process_update``), one Redis, one Telegram."""
    fake = FakeTelegram()
    second_client = aioredis.from_url(redis_url, decode_responses=False)
    first = await make_harness(redis, fake)
    second = await make_harness(second_client, fake)
    second.updates = first.updates  # one Telegram numbers the updates
    errors: list[BaseException] = []
    for harness in (first, second):
        harness.app.add_error_handler(_recorder(errors))
    try:
        yield first, second
    finally:
        await first.app.shutdown()
        await second.app.shutdown()
        await second_client.aclose()
    assert not errors, f"an error reached the error handlers: {errors[0]!r}"
    fake.assert_clean()


def _recorder(errors: list[BaseException]) -> Callable[[object, Any], Awaitable[None]]:
    async def record(update: object, context: Any) -> None:
        errors.append(context.error)

    return record


@dataclass
class WebProcess:
    application: CheatApplication
    client: httpx.AsyncClient
    fake: FakeTelegram

    async def post(self, update: JsonDict) -> int:
        response = await self.client.post("/telegram", json=update, headers={SECRET_HEADER: SECRET})
        await self.fake.webhook_answer(
            response.status_code, response.headers.get("content-type"), response.content
        )
        return response.status_code


@asynccontextmanager
async def two_webhooks(
    redis: Redis, redis_url: str
) -> AsyncIterator[tuple[FakeTelegram, UpdateFactory, WebProcess, WebProcess]]:
    """Two `tgcheat serve` processes: each an Application behind its own webhook app."""
    fake = FakeTelegram()
    config = Config(
        telegram_bot_token=TOKEN,
        webhook_url="https://cheat.example.com/telegram",
        webhook_secret=SECRET,
    )
    async with AsyncExitStack() as stack:
        processes = []
        for client in (redis, aioredis.from_url(redis_url, decode_responses=False)):
            if client is not redis:
                stack.push_async_callback(client.aclose)
            application = build_application(
                config, client, request=fake, group_messages_per_minute=UNLIMITED, send_rate=0
            )
            assert isinstance(application, CheatApplication)
            web = create_web_app(application, client, config)
            await stack.enter_async_context(web.router.lifespan_context(web))
            http = await stack.enter_async_context(
                httpx.AsyncClient(transport=httpx.ASGITransport(app=web), base_url="http://bot")
            )
            processes.append(WebProcess(application, http, fake))
        yield fake, UpdateFactory(fake), processes[0], processes[1]
    fake.assert_clean()


# --- driving a table ------------------------------------------------------------------------------


async def stored(redis: Redis) -> tuple[Session, int]:
    session, _ = await GameStore(redis).load(GROUP_ID)
    version = await redis.hget(Keys().session(GROUP_ID), "v")
    assert session is not None
    return session, int(version or 0)


async def game_of(redis: Redis) -> GameState:
    session, _ = await stored(redis)
    assert session.game is not None
    return session.game


def user_at(state: GameState, seat: int) -> User:
    return next(u for u in PLAYERS if u.id == state.players[seat].user_id)


def button(fake: FakeTelegram, chat_id: int, wanted: Callable[[Press], bool]) -> Any:
    def matches(b: JsonDict) -> bool:
        try:
            return "callback_data" in b and wanted(parse(str(b["callback_data"])))
        except BadCallback:
            return False

    found = fake.find_button(chat_id, matches)
    assert found is not None, f"no such button in chat {chat_id}"
    return fake.message(chat_id, found[0]), str(found[1]["callback_data"])


def tap(
    fake: FakeTelegram, updates: UpdateFactory, user: User, chat_id: int, wanted: Any
) -> JsonDict:
    record, data = button(fake, chat_id, wanted)
    return updates.callback(user, record, data)


def table_message(fake: FakeTelegram) -> int:
    """The table: the group message with the "My cards" link."""
    found = fake.find_button(GROUP_ID, lambda b: "start=h" in str(b.get("url", "")))
    assert found is not None, "no table in the group"
    return found[0]


def reveals(fake: FakeTelegram) -> int:
    return sum(REVEAL in text for text in fake.texts(GROUP_ID))


def answer_text(fake: FakeTelegram, update: JsonDict) -> str:
    query_id = update["callback_query"]["id"]
    return str(fake.callback_answers[query_id].get("text") or "")


def assert_one_hand_each(fake: FakeTelegram) -> None:
    """Each player sees one hand message with buttons: a second copy would keep buttons that
    go out of date, as its id is not kept (the next change edits the other)."""
    for user in PLAYERS:
        keyboards = [
            record.message_id
            for record in fake.visible_messages(user.id)
            if any("callback_data" in b for b in record.buttons)
        ]
        assert len(keyboards) <= 1, f"{user.first_name} has hand messages {keyboards}"


def check(state: GameState) -> None:
    assert not violations(state, 52), violations(state, 52)


async def open_table(
    deliver: Callable[[JsonDict], Awaitable[Any]], fake: FakeTelegram, updates: UpdateFactory
) -> None:
    """/new, everyone joins by the deep link, Ann starts: four players, one deck."""
    table = group(GROUP_ID, "Two <processes>")
    await deliver(updates.command(table, PLAYERS[0], "/new"))
    fake.set_members(GROUP_ID, [user.id for user in PLAYERS])
    for user in PLAYERS:
        await deliver(updates.start_private(user, f"j{GROUP_ID}"))
    await deliver(tap(fake, updates, PLAYERS[0], GROUP_ID, lambda p: p.op is Op.START))


async def claim(
    deliver: Callable[[JsonDict], Awaitable[Any]],
    fake: FakeTelegram,
    updates: UpdateFactory,
    state: GameState,
) -> JsonDict:
    """The player to play picks one card; returns their Play tap, not yet delivered."""
    user = user_at(state, state.turn)
    rank = state.players[state.turn].hand[0].rank
    await deliver(tap(fake, updates, user, user.id, lambda p: p.op is Op.PICK and p.rank is rank))
    return tap(fake, updates, user, user.id, lambda p: p.op is Op.PLAY)


# --- the scenarios --------------------------------------------------------------------------------


async def test_two_cheat_presses_one_to_each_process_make_one_challenge(
    redis: Redis, redis_url: str
) -> None:
    async with two_harnesses(redis, redis_url) as (one, two):
        fake, updates = one.fake, one.updates
        await open_table(one.feed, fake, updates)
        for round_ in range(6):
            state = await game_of(redis)
            await (one if round_ % 2 else two).feed(await claim(two.feed, fake, updates, state))
            state = await game_of(redis)
            claimant = state.open_claims[-1].seat
            callers = [s for s in state.active_seats() if s != claimant][:2]
            cheat = [
                tap(fake, updates, user_at(state, s), GROUP_ID, lambda p: p.op is Op.CHALLENGE)
                for s in callers
            ]
            _, version = await stored(redis)
            before = reveals(fake)
            first, second = (one, two) if round_ % 2 else (two, one)
            await asyncio.gather(first.feed(cheat[0]), second.feed(cheat[1]))
            assert reveals(fake) == before + 1, "one challenge, one reveal"
            assert sorted(answer_text(fake, press) for press in cheat) == ["", TOO_LATE]
            after, after_version = await stored(redis)
            assert after_version == version + 1
            assert after.game is not None and after.game.pile == ()
            check(after.game)


async def test_a_play_and_its_timeout_at_the_same_instant_apply_once(
    redis: Redis, redis_url: str
) -> None:
    """A play pressed in one process and its turn's timeout fired by the other's clock apply
    once, whichever commits first. The order is chosen by the test: the clock's whole timeout,
    then the tap (which starts from the version its process last wrote, so its compare-and-set
    is the one that loses); the tap, then the clock (whose deadline has moved on); and both at
    once, where either may win but never both."""
    # Both processes read one wall clock; here it jumps to each turn's deadline instead of
    # waiting for it, and the tap and the clock act at that same instant.
    clock = [int(time.time() * 1000)]
    async with two_harnesses(redis, redis_url) as (one, two):
        for harness in (one, two):
            harness.shell.clock = lambda: clock[0]
        fake, updates = one.fake, one.updates
        timers = two.app.timers  # type: ignore[attr-defined]
        await open_table(one.feed, fake, updates)
        for order in ("clock first", "tap first", "together") * 2:
            session, _ = await stored(redis)
            state = session.game
            assert state is not None and session.deadline_ms > 0
            play = await claim(one.feed, fake, updates, state)
            # The pick is kept in the session: the race is between the play and the clock.
            _, version = await stored(redis)
            clock[0] = session.deadline_ms
            if order == "clock first":
                await timers.fire_due(session.deadline_ms)
                await one.feed(play)
            elif order == "tap first":
                await one.feed(play)
                await timers.fire_due(session.deadline_ms)
            else:
                await asyncio.gather(timers.fire_due(session.deadline_ms), one.feed(play))
            after, after_version = await stored(redis)
            assert after.game is not None
            assert after.game.plays == state.plays + 1, f"{order}: exactly one of them applied"
            assert after_version == version + 1
            check(after.game)
            timeouts = state.players[state.turn].timeouts
            timed_out = after.game.players[state.turn].timeouts == timeouts + 1
            assert answer_text(fake, play) == (STALE if timed_out else "")
            if order != "together":
                assert timed_out == (order == "clock first"), order


async def test_the_same_update_delivered_to_both_webhooks_is_applied_once(
    redis: Redis, redis_url: str
) -> None:
    async with two_webhooks(redis, redis_url) as (fake, updates, one, two):

        async def to_both(update: JsonDict) -> None:
            assert await asyncio.gather(one.post(update), two.post(update)) == [200, 200]

        async def to_one(update: JsonDict) -> None:
            assert await one.post(update) == 200

        # /new, each /start j<chat> and the Start tap, each delivered to both at once.
        await open_table(to_both, fake, updates)
        group_texts = [r.history[0].plain_text or "" for r in fake.bot_messages(GROUP_ID)]
        assert sum("a new game is open" in text for text in group_texts) == 1
        assert not any("already open" in text for text in group_texts), group_texts
        for user in PLAYERS:
            private = [r.history[0].plain_text or "" for r in fake.bot_messages(user.id)]
            assert sum("You joined the game" in text for text in private) == 1, private
            assert not any("already in this game" in text for text in private), private
        state = await game_of(redis)
        assert sorted(p.user_id for p in state.players) == [u.id for u in PLAYERS]
        table_id = table_message(fake)

        def shown() -> tuple[int, int]:
            """(versions of the table message, group messages): what people saw change."""
            versions = len(fake.message(GROUP_ID, table_id).history)
            return versions, len(fake.bot_messages(GROUP_ID, include_deleted=True))

        state = await game_of(redis)
        play = await claim(to_one, fake, updates, state)
        _, version = await stored(redis)
        versions, messages = shown()
        assert await asyncio.gather(one.post(play), two.post(play)) == [200, 200]
        after, after_version = await stored(redis)
        assert after_version == version + 1 and after.game is not None
        assert after.game.plays == state.plays + 1
        assert shown() == (versions + 1, messages), "one table edit, no new message"

        challenger = user_at(after.game, after.game.turn)
        cheat = tap(fake, updates, challenger, GROUP_ID, lambda p: p.op is Op.CHALLENGE)
        versions, messages = shown()
        assert await asyncio.gather(two.post(cheat), one.post(cheat)) == [200, 200]
        final, final_version = await stored(redis)
        assert final_version == after_version + 1 and final.game is not None
        assert final.game.pile == ()
        # The old table becomes the reveal's line, once: the second delivery leaves the table
        # to the first, which is moving it (no edit of the old message in between).
        assert shown() == (versions + 1, messages + 1), "the table becomes the reveal, a new one"
        assert reveals(fake) == 1
        check(final.game)


async def test_a_game_started_in_one_process_goes_on_in_the_other(
    redis: Redis, redis_url: str
) -> None:
    """Started through one webhook; every later tap to either, at random; the table stays
    the message the first process posted, edited by both."""
    rng = random.Random(7)
    async with two_webhooks(redis, redis_url) as (fake, updates, one, two):

        async def to(process: WebProcess, update: JsonDict) -> None:
            assert await process.post(update) == 200

        await open_table(lambda u: to(one, u), fake, updates)
        table_id = table_message(fake)
        moves = 0
        while moves < 300:
            session, version = await stored(redis)
            state = session.game
            assert state is not None
            check(state)
            if state.phase is Phase.FINISHED:
                break
            seat = sorted(awaited(state))[0]
            action = choose_action(state, seat, rng)
            user = user_at(state, seat)

            async def deliver(update: JsonDict) -> None:
                await to(rng.choice((one, two)), update)

            match action:
                case Play(cards=cards, rank=rank):
                    for card in sorted(cards):
                        await deliver(
                            tap(
                                fake,
                                updates,
                                user,
                                user.id,
                                lambda p, r=card.rank: p.op is Op.PICK and p.rank is r,
                            )
                        )
                    # Each pick is kept in the session; the play is counted from here.
                    _, version = await stored(redis)
                    await deliver(
                        tap(
                            fake,
                            updates,
                            user,
                            user.id,
                            lambda p: p.op is Op.PLAY and p.rank is rank,
                        )
                    )
                case Challenge() | Accept():
                    op = Op.CHALLENGE if isinstance(action, Challenge) else Op.ACCEPT
                    await deliver(tap(fake, updates, user, GROUP_ID, lambda p, o=op: p.op is o))
                case _:
                    raise AssertionError(f"unexpected {action}")
            _, after_version = await stored(redis)
            assert after_version == version + 1, f"{action} applied once"
            moves += 1
        assert moves >= 20
        tables = [
            record.message_id
            for record in fake.visible_messages(GROUP_ID)
            if any("start=h" in str(b.get("url", "")) for b in record.buttons)
        ]
        finished = state.phase is Phase.FINISHED
        assert tables == ([] if finished else [table_id]), "one table, the first process's"
        assert "pile" in (fake.message(GROUP_ID, table_id).plain_text or "")


# A change whose showing failed must still be shown: Telegram answers one of its edits with 502
# after the change was stored. The update is handled (its sync leaves the place due); should
# Telegram deliver it again all the same (the webhook's answer lost), the delivery only syncs,
# and shows the change: the table's Cheat! names the claim and the next player's hand has its
# keyboard.
async def test_a_change_whose_showing_failed_is_shown_when_telegram_delivers_it_again(
    redis: Redis, redis_url: str
) -> None:
    async with two_webhooks(redis, redis_url) as (fake, updates, one, two):

        async def to_one(update: JsonDict) -> None:
            assert await one.post(update) == 200

        await open_table(to_one, fake, updates)
        state = await game_of(redis)
        play = await claim(to_one, fake, updates, state)
        fake.fail_next("editMessageText", 502)
        assert await one.post(play) == 200  # committed, then Telegram's 502: left due
        assert await two.post(play) == 200  # Telegram delivers it again, to the other
        after = await game_of(redis)
        assert after.plays == state.plays + 1
        record = fake.message(GROUP_ID, table_message(fake))
        cheat = [parse(b["callback_data"]) for b in record.buttons if "callback_data" in b]
        assert [p.claim for p in cheat if isinstance(p, ClaimPress)] == [after.plays]
        player = user_at(after, after.turn)
        hand = fake.last_message(player.id)
        drawn_at = [parse(b["callback_data"]) for b in hand.buttons if "callback_data" in b]
        assert any(isinstance(p, HandPress) and p.plays == after.plays for p in drawn_at), (
            "the next player's hand has no keyboard"
        )


# Found by tools/soak.py (stray hand keyboards with no Redis or Bot API failure at all): a
# duplicate delivery's catch-up ran while the first delivery was still publishing in the other
# process; it edited the next player's old hand message, found it gone and sent a copy, whose
# buttons stayed out of date. ``Publisher.catch_up`` now shows the state by edits only.
async def test_a_play_delivered_to_both_processes_leaves_one_hand_message_each(
    redis: Redis, redis_url: str
) -> None:
    async with two_webhooks(redis, redis_url) as (fake, updates, one, two):

        async def to_one(update: JsonDict) -> None:
            assert await one.post(update) == 200

        await open_table(to_one, fake, updates)
        for _round in range(3):
            state = await game_of(redis)
            play = await claim(to_one, fake, updates, state)
            assert await asyncio.gather(one.post(play), two.post(play)) == [200, 200]
            assert (await game_of(redis)).plays == state.plays + 1
            assert_one_hand_each(fake)


# Found by tools/soak.py (a Cheat! call in its player's new hand, racing that turn's deadline,
# moved the version by two): a sync records the messages it posted only as it ends, so while
# one is under way the stored record can lack the hand it has just shown. The clock took that
# player for one who had not seen their turn and started it again. It now judges the turn once
# the sync has ended.
async def test_a_turn_whose_hand_a_sync_under_way_has_shown_times_out_at_its_deadline(
    redis: Redis, redis_url: str
) -> None:
    clock = [int(time.time() * 1000)]
    async with two_harnesses(redis, redis_url) as (one, two):
        for harness in (one, two):
            harness.shell.clock = lambda: clock[0]
        fake, updates = one.fake, one.updates
        timers = two.app.timers  # type: ignore[attr-defined]
        await open_table(one.feed, fake, updates)
        state = await game_of(redis)
        play = await claim(one.feed, fake, updates, state)
        following = state.next_active(state.turn)
        user = user_at(state, following)
        table_edit = fake.hang_next(
            lambda method, params: method == "editMessageText" and params["chat_id"] == GROUP_ID
        )
        hand_sent = fake.wait_for_call(
            lambda call: call.method == "sendMessage" and call.params["chat_id"] == user.id
        )
        playing = asyncio.create_task(one.feed(play))
        await asyncio.wait_for(asyncio.gather(table_edit.arrived, hand_sent), 5)
        # The play is stored and its next player has their hand of the turn; the sync that
        # sent it waits for the table's edit.
        session, version = await stored(redis)
        assert session.game is not None and session.game.turn == following
        clock[0] = session.deadline_ms
        await timers.fire_due(session.deadline_ms)
        table_edit.released.set()
        await playing
        await timers.fire_due(session.deadline_ms)
        after, after_version = await stored(redis)
        assert after.game is not None
        assert after_version == version + 1, "the clock wrote once"
        timeouts = session.game.players[following].timeouts
        assert after.game.players[following].timeouts == timeouts + 1, "the turn timed out"
        check(after.game)


# Found by tools/soak.py (a Cheat! call's reveal counted twice, one of the two deleted): a sync
# whose lease ran out while it waited for Telegram went on sending once the other process had
# synced the place; finding its lease lost, it deleted what it had sent, but the group had been
# notified of it all the same. A sync now sends nothing once its lease is nearly out.
async def test_a_sync_whose_lease_ran_out_sends_nothing_once_the_other_process_synced(
    redis: Redis, redis_url: str
) -> None:
    clock = [int(time.time() * 1000)]
    async with two_harnesses(redis, redis_url) as (one, two):
        for harness in (one, two):
            harness.shell.clock = lambda: clock[0]
        fake, updates = one.fake, one.updates
        await open_table(one.feed, fake, updates)
        state = await game_of(redis)
        await one.feed(await claim(one.feed, fake, updates, state))
        state = await game_of(redis)
        challenger = user_at(state, state.turn)
        cheat = tap(fake, updates, challenger, GROUP_ID, lambda p: p.op is Op.CHALLENGE)
        # The challenge's sync turns the old table into the reveal, then sends the new table:
        # Telegram takes its time over the first, past the end of the sync's lease.
        old_table_edit = fake.hang_next(
            lambda method, params: method == "editMessageText" and params["chat_id"] == GROUP_ID
        )
        calling = asyncio.create_task(one.feed(cheat))
        await asyncio.wait_for(old_table_edit.arrived, 5)
        clock[0] += one.store.shown.lease_ms
        await two.app.timers.sync_due()  # type: ignore[attr-defined]
        old_table_edit.released.set()
        await calling
        assert reveals(fake) == 1
        group = fake.bot_messages(GROUP_ID, include_deleted=True)
        assert [m.message_id for m in group if m.deleted] == [], "sent, then deleted"
        tables = [
            m.message_id
            for m in fake.visible_messages(GROUP_ID)
            if any("start=h" in str(b.get("url", "")) for b in m.buttons)
        ]
        assert len(tables) == 1
