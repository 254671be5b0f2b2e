"""The Mini App's API behind the real web app: identity from initData, a player's own hand,
and actions through the same table transition and compare-and-set as a button press."""

from __future__ import annotations

import time
from collections import Counter

from redis.asyncio import Redis

from tests.bot.webhook import served
from tests.support.updates import User
from tests.webapp.support import act, auth, get_state, init_data
from tgcheat.engine.cards import count_by_rank
from tgcheat.table.stats import GameRecord, Line, Outcome, Row

GROUP = -100777
ANN, BOB, CLEO = User(21, "Ann"), User(22, "Bob"), User(23, "Cleo")
PLAYERS = (ANN, BOB, CLEO)


async def test_a_player_sees_only_their_own_hand(redis: Redis) -> None:
    async with served(redis) as bot:
        await bot.open_game(GROUP, PLAYERS)
        state = await bot.game(GROUP)
        for user in PLAYERS:
            shown = await get_state(bot.client, user, GROUP)
            seat = state.seat_of(user.id)
            assert seat is not None and shown["me"] == seat
            assert sorted(c["id"] for c in shown["hand"]) == sorted(state.players[seat].hand)
            assert [s["cards"] for s in shown["seats"]] == [len(p.hand) for p in state.players]
            assert "Cheat" in shown["table"][0]
        outsider = await get_state(bot.client, User(99, "Eve"), GROUP)
        assert "hand" not in outsider and outsider["refused"]


async def test_forged_expired_and_replayed_requests_get_401_and_change_nothing(
    redis: Redis,
) -> None:
    async with served(redis) as bot:
        await bot.open_game(GROUP, PLAYERS)
        state = await bot.game(GROUP)
        player = PLAYERS[[p.id for p in PLAYERS].index(state.players[state.turn].user_id)]
        card = state.players[state.turn].hand[0]
        play = {
            "place": str(GROUP),
            "game": (await bot.store.load(GROUP))[0].game_id,  # type: ignore[union-attr]
            "op": "play",
            "plays": 0,
            "cards": {card.rank.code: 1},
            "rank": state.required.code if state.required else card.rank.code,
        }
        forged = init_data(player).replace("Ann", "Anx").replace("Bob", "Box")
        forged = forged.replace("Cleo", "Clex")
        other_token = init_data(player, token="123:other")
        expired = init_data(player, auth_date=1_000_000)
        for data in (forged, other_token, expired, ""):
            response = await act(bot.client, player, play, data)
            assert response.status_code == 401
            get = await bot.client.get(
                "/app/api/state", params={"place": str(GROUP)}, headers=auth(data)
            )
            assert get.status_code == 401
        assert (await bot.game(GROUP)) == state
        signed = init_data(player)
        first = await act(bot.client, player, play | {"request": "same-request-1"}, signed)
        assert first.status_code == 200, first.text
        after = await bot.game(GROUP)
        assert after.plays == 1
        again = await act(bot.client, player, play | {"request": "same-request-1"}, signed)
        assert again.status_code == 401
        assert (await bot.game(GROUP)) == after


async def test_a_play_from_the_mini_app_is_a_press_play_without_pick_edits(redis: Redis) -> None:
    async with served(redis) as bot:
        await bot.open_game(GROUP, PLAYERS)
        state = await bot.game(GROUP)
        seat = state.turn
        player = next(u for u in PLAYERS if u.id == state.players[seat].user_id)
        shown = await get_state(bot.client, player, GROUP)
        assert shown["play"]["limit"] >= 2
        two = Counter(dict(list(count_by_rank(state.players[seat].hand).items())[:2]))
        picked = {rank.code: 1 for rank in two}
        rank = state.required.code if state.required else "7"
        before = len(bot.fake.calls)
        response = await act(
            bot.client,
            player,
            {"place": str(GROUP), "game": shown["game"], "op": "play", "plays": 0,
             "cards": picked, "rank": rank},
        )  # fmt: skip
        assert response.status_code == 200, response.text
        after = await bot.game(GROUP)
        assert after.plays == 1
        assert len(after.players[seat].hand) == len(state.players[seat].hand) - 2
        methods = [call.method for call in bot.fake.calls[before:]]
        assert "answerCallbackQuery" not in methods
        assert methods, "the chats show the play as for a press"
        # The same request through the press's path refuses a stale play with the same words.
        stale = await act(
            bot.client,
            player,
            {"place": str(GROUP), "game": shown["game"], "op": "play", "plays": 0,
             "cards": picked, "rank": rank},
        )  # fmt: skip
        assert stale.status_code == 409
        assert stale.json()["refused"]
        assert (await bot.game(GROUP)) == after


async def test_cheat_from_the_mini_app_reveals_as_a_press_does(redis: Redis) -> None:
    async with served(redis) as bot:
        await bot.open_game(GROUP, PLAYERS)
        answers = await bot.play_one(GROUP, PLAYERS)
        assert answers == [200, 200]
        state = await bot.game(GROUP)
        caller = next(u for u in PLAYERS if u.id == state.players[state.turn].user_id)
        shown = await get_state(bot.client, caller, GROUP)
        cheat = [a for a in shown["answers"] if a["op"] == "cheat"]
        assert cheat, shown
        response = await act(
            bot.client,
            caller,
            {"place": str(GROUP), "game": shown["game"], "op": "cheat", "claim": cheat[0]["claim"]},
        )
        assert response.status_code == 200, response.text
        after = await bot.game(GROUP)
        assert after.pile == () and after.open_claims == ()
        group_texts = [m.plain_text or "" for m in bot.fake.visible_messages(GROUP)]
        assert any("calls Cheat" in text for text in group_texts)


async def test_each_hand_offers_the_mini_app_on_its_game(redis: Redis) -> None:
    async with served(redis) as bot:
        await bot.open_game(GROUP, PLAYERS)
        for user in PLAYERS:
            found = bot.fake.find_button(user.id, lambda b: "web_app" in b)
            assert found is not None, "the hand has 🃏 Open cards"
            assert found[1]["web_app"]["url"] == f"https://cheat.example.com/app?p={GROUP}"
            assert found[1]["text"] == "🃏 Open cards"


NO_GAME = "You are in no game right now."


async def test_the_app_opened_without_a_game_named_finds_the_players_game(redis: Redis) -> None:
    """The menu button opens the page without ``?p=``: each player gets the game they were
    dealt into last (of two, the newer), a person in none is told so in their language."""
    async with served(redis) as bot:
        await bot.open_game(GROUP, PLAYERS)
        for user in PLAYERS:
            shown = await get_state(bot.client, user, "")
            assert shown["place"] == str(GROUP) and shown["hand"], shown
        other_group = GROUP - 1
        await bot.open_game(other_group, (ANN, BOB, User(24, "Dan")))
        assert (await get_state(bot.client, ANN, ""))["place"] == str(other_group)
        assert (await get_state(bot.client, CLEO, ""))["place"] == str(GROUP)
        outsider = await get_state(bot.client, User(99, "Eve"), "")
        assert "seats" not in outsider and outsider["refused"].startswith(NO_GAME)
        in_german = await bot.client.get(
            "/app/api/state",
            params={"place": ""},
            headers=auth(init_data(User(99, "Eve"), language="de")),
        )
        assert in_german.json()["refused"].startswith("Du spielst gerade in keinem Spiel")


async def test_the_mini_app_link_names_the_game_in_the_signed_start_param(redis: Redis) -> None:
    async with served(redis) as bot:
        await bot.open_game(GROUP, PLAYERS)
        await bot.open_game(GROUP - 1, (ANN, BOB, User(24, "Dan")))
        linked = await bot.client.get(
            "/app/api/state",
            params={"place": ""},
            headers=auth(init_data(ANN, start_param=str(GROUP))),
        )
        assert linked.json()["place"] == str(GROUP) and linked.json()["hand"]


async def test_a_forged_init_data_without_a_game_named_gets_401_and_changes_nothing(
    redis: Redis,
) -> None:
    async with served(redis) as bot:
        await bot.open_game(GROUP, PLAYERS)
        state = await bot.game(GROUP)
        forged = init_data(ANN, start_param=str(GROUP)).replace("Ann", "Anx")
        for path in ("/app/api/state", "/app/api/events"):
            response = await bot.client.get(path, params={"place": ""}, headers=auth(forged))
            assert response.status_code == 401
        assert (await bot.game(GROUP)) == state


async def test_the_profile_page_and_its_card_to_share(redis: Redis) -> None:
    """The profile page reads /profile's figures for whoever the initData names; its share
    button has Telegram keep a card for that person (savePreparedInlineMessage, checked against
    the Bot API) and gets its id for shareMessage. A forged initData gets 401 and nothing."""
    async with served(redis) as bot:
        newcomer = await bot.client.get("/app/api/profile", headers=auth(init_data(CLEO)))
        assert newcomer.status_code == 200
        assert newcomer.json()["lines"] == ["No games counted yet."]
        assert newcomer.json()["share"] == ""
        await bot.store.stats.count(_rated_game())
        page = (await bot.client.get("/app/api/profile", headers=auth(init_data(ANN)))).json()
        assert page["title"] == "👤 Ann"
        assert page["lines"][0].startswith("📈 Rating: ")
        assert "Achievements: 1 of 27" in " ".join(page["lines"])
        shared = await bot.client.post("/app/api/share", headers=auth(init_data(ANN)))
        assert shared.status_code == 200, shared.text
        prepared = bot.fake.prepared_messages[shared.json()["id"]]
        assert prepared["user_id"] == ANN.id
        text = prepared["result"]["input_message_content"]["message_text"]
        assert "plays Cheat" in text and "📈 Rating: " in text
        forged = init_data(ANN).replace("Ann", "Anx")
        for path, method in (("/app/api/profile", "GET"), ("/app/api/share", "POST")):
            response = await bot.client.request(method, path, headers=auth(forged))
            assert response.status_code == 401
        assert len(bot.fake.prepared_messages) == 1


def _rated_game() -> GameRecord:
    """A game of three people in a group, won by Ann (her first game: "First game")."""
    lines = tuple(
        Line(
            user.id,
            user.first_name,
            Row(games=1, wins=int(place == 1), plays=3),
            Outcome.WON if place == 1 else Outcome.LOST,
            place,
            ("g1",),
        )
        for place, user in enumerate(PLAYERS, start=1)
    )
    ended = int(time.time() * 1000)
    return GameRecord(f"{GROUP}:r1", GROUP, True, False, lines, ended)
