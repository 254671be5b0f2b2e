"""The lobby: joining, leaving, cancelling; the lobby message follows."""

from __future__ import annotations

from tests.bot.conftest import GROUP_ID, BotHarness
from tests.bot.play import has_op, join_by_button
from tests.support.updates import User
from tgcheat.bot.callbacks import Op

ALICE, BOB, CAROL = User(1, "Alice"), User(2, "Bob"), User(3, "Carol")


async def test_joining_and_leaving_edit_the_lobby_message(bot: BotHarness) -> None:
    await bot.command(ALICE, "/new")
    lobby_id = bot.fake.last_message(GROUP_ID).message_id
    await join_by_button(bot, ALICE)
    await join_by_button(bot, BOB)
    assert "Players (2/6): Alice, Bob" in (bot.fake.message(GROUP_ID, lobby_id).plain_text or "")
    await join_by_button(bot, BOB)
    assert "already in this game" in (bot.fake.last_message(BOB.id).plain_text or "")
    await bot.command(BOB, "/leave")
    assert "Players (1/6): Alice" in (bot.fake.message(GROUP_ID, lobby_id).plain_text or "")
    # A second /new while the lobby is open is refused.
    await bot.command(CAROL, "/new")
    assert "already open" in (bot.fake.last_message(GROUP_ID).plain_text or "")


async def test_only_the_creator_or_an_admin_cancels(bot: BotHarness) -> None:
    await bot.command(ALICE, "/new")
    lobby_id = bot.fake.last_message(GROUP_ID).message_id
    await bot.press(BOB, GROUP_ID, has_op(Op.CANCEL))
    assert "Only whoever opened the game" in str(
        bot.fake.calls_to("answerCallbackQuery")[-1].params.get("text")
    )
    await bot.press(ALICE, GROUP_ID, has_op(Op.CANCEL))
    lobby = bot.fake.message(GROUP_ID, lobby_id)
    assert "cancelled" in (lobby.plain_text or "") and not lobby.buttons
    # The group can open a new game straight away.
    await bot.command(BOB, "/new")
    assert "a new game is open" in (bot.fake.last_message(GROUP_ID).plain_text or "")
