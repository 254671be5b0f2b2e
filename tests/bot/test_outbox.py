"""Nothing shown stale, nothing lost: what players must see of a change (a reveal, the result)
is recorded with the change and shown by whichever process comes next when the one that made
it died or failed before Telegram confirmed it; an older state never stays over a newer one."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from redis.asyncio import Redis
from telegram.error import TelegramError

from tests.bot.conftest import GROUP_ID, BotHarness
from tests.bot.play import game_state, has_op, install_game, play, seated, table_record
from tests.engine.helpers import cards, state_with
from tests.support.updates import User
from tgcheat.bot.app import CheatApplication
from tgcheat.bot.callbacks import Op
from tgcheat.bot.timers import Timers
from tgcheat.engine.cards import Rank
from tgcheat.engine.state import GameState, Phase
from tgcheat.store.keys import Keys
from tgcheat.store.scripts import OUTBOX_LEASE_MS
from tgcheat.table.place import Place

ANN, BOB, CAROL = User(1, "Ann"), User(2, "Bob"), User(3, "Carol")
PLAYERS = (ANN, BOB, CAROL)


def _timers(bot: BotHarness) -> Timers:
    app = bot.app
    assert isinstance(app, CheatApplication) and app.timers is not None
    return app.timers


async def _ann_bluffs(bot: BotHarness) -> None:
    """Ann, to play aces, puts down a 2 as an ace: a claim for Bob to doubt."""
    state = state_with(
        [cards("2♣", "K♦"), cards("3♣", "7♦"), cards("4♣", "8♦")], rules=None, rest_to=2
    )
    await _seat(bot, state)
    await play(bot, ANN, [Rank.TWO])


async def _seat(bot: BotHarness, state: GameState) -> None:
    """Ann, Bob and Carol at a game with these hands, each with a private chat open."""
    await install_game(bot, seated(state, list(PLAYERS)))
    for user in PLAYERS:
        await bot.start_private(user, f"h{GROUP_ID}")


def _reveals(bot: BotHarness) -> list[str]:
    return [
        m.plain_text or ""
        for m in bot.fake.visible_messages(GROUP_ID)
        if "calls Cheat on" in (m.plain_text or "")
    ]


def _to_group(method: str, params: dict[str, Any]) -> bool:
    return method in ("sendMessage", "editMessageText") and params.get("chat_id") == GROUP_ID


def _once_to_group(method: str, status: int = 502) -> Any:
    """A matcher for ``fail_always`` that fails only the first ``method`` call to the group."""
    failed: list[bool] = []

    def matches(called: str, params: dict[str, Any]) -> bool:
        if failed or called != method or params.get("chat_id") != GROUP_ID:
            return False
        failed.append(True)
        return True

    return matches


def _answer_buttons(bot: BotHarness) -> list[str]:
    """Buttons left in the group that answer a play (Cheat!, I believe you)."""
    return [
        b["text"]
        for m in bot.fake.visible_messages(GROUP_ID)
        for b in m.buttons
        if "Cheat" in b["text"] or "believe" in b["text"]
    ]


async def test_a_reveal_whose_process_died_before_telegram_answered_is_shown_once_by_the_clock(
    bot: BotHarness,
) -> None:
    await _ann_bluffs(bot)
    hung = bot.fake.hang_next(_to_group)
    press = asyncio.create_task(bot.press(BOB, GROUP_ID, has_op(Op.CHALLENGE)))
    await hung.arrived
    # The process is gone: the Cheat! call is stored, nothing of it reached the group.
    assert (await game_state(bot)).pile == ()
    assert _reveals(bot) == []
    now = int(time.time() * 1000)
    # While the first process may still be showing it, nobody else does.
    await _timers(bot).refresh_deferred_tables(now + 1_000)
    assert _reveals(bot) == []
    # Its lease over, the clock shows the reveal, then the table below it.
    await _timers(bot).refresh_deferred_tables(now + OUTBOX_LEASE_MS + 1_000)
    reveals = _reveals(bot)
    assert len(reveals) == 1 and "Caught bluffing!" in reveals[0]
    table = await table_record(bot)
    assert bot.fake.last_message(GROUP_ID).message_id == table.message_id
    assert "pile: 0 cards" in (table.plain_text or "")
    # And once only: the clock's next look shows nothing again.
    sent = len(bot.fake.calls_to("sendMessage"))
    await _timers(bot).refresh_deferred_tables(now + 2 * OUTBOX_LEASE_MS)
    assert len(bot.fake.calls_to("sendMessage")) == sent
    press.cancel()
    await asyncio.gather(press, return_exceptions=True)
    assert len(_reveals(bot)) == 1


async def test_a_reveal_whose_request_is_slow_is_not_shown_again_by_the_clock(
    bot: BotHarness, redis: Redis
) -> None:
    """The process is alive, its request to Telegram slow past the lease: it keeps renewing
    the lease, so the clock does not show the same reveal a second time."""
    await _ann_bluffs(bot)
    timers = _timers(bot)
    now = [int(time.time() * 1000)]
    timers.store.sessions.clock = lambda: now[0]
    timers.publisher.lease_renewal_s = 0.01
    hung = bot.fake.hang_next(_to_group)
    press = asyncio.create_task(bot.press(BOB, GROUP_ID, has_op(Op.CHALLENGE)))
    await hung.arrived
    version = (await timers.store.read(GROUP_ID)).version
    committed_at = now[0]
    now[0] += 2 * OUTBOX_LEASE_MS
    await _lease_reaches(redis, version, now[0] + OUTBOX_LEASE_MS)
    # Past the lease the commit started: the clock still leaves it to its publisher.
    await timers.refresh_deferred_tables(committed_at + OUTBOX_LEASE_MS + 1)
    await timers.refresh_deferred_tables(now[0] + 1)
    assert _reveals(bot) == []
    hung.released.set()
    await press
    assert len(_reveals(bot)) == 1
    await timers.refresh_deferred_tables(now[0] + 3 * OUTBOX_LEASE_MS)
    assert len(_reveals(bot)) == 1


async def _lease_reaches(redis: Redis, version: int, until_ms: int) -> None:
    """Wait until the entry of ``version`` is leased until ``until_ms`` at least."""
    key = Keys().waiting(Place(GROUP_ID))
    for _ in range(500):
        raw = await redis.hget(key, "out")
        entries = json.loads(raw) if raw else []
        if any(e.get("v") == version and e.get("until", 0) >= until_ms for e in entries):
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"the lease of version {version} was not renewed to {until_ms}")


async def test_a_reveal_that_telegram_refused_with_a_502_is_shown_by_the_next_clock_tick(
    bot: BotHarness,
) -> None:
    await _ann_bluffs(bot)
    bot.fake.fail_always(_once_to_group("sendMessage"), 502, "Bad Gateway")
    with pytest.raises(TelegramError):  # the update fails (500), as the webhook answers
        await bot.press(BOB, GROUP_ID, has_op(Op.CHALLENGE))
    # No lease to wait for: the publisher said what it did not show.
    await _timers(bot).refresh_deferred_tables(int(time.time() * 1000) + 1_000)
    reveals = _reveals(bot)
    assert len(reveals) == 1 and "Caught bluffing!" in reveals[0]
    assert "pile: 0 cards" in ((await table_record(bot)).plain_text or "")


async def test_a_refused_reveal_is_due_at_the_senders_time_when_the_views_run_ahead(
    bot: BotHarness,
) -> None:
    """The handlers' clock (what the views say of the time left) may run ahead of the one the
    clock's holds count in (tools and tests move it): what a publisher could not show is due
    at the latter, or it would wait as long as the lead."""
    await _ann_bluffs(bot)
    app = bot.app
    assert isinstance(app, CheatApplication) and app.routes is not None
    ahead = int(time.time() * 1000) + 10 * 60_000
    app.routes.shell.clock = lambda: ahead
    bot.fake.fail_always(_once_to_group("sendMessage"), 502, "Bad Gateway")
    with pytest.raises(TelegramError):
        await bot.press(BOB, GROUP_ID, has_op(Op.CHALLENGE))
    await _timers(bot).refresh_deferred_tables(int(time.time() * 1000) + 1_000)
    reveals = _reveals(bot)
    assert len(reveals) == 1 and "Caught bluffing!" in reveals[0]


async def test_last_cards_accepted_by_the_clock_then_a_502_end_with_the_result_shown(
    bot: BotHarness,
) -> None:
    state = state_with([cards("A♣"), cards("2♣", "7♦"), cards("3♣", "8♦")], rest_to=2)
    await _seat(bot, state)
    await play(bot, ANN, [Rank.ACE])
    assert (await game_state(bot)).phase is Phase.FINAL_CHECK
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None
    bot.fake.fail_always(_once_to_group("sendMessage"), 502, "Bad Gateway")
    await _timers(bot).fire_due(session.deadline_ms)  # the clock accepts; the result is refused
    assert (await game_state(bot)).phase is Phase.FINISHED
    await _timers(bot).refresh_deferred_tables(session.deadline_ms + 1_000)
    final = await table_record(bot)
    assert "Ann played out their hand and wins!" in final.seen_text
    assert bot.fake.last_message(GROUP_ID).message_id == final.message_id
    assert _answer_buttons(bot) == []


async def test_a_hand_edit_that_lands_after_a_newer_one_is_shown_again(bot: BotHarness) -> None:
    """Two presses in flight: Bob's pick is drawn from the game before his play, and Telegram
    takes it after the play's edit: the hand would show cards already played."""
    await _ann_bluffs(bot)
    await bot.press(BOB, GROUP_ID, has_op(Op.CHALLENGE))  # caught: Ann takes the pile
    state = await game_state(bot)
    assert state.players[state.turn].user_id == BOB.id
    await bot.press(BOB, BOB.id, has_op(Op.PICK, Rank.THREE))
    hung = bot.fake.hang_next(
        lambda method, params: method == "editMessageText" and params.get("chat_id") == BOB.id
    )
    pick = asyncio.create_task(bot.press(BOB, BOB.id, has_op(Op.PICK, Rank.SEVEN)))
    await hung.arrived
    await bot.press(BOB, BOB.id, has_op(Op.PLAY))  # the 3 goes down
    after = await game_state(bot)
    assert [c.rank for c in after.players[after.seat_of(BOB.id) or 0].hand] == [Rank.SEVEN]
    hung.released.set()
    await pick  # lands last: the hand message shows both cards again
    await _timers(bot).refresh_deferred_tables(int(time.time() * 1000) + 1_000)
    hand = bot.fake.last_message(BOB.id)
    assert "Your cards in" in (hand.plain_text or "")
    assert "(1)" in (hand.plain_text or ""), hand.plain_text


async def test_a_table_edit_that_lands_after_a_newer_one_is_shown_again(bot: BotHarness) -> None:
    state = state_with([cards("A♣", "K♦"), cards("2♣", "7♦"), cards("3♣", "8♦")], rest_to=2)
    await _seat(bot, state)
    await play(bot, ANN, [Rank.ACE])  # the table is posted
    hung = bot.fake.hang_next(
        lambda method, params: method == "editMessageText" and params.get("chat_id") == GROUP_ID
    )
    bob = asyncio.create_task(play(bot, BOB, [Rank.TWO]))
    await hung.arrived
    await play(bot, CAROL, [Rank.THREE])  # the table shows three plays
    assert "pile: 3 cards" in ((await table_record(bot)).plain_text or "")
    hung.released.set()
    await bob  # Bob's edit lands last: the table shows two plays again
    assert "pile: 2 cards" in ((await table_record(bot)).plain_text or "")
    await _timers(bot).refresh_deferred_tables(int(time.time() * 1000) + 1_000)
    assert "pile: 3 cards" in ((await table_record(bot)).plain_text or "")


async def test_an_older_edit_landing_on_a_table_that_became_history_is_undone(
    bot: BotHarness,
) -> None:
    """Bob's play is shown while Carol's Cheat! on it moves the table down: the play's edit of
    the old table, landing last, would turn the reveal line back into a table with buttons."""
    state = state_with([cards("A♣", "K♦"), cards("3♣", "7♦"), cards("4♣", "8♦")], rest_to=2)
    await _seat(bot, state)
    await play(bot, ANN, [Rank.ACE])  # the table is posted
    old_table = (await table_record(bot)).message_id
    hung = bot.fake.hang_next(
        lambda method, params: method == "editMessageText" and params.get("chat_id") == GROUP_ID
    )
    carols_turn = bot.fake.wait_for_call(
        lambda call: call.method == "sendMessage" and call.params.get("chat_id") == CAROL.id
    )
    bob = asyncio.create_task(play(bot, BOB, [Rank.THREE]))  # a 3 as a 2
    await hung.arrived
    await carols_turn  # her turn message offers Cheat! on Bob's play
    await bot.press(CAROL, CAROL.id, has_op(Op.CHALLENGE))
    assert "calls Cheat on" in (bot.fake.message(GROUP_ID, old_table).plain_text or "")
    hung.released.set()
    await bob
    former = bot.fake.message(GROUP_ID, old_table)
    assert "calls Cheat on" in (former.plain_text or "") and not former.buttons
    assert _reveals(bot) == [former.plain_text]
    await _timers(bot).refresh_deferred_tables(int(time.time() * 1000) + 1_000)
    assert _answer_buttons(bot) == []


async def test_an_old_table_that_could_not_become_history_goes_and_the_clock_shows_the_line(
    bot: BotHarness,
) -> None:
    await _ann_bluffs(bot)
    old_table = (await table_record(bot)).message_id
    bot.fake.fail_always(_once_to_group("editMessageText"), 502, "Bad Gateway")
    with pytest.raises(TelegramError):
        await bot.press(BOB, GROUP_ID, has_op(Op.CHALLENGE))
    assert _reveals(bot) == []  # the old table still shows the claim, with its buttons
    await _timers(bot).refresh_deferred_tables(int(time.time() * 1000) + 1_000)
    assert bot.fake.message(GROUP_ID, old_table).deleted
    reveals = _reveals(bot)
    assert len(reveals) == 1 and "Caught bluffing!" in reveals[0]
    table = await table_record(bot)
    assert bot.fake.last_message(GROUP_ID).message_id == table.message_id
    assert _answer_buttons(bot) == []


async def test_a_result_is_posted_once_when_the_old_table_could_not_become_history(
    bot: BotHarness,
) -> None:
    state = state_with([cards("A♣"), cards("2♣", "7♦"), cards("3♣", "8♦")], rest_to=2)
    await _seat(bot, state)
    await play(bot, ANN, [Rank.ACE])  # her last card, and a true one
    bot.fake.fail_always(_once_to_group("editMessageText"), 502, "Bad Gateway")
    with pytest.raises(TelegramError):
        await bot.press(BOB, GROUP_ID, has_op(Op.CHALLENGE))
    assert (await game_state(bot)).phase is Phase.FINISHED
    await _timers(bot).refresh_deferred_tables(int(time.time() * 1000) + 1_000)
    results = [
        m
        for m in bot.fake.bot_messages(GROUP_ID, include_deleted=True)
        if "plays out their hand and wins" in (m.plain_text or "")
        or "played out their hand and wins" in (m.plain_text or "")
    ]
    assert len(results) == 1 and not results[0].deleted
    assert len(_reveals(bot)) == 1
    assert _answer_buttons(bot) == []


async def test_a_table_posted_anew_by_one_process_never_deletes_a_line_another_made(
    bot: BotHarness,
) -> None:
    """A reply brings the table down from ids read before a reveal moved it: the old message,
    now the reveal's line, stays."""
    await _ann_bluffs(bot)
    old_table = (await table_record(bot)).message_id
    hung = bot.fake.hang_next(
        lambda method, params: (
            method == "sendMessage"
            and params.get("chat_id") == GROUP_ID
            and "reply_parameters" not in params
        )
    )
    # /rules: its reply goes out, then the table is posted anew from the ids read now...
    rules = asyncio.create_task(bot.command(ANN, "/rules"))
    await hung.arrived
    # ...while Bob's Cheat! moves the table down and turns the old one into the reveal.
    await bot.press(BOB, GROUP_ID, has_op(Op.CHALLENGE))
    assert "calls Cheat on" in (bot.fake.message(GROUP_ID, old_table).plain_text or "")
    hung.released.set()
    await rules
    former = bot.fake.message(GROUP_ID, old_table)
    assert not former.deleted and "calls Cheat on" in (former.plain_text or "")
    assert len(_reveals(bot)) == 1


async def test_an_older_edit_of_a_table_deleted_by_the_end_posts_no_second_table(
    bot: BotHarness,
) -> None:
    """Bob's play is still on its way to the table when Carol's last card and its acceptance
    end the game: the table it edits is gone, and Bob's older table is not posted anew."""
    state = state_with([cards("A♣", "K♦"), cards("2♣", "7♦"), cards("3♣")], rest_to=0)
    await _seat(bot, state)
    await play(bot, ANN, [Rank.ACE])  # the table is posted
    hung = bot.fake.hang_next(
        lambda method, params: method == "editMessageText" and params.get("chat_id") == GROUP_ID
    )
    bob = asyncio.create_task(play(bot, BOB, [Rank.TWO]))
    await hung.arrived
    await play(bot, CAROL, [Rank.THREE])  # her last card: the table moves down
    for user in (ANN, BOB):
        await bot.press(user, GROUP_ID, has_op(Op.ACCEPT))
    assert (await game_state(bot)).phase is Phase.FINISHED
    hung.released.set()
    await bob
    await _timers(bot).refresh_deferred_tables(int(time.time() * 1000) + 1_000)
    tables = [
        m
        for m in bot.fake.visible_messages(GROUP_ID)
        if "played out their hand and wins" in m.seen_text or "pile:" in m.seen_text
    ]
    assert len(tables) == 1 and "wins" in tables[0].seen_text


async def test_lines_held_from_before_a_result_follow_it_without_posting_it_again(
    bot: BotHarness,
) -> None:
    """A line and the table held for the clock (by the send budget, a flood wait) from before
    the game ended: the clock shows the line after the result, which stays where it is."""
    state = state_with([cards("A♣"), cards("2♣", "7♦"), cards("3♣", "8♦")], rest_to=2)
    await _seat(bot, state)
    await play(bot, ANN, [Rank.ACE])  # her last card, and a true one
    now = int(time.time() * 1000)
    await bot.store.budget.hold(
        GROUP_ID, now, now, group_flooded=False, table=True, lines=["an earlier line"]
    )
    await bot.press(BOB, GROUP_ID, has_op(Op.CHALLENGE))
    assert (await game_state(bot)).phase is Phase.FINISHED

    await _timers(bot).refresh_deferred_tables(now + 1_000)
    texts = [m.plain_text or "" for m in bot.fake.bot_messages(GROUP_ID, include_deleted=True)]
    assert sum("played out their hand and wins" in text for text in texts) == 1
    assert "an earlier line" in texts[-1]
    assert _answer_buttons(bot) == []
