"""The session's log as the live bot keeps it: after a game played through update JSON (with a
Cheat! call on the way), what delivery would draw from the stored session alone names every
reveal and pass that today's publisher posted in the group, in the same words and order."""

from __future__ import annotations

import html
import re

from tests.bot.conftest import GROUP_ID, BotHarness
from tests.bot.play import game_state, has_op, join_by_button, play, play_to_the_end
from tests.support.fake_telegram import seen
from tests.support.updates import User
from tgcheat.bot.callbacks import Op
from tgcheat.bot.delivery.desired import TABLE, Drawing, desired
from tgcheat.engine.state import Phase
from tgcheat.table.stats import game_record

PLAYERS = [User(41, "Ann"), User(42, "Bob"), User(43, "Cleo")]


def _plain(text: str) -> str:
    """An HTML text as a reader sees it (tags gone, entities read, no directional marks)."""
    return seen(html.unescape(re.sub(r"<[^>]+>", "", text)))


async def test_the_stored_log_names_every_line_the_group_was_shown(bot: BotHarness) -> None:
    await bot.command(PLAYERS[0], "/new")
    for user in PLAYERS:
        await join_by_button(bot, user)
    await bot.press(PLAYERS[0], GROUP_ID, has_op(Op.START))
    state = await game_state(bot)
    by_id = {user.id: user for user in PLAYERS}
    player = by_id[state.players[state.turn].user_id]
    await play(bot, player, [state.players[state.turn].hand[0].rank])
    caller = next(u for u in PLAYERS if u is not player)
    await bot.press(caller, GROUP_ID, has_op(Op.CHALLENGE))
    final = await play_to_the_end(bot, PLAYERS)
    assert final.phase is Phase.FINISHED
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None and session.told.count >= 1
    # Counted already: counting again answers the news the result shows (its achievements).
    record = game_record(session)
    assert record is not None
    news = await bot.store.stats.count(record)
    wanted = desired(session, Drawing(bot.fake.bot_sender["username"], news=news))
    group = [message.seen_text for message in bot.fake.visible_messages(GROUP_ID)]
    drawn = [_plain(line.view.text) for line in wanted.lines]
    assert drawn, "the game had a reveal"
    posted = [text for text in group if text in drawn]
    assert posted == drawn, "each line of the log was posted once, in order"
    (table,) = [slot for slot in wanted.slots if slot.name == TABLE]
    assert _plain(table.view.text) == group[-1], "the result is the group's last message"
