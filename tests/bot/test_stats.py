"""Statistics (/stats, /top, /forgetme): each finished game is counted once, whether its final
update is delivered twice, handled by two processes, or its process dies after the commit and
the clock shows the result."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio import Redis

from tests.bot.conftest import GROUP_ID, BotHarness, make_harness
from tests.bot.play import group_texts, has_op, install_game, join_by_button, play, seated
from tests.engine.helpers import cards, state_with
from tests.support.fake_telegram import FakeTelegram
from tests.support.updates import User, private
from tgcheat.bot.app import CheatApplication
from tgcheat.bot.callbacks import ForgetPress, Op
from tgcheat.bot.timers import Timers
from tgcheat.engine.cards import Rank
from tgcheat.engine.game import can_accept, play_limit
from tgcheat.engine.rules import Rules
from tgcheat.engine.state import EndReason, Phase
from tgcheat.store.scripts import LEASE_MS
from tgcheat.table import transitions as table
from tgcheat.table.commands import Believe
from tgcheat.table.computers import is_computer
from tgcheat.table.rating import season_of
from tgcheat.table.stats import Row

ANN, BOB, CAROL = User(1, "Ann"), User(2, "Bob"), User(3, "Carol")


def _timers(bot: BotHarness) -> Timers:
    app = bot.app
    assert isinstance(app, CheatApplication) and app.timers is not None
    return app.timers


async def _last_cards(bot: BotHarness, first: User, others: list[User], game_id: str) -> None:
    """``first`` holds one 2 and plays it as an ace: last cards, a bluff, for the others to
    believe (a bluff that gets away); the rest of the deck goes to the last seat."""
    state = state_with([cards("2♣"), cards("2♦", "7♦"), cards("3♣", "8♦")], rest_to=2)
    await install_game(bot, seated(state, [first, *others]), game_id)
    for user in (first, *others):
        await bot.start_private(user, f"h{GROUP_ID}")
    await play(bot, first, [Rank.TWO])


async def _believe(bot: BotHarness, user: User) -> dict[str, Any]:
    """The I believe you press's update, fed once (the caller may deliver it again)."""
    update = bot.updates.press(bot.fake, user, GROUP_ID, has_op(Op.ACCEPT))
    await bot.feed(update)
    return update


@asynccontextmanager
async def _second_process(redis_url: str, fake: FakeTelegram) -> AsyncIterator[BotHarness]:
    client = aioredis.from_url(redis_url, decode_responses=False)
    second = await make_harness(client, fake)
    try:
        yield second
    finally:
        await second.app.shutdown()
        await client.aclose()


async def test_two_games_are_counted_exactly_once_each(
    bot: BotHarness, redis: Redis, redis_url: str
) -> None:
    # Game 1: Bob's last card, a 2 played as an ace, is believed. Carol's belief is
    # committed by a process that dies before it shows (or counts) anything; a second
    # process gets the update again, and its clock shows the result once the lease is over.
    await _last_cards(bot, BOB, [ANN, CAROL], "game2")
    await _believe(bot, ANN)
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None and session.game is not None
    claim = session.game.open_claims[-1].number
    final = bot.updates.press(bot.fake, CAROL, GROUP_ID, has_op(Op.ACCEPT))
    await bot.store.transact(
        GROUP_ID,
        lambda s: table.act(s, game_id="game2", command=Believe(CAROL.id, claim), now_ms=0),
        update_id=final["update_id"],
        lease=True,
    )
    async with _second_process(redis_url, bot.fake) as second:
        second.updates = bot.updates
        await second.feed(final)
        now = int(time.time() * 1000) + LEASE_MS + 1_000
        bot.shell.clock = second.shell.clock = lambda: now
        await asyncio.gather(_timers(second).sync_due(now), _timers(bot).sync_due(now))
    # Game 2: Ann goes out the same way. The final press's process
    # counts the game, then dies waiting for Telegram; the update is delivered again, and the
    # clock shows the result once that process's lease is over (and counts it again: once).
    await _last_cards(bot, ANN, [BOB, CAROL], "game1")
    await _believe(bot, BOB)
    final = bot.updates.press(bot.fake, CAROL, GROUP_ID, has_op(Op.ACCEPT))
    hung = bot.fake.hang_next(
        lambda method, params: method == "sendMessage" and params.get("chat_id") == GROUP_ID
    )
    first = asyncio.create_task(bot.feed(final))
    await hung.arrived
    await bot.feed(final)
    later = bot.shell.clock() + LEASE_MS + 1_000
    bot.shell.clock = lambda: later
    await _timers(bot).sync_due(later)
    first.cancel()
    await asyncio.gather(first, return_exceptions=True)
    assert "wins" in group_texts(bot)
    ann, bob, carol = [await bot.store.stats.person(u.id) for u in (ANN, BOB, CAROL)]
    assert ann == Row(
        games=2, wins=1, second=1, plays=1, bluffs=1, bluffs_unseen=1, streak=1, best_streak=1
    )
    assert bob == Row(
        games=2, wins=1, second=1, plays=1, bluffs=1, bluffs_unseen=1, streak=0, best_streak=1
    )
    assert carol == Row(games=2, third=2)
    rows = await bot.store.stats.group(GROUP_ID)
    assert rows[ANN.id] == ("Ann", await bot.store.stats.person(ANN.id))
    assert set(rows) == {ANN.id, BOB.id, CAROL.id}


async def test_stats_and_top_show_the_figures(bot: BotHarness) -> None:
    for game, (first, others) in enumerate(
        [(ANN, [BOB, CAROL]), (ANN, [CAROL, BOB]), (BOB, [ANN, CAROL])]
    ):
        await _last_cards(bot, first, others, f"g{game}")
        for user in others:
            await _believe(bot, user)
    await bot.command(ANN, "/stats")
    text = bot.fake.last_message(GROUP_ID).seen_text
    assert "Ann" in text and "Games: 3 · wins: 2 (67%)" in text
    await bot.command(CAROL, "/top")
    top = bot.fake.last_message(GROUP_ID).seen_text
    wins = top[top.index("Most wins") :]
    # Ann 2 of 3, Bob 1 of 3, Carol 0 of 3: in that order.
    assert wins.index("Ann") < wins.index("Bob") < wins.index("Carol")
    assert "67% (2/3)" in wins and "0% (0/3)" in wins
    await bot.command(ANN, "/stats", private(ANN))
    mine = bot.fake.last_message(ANN.id).seen_text
    assert "Games: 3 · wins: 2 (67%)" in mine and "🥈 1" in mine


async def test_forgetme_asks_first_then_removes_the_persons_data(bot: BotHarness) -> None:
    await _last_cards(bot, ANN, [BOB, CAROL], "g1")
    for user in (BOB, CAROL):
        await _believe(bot, user)
    await bot.command(BOB, "/language de", private(BOB))
    await bot.store.settings.save_user_language(BOB.id, "de")
    await bot.command(BOB, "/notify")
    await bot.command(BOB, "/forgetme")
    assert "Sende /forgetme" in bot.fake.last_message(GROUP_ID).seen_text
    await bot.command(BOB, "/forgetme", private(BOB))
    assert await bot.store.stats.person(BOB.id) is not None  # nothing goes before the press
    # Another person's press (forged data) deletes nothing.
    forged = ForgetPress(BOB.id).encode()
    message = {"message_id": 1, "chat": private(ANN), "date": 0, "text": "?"}
    await bot.feed(bot.updates.callback(ANN, {**message, "from": bot.fake.bot_sender}, forged))
    assert await bot.store.stats.person(BOB.id) is not None
    await bot.press(BOB, BOB.id, has_op(Op.FORGET))
    assert await bot.store.stats.person(BOB.id) is None
    assert BOB.id not in await bot.store.stats.group(GROUP_ID)
    assert ANN.id in await bot.store.stats.group(GROUP_ID)
    assert await bot.store.settings.user_language(BOB.id) is None
    assert await bot.store.pings.take(GROUP_ID) == []


async def test_forgetme_before_a_late_count_of_a_game_keeps_the_person_forgotten(
    bot: BotHarness,
) -> None:
    """The final press's process commits the end of the game and dies before counting it;
    Bob asks to be forgotten; then the clock shows the result and counts the game: not for
    Bob (nor his row in the group's table), for the others as usual."""
    await _last_cards(bot, ANN, [BOB, CAROL], "g1")
    await _believe(bot, BOB)
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None and session.game is not None
    claim = session.game.open_claims[-1].number
    final = bot.updates.press(bot.fake, CAROL, GROUP_ID, has_op(Op.ACCEPT))
    await bot.store.transact(
        GROUP_ID,
        lambda s: table.act(
            s, game_id="g1", command=Believe(CAROL.id, claim), now_ms=int(time.time() * 1000)
        ),
        update_id=final["update_id"],
        lease=True,
    )
    await bot.command(BOB, "/forgetme", private(BOB))
    await bot.press(BOB, BOB.id, has_op(Op.FORGET))
    later = int(time.time() * 1000) + LEASE_MS + 1_000
    bot.shell.clock = lambda: later
    await _timers(bot).sync_due(later)
    assert "wins" in group_texts(bot)
    assert await bot.store.stats.person(ANN.id) is not None
    assert await bot.store.stats.person(BOB.id) is None
    assert set(await bot.store.stats.group(GROUP_ID)) == {ANN.id, CAROL.id}
    # A game that ends after his wish counts for him again.
    await _last_cards(bot, ANN, [BOB, CAROL], "g2")
    for user in (BOB, CAROL):
        await _believe(bot, user)
    assert await bot.store.stats.person(BOB.id) == Row(games=1, second=1)
    assert set(await bot.store.stats.group(GROUP_ID)) == {ANN.id, BOB.id, CAROL.id}


async def test_a_stopped_game_is_not_counted(bot: BotHarness) -> None:
    await _last_cards(bot, ANN, [BOB, CAROL], "g1")
    await bot.command(ANN, "/stop")
    assert await bot.store.stats.person(ANN.id) is None
    assert await bot.store.stats.group(GROUP_ID) == {}


async def test_a_group_the_bot_left_forgets_its_table(bot: BotHarness) -> None:
    await _last_cards(bot, ANN, [BOB, CAROL], "g1")
    for user in (BOB, CAROL):
        await _believe(bot, user)
    assert await bot.store.stats.group(GROUP_ID) != {}
    bot.fake.kick_bot(GROUP_ID)
    await bot.feed(bot.updates.my_chat_member(bot.group, ANN, "member", "kicked"))
    assert await bot.store.stats.group(GROUP_ID) == {}


async def _solo_game_to_the_end(bot: BotHarness, user: User) -> int:
    """``user`` plays a private /play game against two computer players to its end (true
    cards when they can, else one card; last cards believed); the winner's user id."""
    await bot.start_private(user)
    await bot.command(user, "/play 2", chat=private(user))
    for _ in range(3000):
        session, _ = await bot.store.load(user.id)
        assert session is not None and session.game is not None
        state = session.game
        if state.phase is Phase.FINISHED:
            assert state.result is not None and state.result.winner is not None
            return state.players[state.result.winner].user_id
        seat = state.seat_of(user.id)
        assert seat is not None
        if state.phase is Phase.PLAYING and state.turn == seat and not state.challenges:
            hand = state.players[seat].hand
            true = [c.rank for c in hand if c.rank is state.required]
            await play(bot, user, true[: play_limit(state, seat)] or [hand[0].rank])
        elif state.phase is Phase.FINAL_CHECK and can_accept(state, seat):
            await bot.press(user, user.id, has_op(Op.ACCEPT))
        else:
            assert session.next_deadline_ms, f"nobody is to act at play {state.plays}"
            await _timers(bot).fire_due(session.next_deadline_ms)
    raise AssertionError("the game did not end")


async def test_a_game_with_computer_players_counts_apart_and_in_no_groups_table(
    bot: BotHarness, redis: Redis
) -> None:
    # Ann has a group game between people first: the solo game must leave it as it is.
    await _last_cards(bot, ANN, [BOB, CAROL], "g1")
    for user in (BOB, CAROL):
        await _believe(bot, user)
    before = await bot.store.stats.person(ANN.id)
    assert before is not None and before.games == 1
    group_before = await bot.store.stats.group(GROUP_ID)
    winner = await _solo_game_to_the_end(bot, ANN)
    won = int(winner == ANN.id)
    assert won or is_computer(winner)
    # Apart: the figures between people, the streak among them, stay as they were.
    after = dataclasses.replace(before, computer_games=1, computer_wins=won)
    assert await bot.store.stats.person(ANN.id) == after
    await bot.command(ANN, "/stats", private(ANN))
    mine = bot.fake.last_message(ANN.id).seen_text
    assert f"🤖 With computer players (counted separately): games: 1 · wins: {won}" in mine
    assert "Games: 1 · wins: 1 (100%)" in mine
    # No group's table has a row of it: not Ann's private chat, not the group's changed.
    assert await bot.store.stats.group(ANN.id) == {}
    assert await bot.store.stats.group(GROUP_ID) == group_before
    rows = [
        field
        async for key in redis.scan_iter(match="tgc:*stats:chat:*")
        for field in await redis.hkeys(key)
        if field.startswith((b"s:", b"n:"))
    ]
    assert len(rows) == 2 * len(group_before)


async def test_forgetme_leaves_nothing_of_the_person_but_what_the_readme_lists(
    bot: BotHarness, redis: Redis
) -> None:
    """After a rated group game, a game against the computer, a language, a sign-up, his
    profile and a card shared, /forgetme:
    no key of Redis names the person or holds their id, but the group's finished game (its
    seats, until the group's next game replaces it) and the hour-long mark of the wish."""
    boris = User(987654321, "Boris")
    await _last_cards(bot, ANN, [boris, CAROL], "g1")
    for user in (boris, CAROL):
        await _believe(bot, user)
    await bot.command(boris, "/language de", private(boris))
    await bot.store.settings.save_user_language(boris.id, "de")
    await bot.command(boris, "/notify")
    await bot.store.settings.save_group_rules(boris.id, Rules(max_players=4))
    await bot.command(boris, "/play", private(boris))
    # His rated game put him on the rating boards (the group's and the global ones), and his
    # achievements and rating in his hash; he looks at his profile and shares it.
    season = season_of(bot.shell.clock())
    for chat in (GROUP_ID, None):
        assert "Boris" in [name for name, _ in await bot.store.stats.board(chat, season)]
    await bot.command(boris, "/profile", private(boris))
    await bot.feed(bot.updates.inline_query(boris, "profile"))
    await bot.command(boris, "/forgetme", private(boris))
    await bot.press(boris, boris.id, has_op(Op.FORGET))
    mark = bot.store.keys.person_stats(boris.id)
    allowed = {bot.store.keys.session(GROUP_ID), mark}
    left = []
    async for raw_key in redis.scan_iter():
        key = raw_key.decode()
        kind = (await redis.type(raw_key)).decode()
        if kind == "string":
            values = [await redis.get(raw_key)]
        elif kind == "hash":
            values = [item for pair in (await redis.hgetall(raw_key)).items() for item in pair]
        elif kind == "set":
            values = list(await redis.smembers(raw_key))
        elif kind == "zset":
            values = [member for member, _ in await redis.zrange(raw_key, 0, -1, withscores=True)]
        elif kind == "list":
            values = list(await redis.lrange(raw_key, 0, -1))
        else:
            values = []
        text = key + " ".join(v.decode("utf-8", "replace") for v in values if v is not None)
        if str(boris.id) in text and key not in allowed:
            left.append(key)
    assert left == []
    assert len(await redis.hgetall(mark)) == 1, "the mark keeps the time of the wish only"


async def test_games_the_others_walk_out_of_before_playing_count_for_nobody(
    bot: BotHarness,
) -> None:
    """Ann deals three games with two throwaway accounts, who /leave at once: she is the last
    at the table each time, and nothing is counted: no games, no wins, no place on /top."""
    throwaways = [User(71, "T1"), User(72, "T2")]
    for _ in range(3):
        await bot.command(ANN, "/new")
        for user in (ANN, *throwaways):
            await join_by_button(bot, user)
        await bot.press(ANN, GROUP_ID, has_op(Op.START))
        for user in throwaways:
            await bot.command(user, "/leave")
        session, _ = await bot.store.load(GROUP_ID)
        assert session is not None and session.game is not None
        assert session.game.phase is Phase.FINISHED
        assert session.game.result is not None
        assert session.game.result.reason is EndReason.LAST_PLAYER
    assert await bot.store.stats.person(ANN.id) is None
    assert await bot.store.stats.group(GROUP_ID) == {}
    await bot.command(ANN, "/top")
    assert "Ann" not in bot.fake.last_message(GROUP_ID).seen_text
