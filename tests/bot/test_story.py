"""📜 How it went: a finished game's story, posted once on request, line for line the moves
that were made; never drawn, offered or posted while the game is being played."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis

from tests.bot.conftest import GROUP_ID, BotHarness, make_harness
from tests.bot.play import (
    game_state,
    has_op,
    install_game,
    join_by_button,
    play,
    seated,
    table_record,
)
from tests.engine.helpers import cards, state_with
from tests.support.updates import User
from tgcheat.bot.callbacks import Op, TablePress
from tgcheat.bot.handlers.story import GROUP_BUSY
from tgcheat.bot.sender import wall_clock_ms
from tgcheat.bot.texts import claim_phrase
from tgcheat.bot.views import card_label
from tgcheat.engine.actions import Stop
from tgcheat.engine.cards import Card, Rank
from tgcheat.engine.game import apply, play_limit
from tgcheat.engine.state import GameState, Phase
from tgcheat.i18n import translator
from tgcheat.table.session import Session
from tgcheat.table.story import CLOSING, OPENING

PLAYERS = [User(201, "Ann"), User(202, "Bob"), User(203, "Carol"), User(204, "Dan")]
EN = translator("en")
TOLD_ONCE_OVER = "The game's story is told once the game is over."
HEADER = "📜 How it went"


@dataclass
class Move:
    """A play as the test made it, and how the test answered it."""

    number: int
    name: str
    rank: Rank
    cards: tuple[Card, ...]
    final: bool
    caller: str | None = None
    taken: int = 0

    @property
    def lie(self) -> bool:
        return any(card.rank is not self.rank for card in self.cards)

    def line(self) -> str:
        shown = " ".join(card_label(EN, card) for card in self.cards)
        mark = "❌" if self.lie else "✅"
        final = "🏁 " if self.final else ""
        text = f"{self.number}. {final}{self.name}: "
        text += f"{claim_phrase(EN, len(self.cards), self.rank)} — {shown} {mark}"
        if self.caller is None:
            return text
        if self.lie:
            # Who takes the pile is named: the liar, whoever played.
            return f"{text} {self.caller} catches the bluff; {self.name} takes {self.taken}"
        return f"{text} {self.caller} calls it wrongly and takes {self.taken}"


def _user(state: GameState, seat: int) -> User:
    return next(u for u in PLAYERS if u.id == state.players[seat].user_id)


def _story_messages(bot: BotHarness, chat_id: int = GROUP_ID) -> list[str]:
    return [m.seen_text for m in bot.fake.visible_messages(chat_id) if HEADER in m.seen_text]


def _last_pop_up(bot: BotHarness) -> str:
    return str(list(bot.fake.callback_answers.values())[-1].get("text", ""))


async def _forge(bot: BotHarness, user: User, data: str, chat: dict[str, Any]) -> None:
    """A press with ``data`` under a bot message in ``chat``, whatever the buttons showed."""
    message = {"message_id": 1, "chat": chat, "date": 0, "text": "the table"}
    await bot.feed(bot.updates.callback(user, {**message, "from": bot.fake.bot_sender}, data))


async def _seeded_game(bot: BotHarness) -> None:
    bot.shell.rng = random.Random(15)
    await bot.command(PLAYERS[0], "/new")
    for user in PLAYERS:
        await join_by_button(bot, user)
    await bot.press(PLAYERS[0], GROUP_ID, has_op(Op.START))


async def _play_it_out(bot: BotHarness) -> list[Move]:
    """Truthful plays when the hand allows, else a one-card bluff; every other bluff and every
    seventh truthful play is called by the next player; last cards are called when false.
    Returns the plays as they were made. Midway, a forged 📜 press reveals nothing."""
    moves: list[Move] = []
    state = await game_state(bot)
    while state.phase is not Phase.FINISHED:
        if state.phase is Phase.FINAL_CHECK:
            final = state.open_claims[-1]
            move = next(m for m in moves if m.number == final.number)
            others = [s for s in state.active_seats() if s != final.seat]
            if move.lie:
                move.caller, move.taken = _user(state, others[0]).first_name, len(state.pile)
                await bot.press(_user(state, others[0]), GROUP_ID, has_op(Op.CHALLENGE))
            else:
                for seat in others:
                    await bot.press(_user(state, seat), GROUP_ID, has_op(Op.ACCEPT))
            state = await game_state(bot)
            continue
        seat = state.turn
        hand = state.players[seat].hand
        true = [c.rank for c in hand if c.rank is state.required]
        ranks = true[: play_limit(state, seat)] or [
            next((c.rank for c in hand if c.rank is not state.required), hand[0].rank)
        ]
        await play(bot, _user(state, seat), ranks)
        after = await game_state(bot)
        claim = after.open_claims[-1] if after.open_claims else None
        assert claim is not None and claim.seat == seat
        move = Move(claim.number, state.players[seat].name, claim.rank, claim.cards, claim.final)
        moves.append(move)
        if len(moves) == 5:
            await _no_story_while_live(bot, after)
        bluffs = sum(m.lie for m in moves)
        call = (move.lie and bluffs % 2 == 0) or (not move.lie and move.number % 7 == 0)
        if after.phase is Phase.PLAYING and call:
            caller = _user(after, after.turn)
            move.caller, move.taken = caller.first_name, len(after.pile)
            await bot.press(caller, GROUP_ID, has_op(Op.CHALLENGE))
            after = await game_state(bot)
        state = after
    return moves


async def _no_story_while_live(bot: BotHarness, state: GameState) -> None:
    """The table offers no story; a press forged with the game's own id is refused with a
    pop-up that tells nothing, and nothing is posted."""
    table = await table_record(bot)
    assert not [b for b in table.buttons if b.get("callback_data", "").startswith("h:")]
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None
    before = len(bot.fake.bot_messages(GROUP_ID))
    forged = TablePress(Op.STORY, GROUP_ID, session.game_id).encode()
    await _forge(bot, PLAYERS[1], forged, bot.group)
    assert _last_pop_up(bot) == TOLD_ONCE_OVER
    assert len(bot.fake.bot_messages(GROUP_ID)) == before
    after, _ = await bot.store.load(GROUP_ID)
    assert after is not None and not after.story.told


async def test_the_story_of_a_seeded_game_is_the_moves_made(bot: BotHarness) -> None:
    await _seeded_game(bot)
    moves = await _play_it_out(bot)
    assert any(m.caller and m.lie for m in moves) and any(m.caller and not m.lie for m in moves)
    assert len(moves) > OPENING + CLOSING, "long enough to be folded"
    assert _story_messages(bot) == [], "the story is never shown before it is asked for"

    # Anyone in the group may ask, not only a player.
    await bot.press(User(299, "Zoe"), GROUP_ID, has_op(Op.STORY))
    [story] = _story_messages(bot)
    lines = [line for line in story.split("\n") if line and line != HEADER]
    expected = [m.line() for m in moves]
    if len(moves) > OPENING + CLOSING:
        folded = len(moves) - OPENING - CLOSING
        expected = [
            *expected[:OPENING],
            f"⋯ {folded} moves not shown ⋯",
            *expected[-CLOSING:],
        ]
    assert lines == expected
    # A pile taken ends a paragraph: the next play starts a new pile.
    for line in expected[:-1]:
        if "takes" in line:
            assert f"{line}\n\n" in story


async def test_the_story_is_posted_once(bot: BotHarness) -> None:
    await _finished_game(bot)
    await bot.press(PLAYERS[2], GROUP_ID, has_op(Op.STORY))
    await bot.press(PLAYERS[0], GROUP_ID, has_op(Op.STORY))
    assert len(_story_messages(bot)) == 1
    assert _last_pop_up(bot) == "📜 This game's story is already in the chat, above."


async def test_an_older_games_button_is_stale(bot: BotHarness) -> None:
    await _finished_game(bot)
    # A button of a game before this one (its id is another).
    await _forge(bot, PLAYERS[1], TablePress(Op.STORY, GROUP_ID, "older1").encode(), bot.group)
    assert _last_pop_up(bot) == "This button is out of date."
    # This game's button, after Play again opened the next one.
    old = TablePress(Op.STORY, GROUP_ID, "rigged1").encode()
    await bot.press(PLAYERS[0], GROUP_ID, has_op(Op.PLAY_AGAIN))
    await _forge(bot, PLAYERS[1], old, bot.group)
    assert _last_pop_up(bot) == "This button is out of date."
    assert _story_messages(bot) == []


async def test_a_press_naming_another_chat_posts_nothing(bot: BotHarness) -> None:
    """The data names the group; the press comes from a private chat: forged."""
    await _finished_game(bot)
    data = TablePress(Op.STORY, GROUP_ID, "rigged1").encode()
    private = {"id": PLAYERS[1].id, "type": "private", "first_name": "Bob"}
    await _forge(bot, PLAYERS[1], data, private)
    assert _last_pop_up(bot) == "This button is out of date."
    assert _story_messages(bot) == [] and _story_messages(bot, PLAYERS[1].id) == []
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None and not session.story.told


async def test_the_story_is_in_the_groups_language(bot: BotHarness) -> None:
    await _finished_game(bot)
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None

    def in_german(current: Session | None) -> tuple[Session | None, None]:
        assert current is not None
        return Session(**{**_fields(current), "language": "de"}), None

    await bot.store.transact(GROUP_ID, in_german)
    await bot.press(PLAYERS[3], GROUP_ID, has_op(Op.STORY))
    stories = [
        m.seen_text for m in bot.fake.visible_messages(GROUP_ID) if "So lief es" in m.seen_text
    ]
    assert len(stories) == 1 and "1. Ann: " in stories[0] and "gefangen" not in stories[0]
    # Who takes the pile is said: the liar (Bob), not the one who caught him (Carol).
    assert "Carol deckt den Bluff auf; Bob nimmt 2" in stories[0]


async def test_a_game_against_the_computer_tells_it_in_the_private_chat(
    bot: BotHarness,
) -> None:
    ann = PLAYERS[0]
    state = state_with([cards("A♣", "5♦"), cards("2♣", "7♦")], rest_to=1)
    await bot.start_private(ann)

    def put(_: Session | None) -> tuple[Session | None, None]:
        return Session(ann.id, "solo1", ann.id, game=seated(state, PLAYERS[:2])), None

    await bot.store.transact(ann.id, put)
    stopped = await _stop(bot, ann.id)
    assert stopped.phase is Phase.FINISHED
    chat = {"id": ann.id, "type": "private", "first_name": "Ann"}
    await _forge(bot, ann, TablePress(Op.STORY, ann.id, "solo1").encode(), chat)
    [story] = _story_messages(bot, ann.id)
    assert "1. Ann: one ace — A♣ ✅" in story


async def _stop(bot: BotHarness, chat_id: int) -> GameState:
    """The game there, played one card then stopped (as /stop would)."""
    from tgcheat.table import transitions

    def played_and_stopped(current: Session | None) -> tuple[Session | None, None]:
        assert current is not None and current.game is not None
        from tgcheat.engine.actions import Play

        game = current.game
        state, events = apply(game, Play(0, (game.players[0].hand[0],), Rank.ACE))
        session = transitions.advance(current, state, events, 0)
        state, events = apply(state, Stop())
        return transitions.advance(session, state, events, 0), None

    committed = await bot.store.transact(chat_id, played_and_stopped)
    assert committed.session is not None and committed.session.game is not None
    return committed.session.game


async def _finished_game(bot: BotHarness) -> None:
    """A short game in the group: Ann plays an ace truthfully, Bob's bluff is caught, then
    the game is stopped; its result is on the table."""
    state = state_with(
        [cards("A♣", "A♦", "5♠"), cards("9♣", "7♦", "8♠"), cards("3♣", "8♦"), cards("4♣", "K♦")],
        rest_to=3,
    )
    await install_game(bot, seated(state, PLAYERS))
    for user in PLAYERS:
        await bot.start_private(user, f"h{GROUP_ID}")
    await play(bot, PLAYERS[0], [Rank.ACE])
    await play(bot, PLAYERS[1], [Rank.NINE])
    await bot.press(PLAYERS[2], GROUP_ID, has_op(Op.CHALLENGE))
    await bot.command(PLAYERS[0], "/stop")
    assert (await game_state(bot)).phase is Phase.FINISHED


def _fields(session: Session) -> dict[str, Any]:
    return {name: getattr(session, name) for name in Session.__dataclass_fields__}


async def test_the_story_waits_for_the_groups_budget(redis: Redis) -> None:
    """Over the group's message budget the story is not posted: a pop-up says to tap again,
    and it may be asked again (it was not marked as posted)."""
    bot = await make_harness(redis, group_messages_per_minute=2)
    try:
        # One clock for the store's commits and delivery's budget: no refill between the taps
        # but the one the test makes.
        now = [wall_clock_ms()]
        bot.shell.clock = lambda: now[0]
        await _finished_game(bot)
        # Over the budget the result may not be shown yet: its button's data is pressed.
        story = TablePress(Op.STORY, GROUP_ID, "rigged1").encode()
        while await bot.store.budget.take_for_reply(GROUP_ID, now[0]):
            pass
        await _forge(bot, PLAYERS[2], story, bot.group)
        assert _last_pop_up(bot) == GROUP_BUSY
        assert _story_messages(bot) == []
        session, _ = await bot.store.load(GROUP_ID)
        assert session is not None and not session.story.told
        now[0] += 120_000
        await _forge(bot, PLAYERS[2], story, bot.group)
        assert len(_story_messages(bot)) == 1
    finally:
        await bot.app.shutdown()
    bot.fake.assert_clean()
