"""How a play is shown (one sync of its place): its requests to Telegram side by side, and what
is kept when one fails."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from tests.bot.conftest import GROUP_ID, BotHarness
from tests.bot.play import game_state, has_op, join_by_button, play
from tests.support.updates import User
from tgcheat.bot import views
from tgcheat.bot.callbacks import Op
from tgcheat.bot.delivery.desired import hand_slot
from tgcheat.bot.delivery.shown_codec import decode_shown
from tgcheat.bot.delivery.sync import RETRY_MS
from tgcheat.engine.state import GameState
from tgcheat.i18n import translator
from tgcheat.table.place import Place

ANN, BOB, CAROL = User(1, "Ann"), User(2, "Bob"), User(3, "Carol")
USERS = {u.id: u for u in (ANN, BOB, CAROL)}
#: How long the fake Telegram takes to answer each request, in the first test.
ANSWER_S = 0.05


async def _start(bot: BotHarness) -> GameState:
    await bot.command(ANN, "/new")
    for user in (ANN, BOB, CAROL):
        await join_by_button(bot, user)
    await bot.press(ANN, GROUP_ID, has_op(Op.START))
    return await game_state(bot)


async def _pick_one(bot: BotHarness, state: GameState) -> User:
    """The player to move picks their first card; returns them."""
    mover = USERS[state.players[state.turn].user_id]
    await bot.press(mover, mover.id, has_op(Op.PICK, state.players[state.turn].hand[0].rank))
    return mover


async def test_a_plays_table_edit_and_hands_are_sent_side_by_side(
    bot: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = await _start(bot)
    mover = await _pick_one(bot, state)
    spans: list[tuple[str, Any, float, float]] = []
    answer = bot.fake.do_request

    async def slow(url: str, method: str, request_data: Any = None, **kwargs: Any) -> Any:
        started = time.monotonic()
        await asyncio.sleep(ANSWER_S)
        try:
            return await answer(url, method, request_data, **kwargs)
        finally:
            # (The bot sends each parameter JSON-encoded: the chat id as a string.)
            chat = request_data.parameters.get("chat_id") if request_data is not None else None
            chat = int(chat) if chat is not None else None
            spans.append((url.rsplit("/", 1)[-1], chat, started, time.monotonic()))

    monkeypatch.setattr(bot.fake, "do_request", slow)
    await bot.press(mover, mover.id, has_op(Op.PLAY))
    assert (await game_state(bot)).plays == 1
    (table_edit,) = [s for s in spans if s[0] == "editMessageText" and s[1] == GROUP_ID]
    hands = [s for s in spans if s[1] in USERS]
    assert {s[0] for s in hands} >= {"editMessageText", "sendMessage"}
    # The table's edit is in flight while the hands' requests are: each request takes
    # ANSWER_S, so one after the other they could not overlap.
    assert any(start < table_edit[3] and table_edit[2] < end for *_, start, end in hands)
    bot.fake.assert_clean()


async def test_a_hand_sent_is_kept_when_another_request_of_the_play_fails(
    bot: BotHarness,
) -> None:
    state = await _start(bot)
    mover = await _pick_one(bot, state)
    following = USERS[state.players[(state.turn + 1) % 3].user_id]
    play = bot.updates.press(bot.fake, mover, mover.id, has_op(Op.PLAY))
    # One of the play's edits (the mover's hand or the table) fails; the next player's new
    # hand is sent all the same, and the update is handled: the place is left due.
    bot.fake.fail_next("editMessageText", status=502, description="Bad Gateway")
    await bot.feed(play)
    messages = await bot.message_ids(GROUP_ID)
    with_keyboard = [m for m in bot.fake.visible_messages(following.id) if m.reply_markup]
    assert len(with_keyboard) == 1
    assert messages.hand(following.id) == with_keyboard[0].message_id
    now = bot.shell.clock()
    assert await bot.store.shown.due(now + RETRY_MS) == [Place(GROUP_ID)]
    # Telegram delivers the update again (its answer was lost): the stored play is shown,
    # with no second hand; nothing is left due.
    await bot.feed(play)
    assert (await game_state(bot)).plays == 1
    with_keyboard = [m for m in bot.fake.visible_messages(following.id) if m.reply_markup]
    assert len(with_keyboard) == 1
    assert await bot.store.shown.due(now + RETRY_MS) == []
    assert f"· pile: {len(state.players[state.turn].hand[:1])} card" in str(
        bot.fake.message(GROUP_ID, messages.table).plain_text  # type: ignore[arg-type]
    )
    bot.fake.assert_clean()


async def test_a_sync_slowed_by_telegram_keeps_what_it_posted_before_it_ends(
    bot: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sync whose requests take longer than a third of its lease keeps what Telegram
    confirmed so far (a checkpoint): a process that dies then, or whose lease runs out, leaves
    the next player's new hand known to the next sync, not posted a second time."""
    state = await _start(bot)
    mover = await _pick_one(bot, state)
    following = USERS[state.players[(state.turn + 1) % 3].user_id]
    bot.shell.delivery.store.shown.lease_ms = 900
    answer = bot.fake.do_request
    kept: list[int] = []

    async def table_edit_waits_for_a_checkpoint(
        url: str, method: str, request_data: Any = None, **kwargs: Any
    ) -> Any:
        chat = request_data.parameters.get("chat_id") if request_data is not None else None
        if url.endswith("/editMessageText") and chat is not None and int(chat) == GROUP_ID:
            # The group's edit is answered once the record in Redis holds the next player's
            # new hand, which was sent side by side with it.
            for _ in range(200):
                record = decode_shown(await bot.store.shown.read(Place(GROUP_ID)))
                slot = record.slots.get(hand_slot(following.id))
                if slot is not None and slot.message_id in sent_to_following():
                    kept.append(slot.message_id)
                    break
                await asyncio.sleep(0.02)
        return await answer(url, method, request_data, **kwargs)

    def sent_to_following() -> set[int]:
        return {m.message_id for m in bot.fake.visible_messages(following.id) if m.reply_markup}

    before = sent_to_following()
    monkeypatch.setattr(bot.fake, "do_request", table_edit_waits_for_a_checkpoint)
    await bot.press(mover, mover.id, has_op(Op.PLAY))
    assert kept and kept[0] not in before, "the new hand was kept while the sync went on"
    bot.fake.assert_clean()


async def test_my_cards_after_a_pick_brings_the_hand_back_without_the_selection(
    bot: BotHarness,
) -> None:
    """Cards picked are kept in the session (whichever sync draws the hand shows them); a hand
    asked for anew (🃏 My cards) starts from no selection, as a new hand message always did: a
    person who changed their mind starts over."""
    state = await _start(bot)
    mover = await _pick_one(bot, state)
    assert bot.fake.find_button(mover.id, has_op(Op.CLEAR)) is not None
    await bot.start_private(mover, f"h{GROUP_ID}")
    assert bot.fake.find_button(mover.id, has_op(Op.CLEAR)) is None
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None and session.picked(mover.id) == ""
    assert bot.fake.find_button(mover.id, has_op(Op.PICK)) is not None


async def test_a_table_posted_under_a_lost_lease_goes_even_when_its_chat_was_in_a_flood_wait(
    bot: BotHarness,
) -> None:
    """The one compensation of a sync whose lease ran out: what it posted goes. Telegram
    answers that deletion 429 (the group is in a flood wait): the message is deleted once the
    wait is over, so that no old table keeps its buttons."""
    state = await _start(bot)
    table = bot.fake.last_message(GROUP_ID)
    delivery = bot.shell.delivery
    posted = await bot.shell.sender.send(
        Place(GROUP_ID),
        views.table_view(
            translator("en"), (await bot.store.load(GROUP_ID))[0], state, "tgcheat_bot"
        ),
    )
    assert posted is not None and posted != table.message_id
    bot.fake.flood(GROUP_ID, 0.3)
    await delivery.lost_lease.take_back(Place(GROUP_ID), [(Place(GROUP_ID), posted)])
    assert not bot.fake.message(GROUP_ID, posted).deleted
    # The deletion waits for the flood wait in a task of its own: the sync is not held up.
    await asyncio.gather(*delivery.lost_lease.deleting_later)
    assert bot.fake.message(GROUP_ID, posted).deleted, "the message posted under a lost lease"


async def test_a_message_posted_under_a_lost_lease_stays_when_the_record_holds_it(
    bot: BotHarness,
) -> None:
    """A checkpoint kept the table this sync posted, and the sync never learned so (the
    checkpoint's answer was lost, or the round ended while it was on its way): the next holder
    shows the place from that message, so the compensation leaves it."""
    await _start(bot)
    table = (await bot.message_ids(GROUP_ID)).table
    assert table is not None
    await bot.shell.delivery.lost_lease.take_back(Place(GROUP_ID), [(Place(GROUP_ID), table)])
    assert not bot.fake.message(GROUP_ID, table).deleted
    assert bot.fake.message(GROUP_ID, table).buttons


async def test_a_late_table_edit_on_the_message_that_became_a_reveal_is_undone(
    bot: BotHarness,
) -> None:
    """A table edit made by a sync whose lease ran out (a slow Telegram) lands after another
    sync turned that message into the reveal: the reveal is gone and an old table keeps its
    buttons. The lease's loser asks for a check of the messages; the next sync edits the
    message back into the reveal."""
    state = await _start(bot)
    table = bot.fake.last_message(GROUP_ID).message_id
    mover = USERS[state.players[state.turn].user_id]
    await play(bot, mover, [state.players[state.turn].hand[0].rank])
    caller = next(user for user in USERS.values() if user != mover)
    await bot.press(caller, GROUP_ID, has_op(Op.CHALLENGE))
    reveal = bot.fake.message(GROUP_ID, table)
    assert not reveal.buttons and reveal.plain_text
    reveal_text = reveal.plain_text
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None and session.game is not None
    old_table = views.table_view(translator("en"), session, session.game, "tgcheat_bot")
    delivery = bot.shell.delivery
    await bot.shell.sender.edit(Place(GROUP_ID), table, old_table)
    assert bot.fake.message(GROUP_ID, table).buttons, "the late edit gave it the table's buttons"
    await delivery.lost_lease.take_back(Place(GROUP_ID), [])
    await delivery.sync(Place(GROUP_ID))
    again = bot.fake.message(GROUP_ID, table)
    assert again.plain_text == reveal_text
    assert not again.buttons
