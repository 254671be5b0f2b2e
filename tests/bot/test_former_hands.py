"""A player's former hand messages: when their turn brings a new hand message (a notification),
the former one, without buttons, stays in their chat as the hand it was, and all of them go in
one request per player when the game ends, instead of one request each turn."""

from __future__ import annotations

from tests.bot.conftest import GROUP_ID, BotHarness
from tests.bot.play import game_state, has_op, install_game, join_by_button, play, seated
from tests.engine.helpers import cards, state_with
from tests.support.updates import User
from tgcheat.bot.app import CheatApplication
from tgcheat.bot.callbacks import Op
from tgcheat.engine.cards import Rank

ANN, BOB, CAROL = User(1, "Ann"), User(2, "Bob"), User(3, "Carol")


def _hands(bot: BotHarness, user: User) -> list[int]:
    return [
        m.message_id for m in bot.fake.visible_messages(user.id) if "Your cards in" in m.seen_text
    ]


def _deletes(bot: BotHarness, user: User, method: str) -> list[dict]:
    return [
        c.params
        for c in bot.fake.calls
        if c.method == method and c.params.get("chat_id") == user.id
    ]


async def _round_to_ann(bot: BotHarness) -> int:
    """Ann, Bob and Carol each play once: Ann's turn again. Returns Ann's first hand message."""
    state = state_with([cards("A♣", "4♣"), cards("2♣", "5♦"), cards("3♣", "6♦")], rest_to=2)
    await install_game(bot, seated(state, [ANN, BOB, CAROL]))
    for user in (ANN, BOB, CAROL):
        await bot.start_private(user, f"h{GROUP_ID}")
    (first,) = _hands(bot, ANN)
    await play(bot, ANN, [Rank.ACE])
    await play(bot, BOB, [Rank.TWO])
    await play(bot, CAROL, [Rank.THREE])
    return first


async def test_former_hands_stay_without_buttons_and_go_together_at_the_end(
    bot: BotHarness,
) -> None:
    first = await _round_to_ann(bot)
    # Ann's turn again: a new hand message; the former one stays, its buttons gone.
    former, turn = _hands(bot, ANN)
    assert former == first and turn != first
    assert bot.fake.message(ANN.id, first).buttons == []
    assert _deletes(bot, ANN, "deleteMessage") == []
    await play(bot, ANN, [Rank.FOUR])
    for user in (BOB, CAROL):
        await bot.press(user, GROUP_ID, has_op(Op.ACCEPT))
    # The game is over: one request took Ann's former hands away; her last hand is left.
    (deleted,) = _deletes(bot, ANN, "deleteMessages")
    assert deleted["message_ids"] == [first]
    assert _hands(bot, ANN) == [turn]
    assert "You won" in bot.fake.message(ANN.id, turn).seen_text
    assert _deletes(bot, ANN, "deleteMessage") == []
    bot.fake.assert_clean()


async def test_a_former_hand_with_buttons_goes_at_once(bot: BotHarness) -> None:
    """The clock played for the player whose time ran out: their turn's hand, with its
    buttons, makes way for the notice at once."""
    await bot.command(ANN, "/new")
    for user in (ANN, BOB, CAROL):
        await join_by_button(bot, user)
    await bot.press(ANN, GROUP_ID, has_op(Op.START))
    state = await game_state(bot)
    late = next(u for u in (ANN, BOB, CAROL) if u.id == state.players[state.turn].user_id)
    (turn,) = _hands(bot, late)
    assert bot.fake.message(late.id, turn).buttons
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None and session.deadline_ms
    app = bot.app
    assert isinstance(app, CheatApplication) and app.timers is not None
    await app.timers.fire_due(session.deadline_ms)
    (notice,) = _hands(bot, late)
    assert notice != turn
    assert "Your time ran out" in bot.fake.message(late.id, notice).seen_text
    assert [p["message_id"] for p in _deletes(bot, late, "deleteMessage")] == [turn]


async def test_a_former_hand_with_only_the_mini_app_button_stays(bot: BotHarness) -> None:
    """The "🃏 Open cards" button opens the Mini App on the game whenever it is pressed: it
    never goes out of date, so a former hand with it stays until the end like one without
    buttons."""
    app = bot.app
    assert isinstance(app, CheatApplication) and app.routes is not None
    app.routes.shell.publisher.app_url = "https://cards.example/app"
    first = await _round_to_ann(bot)
    former, _turn = _hands(bot, ANN)
    assert former == first
    buttons = bot.fake.message(ANN.id, first).buttons
    assert buttons and all("web_app" in button for button in buttons)
    assert _deletes(bot, ANN, "deleteMessage") == []
