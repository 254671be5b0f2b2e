"""Poison updates: an update whose processing fails the same way on every delivery is answered
200 after MAX_FAILED_DELIVERIES, and the known ones no longer fail: a reply to a command that
was deleted, and a selection of more cards than a button's data used to carry."""

from __future__ import annotations

import dataclasses
import logging

import pytest
from redis.asyncio import Redis

from tests.bot.play import has_op, seated
from tests.bot.webhook import Served, served
from tests.engine.helpers import cards, state_with
from tests.support.fake_telegram import MAX_CALLBACK_DATA_BYTES
from tests.support.updates import User, group
from tgcheat.bot.callbacks import Op
from tgcheat.engine.cards import Rank
from tgcheat.engine.rules import Rules
from tgcheat.web import MAX_FAILED_DELIVERIES

GROUP = -1001000000003
ANN, BOB, CY = User(41, "Ann"), User(42, "Bob"), User(43, "Cy")
#: What the pop-up says when a pick would not fit in the buttons.
TOO_MANY = "You have picked as many cards as the buttons can hold"
#: Any number of cards per play, two decks (Ann holds all but two of them), no play limit.
ANY_COUNT = Rules(max_cards=0, decks=2, move_cap=0)


async def test_an_update_that_always_fails_is_answered_200_after_a_few_deliveries(
    redis: Redis, caplog: pytest.LogCaptureFixture
) -> None:
    async with served(redis) as bot:
        command = bot.updates.command(group(GROUP), ANN, "/rules")
        # Telegram refuses every reply to it (whatever the reason: it is the same each time).
        bot.fake.fail_always(
            lambda method, params: (
                (params.get("reply_parameters") or {}).get("message_id")
                == command["message"]["message_id"]
            ),
            description="Bad Request: TEXT_TOO_LONG",
        )
        with caplog.at_level(logging.ERROR, logger="tgcheat.web"):
            answers = [await bot.post(command) for _ in range(MAX_FAILED_DELIVERIES)]
        assert answers == [500] * (MAX_FAILED_DELIVERIES - 1) + [200]
        gave_up = [r for r in caplog.records if "deliveries" in r.getMessage()]
        assert len(gave_up) == 1
        message = gave_up[0].getMessage()
        assert f"failed on {MAX_FAILED_DELIVERIES} deliveries" in message
        assert "BadRequest" in message and "text_too_long" in message.lower()
        # Another update is not counted with it.
        other = bot.updates.command(group(GROUP), ANN, "/help")
        assert await bot.post(other) == 200
        bot.fake.violations.clear()  # the refused replies were Telegram's doing


async def test_a_reply_to_a_command_deleted_meanwhile_is_sent(redis: Redis) -> None:
    async with served(redis) as bot:
        command = bot.updates.command(group(GROUP), ANN, "/rules")
        message = command["message"]
        bot.fake.deleted_incoming.add((GROUP, message["message_id"]))
        assert await bot.post(command) == 200
        [reply] = bot.fake.calls_to("sendMessage")
        assert reply.status == 200
        assert reply.params["reply_parameters"]["message_id"] == message["message_id"]


async def test_telegram_refuses_a_reply_to_a_deleted_message_unless_allowed(
    redis: Redis,
) -> None:
    async with served(redis) as bot:
        command = bot.updates.command(group(GROUP), ANN, "/rules")
        bot.fake.deleted_incoming.add((GROUP, command["message"]["message_id"]))
        status, _ = await bot.fake._call(
            "sendMessage",
            {
                "chat_id": GROUP,
                "text": "hi",
                "reply_parameters": {"message_id": command["message"]["message_id"]},
            },
        )
        assert status == 400
        assert "message to be replied not found" in (bot.fake.errors[-1].error or "")


async def _deal_to_ann(bot: Served, chat_id: int, game_id: str, plays: int = 0) -> None:
    state = state_with([(), cards("2♣", deck=1), cards("3♣", deck=1)], rules=ANY_COUNT, rest_to=0)
    state = dataclasses.replace(seated(state, [ANN, BOB, CY]), plays=plays)
    await bot.install(state, chat_id, game_id)
    assert await bot.post(bot.updates.start_private(ANN, f"h{chat_id}")) == 200


async def test_forty_picked_cards_fit_in_the_buttons_and_are_played(redis: Redis) -> None:
    async with served(redis) as bot:
        await _deal_to_ann(bot, GROUP, "rigged1")
        ranks = [Rank.ACE, Rank.FOUR, Rank.FIVE, Rank.SIX, Rank.SEVEN]
        for rank in ranks:
            for _ in range(8):
                pick = bot.updates.press(bot.fake, ANN, ANN.id, has_op(Op.PICK, rank))
                assert await bot.post(pick) == 200
        hand = bot.fake.last_message(ANN.id)
        assert all(
            len(str(b["callback_data"]).encode()) <= MAX_CALLBACK_DATA_BYTES
            for b in hand.buttons
            if "callback_data" in b
        )
        play = bot.updates.press(bot.fake, ANN, ANN.id, has_op(Op.PLAY))
        assert await bot.post(play) == 200
        session, _ = await bot.store.load(GROUP)
        assert session is not None and session.game is not None
        assert session.game.plays == 1 and len(session.game.open_claims[-1].cards) == 40


async def test_more_cards_than_a_button_carries_are_refused_with_a_pop_up(
    redis: Redis,
) -> None:
    """With the longest ids a button may name (a 16-character chat id, a 12-character game id,
    a six-digit play count) a selection fits 23 characters: one card of each rank, and a
    second of ten of them. The next pick is refused with a pop-up, and the hand stays."""
    chat_id = -100123456789012
    async with served(redis) as bot:
        await _deal_to_ann(bot, chat_id, "abcdefghijkl", plays=123456)
        ranks = [*[r for r in Rank if r is not Rank.JOKER], *list(Rank)[:10]]
        for rank in ranks:
            pick = bot.updates.press(bot.fake, ANN, ANN.id, has_op(Op.PICK, rank))
            assert await bot.post(pick) == 200
        kept = bot.fake.last_message(ANN.id).current
        pick = bot.updates.press(bot.fake, ANN, ANN.id, has_op(Op.PICK, Rank.JACK))
        response = await bot.respond(pick)
        assert response.status_code == 200
        assert response.json()["text"].startswith(TOO_MANY)
        assert bot.fake.last_message(ANN.id).current is kept
        play = bot.updates.press(bot.fake, ANN, ANN.id, has_op(Op.PLAY))
        assert await bot.post(play) == 200
        session, _ = await bot.store.load(chat_id)
        assert session is not None and session.game is not None
        assert len(session.game.open_claims[-1].cards) == 23
