"""A join stands, and shows in the lobby, when the confirmation in the private chat fails for
another reason than a chat closed to the bot."""

from __future__ import annotations

from tests.bot.conftest import GROUP_ID, BotHarness
from tests.bot.play import join_by_button, start_payload
from tests.support.updates import User

ANN, BOB = User(1, "Ann"), User(2, "Bob")


def lobby_text(bot: BotHarness) -> str:
    found = bot.fake.find_button(GROUP_ID, lambda b: "start=j" in str(b.get("url", "")))
    assert found is not None, "an open lobby"
    return bot.fake.message(GROUP_ID, found[0]).seen_text


async def _open(bot: BotHarness) -> None:
    # Only members of the group join by the link.
    bot.fake.set_members(GROUP_ID, (ANN.id, BOB.id))
    await bot.command(ANN, "/new")
    await join_by_button(bot, ANN)
    assert "Players (1/6): 1. Ann" in lobby_text(bot)


async def test_a_join_by_the_link_whose_confirmation_gets_a_400_shows_in_the_lobby(
    bot: BotHarness,
) -> None:
    await _open(bot)
    bot.fake.fail_next("sendMessage", status=400, description="Bad Request: chat not found")
    found = bot.fake.find_button(GROUP_ID, lambda b: "start=j" in str(b.get("url", "")))
    assert found is not None
    await bot.start_private(BOB, start_payload(found[1]["url"]))
    assert "Players (2/6): 1. Ann, 2. Bob" in lobby_text(bot)


async def test_a_join_command_whose_confirmation_gets_a_400_stands(bot: BotHarness) -> None:
    await _open(bot)
    bot.fake.started_users.add(BOB.id)  # Bob has started the bot before
    bot.fake.fail_next("sendMessage", status=400, description="Bad Request: chat not found")
    await bot.command(BOB, "/join")
    assert "Players (2/6): 1. Ann, 2. Bob" in lobby_text(bot)
    # Not taken for a chat closed to the bot: nobody is shown the way to the private chat.
    assert "can't send you your cards" not in "\n".join(bot.fake.texts(GROUP_ID))


async def test_a_join_whose_confirmation_failed_shows_when_delivered_again(
    bot: BotHarness,
) -> None:
    await _open(bot)
    found = bot.fake.find_button(GROUP_ID, lambda b: "start=j" in str(b.get("url", "")))
    assert found is not None
    join = bot.updates.start_private(BOB, start_payload(found[1]["url"]))
    # Stored, then Telegram fails: the handler fails (python-telegram-bot logs it), and
    # Telegram delivers the update again (the webhook answered 500; polling tries again).
    bot.fake.fail_next("sendMessage", status=502, description="Bad Gateway")
    await bot.feed(join)
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None and session.lobby is not None and session.lobby.has(BOB.id)
    assert "Bob" not in lobby_text(bot)
    await bot.feed(join)
    assert "Players (2/6): 1. Ann, 2. Bob" in lobby_text(bot)
