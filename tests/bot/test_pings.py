"""Next-game pings (/notify): a person who asks is told in private, once, when the group's
next game opens, with its Join link; asking again signs them off."""

from __future__ import annotations

from redis.asyncio import Redis

from tests.bot.conftest import GROUP_ID, BotHarness
from tests.bot.play import group_texts, has_op, install_game, play, seated
from tests.engine.helpers import cards, state_with
from tests.support.updates import User
from tgcheat.bot.callbacks import Op, TablePress
from tgcheat.engine.actions import Stop
from tgcheat.engine.cards import Rank
from tgcheat.engine.game import apply

ANN, BOB, CAROL = User(1, "Ann"), User(2, "Bob"), User(3, "Carol")


def _pings(bot: BotHarness, user: User) -> list[str]:
    return [
        m.seen_text
        for m in bot.fake.bot_messages(user.id)
        if "A new game of Cheat is open" in m.seen_text
    ]


async def test_a_sign_up_gets_exactly_one_ping_with_the_join_link(bot: BotHarness) -> None:
    await bot.start_private(BOB)
    await bot.command(BOB, "/notify")
    assert "I will tell you in private when the next game opens here." in group_texts(bot)
    await bot.command(ANN, "/new")
    pings = _pings(bot, BOB)
    assert len(pings) == 1 and "Friday" in pings[0]
    ping = bot.fake.last_message(BOB.id)
    assert any(f"start=j{GROUP_ID}" in b.get("url", "") for b in ping.buttons)
    # The next game again: the sign-up was used.
    await bot.command(ANN, "/stop")
    await bot.command(ANN, "/new")
    assert len(_pings(bot, BOB)) == 1


async def test_notify_again_signs_off(bot: BotHarness) -> None:
    await bot.start_private(BOB)
    await bot.command(BOB, "/notify")
    await bot.command(BOB, "/notify")
    assert "I won't tell you about the next game here." in group_texts(bot)
    await bot.command(ANN, "/new")
    assert _pings(bot, BOB) == []


async def test_the_opener_and_the_players_of_play_again_are_not_pinged(bot: BotHarness) -> None:
    for user in (ANN, BOB, CAROL):
        await bot.start_private(user)
    state = state_with([cards("A♣"), cards("2♣"), cards("3♣")], rest_to=2)
    stopped, _ = apply(seated(state, [ANN, BOB, CAROL]), Stop())
    await install_game(bot, stopped)
    await bot.command(ANN, "/notify")
    await bot.command(BOB, "/notify")
    again = TablePress(Op.PLAY_AGAIN, GROUP_ID, "rigged1").encode()
    table = {"message_id": 1, "chat": bot.group, "date": 0, "text": "the table"}
    await bot.feed(bot.updates.callback(CAROL, {**table, "from": bot.fake.bot_sender}, again))
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None and session.lobby is not None
    assert _pings(bot, ANN) == [] and _pings(bot, BOB) == []


async def test_the_result_offers_a_ping_for_the_next_game(bot: BotHarness) -> None:
    dan = User(4, "Dan")
    await bot.start_private(dan)
    state = state_with([cards("A♣"), cards("2♣", "7♦"), cards("3♣", "8♦")], rest_to=2)
    await install_game(bot, seated(state, [ANN, BOB, CAROL]))
    for user in (ANN, BOB, CAROL):
        await bot.start_private(user, f"h{GROUP_ID}")
    await play(bot, ANN, [Rank.ACE])
    for user in (BOB, CAROL):
        await bot.press(user, GROUP_ID, has_op(Op.ACCEPT))
    await bot.press(dan, GROUP_ID, has_op(Op.NOTIFY))
    answer = bot.fake.callback_answers[max(bot.fake.callback_answers)]
    assert "I will tell you in private" in str(answer.get("text"))
    await bot.command(BOB, "/new")
    assert len(_pings(bot, dan)) == 1


async def test_a_group_the_bot_left_forgets_its_sign_ups(bot: BotHarness) -> None:
    await bot.command(BOB, "/notify")
    assert await bot.store.pings.take(GROUP_ID) == [BOB.id]
    await bot.command(BOB, "/notify")
    bot.fake.kick_bot(GROUP_ID)
    await bot.feed(bot.updates.my_chat_member(bot.group, ANN, "member", "kicked"))
    assert await bot.store.pings.take(GROUP_ID) == []


async def test_only_a_member_signs_up_and_only_for_a_group_the_bot_has(
    bot: BotHarness, redis: Redis
) -> None:
    """Mallory, who is not in the group, sends the 🔔 button's data from her own chat with the
    bot: refused, and she is never pinged. Presses naming made-up groups write nothing."""
    mallory = User(66, "Mallory")
    await bot.start_private(mallory)
    bot.fake.set_left(GROUP_ID, [mallory.id])
    state = state_with([cards("A♣"), cards("2♣", "7♦"), cards("3♣", "8♦")], rest_to=2)
    await install_game(bot, seated(state, [ANN, BOB, CAROL]))
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None
    own_chat = bot.fake.last_message(mallory.id)
    forged = TablePress(Op.NOTIFY, GROUP_ID, session.game_id).encode()
    update = bot.updates.callback(mallory, own_chat, forged)
    await bot.feed(update)
    answer = bot.fake.callback_answers[update["callback_query"]["id"]]
    assert answer.get("text") == "You can join only games of groups you are in."
    for made_up in range(-1001000000100, -1001000000000):
        data = TablePress(Op.NOTIFY, made_up, "abcdefgh").encode()
        await bot.feed(bot.updates.callback(mallory, own_chat, data))
    assert [key async for key in redis.scan_iter(match="*ping*")] == []
    await bot.command(BOB, "/new")
    assert _pings(bot, mallory) == []
