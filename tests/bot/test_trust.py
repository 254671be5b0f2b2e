"""Who may play and manage a game: only a group's members join it through its link; the
creator and admins remove people from the lobby, by reply or by number; nobody kicks their
way to a win; and an account written through on behalf of a chat is nobody at all."""

from __future__ import annotations

import pytest

from tests.bot.conftest import GROUP_ID, BotHarness
from tests.bot.play import game_state, group_texts, has_op, join_by_button, start_payload
from tests.support.updates import User, channel
from tgcheat.bot.callbacks import LanguagePress, Op, PresetChoice, SettingsMenu, SettingsPress
from tgcheat.engine.rules import MatchKind, Rules
from tgcheat.engine.state import EndReason, Phase

ANN, BOB, CAROL = User(1, "Ann"), User(2, "Bob"), User(3, "Carol")
MALLORY = User(66, "Mallory")
OTHER_GROUP = -1009999999999
OUTSIDER_ANSWER = "You can join only games of groups you are in."

#: The answer to a command written on behalf of a chat.
AS_YOURSELF = "To play, post as yourself (not as the group or a channel)."


async def _lobby_players(bot: BotHarness) -> list[int]:
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None and session.lobby is not None
    return [user_id for user_id, _ in session.lobby.players]


def _lobby_text(bot: BotHarness) -> str:
    found = bot.fake.find_button(GROUP_ID, lambda b: "start=j" in str(b.get("url", "")))
    assert found is not None, "a lobby is shown"
    return bot.fake.message(GROUP_ID, found[0]).seen_text


def _join_link(bot: BotHarness) -> str:
    found = bot.fake.find_button(GROUP_ID, lambda b: "start=j" in str(b.get("url", "")))
    assert found is not None
    return start_payload(found[1]["url"])


# --- joining through the link --------------------------------------------------------------------


async def test_someone_outside_the_group_cannot_join_by_its_link(bot: BotHarness) -> None:
    """The link can travel anywhere: Mallory, who is not in the group, opens it. She is told
    the same as for a group without a game or one that does not exist: nothing about it."""
    await bot.command(ANN, "/new")
    await bot.start_private(MALLORY, _join_link(bot))
    assert await _lobby_players(bot) == []
    await bot.start_private(MALLORY, f"j{OTHER_GROUP}")
    told = [m.plain_text for m in bot.fake.visible_messages(MALLORY.id)]
    assert told == [OUTSIDER_ANSWER, OUTSIDER_ANSWER]
    assert "Players (0/6): nobody yet" in _lobby_text(bot)


async def test_who_left_the_group_cannot_join_by_its_link(bot: BotHarness) -> None:
    await bot.command(ANN, "/new")
    await bot.feed(bot.updates.left_chat_member(bot.group, BOB))
    await bot.start_private(BOB, _join_link(bot))
    assert await _lobby_players(bot) == []
    assert bot.fake.last_message(BOB.id).plain_text == OUTSIDER_ANSWER


async def test_members_join_by_the_link_restricted_ones_too(bot: BotHarness) -> None:
    """A member, an admin and a restricted member (who may not write, but is in the group)."""
    await bot.command(ANN, "/new")
    bot.fake.set_members(GROUP_ID, {BOB.id})
    bot.fake.set_admins(GROUP_ID, {CAROL.id})
    bot.fake.set_member_status(GROUP_ID, MALLORY.id, "restricted")
    for user in (BOB, CAROL, MALLORY):
        await bot.start_private(user, _join_link(bot))
    assert await _lobby_players(bot) == [BOB.id, CAROL.id, MALLORY.id]


# --- removing someone from the lobby -------------------------------------------------------------


async def test_the_creator_removes_someone_from_the_lobby_by_replying_to_them(
    bot: BotHarness,
) -> None:
    await bot.command(ANN, "/new")
    said = bot.updates.text(bot.group, BOB, "me too!")
    await bot.feed(said)
    for user in (ANN, BOB, CAROL):
        await join_by_button(bot, user)
    await bot.command(ANN, "/kick", reply_to=said["message"])
    assert await _lobby_players(bot) == [ANN.id, CAROL.id]
    assert "Players (2/6): 1. Ann, 2. Carol" in _lobby_text(bot)


async def test_the_lobby_numbers_its_players_and_kick_takes_that_number(
    bot: BotHarness,
) -> None:
    await bot.command(ANN, "/new")
    for user in (ANN, BOB, CAROL):
        await join_by_button(bot, user)
    assert "Players (3/6): 1. Ann, 2. Bob, 3. Carol" in _lobby_text(bot)
    await bot.command(BOB, "/kick 3")
    assert "Only whoever opened the game" in group_texts(bot)
    await bot.command(ANN, "/kick 2")
    assert await _lobby_players(bot) == [ANN.id, CAROL.id]
    assert "Players (2/6): 1. Ann, 2. Carol" in _lobby_text(bot)
    await bot.command(ANN, "/kick 3")
    assert "give their seat number" in (bot.fake.last_message(GROUP_ID).plain_text or "")
    assert await _lobby_players(bot) == [ANN.id, CAROL.id]


async def test_a_kick_in_the_lobby_of_someone_not_in_it_is_refused(bot: BotHarness) -> None:
    await bot.command(ANN, "/new")
    said = bot.updates.text(bot.group, BOB, "just watching")
    await bot.feed(said)
    await join_by_button(bot, ANN)
    await bot.command(ANN, "/kick", reply_to=said["message"])
    assert "That person is not playing in this game." in group_texts(bot)
    assert await _lobby_players(bot) == [ANN.id]


# --- no win by kicking ---------------------------------------------------------------------------


async def _deal(bot: BotHarness, players: tuple[User, ...] = (ANN, BOB, CAROL)) -> None:
    await bot.command(ANN, "/new")
    for user in players:
        await join_by_button(bot, user)
    await bot.press(ANN, GROUP_ID, has_op(Op.START))


async def test_the_creator_cannot_kick_a_player_who_is_there(bot: BotHarness) -> None:
    """Ann opened the game and is no admin: Bob has missed no turn, so he stays."""
    await _deal(bot)
    state = await game_state(bot)
    seat = state.seat_of(BOB.id)
    assert seat is not None
    await bot.command(ANN, f"/kick {seat + 1}")
    assert not (await game_state(bot)).players[seat].left
    assert "You can remove only a player who missed their turn" in group_texts(bot)
    assert bot.fake.calls_to("getChatMember"), "whether Ann is an admin was asked"


async def test_kicking_every_opponent_wins_no_game_and_no_match_point(bot: BotHarness) -> None:
    """Ann is an admin of the group and opened a match: she removes Bob, then Carol. The
    game stops without a winner, where a leave would have made her the winner."""
    await bot.store.settings.save_group_rules(
        GROUP_ID, Rules(match=MatchKind.FIRST_TO, match_target=3)
    )
    bot.fake.set_admins(GROUP_ID, {ANN.id})
    await _deal(bot)
    for user in (BOB, CAROL):
        state = await game_state(bot)
        seat = state.seat_of(user.id)
        assert seat is not None
        await bot.command(ANN, f"/kick {seat + 1}")
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None and session.game is not None and session.match is not None
    assert session.game.phase is Phase.FINISHED and session.game.result is not None
    assert session.game.result.reason is EndReason.STOPPED
    assert session.game.result.winner is None
    assert dict(session.match.scores)[ANN.id] == 0
    assert session.match.finished and session.match.winner is None
    texts = group_texts(bot)
    assert "The game was stopped." in texts and "The match ends without a winner." in texts
    assert "wins" not in texts
    notice = bot.fake.last_message(CAROL.id).plain_text or ""
    assert "You were removed from this game." in notice


# --- written on behalf of a chat -----------------------------------------------------------------


async def test_a_channel_or_an_anonymous_admin_is_nobody_to_play_or_manage(
    bot: BotHarness,
) -> None:
    """Commands written as a channel, or as the group by an anonymous admin, come from an
    account everyone who writes so shares: they open, join and stop nothing, and are answered
    in the group's language."""
    news = channel()
    await bot.feed(bot.updates.command_as_chat(bot.group, news, "/new"))
    session, _ = await bot.store.load(GROUP_ID)
    assert session is None
    assert bot.fake.last_message(GROUP_ID).plain_text == AS_YOURSELF
    await bot.command(ANN, "/new")
    for name in ("/join", "/stop", "/kick 1", "/leave", "/settings", "/language"):
        command, _, args = name.partition(" ")
        await bot.feed(bot.updates.command_as_chat(bot.group, bot.group, command, args or None))
        assert bot.fake.last_message(GROUP_ID).plain_text == AS_YOURSELF
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None and session.lobby is not None and session.lobby.players == ()
    await bot.store.settings.save_group_language(GROUP_ID, "it")
    await bot.feed(bot.updates.command_as_chat(bot.group, news, "/join"))
    italian = bot.fake.last_message(GROUP_ID).plain_text or ""
    assert italian and italian != AS_YOURSELF


async def test_a_channel_may_still_read_the_help_and_the_rules(bot: BotHarness) -> None:
    for name in ("/help", "/rules"):
        await bot.feed(bot.updates.command_as_chat(bot.group, channel(), name))
        assert "yourself" not in (bot.fake.last_message(GROUP_ID).plain_text or "")


async def test_a_reply_to_a_channel_message_names_nobody_to_kick(bot: BotHarness) -> None:
    await bot.command(ANN, "/new")
    posted = bot.updates.message_as_chat(bot.group, channel(), text="Tonight: cards!")
    await bot.command(ANN, "/kick", reply_to=posted)
    assert "give their seat number" in (bot.fake.last_message(GROUP_ID).plain_text or "")


# --- menus: a menu press changes only the menu's own message --------------------------------------

STALE = "This button is out of date."


def _table_or_lobby(bot: BotHarness) -> int:
    """The group's table, or its lobby: the message with the deep link."""
    found = bot.fake.find_button(GROUP_ID, lambda b: "start=" in str(b.get("url", "")))
    assert found is not None, "no table or lobby in the group"
    return found[0]


@pytest.mark.parametrize("stage", ["lobby", "game"])
async def test_menu_data_pressed_on_the_table_changes_nothing(bot: BotHarness, stage: str) -> None:
    """Mallory's client sends her own menus' data (and the group's) on the group's lobby or
    table: each press is refused with a pop-up, no request touches the group, and the table
    keeps its buttons."""
    bot.fake.set_admins(GROUP_ID, [MALLORY.id])
    await bot.command(ANN, "/new")
    if stage == "game":
        for user in (ANN, BOB, CAROL):
            await join_by_button(bot, user)
        await bot.press(ANN, GROUP_ID, has_op(Op.START))
        assert (await game_state(bot)).phase is Phase.PLAYING
    target = _table_or_lobby(bot)
    record = bot.fake.message(GROUP_ID, target)
    before = (record.seen_text, record.reply_markup, len(record.history))
    group_requests = len([c for c in bot.fake.calls if c.params.get("chat_id") == GROUP_ID])
    forged = [
        SettingsPress(MALLORY.id, SettingsMenu()).encode(),
        SettingsPress(GROUP_ID, SettingsMenu()).encode(),
        SettingsPress(GROUP_ID, PresetChoice(1)).encode(),
        LanguagePress(MALLORY.id, "de").encode(),
        LanguagePress(GROUP_ID, "de").encode(),
    ]
    for data in forged:
        update = bot.updates.callback(MALLORY, record, data)
        await bot.feed(update)
        answer = bot.fake.callback_answers[update["callback_query"]["id"]]
        assert answer.get("text") == STALE, data
    record = bot.fake.message(GROUP_ID, target)
    assert (record.seen_text, record.reply_markup, len(record.history)) == before
    assert len([c for c in bot.fake.calls if c.params.get("chat_id") == GROUP_ID]) == group_requests
    assert await bot.store.settings.group_language(GROUP_ID) is None
    assert await bot.store.settings.group_rules(GROUP_ID) is None


async def test_a_menu_pressed_on_itself_still_changes(bot: BotHarness) -> None:
    bot.fake.set_admins(GROUP_ID, [ANN.id])
    await bot.command(ANN, "/language")
    menu = bot.fake.last_message(GROUP_ID)
    await bot.press(ANN, GROUP_ID, lambda b: b.get("callback_data") == f"l:{GROUP_ID}:de:0")
    assert await bot.store.settings.group_language(GROUP_ID) == "de"
    assert len(bot.fake.message(GROUP_ID, menu.message_id).history) == 2
    # The same press from a copy of the menu in another chat is refused.
    await bot.command(ANN, "/settings")
    settings_menu = bot.fake.last_message(GROUP_ID)
    data = SettingsPress(GROUP_ID, SettingsMenu()).encode()
    elsewhere = dict(settings_menu.to_api_dict(), chat={"id": ANN.id, "type": "private"})
    update = bot.updates.callback(ANN, elsewhere, data)
    await bot.feed(update)
    assert bot.fake.callback_answers[update["callback_query"]["id"]].get("text") == STALE
