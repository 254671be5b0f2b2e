"""Former hand messages (tgcheat.store.messages, RECORD_SCRIPT): a hand message a new one
replaced is left in the player's chat until the game ends, unless it has buttons: whichever of
"left in place" and "shown with buttons" is recorded second names it to be deleted now."""

from __future__ import annotations

import dataclasses
import time

from redis.asyncio import Redis

from tests.store.helpers import CHAT, game_session
from tgcheat.store.games import GameStore
from tgcheat.store.messages import FORMER_HAND, WITH_BUTTONS, WITHOUT_BUTTONS, HandMessage

ANN = 7


async def _store_with_a_game(redis: Redis) -> tuple[GameStore, int]:
    store = GameStore(redis)
    session = dataclasses.replace(game_session(), title="t")
    committed = await store.transact(CHAT, lambda s: (session, None))
    return store, committed.version


async def _record(store: GameStore, version: int, *hands: HandMessage) -> tuple:
    recorded = await store.messages.record(
        CHAT, version, int(time.time() * 1000), hand_messages=hands
    )
    return recorded.gone


async def test_a_former_hand_without_buttons_is_kept_for_the_end(redis: Redis) -> None:
    store, version = await _store_with_a_game(redis)
    assert await _record(store, version, HandMessage(ANN, 3, WITHOUT_BUTTONS)) == ()
    new_hand = HandMessage(ANN, 4, WITH_BUTTONS)
    assert await _record(store, version, new_hand, HandMessage(ANN, 3, FORMER_HAND)) == ()
    assert (await store.read(CHAT)).messages.retired == frozenset({(ANN, 3)})


async def test_a_former_hand_that_still_has_buttons_goes_now(redis: Redis) -> None:
    store, version = await _store_with_a_game(redis)
    await _record(store, version, HandMessage(ANN, 3, WITH_BUTTONS))
    gone = await _record(store, version, HandMessage(ANN, 3, FORMER_HAND))
    assert gone == ((ANN, 3),)
    assert (await store.read(CHAT)).messages.retired == frozenset()


async def test_buttons_given_to_a_former_hand_by_a_late_edit_make_it_go(redis: Redis) -> None:
    """A second delivery of the play edited the hand it had read, after the first delivery
    left it in place for a new one."""
    store, version = await _store_with_a_game(redis)
    await _record(store, version, HandMessage(ANN, 3, WITHOUT_BUTTONS))
    await _record(store, version, HandMessage(ANN, 3, FORMER_HAND))
    gone = await _record(store, version, HandMessage(ANN, 3, WITH_BUTTONS))
    assert gone == ((ANN, 3),)
    assert (await store.read(CHAT)).messages.retired == frozenset()


async def test_buttons_taken_away_before_it_is_left_keep_it(redis: Redis) -> None:
    store, version = await _store_with_a_game(redis)
    await _record(store, version, HandMessage(ANN, 3, WITH_BUTTONS))
    await _record(store, version, HandMessage(ANN, 3, WITHOUT_BUTTONS))
    assert await _record(store, version, HandMessage(ANN, 3, FORMER_HAND)) == ()


async def test_message_ids_are_each_chats_own(redis: Redis) -> None:
    """Bob's message 3 is another message than Ann's message 3."""
    store, version = await _store_with_a_game(redis)
    bob = ANN + 1
    await _record(store, version, HandMessage(ANN, 3, WITHOUT_BUTTONS))
    await _record(store, version, HandMessage(bob, 3, WITH_BUTTONS))
    assert await _record(store, version, HandMessage(ANN, 3, FORMER_HAND)) == ()
    assert await _record(store, version, HandMessage(bob, 3, FORMER_HAND)) == ((bob, 3),)
