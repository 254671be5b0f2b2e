"""Driving players through the bot's buttons, as a person on a phone would."""

from __future__ import annotations

import dataclasses
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.bot.conftest import GROUP_ID, BotHarness
from tests.support.buttons import press_matcher
from tests.support.updates import User
from tgcheat.bot.callbacks import HandPress, Op
from tgcheat.engine.cards import Rank
from tgcheat.engine.game import play_limit
from tgcheat.engine.state import GameState, Phase
from tgcheat.table.session import Session


def has_op(op: Op, rank: Rank | None = None) -> Any:
    return press_matcher(
        lambda press: (
            press.op is op
            and (rank is None or (isinstance(press, HandPress) and press.rank is rank))
        )
    )


def start_payload(url: str) -> str:
    return parse_qs(urlsplit(url).query)["start"][0]


async def join_by_button(bot: BotHarness, user: User) -> None:
    """Tap the lobby's Join button: a deep link that opens the private chat with /start.
    Only someone in the group sees the lobby: ``user`` is (unless known to have left it)."""
    found = bot.fake.find_button(GROUP_ID, lambda b: "url" in b and "start=j" in b["url"])
    assert found is not None, "the lobby has a Join button"
    bot.fake.note_member(GROUP_ID, user.id)
    await bot.start_private(user, start_payload(found[1]["url"]))


async def game_state(bot: BotHarness) -> GameState:
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None and session.game is not None
    return session.game


async def play(bot: BotHarness, user: User, ranks: list[Rank]) -> None:
    """Pick one card of each rank listed (repeats for more), then press Play."""
    for rank in ranks:
        await bot.press(user, user.id, has_op(Op.PICK, rank))
    await bot.press(user, user.id, has_op(Op.PLAY))


def seated(state: GameState, users: list[User]) -> GameState:
    """The same game with ``users`` in the seats (ids and names), hands unchanged."""
    players = tuple(
        dataclasses.replace(player, user_id=user.id, name=user.first_name)
        for player, user in zip(state.players, users, strict=True)
    )
    return dataclasses.replace(state, players=players)


def group_texts(bot: BotHarness) -> str:
    return "\n".join(m.seen_text for m in bot.fake.visible_messages(GROUP_ID))


async def install_game(bot: BotHarness, state: GameState, game_id: str = "rigged1") -> None:
    """Put a game with explicit hands in the group (as if dealt), for scenario tests."""

    def put(_: Session | None) -> tuple[Session | None, None]:
        return Session(GROUP_ID, game_id, state.players[0].user_id, game=state, title="T"), None

    await bot.store.transact(GROUP_ID, put)
    for player in state.players:
        bot.fake.started_users.add(player.user_id)


async def play_to_the_end(bot: BotHarness, users: list[User], max_steps: int = 1000) -> GameState:
    """Everyone plays truthfully when they can, else bluffs with one card; a bluff on last
    cards is caught, true last cards are believed by all."""
    by_id = {u.id: u for u in users}
    state = await game_state(bot)
    for _ in range(max_steps):
        if state.phase is Phase.FINISHED:
            return state
        if state.phase is Phase.PLAYING:
            seat = state.turn
            hand = state.players[seat].hand
            true = [c.rank for c in hand if c.rank is state.required]
            ranks = true[: play_limit(state, seat)] or [
                next((c.rank for c in hand if c.rank is not state.required), hand[0].rank)
            ]
            await play(bot, by_id[state.players[seat].user_id], ranks)
        else:
            final = state.open_claims[-1]
            others = [s for s in state.active_seats() if s != final.seat]
            if any(c.rank is not final.rank for c in final.cards):
                await bot.press(
                    by_id[state.players[others[0]].user_id], GROUP_ID, has_op(Op.CHALLENGE)
                )
            else:
                for seat in others:
                    await bot.press(by_id[state.players[seat].user_id], GROUP_ID, has_op(Op.ACCEPT))
        state = await game_state(bot)
    raise AssertionError("the game did not end")


async def table_record(bot: BotHarness) -> Any:
    """The group's current table message (it moves to the bottom after a reveal)."""
    messages = await bot.message_ids(GROUP_ID)
    assert messages.table is not None
    return bot.fake.message(GROUP_ID, messages.table)


def latest_group_text(bot: BotHarness, containing: str) -> str:
    """The newest visible group message that contains ``containing`` (or "")."""
    for record in reversed(bot.fake.visible_messages(GROUP_ID)):
        if containing in (record.plain_text or ""):
            return record.plain_text or ""
    return ""
