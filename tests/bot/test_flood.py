"""One chat never stalls another: Telegram's 429 for a chat (a flood wait) is not slept out,
what it held back waits for the clock, and the clock handles each due chat on its own.

The bot runs behind its webhook endpoint, built as in production (``build_application``), and
is fed real update JSON; Telegram is the offline FakeTelegram, whose ``flood`` answers a chat's
requests with 429 "retry after N" and whose ``stall`` keeps a chat's requests waiting. Nothing
here sleeps: a test waits for a condition (a request made, a task done) and moves the bot's
clocks instead of waiting for them.
"""

from __future__ import annotations

import asyncio
from typing import Any

from redis.asyncio import Redis

from tests.bot.play import has_op
from tests.bot.webhook import Served, served, to_chat
from tests.support.updates import User, group
from tgcheat.bot.callbacks import Op
from tgcheat.bot.sender import wall_clock_ms

FLOODED_GROUP, CALM_GROUP = -1001000000001, -1001000000002
FLOODED_PLAYERS = (User(11, "Ann"), User(12, "Bob"), User(13, "Cy"))
CALM_PLAYERS = (User(21, "Di"), User(22, "Ed"), User(23, "Flo"))
#: A long flood wait: an hour. Slept out, it would hold the update for that long.
LONG_WAIT_S = 3600
#: How long a test waits for what must happen at once before it calls it stalled.
STALLED_AFTER_S = 20.0


def timers_of(bot: Served) -> Any:
    assert bot.app.timers is not None
    return bot.app.timers


async def test_a_group_in_a_long_flood_wait_holds_its_table_and_no_other_group_waits(
    redis: Redis,
) -> None:
    async with served(redis) as bot:
        await bot.open_game(FLOODED_GROUP, FLOODED_PLAYERS)
        await bot.open_game(CALM_GROUP, CALM_PLAYERS)
        flooded_table = bot.table_text(FLOODED_GROUP)
        bot.fake.flood(FLOODED_GROUP, LONG_WAIT_S)

        # A play in the flooded group is handled and answered 200 at once; its table waits.
        assert await bot.play_one(FLOODED_GROUP, FLOODED_PLAYERS) == [200, 200]
        assert (await bot.game(FLOODED_GROUP)).plays == 1
        assert bot.table_text(FLOODED_GROUP) == flooded_table
        refused = [c for c in bot.fake.calls if c.status == 429]
        assert refused and all(c.params["chat_id"] == FLOODED_GROUP for c in refused)
        due = await redis.zscore(bot.store.keys.due(FLOODED_GROUP), FLOODED_GROUP)
        assert due is not None and due >= wall_clock_ms() + (LONG_WAIT_S - 60) * 1000

        # The other group plays on: its press and its timeout are shown as usual.
        assert await bot.play_one(CALM_GROUP, CALM_PLAYERS) == [200, 200]
        assert "pile: 1 card" in bot.table_text(CALM_GROUP)
        # Both turns time out; the clock fires the flooded group's timeout too, without
        # waiting for Telegram there.
        now = max(await bot.deadline(FLOODED_GROUP), await bot.deadline(CALM_GROUP))
        assert await timers_of(bot).fire_due(now) == 2
        assert (await bot.game(CALM_GROUP)).plays == 2
        assert "ran out of time" in bot.table_text(CALM_GROUP)
        assert "pile: 2 cards" in bot.table_text(CALM_GROUP)
        assert (await bot.game(FLOODED_GROUP)).plays == 2
        assert bot.table_text(FLOODED_GROUP) == flooded_table

        # Nothing is tried there while the wait lasts; once it is over, the clock shows the
        # latest table, once.
        await timers_of(bot).sync_due(now)
        assert bot.table_text(FLOODED_GROUP) == flooded_table
        bot.fake.lift_flood(FLOODED_GROUP)
        later = wall_clock_ms() + (LONG_WAIT_S + 1) * 1000
        assert bot.app.routes is not None
        bot.app.routes.shell.clock = lambda: later
        await timers_of(bot).sync_due(later)
        shown = bot.table_text(FLOODED_GROUP)
        assert "pile: 2 cards" in shown and "ran out of time" in shown
        assert await redis.zscore(bot.store.keys.due(FLOODED_GROUP), FLOODED_GROUP) is None
        calls = len(bot.fake.calls)
        await timers_of(bot).sync_due(later)
        assert len(bot.fake.calls) == calls


async def test_a_reveal_held_by_a_flood_wait_is_shown_before_the_table(redis: Redis) -> None:
    async with served(redis) as bot:
        await bot.open_game(FLOODED_GROUP, FLOODED_PLAYERS)
        await bot.play_one(FLOODED_GROUP, FLOODED_PLAYERS)
        state = await bot.game(FLOODED_GROUP)
        challenger = next(
            u for u in FLOODED_PLAYERS if u.id == state.players[(state.turn + 1) % 3].user_id
        )
        bot.fake.flood(FLOODED_GROUP, LONG_WAIT_S)
        cheat = bot.updates.press(bot.fake, challenger, FLOODED_GROUP, has_op(Op.CHALLENGE))
        assert await bot.post(cheat) == 200
        assert " calls Cheat on " not in "\n".join(
            m.plain_text or "" for m in bot.fake.visible_messages(FLOODED_GROUP)
        )
        bot.fake.lift_flood(FLOODED_GROUP)
        later = wall_clock_ms() + (LONG_WAIT_S + 1) * 1000
        assert bot.app.routes is not None
        bot.app.routes.shell.clock = lambda: later
        await timers_of(bot).sync_due(later)
        texts = [m.plain_text or "" for m in bot.fake.visible_messages(FLOODED_GROUP)]
        reveals = [i for i, text in enumerate(texts) if " calls Cheat on " in text]
        # The reveal once, then the table below it (the last message), as it is after it.
        assert reveals == [len(texts) - 2]
        assert bot.fake.visible_messages(FLOODED_GROUP)[-1].buttons
        assert "pile: 0 cards" in texts[-1]


async def test_a_hand_held_by_a_private_flood_wait_comes_back_from_the_clock(
    redis: Redis,
) -> None:
    async with served(redis) as bot:
        await bot.open_game(FLOODED_GROUP, FLOODED_PLAYERS)
        state = await bot.game(FLOODED_GROUP)
        following = state.players[(state.turn + 1) % 3].user_id
        bot.fake.flood(following, LONG_WAIT_S)
        assert await bot.play_one(FLOODED_GROUP, FLOODED_PLAYERS) == [200, 200]
        assert (await bot.game(FLOODED_GROUP)).turn == (state.turn + 1) % 3
        # Their hand still shows the turn before: no Play for them yet.
        assert bot.fake.find_button(following, has_op(Op.PICK)) is None
        bot.fake.lift_flood(following)
        later = wall_clock_ms() + (LONG_WAIT_S + 1) * 1000
        assert bot.app.routes is not None
        bot.app.routes.shell.clock = lambda: later
        await timers_of(bot).sync_due(later)
        assert bot.fake.find_button(following, has_op(Op.PICK)) is not None
        # One hand with buttons that act on the game (a former hand may keep the Mini App's).
        keyboards = [
            m
            for m in bot.fake.visible_messages(following)
            if any("callback_data" in b for b in m.buttons)
        ]
        assert len(keyboards) == 1


async def test_the_clock_handles_each_due_chat_on_its_own(redis: Redis) -> None:
    """A chat whose requests hang (Telegram is slow there) holds up no other chat's timeout."""
    async with served(redis) as bot:
        assert bot.app.routes is not None
        shell = bot.app.routes.shell
        start = wall_clock_ms()
        shell.clock = lambda: start
        await bot.open_game(FLOODED_GROUP, FLOODED_PLAYERS)
        shell.clock = lambda: start + 1000
        await bot.open_game(CALM_GROUP, CALM_PLAYERS)
        slow = await bot.deadline(FLOODED_GROUP)
        assert slow < await bot.deadline(CALM_GROUP)  # the slow chat is due first
        gate = bot.fake.stall(FLOODED_GROUP)
        calm_shown = bot.fake.wait_for_call(to_chat(CALM_GROUP, "editMessageText"))
        firing = asyncio.create_task(timers_of(bot).fire_due(await bot.deadline(CALM_GROUP)))
        try:
            await asyncio.wait_for(calm_shown, STALLED_AFTER_S)
            assert (await bot.game(CALM_GROUP)).plays == 1
            assert "ran out of time" in bot.table_text(CALM_GROUP)
            assert not firing.done()  # the slow chat is still waiting for Telegram
        finally:
            gate.set()
        assert await firing == 2
        assert (await bot.game(FLOODED_GROUP)).plays == 1
        assert "ran out of time" in bot.table_text(FLOODED_GROUP)


async def test_an_admin_check_in_a_flood_wait_pauses_no_other_group(redis: Redis) -> None:
    """A request made through python-telegram-bot's Bot (is this member an admin?) that meets
    a 429 is not waited out, and no other group's request waits for it."""
    async with served(redis) as bot:
        await bot.open_game(FLOODED_GROUP, FLOODED_PLAYERS)
        await bot.open_game(CALM_GROUP, CALM_PLAYERS)
        flooded_admin, calm_admin = User(31, "Gus"), User(32, "Hal")
        bot.fake.set_admins(FLOODED_GROUP, [flooded_admin.id])
        bot.fake.set_admins(CALM_GROUP, [calm_admin.id])
        bot.fake.flood(FLOODED_GROUP, LONG_WAIT_S)
        stop_flooded = bot.updates.command(group(FLOODED_GROUP), flooded_admin, "/stop")
        flooded = asyncio.create_task(bot.post(stop_flooded))
        stop_calm = bot.updates.command(group(CALM_GROUP), calm_admin, "/stop")
        assert await asyncio.wait_for(bot.post(stop_calm), STALLED_AFTER_S) == 200
        assert (await bot.game(CALM_GROUP)).result is not None
        # The flooded group's /stop is answered at once too (nothing can be shown there).
        assert await asyncio.wait_for(flooded, STALLED_AFTER_S) == 200


async def test_replies_to_commands_spend_their_group_budget_only(redis: Redis) -> None:
    """A member who repeats /rules spends their group's budget: once it is spent, the replies
    are dropped and the table is not posted again; another group is answered as usual."""
    async with served(redis, per_minute=20) as bot:
        assert bot.app.routes is not None
        now = wall_clock_ms()
        bot.app.routes.shell.clock = lambda: now
        await bot.open_game(FLOODED_GROUP, FLOODED_PLAYERS)
        await bot.open_game(CALM_GROUP, CALM_PLAYERS)
        # A minute later each group's budget is whole again (a burst of 4 messages).
        bot.app.routes.shell.clock = lambda: now + 60_000
        spammer = FLOODED_PLAYERS[1]
        bot.fake.clear()
        for _ in range(10):
            rules = bot.updates.command(group(FLOODED_GROUP), spammer, "/rules")
            assert await bot.post(rules) == 200
        sent = bot.fake.calls_to("sendMessage")
        replies = [c for c in sent if "reply_parameters" in c.params]
        tables = [c for c in sent if "reply_parameters" not in c.params]
        # Each reply costs its message and the table's again below it: two of each.
        assert len(replies) == 2 and len(tables) == 2
        assert bot.fake.visible_messages(FLOODED_GROUP)[-1].buttons  # the table is last
        bot.fake.clear()
        rules = bot.updates.command(group(CALM_GROUP), CALM_PLAYERS[1], "/rules")
        assert await bot.post(rules) == 200
        assert [c.params["chat_id"] for c in bot.fake.calls_to("sendMessage")] == [
            CALM_GROUP,
            CALM_GROUP,
        ]


async def test_a_pick_that_a_flood_wait_kept_from_showing_asks_to_tap_again(
    redis: Redis,
) -> None:
    async with served(redis) as bot:
        await bot.open_game(FLOODED_GROUP, FLOODED_PLAYERS)
        state = await bot.game(FLOODED_GROUP)
        user = next(u for u in FLOODED_PLAYERS if u.id == state.players[state.turn].user_id)
        rank = state.players[state.turn].hand[0].rank
        pick = bot.updates.press(bot.fake, user, user.id, has_op(Op.PICK, rank))
        bot.fake.flood(user.id, LONG_WAIT_S)
        response = await bot.respond(pick)
        assert response.status_code == 200
        assert response.json()["text"].startswith("Telegram asks the bot to slow down")
        # The hand does not show the pick yet (only a pick brings Clear); it is kept, and the
        # clock shows it once the wait is over.
        assert bot.fake.find_button(user.id, has_op(Op.CLEAR)) is None
        bot.fake.lift_flood(user.id)
        later = wall_clock_ms() + (LONG_WAIT_S + 1) * 1000
        assert bot.app.routes is not None
        bot.app.routes.shell.clock = lambda: later
        await timers_of(bot).sync_due(later)
        assert bot.fake.find_button(user.id, has_op(Op.CLEAR)) is not None
