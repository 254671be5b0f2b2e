"""The Mini App's home: ⚡ Quick game and the wait for it, the way of /quick, for whoever the
signed initData names; the game, once dealt, opens there with the player's hand."""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis

from tests.bot.webhook import Served, served
from tests.support.updates import User
from tests.webapp.support import auth, get_state, init_data
from tgcheat.table.quick import SEATS

PEOPLE = tuple(User(31 + i, f"Q{i}") for i in range(SEATS))


async def _quick(bot: Served, user: User, join: bool, data: str | None = None) -> Any:
    return await bot.client.post(
        "/app/api/quick",
        json={"join": join},
        headers=auth(data if data is not None else init_data(user)),
    )


async def test_the_home_offers_a_quick_game_and_the_wait_can_be_left(redis: Redis) -> None:
    async with served(redis) as bot:
        ann = PEOPLE[0]
        home = await get_state(bot.client, ann, "")
        assert home["quick"] == {"join": "⚡ Quick game"} and "seats" not in home
        waiting = await _quick(bot, ann, True)
        assert waiting.status_code == 200
        assert "Looking for players" in waiting.json()["quick"]["waiting"]
        assert await bot.store.quick.waiting() == [ann.id]
        # Opened again, the page still shows the wait.
        assert "leave" in (await get_state(bot.client, ann, ""))["quick"]
        left = await _quick(bot, ann, False)
        assert left.json()["quick"] == {"join": "⚡ Quick game"}
        assert await bot.store.quick.waiting() == []


async def test_a_forged_or_malformed_request_queues_nobody(redis: Redis) -> None:
    async with served(redis) as bot:
        ann = PEOPLE[0]
        forged = init_data(ann).replace("Q0", "Qx")
        assert (await _quick(bot, ann, True, forged)).status_code == 401
        for body in ({"join": "yes"}, {}, [1]):
            response = await bot.client.post(
                "/app/api/quick", json=body, headers=auth(init_data(ann))
            )
            assert response.status_code == 400
        assert await bot.store.quick.waiting() == []


async def test_a_table_filled_from_the_app_opens_the_game_there(redis: Redis) -> None:
    async with served(redis) as bot:
        for person in PEOPLE:
            bot.fake.started_users.add(person.id)
        for person in PEOPLE[:-1]:
            await _quick(bot, person, True)
        # The last seat filled: the table is dealt at once, and the answer is the game.
        dealt = (await _quick(bot, PEOPLE[-1], True)).json()
        assert len(dealt["seats"]) == SEATS and dealt["hand"]
        assert {seat["name"] for seat in dealt["seats"]} == {p.first_name for p in PEOPLE}
        # Nothing of the others but their names.
        assert all(set(seat) == {"name", "cards", "left"} for seat in dealt["seats"])
        for person in PEOPLE:
            shown = await get_state(bot.client, person, "")
            assert shown["place"] == dealt["place"] and shown["hand"]
        # Playing, one cannot wait for another.
        again = await _quick(bot, PEOPLE[0], True)
        assert again.status_code == 409 and "already" in again.json()["refused"]
        assert await bot.store.quick.waiting() == []
