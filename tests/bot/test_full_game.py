"""A whole game of Cheat in a group, driven by updates only: four friends, from /new to the
winner, with a challenge won, a challenge lost and a final play."""

from __future__ import annotations

from tests.bot.conftest import GROUP_ID, BotHarness
from tests.bot.play import game_state, has_op, join_by_button, latest_group_text, play, table_record
from tests.support.updates import User
from tgcheat.bot.callbacks import Op
from tgcheat.engine.cards import Rank
from tgcheat.engine.game import play_limit
from tgcheat.engine.state import GameState, Phase

PLAYERS = [
    User(101, "Alice"),
    User(102, "Bob <b>", username="bob"),
    User(103, "Carol & Dave"),
    User(104, "Eve", language_code="en-GB"),
]


def _truthful(state: GameState) -> list[Rank] | None:
    """Every card of the required rank the player holds (up to the limit), or None."""
    hand = state.players[state.turn].hand
    true = [c.rank for c in hand if c.rank is state.required]
    return true[: play_limit(state, state.turn)] or None


def _lie(state: GameState) -> list[Rank]:
    hand = state.players[state.turn].hand
    return [next(c.rank for c in hand if c.rank is not state.required)]


def _user(state: GameState, seat: int) -> User:
    return next(u for u in PLAYERS if u.id == state.players[seat].user_id)


async def test_a_full_four_player_game(bot: BotHarness) -> None:
    alice = PLAYERS[0]
    await bot.command(alice, "/new")
    lobby = bot.fake.last_message(GROUP_ID)
    assert "Cheat" in (lobby.plain_text or "")
    for user in PLAYERS:
        await join_by_button(bot, user)
        assert "joined" in (bot.fake.last_message(user.id).plain_text or "")
    lobby = bot.fake.message(GROUP_ID, lobby.message_id)
    assert "Players (4/6)" in (lobby.plain_text or "")
    assert "Bob <b>" in (lobby.plain_text or "")

    await bot.press(alice, GROUP_ID, has_op(Op.START))
    state = await game_state(bot)
    assert sorted(len(p.hand) for p in state.players) == [13, 13, 13, 13]
    for user in PLAYERS:
        hand_message = bot.fake.last_message(user.id)
        # The group's title is isolated as a name is (``seen_text`` drops the isolates).
        assert "Your cards in Friday <cards> & co (13)" in hand_message.seen_text
    table_text = bot.fake.message(GROUP_ID, lobby.message_id).plain_text or ""
    assert "to play aces" in table_text

    # A lie, caught: the claimant takes the pile.
    liar = _user(state, state.turn)
    await play(bot, liar, _lie(state))
    state = await game_state(bot)
    challenger = _user(state, state.turn)
    await bot.press(challenger, GROUP_ID, has_op(Op.CHALLENGE))
    # The reveal stays in the history as a line; the table is again the last bot message.
    assert "Caught bluffing!" in latest_group_text(bot, "calls Cheat")
    table = await table_record(bot)
    assert bot.fake.last_message(GROUP_ID).message_id == table.message_id
    assert "to play 2s" in (table.plain_text or "")
    after = await game_state(bot)
    assert len(after.players[state.seat_of(liar.id) or 0].hand) == 13
    assert after.turn == state.turn and after.required is Rank.TWO

    # A second press on the same Cheat! button: a pop-up, nothing changes.
    version_before = after
    stale = [b for b in bot.fake.calls_to("answerCallbackQuery")]
    await bot.feed(
        bot.updates.callback(
            _user(after, (after.turn + 1) % 4),
            bot.fake.message(GROUP_ID, lobby.message_id),  # the old table, now the reveal
            f"c:{GROUP_ID}:{(await bot.store.load(GROUP_ID))[0].game_id}:1",  # type: ignore[union-attr]
        )
    )
    assert await game_state(bot) == version_before
    answers = bot.fake.calls_to("answerCallbackQuery")
    assert len(answers) == len(stale) + 1 and "Too late" in answers[-1].params["text"]

    # The truth, challenged wrongly: the challenger takes the pile.
    state = await game_state(bot)
    while (true_ranks := _truthful(state)) is None:
        await play(bot, _user(state, state.turn), _lie(state))
        state = await game_state(bot)
    claimant = _user(state, state.turn)
    await play(bot, claimant, true_ranks)
    state = await game_state(bot)
    wrong = next(u for u in PLAYERS if u.id != claimant.id)
    wrong_seat = state.seat_of(wrong.id)
    assert wrong_seat is not None
    held = len(state.players[wrong_seat].hand)
    await bot.press(wrong, GROUP_ID, has_op(Op.CHALLENGE))
    assert "It was true!" in latest_group_text(bot, "calls Cheat")
    after = await game_state(bot)
    assert len(after.players[wrong_seat].hand) == held + len(state.pile)

    # Play on, truthfully when possible, until somebody's last cards are believed by everyone.
    state = after
    for _step in range(600):
        if state.phase is Phase.FINISHED:
            break
        if state.phase is Phase.PLAYING:
            await play(bot, _user(state, state.turn), _truthful(state) or _lie(state))
        else:
            final = state.open_claims[-1]
            table = (await table_record(bot)).plain_text or ""
            assert "Last cards!" in table
            answerers = [_user(state, s) for s in sorted(set(range(4)) - {final.seat})]
            if any(c.rank is not final.rank for c in final.cards):
                # Caught on the final play: the claimant takes the pile and the game goes on.
                await bot.press(answerers[0], GROUP_ID, has_op(Op.CHALLENGE))
                state = await game_state(bot)
                assert state.phase is Phase.PLAYING and state.players[final.seat].hand
                continue
            for user in answerers[:-1]:
                await bot.press(user, GROUP_ID, has_op(Op.ACCEPT))
                assert (await game_state(bot)).phase is Phase.FINAL_CHECK
            await bot.press(answerers[-1], GROUP_ID, has_op(Op.ACCEPT))
        state = await game_state(bot)
    assert state.phase is Phase.FINISHED and state.result is not None
    winner = _user(state, state.result.winner or 0)
    final_table = await table_record(bot)
    result = final_table.seen_text
    assert bot.fake.last_message(GROUP_ID).message_id == final_table.message_id
    assert f"{winner.first_name} played out their hand and wins!" in result
    assert "plays" in result and "bluff" in result
    # The table shows the end with Play again, the next game's ping and the game's story;
    # every hand lost its keyboard and shows its own result.
    assert [b["text"] for b in final_table.buttons] == [
        "🔁 Play again",
        "🔔 Next game",
        "📜 How it went",
    ]
    for user in PLAYERS:
        hand = bot.fake.last_message(user.id)
        # Only the card to share (inline mode, into a chat the player picks).
        assert [b["text"] for b in hand.buttons] == ["📣 Share"]
        assert hand.buttons[0]["switch_inline_query_chosen_chat"]["query"] == "result"
        own = "You won!" if user == winner else "The game is over. Your place:"
        assert own in (hand.plain_text or "")
        # A game of four people is rated: each sees their rating's change, once.
        assert "📈 Rating: " in (hand.plain_text or "")
    print(bot.fake.last_message(PLAYERS[0].id).plain_text)
    print(final_table.seen_text)
