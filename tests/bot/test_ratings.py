"""Ratings, seasons, boards, achievements and sharing, through update JSON: a rated game moves
its players' ratings the right way, once; a season turns at its boundary on the bot's clock; the
global board leaves out who opted out; achievements are announced once; inline queries are
answered with valid results (every request is checked against the Bot API by the fake)."""

from __future__ import annotations

import datetime

from redis.asyncio import Redis

from tests.bot.conftest import GROUP_ID, BotHarness
from tests.bot.play import has_op, install_game, play, seated
from tests.bot.test_stats import ANN, BOB, CAROL, _believe, _last_cards
from tests.bot.webhook import served
from tests.engine.helpers import cards, state_with
from tests.support.updates import User, private
from tgcheat.bot.callbacks import Op
from tgcheat.engine.cards import Rank
from tgcheat.table.rating import NEWCOMER, Skill, rated
from tgcheat.table.stats import game_record


def _ms(*moment: int) -> int:
    return int(datetime.datetime(*moment, tzinfo=datetime.UTC).timestamp() * 1000)


DECEMBER = _ms(2026, 12, 31, 23, 59)
JANUARY = _ms(2027, 1, 1, 0, 1)


async def _won_by(bot: BotHarness, winner: User, others: list[User], game_id: str) -> None:
    """``winner`` goes out on a bluff the others believe (a game of three: rated)."""
    await _last_cards(bot, winner, others, game_id)
    for user in others:
        await _believe(bot, user)


async def _skill(redis: Redis, bot: BotHarness, user: User) -> Skill:
    raw = await redis.hget(bot.store.keys.person_stats(user.id), "k")
    assert raw is not None
    return Skill.decode(raw.decode())


async def test_a_rated_game_moves_ratings_the_right_way_and_once(
    bot: BotHarness, redis: Redis
) -> None:
    bot.shell.clock = lambda: DECEMBER
    await _last_cards(bot, ANN, [BOB, CAROL], "g1")
    await _believe(bot, BOB)
    final = await _believe(bot, CAROL)
    ann, bob, carol = [await _skill(redis, bot, user) for user in (ANN, BOB, CAROL)]
    # The winner up, the last down, the second between; a newcomer starts at NEWCOMER.
    assert ann.shown > NEWCOMER > carol.shown
    assert ann.shown > bob.shown > carol.shown
    # Each sees their own change in their private result.
    mine = bot.fake.last_message(ANN.id).plain_text or ""
    assert f"📈 Rating: {ann.shown} (+{ann.shown - NEWCOMER})" in mine
    theirs = bot.fake.last_message(CAROL.id).plain_text or ""
    assert f"📈 Rating: {carol.shown} (−{NEWCOMER - carol.shown})" in theirs
    # The final update delivered again, and the game counted again directly: nothing moves.
    await bot.feed(final)
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None
    record = game_record(session)
    assert record is not None and record.rated
    again = await bot.store.stats.count(record)
    assert again is not None and again.of(ANN.id) is not None
    assert again.of(ANN.id).after == ann.shown  # type: ignore[union-attr]
    assert [await _skill(redis, bot, user) for user in (ANN, BOB, CAROL)] == [ann, bob, carol]
    # The group's boards rank them, this season's and all time's alike.
    for season in (202612, None):
        board = await bot.store.stats.board(GROUP_ID, season)
        assert [name for name, _ in board] == ["Ann", "Bob", "Carol"]
        assert board[0][1] == ann.shown


async def test_a_game_of_two_is_not_rated(bot: BotHarness, redis: Redis) -> None:
    """The walkover rule's floor for ratings: at least three people who played."""
    bot.shell.clock = lambda: DECEMBER
    state = state_with([cards("2♣"), cards("2♦", "7♦")], rest_to=1)
    await install_game(bot, seated(state, [ANN, BOB]), "duel")
    for user in (ANN, BOB):
        await bot.start_private(user, f"h{GROUP_ID}")
    await play(bot, ANN, [Rank.TWO])
    await _believe(bot, BOB)
    assert await redis.hget(bot.store.keys.person_stats(ANN.id), "k") is None
    assert "📈" not in (bot.fake.last_message(ANN.id).plain_text or "")
    row = await bot.store.stats.person(ANN.id)
    assert row is not None and row.wins == 1


async def test_the_season_turns_at_its_boundary_on_the_bots_clock(
    bot: BotHarness, redis: Redis
) -> None:
    bot.shell.clock = lambda: DECEMBER - 60_000
    await _won_by(bot, ANN, [BOB, CAROL], "d1")
    bot.shell.clock = lambda: DECEMBER
    await _won_by(bot, BOB, [ANN, CAROL], "d2")
    december = [await _skill(redis, bot, user) for user in (BOB, ANN, CAROL)]
    assert {skill.season for skill in december} == {202612}
    # No season turned yet: nothing named.
    assert "season" not in (bot.fake.last_message(GROUP_ID).seen_text)
    bot.shell.clock = lambda: JANUARY
    await _won_by(bot, CAROL, [ANN, BOB], "j1")
    january = [await _skill(redis, bot, user) for user in (BOB, ANN, CAROL)]
    # The soft reset: the ratings moved from the December estimates widened first.
    expected = rated(december, [3, 2, 1], 202701)
    assert [s.encode() for s in january] == [s.encode() for s in expected]
    unreset = rated([Skill(s.mu, s.sigma, 202701) for s in december], [3, 2, 1], 202701)
    assert [s.encode() for s in january] != [s.encode() for s in unreset]
    # The group's first result of January names December's best here.
    table = bot.fake.last_message(GROUP_ID).seen_text
    best = await bot.store.stats.board(GROUP_ID, 202612)
    assert best[0][0] in ("Ann", "Bob")
    assert f"The season of December 2026 is over. Best here: 1. {best[0][0]} {best[0][1]}" in (
        table
    )
    january_board = await bot.store.stats.board(GROUP_ID, 202701)
    assert sorted(name for name, _ in january_board) == ["Ann", "Bob", "Carol"]
    # The next game of January names nothing again.
    await _won_by(bot, ANN, [BOB, CAROL], "j2")
    assert "season" not in (bot.fake.last_message(GROUP_ID).seen_text)


async def test_the_global_board_never_lists_someone_who_opted_out(bot: BotHarness) -> None:
    bot.shell.clock = lambda: DECEMBER
    await _won_by(bot, ANN, [BOB, CAROL], "g1")
    listed = [name for name, _ in await bot.store.stats.board(None, 202612)]
    assert sorted(listed) == ["Ann", "Bob", "Carol"]
    # Bob opts out from /profile in private: off the boards at once, and after his next game.
    await bot.command(BOB, "/profile", private(BOB))
    assert "You are listed on the global board" in bot.fake.last_message(BOB.id).seen_text
    await bot.press(BOB, BOB.id, has_op(Op.GLOBAL_BOARD))
    assert "You are not listed on the global board" in bot.fake.last_message(BOB.id).seen_text
    assert "Bob" not in [name for name, _ in await bot.store.stats.board(None, 202612)]
    await _won_by(bot, BOB, [ANN, CAROL], "g2")
    for season in (202612, None):
        names = [name for name, _ in await bot.store.stats.board(None, season)]
        assert "Bob" not in names and "Ann" in names
    await bot.command(BOB, "/top", private(BOB))
    top = bot.fake.last_message(BOB.id).seen_text
    assert "Across groups" in top and "Ann" in top and "Bob" not in top
    # The group's own board still ranks him (it names no one outside the group).
    assert "Bob" in [name for name, _ in await bot.store.stats.board(GROUP_ID, 202612)]
    # Someone else cannot press his setting.
    await bot.command(ANN, "/profile", private(ANN))
    forged = bot.updates.callback(
        ANN, bot.fake.last_message(ANN.id), f"{Op.GLOBAL_BOARD}:{BOB.id}:show:0"
    )
    await bot.feed(forged)
    assert "Bob" not in [name for name, _ in await bot.store.stats.board(None, 202612)]


async def test_achievements_are_announced_once_in_private_and_briefly_in_the_group(
    bot: BotHarness,
) -> None:
    bot.shell.clock = lambda: DECEMBER
    await _last_cards(bot, ANN, [BOB, CAROL], "a1")
    await _believe(bot, BOB)
    final = await _believe(bot, CAROL)
    # Ann went out on a bluff nobody called: her first win, of the Cheat rules, a last lie.
    mine = bot.fake.last_message(ANN.id).plain_text or ""
    for name in ("First game", "First win", "Classic", "Last lie"):
        assert f"🏅 New achievement: {name}." in mine
    assert "Honest Abe" not in mine  # she bluffed
    table = bot.fake.last_message(GROUP_ID).seen_text
    assert "🏅 Ann: First win, Classic, Untouchable, Last lie, Lightning" in table
    assert "First game" not in table  # everyone's: no news to the group
    await bot.feed(final)
    profile = await bot.store.stats.profile(ANN.id, DECEMBER)
    assert profile is not None
    assert profile.achievements.count("ll") == 1
    # The same again in a second game: nothing new to announce, in private or in the group.
    await _won_by(bot, ANN, [BOB, CAROL], "a2")
    assert "New achievement" not in (bot.fake.last_message(ANN.id).plain_text or "")
    assert "🏅" not in (bot.fake.last_message(GROUP_ID).seen_text)


async def test_profile_in_a_group_and_in_private(bot: BotHarness) -> None:
    bot.shell.clock = lambda: DECEMBER
    await _won_by(bot, ANN, [BOB, CAROL], "p1")
    await bot.command(ANN, "/profile")
    group = bot.fake.last_message(GROUP_ID)
    assert "Ann" in group.seen_text and "📈 Rating:" in group.seen_text
    assert "Achievements: 6 of 27" in group.seen_text
    assert not group.buttons  # no settings in a group
    await bot.command(ANN, "/profile", private(ANN))
    mine = bot.fake.last_message(ANN.id)
    assert "This season: #1 across groups" in mine.seen_text
    assert any(b.get("switch_inline_query_chosen_chat") for b in mine.buttons)


async def test_inline_queries_are_answered_with_cards_to_share(bot: BotHarness) -> None:
    bot.shell.clock = lambda: DECEMBER
    stranger = User(555, "Stranger")
    await bot.feed(bot.updates.inline_query(stranger, "anything at all"))
    (answer,) = bot.fake.inline_answers.values()
    assert [r["id"] for r in answer["results"]] == ["invite"]
    await _won_by(bot, ANN, [BOB, CAROL], "i1")
    await bot.feed(bot.updates.inline_query(ANN, "result", chat_type="group"))
    answer = list(bot.fake.inline_answers.values())[-1]
    assert [r["id"] for r in answer["results"]] == ["result"]
    text = answer["results"][0]["input_message_content"]["message_text"]
    assert "won a game of Cheat of 3 players" in text and "📈 Rating:" in text
    await bot.feed(bot.updates.inline_query(ANN, ""))
    answer = list(bot.fake.inline_answers.values())[-1]
    assert [r["id"] for r in answer["results"]] == ["result", "profile"]
    assert answer["is_personal"] is True
    # Answers are no messages: nothing was sent for them.
    sent = [call for call in bot.fake.calls if call.method == "sendMessage"]
    assert not [call for call in sent if call.params.get("chat_id") == stranger.id]


async def test_a_person_may_leave_the_global_board_before_their_first_game(
    bot: BotHarness, redis: Redis
) -> None:
    bot.shell.clock = lambda: DECEMBER
    await bot.start_private(CAROL)
    await bot.command(CAROL, "/profile", private(CAROL))
    assert "No games counted yet." in bot.fake.last_message(CAROL.id).seen_text
    await bot.press(CAROL, CAROL.id, has_op(Op.GLOBAL_BOARD))
    assert "You are not listed on the global board" in bot.fake.last_message(CAROL.id).seen_text
    await _won_by(bot, CAROL, [ANN, BOB], "h1")
    assert "Carol" not in [name for name, _ in await bot.store.stats.board(None, 202612)]
    # Someone whose statistics expired (a year without a game) leaves no nameless row.
    await redis.delete(bot.store.keys.person_stats(ANN.id))
    assert [name for name, _ in await bot.store.stats.board(None, None)] == ["Bob"]


async def test_an_inline_query_through_the_webhook_and_one_malformed(redis: Redis) -> None:
    """The webhook hands an inline query to the bot like any update; one whose query is not a
    string is refused with 400 and answered nothing."""
    async with served(redis) as web:
        stranger = User(556, "Stranger")
        assert await web.post(web.updates.inline_query(stranger, "profile")) == 200
        (answer,) = web.fake.inline_answers.values()
        assert [result["id"] for result in answer["results"]] == ["invite"]
        malformed = web.updates.inline_query(stranger)
        malformed["inline_query"]["query"] = 5
        assert await web.post(malformed) == 400
        assert len(web.fake.inline_answers) == 1
