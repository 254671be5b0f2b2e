"""The bot's budget of messages across all chats (tgcheat.store.send_budget) in play: what it
refuses is held for the clock, which shows the latest state once tokens are back; a table
posted anew goes whole or not at all.

The bot runs behind its webhook as in production with a budget of 6 messages a second, fed
real update JSON; the sender's clock is held still while the budget is spent, so that no token
comes back before the test moves it on."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from redis.asyncio import Redis

from tests.bot.conftest import GROUP_ID, BotHarness, make_harness
from tests.bot.play import has_op
from tests.bot.webhook import Served, served
from tests.support.fake_telegram import FakeTelegram
from tests.support.rate_limits import Rate, TelegramLimits
from tests.support.updates import User, private
from tgcheat.bot.callbacks import Op
from tgcheat.bot.delivery.plan import AGING_MS
from tgcheat.bot.sender import wall_clock_ms
from tgcheat.store.send_budget import (
    GLOBAL_FLOOD_CHATS,
    REPLIES_PER_SECOND,
    REPLY_BURST,
    Priority,
)

GROUP = -1001000000077
PLAYERS = (User(71, "Ann"), User(72, "Bob"), User(73, "Cy"))
#: How long a test waits for what the clock must show before it calls it lost.
SHOWN_WITHIN_S = 20.0


async def shown(condition: Callable[[], bool]) -> None:
    """Wait until the running bot has shown what ``condition`` looks for."""
    async with asyncio.timeout(SHOWN_WITHIN_S):
        while not condition():
            await asyncio.sleep(0.01)


def hold_still(bot: Served, at_ms: int) -> None:
    assert bot.app.routes is not None
    bot.app.routes.shell.clock = lambda: at_ms


def run_on_from(bot: Served, at_ms: int) -> None:
    """The bot's clock moves again, from ``at_ms``: the budget refills as time passes."""
    assert bot.app.routes is not None
    lead = at_ms - wall_clock_ms()
    bot.app.routes.shell.clock = lambda: wall_clock_ms() + lead


async def spend_all(bot: Served, at_ms: int) -> None:
    """Take every token the budget holds at ``at_ms``."""
    assert bot.app.routes is not None
    budget = bot.app.routes.shell.sender.budget
    assert budget is not None
    while (await budget.take_many(at_ms, [(Priority.MUST, 1)]))[0] == [True]:
        pass


def hands_with_buttons(bot: Served, user: User) -> int:
    return sum(1 for m in bot.fake.visible_messages(user.id) if m.buttons)


async def dealt(bot: Served) -> None:
    """A game opened, and shown (at 6 messages a second, the clock shows some of it)."""
    await bot.open_game(GROUP, PLAYERS)
    state = await bot.game(GROUP)
    first = next(u for u in PLAYERS if u.id == state.players[state.turn].user_id)
    await shown(lambda: hands_with_buttons(bot, first) >= 1)


async def test_a_play_over_the_budget_is_shown_by_the_clock_once_tokens_are_back(
    redis: Redis,
) -> None:
    async with served(redis, send_rate=6) as bot:
        await dealt(bot)
        await shown(lambda: "pile: 0 cards" in bot.table_text(GROUP))
        now = wall_clock_ms()
        hold_still(bot, now)
        await spend_all(bot, now)
        state = await bot.game(GROUP)
        next_player = next(
            u for u in PLAYERS if u.id == state.players[(state.turn + 1) % 3].user_id
        )
        before = len(bot.fake.calls)

        # The play is taken; the table's edit and the next player's turn wait for tokens.
        assert await bot.play_one(GROUP, PLAYERS) == [200, 200]
        assert (await bot.game(GROUP)).plays == 1
        sent = [c for c in bot.fake.calls[before:] if c.method != "answerCallbackQuery"]
        # Only the answers to the player's own taps went out: their hand, edited by the pick
        # and by the play.
        assert [c.method for c in sent] == ["editMessageText"] * 2
        player = state.players[state.turn].user_id
        assert all(c.params["chat_id"] == player for c in sent)
        assert "pile: 0 cards" in bot.table_text(GROUP)

        # Tokens are back: the clock shows the latest table and the next player's turn.
        run_on_from(bot, now + 5_000)
        assert bot.app.timers is not None
        await bot.app.timers.sync_due(now + 5_000)
        await shown(lambda: "pile: 1 card" in bot.table_text(GROUP))
        await shown(lambda: hands_with_buttons(bot, next_player) >= 1)
        assert not [c for c in bot.fake.calls if c.status == 429]


async def test_a_table_posted_anew_goes_whole_or_waits_whole(redis: Redis) -> None:
    """A Cheat! call moves the table down: a new table below, the old one made the reveal's
    line. With one token left (taken by a hand), the table waits whole; once tokens are back,
    the clock posts it, and one table has buttons."""
    async with served(redis, send_rate=6) as bot:
        await dealt(bot)
        assert await bot.play_one(GROUP, PLAYERS) == [200, 200]
        await shown(lambda: "pile: 1 card" in bot.table_text(GROUP))
        state = await bot.game(GROUP)
        caller = next(u for u in PLAYERS if u.id == state.players[state.turn].user_id)
        now = wall_clock_ms() + 10_000
        hold_still(bot, now)
        await spend_all(bot, now)
        assert bot.app.routes is not None
        budget = bot.app.routes.shell.sender.budget
        assert budget is not None
        # One token back: a hand of the call takes it, and the table's move waits whole.
        hold_still(bot, now + 170)
        group_sends = len(bot.fake.bot_messages(GROUP, include_deleted=True))

        challenge = bot.updates.press(bot.fake, caller, GROUP, has_op(Op.CHALLENGE))
        assert await bot.post(challenge) == 200
        assert (await bot.game(GROUP)).plays == 1
        assert len(bot.fake.bot_messages(GROUP, include_deleted=True)) == group_sends
        live = [m for m in bot.fake.visible_messages(GROUP) if m.buttons]
        assert len(live) == 1

        run_on_from(bot, now + 5_000)
        assert bot.app.timers is not None
        await bot.app.timers.sync_due(now + 5_000)
        await shown(lambda: "pile: 0 cards" in bot.table_text(GROUP))
        answering = [
            m
            for m in bot.fake.visible_messages(GROUP)
            if any("callback_data" in b and b["callback_data"].startswith("c") for b in m.buttons)
        ]
        assert len([m for m in bot.fake.visible_messages(GROUP) if m.buttons]) == 1
        assert answering == [] or answering == [bot.fake.visible_messages(GROUP)[-1]]
        assert not [c for c in bot.fake.calls if c.status == 429]


async def test_a_group_held_back_while_other_games_take_every_token_is_shown_in_the_end(
    redis: Redis,
) -> None:
    """Busy games that take every token what players must see may take do not starve a quiet
    group: what the budget held back of it goes a priority up once it has waited ``AGING_MS``,
    and before them after three times as long (within the budget: at Telegram's rate, a
    tenth of the bucket is left for it alone)."""
    async with served(redis, send_rate=30) as bot:
        await dealt(bot)
        await shown(lambda: "pile: 0 cards" in bot.table_text(GROUP))
        now = wall_clock_ms()
        hold_still(bot, now)
        await spend_all(bot, now)
        assert await bot.play_one(GROUP, PLAYERS) == [200, 200]
        assert "pile: 0 cards" in bot.table_text(GROUP)

        # Other games took every token as it came back, all the while.
        later = now + 3 * AGING_MS
        hold_still(bot, later)
        await spend_all(bot, later)
        assert bot.app.timers is not None
        await bot.app.timers.sync_due(later)
        await shown(lambda: "pile: 1 card" in bot.table_text(GROUP))
        assert not [c for c in bot.fake.calls if c.status == 429]


# --- what one person's commands may cost ---------------------------------------------------------

MALLORY, ANN, BOB = User(66, "Mallory"), User(1, "Ann"), User(2, "Bob")


def replies_in(bot: BotHarness, chat_id: int) -> int:
    return len(bot.fake.bot_messages(chat_id, include_deleted=True))


async def test_a_person_repeating_commands_gets_a_reply_a_second_and_others_get_theirs(
    redis: Redis,
) -> None:
    """Mallory sends /help ten times at once in her private chat, then /rules ten times in a
    group: she is answered three times at once, then once a second, wherever she writes; Ann
    and Bob are answered as ever, and the group's budget is still there for Bob."""
    bot = await make_harness(
        redis, replies_per_second=REPLIES_PER_SECOND, group_messages_per_minute=20
    )
    try:
        bot.fake.started_users.update({MALLORY.id, ANN.id})
        now = wall_clock_ms()
        bot.shell.clock = lambda: now
        for _ in range(10):
            await bot.command(MALLORY, "/help", private(MALLORY))
        assert replies_in(bot, MALLORY.id) == REPLY_BURST
        await bot.command(ANN, "/help", private(ANN))
        assert replies_in(bot, ANN.id) == 1

        bot.shell.clock = lambda: now + 1_000
        for _ in range(10):
            await bot.command(MALLORY, "/help", private(MALLORY))
        assert replies_in(bot, MALLORY.id) == REPLY_BURST + 1

        # Her allowance is hers wherever she writes: in a group she has none left either.
        for _ in range(10):
            await bot.command(MALLORY, "/rules")
        assert replies_in(bot, GROUP_ID) == 0
        bot.shell.clock = lambda: now + 10_000
        for _ in range(10):
            await bot.command(MALLORY, "/rules")
        assert replies_in(bot, GROUP_ID) == REPLY_BURST
        # The group's budget (bursts of 4) has a message left for Bob.
        bobs = bot.updates.command(bot.group, BOB, "/rules")
        await bot.feed(bobs)
        assert replies_in(bot, GROUP_ID) == REPLY_BURST + 1
        answer = bot.fake.calls_to("sendMessage")[-1].params
        assert answer["reply_parameters"]["message_id"] == bobs["message"]["message_id"]
    finally:
        await bot.app.shutdown()
    bot.fake.assert_clean()


async def test_presses_are_answered_whatever_the_person_asked_before(redis: Redis) -> None:
    """A pop-up costs no message: a person who spent her replies still has her taps
    answered."""
    bot = await make_harness(redis, replies_per_second=REPLIES_PER_SECOND)
    try:
        now = wall_clock_ms()
        bot.shell.clock = lambda: now
        await bot.command(ANN, "/new")
        for _ in range(REPLY_BURST + 2):
            await bot.command(MALLORY, "/help", private(MALLORY))
        answered = len(bot.fake.calls_to("answerCallbackQuery"))
        for _ in range(5):
            await bot.press(MALLORY, GROUP_ID, has_op(Op.LEAVE))
        popups = bot.fake.calls_to("answerCallbackQuery")[answered:]
        assert len(popups) == 5 and all(call.params.get("text") for call in popups)
    finally:
        await bot.app.shutdown()
    bot.fake.assert_clean()


# --- which 429 empties the bot's budget ----------------------------------------------------------

PEOPLE = tuple(User(80 + n, f"P{n}") for n in range(GLOBAL_FLOOD_CHATS + 2))


async def limited_bot(redis: Redis, limits: TelegramLimits) -> BotHarness:
    """The bot with a send budget of 10 a second against the offline API's limits; everyone
    here has started it, and the handlers' clock (the replies') holds still."""
    bot = await make_harness(
        redis,
        FakeTelegram(limits=limits),
        send_rate=10,
        replies_per_second=REPLIES_PER_SECOND,
    )
    bot.fake.started_users.update({MALLORY.id, ANN.id, *(person.id for person in PEOPLE)})
    now = wall_clock_ms()
    bot.shell.clock = lambda: now
    return bot


async def musts_taken(bot: BotHarness) -> int:
    """What the bot-wide budget still gives what players must see, now (taken)."""
    budget = bot.shell.sender.budget
    assert budget is not None
    now = wall_clock_ms()
    taken = 0
    while taken < 10 and (await budget.take_many(now, [(Priority.MUST, 1)]))[0] == [True]:
        taken += 1
    return taken


async def test_a_429_of_one_private_chats_own_limit_leaves_the_bots_budget_alone(
    redis: Redis,
) -> None:
    """Mallory's private chat takes one message at a time: her second /help meets a 429
    there. The bot sends far below its rate, so it is her chat's limit: nobody else's turn
    waits for it, and Ann is answered."""
    bot = await limited_bot(redis, TelegramLimits(private=Rate(per_second=0.001, burst=1)))
    try:
        await bot.command(MALLORY, "/help", private(MALLORY))
        await bot.command(MALLORY, "/help", private(MALLORY))
        assert [call.status for call in bot.fake.calls_to("sendMessage")] == [200, 429]
        await bot.command(ANN, "/help", private(ANN))
        assert replies_in(bot, ANN.id) == 1
        # 9 tokens held, 3 replies tried, 1.8 kept for answers: 4 turns may go at once.
        assert await musts_taken(bot) == 4
    finally:
        await bot.app.shutdown()
    bot.fake.assert_clean()


async def test_429s_in_several_chats_at_once_are_the_bots_limit_and_empty_its_budget(
    redis: Redis,
) -> None:
    """Telegram's limit for all chats is lower than the budget believes (2 messages, then
    none): the next people's replies meet 429s in as many chats, and the budget is emptied."""
    bot = await limited_bot(redis, TelegramLimits(all_chats=Rate(per_second=0.001, burst=2)))
    try:
        for person in PEOPLE:
            await bot.command(person, "/help", private(person))
        statuses = [call.status for call in bot.fake.calls_to("sendMessage")]
        assert statuses == [200, 200] + [429] * GLOBAL_FLOOD_CHATS
        assert await musts_taken(bot) == 0
    finally:
        await bot.app.shutdown()
    bot.fake.assert_clean()


async def test_a_reply_to_a_command_is_counted_with_the_next_request_for_tokens(
    redis: Redis,
) -> None:
    """A reply answers a person's own action: the budget never refuses it, so it costs no
    round trip of its own to Redis; it is counted with the next request for tokens."""
    bot = await limited_bot(redis, TelegramLimits())
    try:
        await bot.command(ANN, "/help", private(ANN))
        assert replies_in(bot, ANN.id) == 1
        assert await redis.exists(bot.store.keys.send_budget()) == 0, "Redis was asked"
        # 9 tokens held, 1 reply counted, 1.8 kept for answers: 6 turns may go at once.
        assert await musts_taken(bot) == 6
    finally:
        await bot.app.shutdown()
    bot.fake.assert_clean()
