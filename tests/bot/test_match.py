"""A match of several games: a scoreboard between games, the dealer one seat on."""

from __future__ import annotations

import dataclasses
import itertools

from tests.bot.conftest import GROUP_ID, BotHarness
from tests.bot.play import game_state, group_texts, has_op, join_by_button
from tests.support.updates import User
from tgcheat.bot.callbacks import Op
from tgcheat.engine.cards import Card
from tgcheat.engine.state import Phase
from tgcheat.table.session import Session

ANN, BOB, CAROL = User(1, "Ann"), User(2, "Bob"), User(3, "Carol")
USERS = {u.id: u for u in (ANN, BOB, CAROL)}


async def _leave_one_card_to_the_player_to_act(bot: BotHarness) -> None:
    """Move all but one card of the player to act onto the pile (the test's shortcut to a
    game's end; cards stay conserved)."""

    def change(session: Session | None) -> tuple[Session | None, None]:
        assert session is not None and session.game is not None
        game = session.game
        hand = game.players[game.turn].hand
        keep: tuple[Card, ...] = tuple(c for c in hand if c.rank is game.required)[:1] or hand[:1]
        moved = tuple(c for c in hand if c not in keep)
        players = list(game.players)
        players[game.turn] = dataclasses.replace(players[game.turn], hand=keep)
        game = dataclasses.replace(game, players=tuple(players), pile=game.pile + moved)
        return dataclasses.replace(session, game=game), None

    await bot.store.transact(GROUP_ID, change)


async def _win_a_game(bot: BotHarness) -> int:
    await _leave_one_card_to_the_player_to_act(bot)
    state = await game_state(bot)
    winner = USERS[state.players[state.turn].user_id]
    await bot.start_private(winner, f"h{GROUP_ID}")
    await bot.press(winner, winner.id, has_op(Op.PICK, state.players[state.turn].hand[0].rank))
    await bot.press(winner, winner.id, has_op(Op.PLAY))
    state = await game_state(bot)
    for seat in range(3):
        if seat != state.open_claims[-1].seat and state.phase is Phase.FINAL_CHECK:
            await bot.press(USERS[state.players[seat].user_id], GROUP_ID, has_op(Op.ACCEPT))
    return winner.id


async def test_first_to_two_plays_games_until_someone_has_two_wins(bot: BotHarness) -> None:
    bot.fake.set_admins(GROUP_ID, {ANN.id})
    await bot.command(ANN, "/settings")
    await bot.press(ANN, GROUP_ID, "Match")
    await bot.press(ANN, GROUP_ID, "first to 3 wins")
    await bot.command(ANN, "/new")
    for user in USERS.values():
        await join_by_button(bot, user)
    await bot.press(ANN, GROUP_ID, has_op(Op.START))
    first = await game_state(bot)
    wins: dict[int, int] = {}
    dealers = [first.dealer]
    for game_number in range(1, 10):
        winner = await _win_a_game(bot)
        wins[winner] = wins.get(winner, 0) + 1
        session, _ = await bot.store.load(GROUP_ID)
        assert session is not None and session.match is not None
        assert session.match.games == game_number
        assert f"📊 Match after {game_number} game" in group_texts(bot)
        if session.match.finished:
            break
        await bot.press(BOB, GROUP_ID, has_op(Op.NEXT_GAME))
        state = await game_state(bot)
        assert state.phase is Phase.PLAYING and state.deck_size == 52
        # Same seats; the dealer moves one seat on.
        assert [p.user_id for p in state.players] == [p.user_id for p in first.players]
        dealers.append(state.dealer)
    assert max(wins.values()) == 3
    assert "wins the match!" in group_texts(bot)
    assert all((b - a) % 3 == 1 for a, b in itertools.pairwise(dealers))
