"""Forum topics: in a forum supergroup a game lives in the topic where /new was sent. Each
topic holds its own game at once, every message of a game goes to its topic, the General topic
plays as a plain group, and a topic closed or deleted ends its game cleanly.

Driven by update JSON as Telegram sends it in a forum (``is_forum``, ``message_thread_id``,
``is_topic_message``); what reaches each topic is read from the requests FakeTelegram recorded.
"""

from __future__ import annotations

from typing import Any

import pytest
from redis.asyncio import Redis

from tests.bot.conftest import GROUP_ID, BotHarness
from tests.bot.play import start_payload
from tests.support.buttons import press_matcher
from tests.support.fake_telegram import ApiCall
from tests.support.updates import User, forum
from tgcheat.bot import views
from tgcheat.bot.callbacks import (
    MAX_CALLBACK_BYTES,
    HandPress,
    Op,
    Press,
    TablePress,
    encode_selection,
    parse,
)
from tgcheat.engine.cards import Rank
from tgcheat.engine.state import Phase
from tgcheat.store.codec import encode
from tgcheat.store.keys import SHARDS, Keys
from tgcheat.table.place import Place
from tgcheat.table.session import Session

FORUM_ID = -1003000000001
FORUM = forum(FORUM_ID, "Friday")
#: Two topics of the forum (each one's message_thread_id).
NIGHT, DAY = 11, 22
ANN, BOB, CAROL, DAN = User(1, "Ann"), User(2, "Bob"), User(3, "Carol"), User(4, "Dan")
ERIN, FRED = User(5, "Erin"), User(6, "Fred")
#: The players of the game in each topic (three: the fewest the classic rules deal to).
NIGHT_PLAYERS, DAY_PLAYERS = [ANN, BOB, ERIN], [CAROL, DAN, FRED]


async def in_topic(bot: BotHarness, user: User, text: str, topic: int, name: str) -> None:
    command, _, args = text.partition(" ")
    await bot.feed(
        bot.updates.topic_command(FORUM, user, command, args or None, topic=topic, topic_name=name)
    )


def of(place: Place, op: Op) -> Any:
    """A button of the game at ``place`` doing ``op``."""

    def wanted(press: Press) -> bool:
        return press.op is op and getattr(press, "place", None) == place

    return press_matcher(wanted)


async def join(bot: BotHarness, user: User, place: Place) -> None:
    """``user`` taps the Join link of the lobby at ``place``."""
    link = f"start={views.join_payload(place)}"
    found = bot.fake.find_button(FORUM_ID, lambda b: b.get("url", "").endswith(link))
    assert found is not None, f"a Join link of {place}"
    bot.fake.note_member(FORUM_ID, user.id)
    await bot.start_private(user, start_payload(found[1]["url"]))


async def open_and_deal(bot: BotHarness, place: Place, name: str, users: list[User]) -> None:
    opener, *others = users
    await bot.start_private(opener)
    if place.topic is None:
        await bot.command(opener, "/new", FORUM)
    else:
        await in_topic(bot, opener, "/new", place.topic, name)
    await join(bot, opener, place)
    for user in others:
        await join(bot, user, place)
    await bot.press(opener, FORUM_ID, of(place, Op.START))


async def session_at(bot: BotHarness, place: Place) -> Session:
    session, _ = await bot.store.load(place)
    assert session is not None
    return session


async def play_one_card(bot: BotHarness, place: Place, users: list[User]) -> None:
    """Whoever's turn it is at ``place`` plays the first card of their hand."""
    state = (await session_at(bot, place)).game
    assert state is not None and state.phase is Phase.PLAYING
    player = next(u for u in users if u.id == state.players[state.turn].user_id)
    await bot.press(player, player.id, press_matcher(lambda p: p.op is Op.PICK))
    await bot.press(player, player.id, press_matcher(lambda p: p.op is Op.PLAY))


def forum_sends(bot: BotHarness, since: int = 0) -> list[ApiCall]:
    return [
        call
        for call in bot.fake.calls[since:]
        if call.method.lower() == "sendmessage" and call.params.get("chat_id") == FORUM_ID
    ]


def threads(calls: list[ApiCall]) -> set[int | None]:
    return {call.params.get("message_thread_id") for call in calls}


def sent_ids(calls: list[ApiCall]) -> set[int]:
    return {int(call.result["message_id"]) for call in calls if call.status == 200}


def forum_edits(bot: BotHarness, since: int = 0) -> set[int]:
    """The forum messages edited (or deleted) since the ``since``-th call."""
    return {
        int(call.params["message_id"])
        for call in bot.fake.calls[since:]
        if call.method.lower() in ("editmessagetext", "editmessagereplymarkup", "deletemessage")
        and call.params.get("chat_id") == FORUM_ID
    }


async def test_two_topics_hold_a_game_each_and_each_message_goes_to_its_topic(
    bot: BotHarness,
) -> None:
    night, day = Place(FORUM_ID, NIGHT), Place(FORUM_ID, DAY)
    start = len(bot.fake.calls)
    await open_and_deal(bot, night, "Cheat night", NIGHT_PLAYERS)
    after_night = len(bot.fake.calls)
    await open_and_deal(bot, day, "Cheat day", DAY_PLAYERS)
    after_day = len(bot.fake.calls)
    night_sends = [c for c in forum_sends(bot, start) if c in bot.fake.calls[:after_night]]
    day_sends = [c for c in forum_sends(bot, after_night) if c in bot.fake.calls[:after_day]]
    assert night_sends and threads(night_sends) == {NIGHT}
    assert day_sends and threads(day_sends) == {DAY}
    # Both are dealt, each with its own players.
    night_game, day_game = (await session_at(bot, night)).game, (await session_at(bot, day)).game
    assert night_game is not None and day_game is not None
    assert {p.user_id for p in night_game.players} == {u.id for u in NIGHT_PLAYERS}
    assert {p.user_id for p in day_game.players} == {u.id for u in DAY_PLAYERS}
    # The players' private messages name the group and the topic.
    assert "Friday · Cheat night" in bot.fake.last_message(BOB.id).seen_text
    assert "Friday · Cheat day" in bot.fake.last_message(DAN.id).seen_text

    # A move in one topic: sends go there alone, edits touch only that topic's messages.
    day_messages = sent_ids(forum_sends(bot, after_night))
    night_messages = sent_ids(forum_sends(bot, start)) - day_messages
    before = len(bot.fake.calls)
    await play_one_card(bot, night, NIGHT_PLAYERS)
    assert threads(forum_sends(bot, before)) <= {NIGHT}
    night_messages |= sent_ids(forum_sends(bot, before))
    touched = forum_edits(bot, before)
    assert touched and touched <= night_messages and not touched & day_messages
    assert (await session_at(bot, night)).game.plays == 1  # type: ignore[union-attr]
    assert (await session_at(bot, day)).game.plays == 0  # type: ignore[union-attr]

    before = len(bot.fake.calls)
    await play_one_card(bot, day, DAY_PLAYERS)
    assert threads(forum_sends(bot, before)) <= {DAY}
    touched = forum_edits(bot, before)
    assert touched and not touched & night_messages
    assert (await session_at(bot, night)).game.plays == 1  # type: ignore[union-attr]


async def test_new_in_a_topic_with_a_game_refuses_and_another_topic_opens(
    bot: BotHarness,
) -> None:
    await bot.start_private(ANN)
    await in_topic(bot, ANN, "/new", NIGHT, "Cheat night")
    first = await session_at(bot, Place(FORUM_ID, NIGHT))
    before = len(bot.fake.calls)
    await in_topic(bot, BOB, "/new", NIGHT, "Cheat night")
    assert (await session_at(bot, Place(FORUM_ID, NIGHT))).game_id == first.game_id
    refusal = forum_sends(bot, before)
    assert refusal and threads(refusal) == {NIGHT}
    await in_topic(bot, BOB, "/new", DAY, "Cheat day")
    assert (await session_at(bot, Place(FORUM_ID, DAY))).lobby is not None
    # Neither is the group's own place (General).
    assert (await bot.store.load(FORUM_ID))[0] is None


async def test_a_game_in_general_has_no_topic(bot: BotHarness) -> None:
    general = Place(FORUM_ID)
    start = len(bot.fake.calls)
    await open_and_deal(bot, general, "", NIGHT_PLAYERS)
    sends = forum_sends(bot, start)
    assert sends and threads(sends) == {None}
    await play_one_card(bot, general, NIGHT_PLAYERS)
    assert threads(forum_sends(bot, start)) == {None}
    session = await session_at(bot, general)
    assert session.topic is None and session.game is not None and session.game.plays == 1
    assert "Friday" in bot.fake.last_message(BOB.id).seen_text


async def _ended_cleanly(bot: BotHarness, redis: Redis, place: Place, users: list[User]) -> None:
    """The game at ``place`` is over: nothing kept, no deadline, nothing waiting for the
    clock, and every player's hand says it ended (no card buttons left)."""
    assert (await bot.store.load(place))[0] is None
    assert await redis.zscore(bot.store.keys.deadlines(place.chat_id), place.key) is None
    assert await redis.zscore(bot.store.keys.due(place.chat_id), place.key) is None
    for user in users:
        hand = bot.fake.last_message(user.id)
        assert not any(
            isinstance(parse(str(b.get("callback_data"))), HandPress)
            for b in hand.buttons
            if b.get("callback_data")
        ), hand.seen_text


async def test_a_closed_topic_ends_its_game_and_leaves_the_other(
    bot: BotHarness, redis: Redis
) -> None:
    night, day = Place(FORUM_ID, NIGHT), Place(FORUM_ID, DAY)
    await open_and_deal(bot, night, "Cheat night", NIGHT_PLAYERS)
    await open_and_deal(bot, day, "Cheat day", DAY_PLAYERS)
    before = len(bot.fake.calls)
    await bot.feed(bot.updates.topic_closed(FORUM, ANN, NIGHT))
    assert not forum_sends(bot, before), "nothing is sent to a closed topic"
    await _ended_cleanly(bot, redis, night, NIGHT_PLAYERS)
    day_game = (await session_at(bot, day)).game
    assert day_game is not None and day_game.phase is Phase.PLAYING
    # Reopened, the topic needs nothing; a new game opens there.
    await bot.feed(bot.updates.topic_reopened(FORUM, ANN, NIGHT))
    await in_topic(bot, ANN, "/new", NIGHT, "Cheat night")
    assert (await session_at(bot, night)).lobby is not None


@pytest.mark.parametrize(
    "refusal",
    [
        "Bad Request: message thread not found",  # the topic was deleted
        "Bad Request: TOPIC_CLOSED",  # closed, and the bot may not manage topics
    ],
)
async def test_a_deleted_or_closed_topic_ends_its_game_at_the_first_refused_send(
    bot: BotHarness, redis: Redis, refusal: str
) -> None:
    night, day = Place(FORUM_ID, NIGHT), Place(FORUM_ID, DAY)
    await open_and_deal(bot, night, "Cheat night", NIGHT_PLAYERS)
    await open_and_deal(bot, day, "Cheat day", DAY_PLAYERS)
    night_messages = sent_ids(
        [c for c in forum_sends(bot) if c.params.get("message_thread_id") == NIGHT]
    )

    def in_deleted_topic(method: str, params: dict[str, Any]) -> bool:
        if params.get("chat_id") != FORUM_ID:
            return False
        if method.lower() == "sendmessage":
            return params.get("message_thread_id") == NIGHT
        return method.lower().startswith("edit") and params.get("message_id") in night_messages

    bot.fake.fail_always(
        lambda m, p: in_deleted_topic(m, p) and m.lower() == "sendmessage",
        400,
        refusal,
    )
    bot.fake.fail_always(in_deleted_topic, 400, "Bad Request: message to edit not found")
    await play_one_card(bot, night, NIGHT_PLAYERS)
    await _ended_cleanly(bot, redis, night, NIGHT_PLAYERS)
    # The other topic plays on.
    await play_one_card(bot, day, DAY_PLAYERS)
    day_game = (await session_at(bot, day)).game
    assert day_game is not None and day_game.plays == 1


async def test_a_button_naming_another_topic_is_refused(bot: BotHarness) -> None:
    night, day = Place(FORUM_ID, NIGHT), Place(FORUM_ID, DAY)
    await bot.start_private(ANN)
    await in_topic(bot, ANN, "/new", NIGHT, "Cheat night")
    await bot.start_private(CAROL)
    await in_topic(bot, CAROL, "/new", DAY, "Cheat day")
    await join(bot, BOB, day)
    night_lobby = await session_at(bot, night)
    day_before = await bot.store.read(day)
    # Ann's Start of her own game, forged to name the other topic.
    forged = TablePress(Op.CANCEL, FORUM_ID, night_lobby.game_id, DAY).encode()
    table = {"message_id": 1, "chat": FORUM, "date": 0, "text": "a lobby"}
    await bot.feed(bot.updates.callback(ANN, {**table, "from": bot.fake.bot_sender}, forged))
    answer = bot.fake.callback_answers[max(bot.fake.callback_answers)]
    assert answer.get("text")
    day_after = await bot.store.read(day)
    assert day_after.version == day_before.version and day_after.session == day_before.session


def test_a_plain_groups_buttons_and_links_are_unchanged_and_its_keys_the_chats() -> None:
    assert TablePress(Op.START, GROUP_ID, "abc123").encode() == f"s:{GROUP_ID}:abc123:0"
    assert views.join_payload(GROUP_ID) == f"j{GROUP_ID}"
    assert views.hand_payload(Place(GROUP_ID)) == f"h{GROUP_ID}"
    # Its keys are named by the chat alone, under its shard's hash tag (tgcheat.store.keys).
    keys = Keys()
    tag = f"tgc:{{s{GROUP_ID % SHARDS}}}"
    assert keys.session(Place(GROUP_ID)) == f"{tag}:chat:{GROUP_ID}"
    assert keys.bucket(GROUP_ID) == f"{tag}:rate:{GROUP_ID}"
    assert b'"tp"' not in encode(Session(GROUP_ID, "abc123", 1, title="T"))
    # A topic's are its own, and read back.
    press = TablePress(Op.START, GROUP_ID, "abc123", NIGHT)
    assert parse(press.encode()) == press and press.encode() != f"s:{GROUP_ID}:abc123:0"
    assert keys.session(Place(GROUP_ID, NIGHT)) == f"{tag}:chat:{GROUP_ID}:{NIGHT}"
    assert views.join_payload(Place(GROUP_ID, NIGHT)) == f"j{GROUP_ID}_{NIGHT}"


def test_every_hand_button_of_a_topic_fits() -> None:
    """The longest supergroup id and topic id, a play count up to 99,999 and every card
    picked: the data stays within Telegram's 64 bytes."""
    everything = encode_selection({rank: 8 for rank in Rank})
    press = HandPress(Op.PLAY, -1009999999999, "abc123", 99_999, everything, Rank.KING, 2**31 - 1)
    data = press.encode()
    assert len(data.encode()) <= MAX_CALLBACK_BYTES
    assert parse(data) == press


async def test_a_player_who_leaves_the_group_leaves_its_topics_game(bot: BotHarness) -> None:
    night = Place(FORUM_ID, NIGHT)
    await open_and_deal(bot, night, "Cheat night", NIGHT_PLAYERS)
    await bot.feed(bot.updates.left_chat_member(FORUM, ERIN))
    state = (await session_at(bot, night)).game
    assert state is not None
    assert next(p for p in state.players if p.user_id == ERIN.id).left


async def test_the_bot_removed_from_a_forum_ends_every_topics_game(
    bot: BotHarness, redis: Redis
) -> None:
    night, day = Place(FORUM_ID, NIGHT), Place(FORUM_ID, DAY)
    await open_and_deal(bot, night, "Cheat night", NIGHT_PLAYERS)
    await open_and_deal(bot, day, "Cheat day", DAY_PLAYERS)
    bot.fake.kick_bot(FORUM_ID)
    await bot.feed(bot.updates.my_chat_member(FORUM, ANN, "member", "kicked"))
    await _ended_cleanly(bot, redis, night, NIGHT_PLAYERS)
    await _ended_cleanly(bot, redis, day, DAY_PLAYERS)


async def test_the_story_of_a_topics_game_is_told_in_its_topic(bot: BotHarness) -> None:
    night = Place(FORUM_ID, NIGHT)
    await open_and_deal(bot, night, "Cheat night", NIGHT_PLAYERS)
    await play_one_card(bot, night, NIGHT_PLAYERS)
    await in_topic(bot, ANN, "/stop", NIGHT, "Cheat night")
    assert (await session_at(bot, night)).game is not None
    mark = len(bot.fake.calls)
    await bot.press(BOB, FORUM_ID, of(night, Op.STORY))
    (story,) = forum_sends(bot, mark)
    assert story.params.get("message_thread_id") == NIGHT
    text = str(story.params["text"])
    assert "How it went" in text
    assert any(user.first_name in text for user in NIGHT_PLAYERS)
