"""A correspondence game that lasts a week, over an explicit clock: the clock acts only when
something is due (a reminder, a timeout), and what the game keeps in Redis stays bounded."""

from __future__ import annotations

import random
from collections import Counter

from redis.asyncio import Redis

from tests.store.helpers import CHAT, KEYS, stored_keys
from tgcheat.engine.game import new_game, play_limit, random_seating
from tgcheat.engine.rules import PRESETS, Pace, with_pace
from tgcheat.engine.state import Phase
from tgcheat.store.codec import encode
from tgcheat.store.games import GameStore
from tgcheat.table.commands import PlayCards
from tgcheat.table.place import Place
from tgcheat.table.progress import advance
from tgcheat.table.session import REMIND_AFTER_S, Session
from tgcheat.table.transitions import act, tick

HOUR_MS = 3600 * 1000
WEEK_MS = 7 * 24 * HOUR_MS


async def test_a_week_long_correspondence_game_costs_little(redis: Redis) -> None:
    rules = with_pace(PRESETS["cheat"], Pace.CORRESPONDENCE)
    assert rules.turn_timeout_s == 24 * 3600
    rng = random.Random(4)
    names = [(1000 + i, f"P{i}") for i in range(3)]
    state, events = new_game(rules, random_seating(names, rng), rng)
    store = GameStore(redis)
    start = 1_800_000_000_000

    def begin(_: Session | None) -> tuple[Session, None]:
        fresh = Session(chat_id=CHAT, game_id="week01", creator=1000, game=state, title="T")
        return advance(fresh, state, events, start), None

    await store.transact(CHAT, begin)
    keys_at_start = await stored_keys(redis)
    reminders = timeouts = plays = clock_acts = 0
    biggest = 0
    now = start
    # Each player answers 9 hours after their turn began, or not at all on every fourth
    # turn (the clock then reminds them, and at the day's end plays for them).
    while now < start + WEEK_MS:
        now += HOUR_MS
        session, _ = await store.load(CHAT)
        assert session is not None and session.game is not None
        game = session.game
        if game.phase is Phase.FINISHED:
            break
        if Place(CHAT) in await store.clock.due(now):
            clock_acts += 1
            before = session.told.hand_epochs
            committed = await store.transact(CHAT, lambda s, now=now: tick(s, now, rng=rng))
            after = committed.session
            assert after is not None
            if after.told.hand_epochs != before and after.game is game:
                reminders += 1
                assert after.reminded and now >= session.waiting_since_ms + REMIND_AFTER_S * 1000
            elif after.game is not game:
                timeouts += 1
            continue
        waited = now - session.waiting_since_ms
        skip = game.plays % 4 == 3
        if not skip and waited >= 9 * HOUR_MS:
            seat = game.turn
            player = game.players[seat]
            card = player.hand[0]
            rank = game.required or card.rank
            limit = play_limit(game, seat)
            assert limit >= 1
            command = PlayCards(player.user_id, game.plays, Counter({card.rank: 1}), rank)
            await store.transact(
                CHAT,
                lambda s, command=command, now=now: act(
                    s, game_id="week01", command=command, now_ms=now
                ),
            )
            plays += 1
        session, _ = await store.load(CHAT)
        assert session is not None
        biggest = max(biggest, len(encode(session)))
    # A week of a turn or two a day: the clock acted only for reminders and timeouts, a
    # few times a day at most, never every hour.
    assert plays > 5 and reminders >= 1 and timeouts >= 1
    assert clock_acts <= 2 * (reminders + timeouts) + 2
    # Redis holds the same keys as at the start, and one deadline for the game.
    assert await stored_keys(redis) == keys_at_start
    assert await redis.zcard(KEYS.deadlines(CHAT)) == 1
    # The session's document stays small: the story keeps its first and last moves only.
    assert biggest < 4096
