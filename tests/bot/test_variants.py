"""Every variant through the bot: the settings menu, the private keyboard following the rules."""

from __future__ import annotations

from tests.bot.conftest import GROUP_ID, BotHarness
from tests.bot.play import (
    game_state,
    group_texts,
    has_op,
    install_game,
    join_by_button,
    latest_group_text,
    play,
    seated,
)
from tests.engine.helpers import cards, state_with
from tests.support.updates import User
from tgcheat.bot.callbacks import ClaimPress, Op
from tgcheat.engine.cards import Rank
from tgcheat.engine.rules import PRESETS, Passing, Rules
from tgcheat.engine.state import Phase

ADMIN, BOB, CAROL = User(100, "Ann"), User(101, "Bob"), User(102, "Carol")


def _answers(bot: BotHarness) -> list[str]:
    return [str(c.params.get("text", "")) for c in bot.fake.calls_to("answerCallbackQuery")]


async def test_settings_menu_saves_per_group_and_refuses_invalid_combinations(
    bot: BotHarness,
) -> None:
    bot.fake.set_admins(GROUP_ID, {ADMIN.id})
    await bot.command(BOB, "/settings")
    assert "Only whoever opened the game" in (bot.fake.last_message(GROUP_ID).plain_text or "")
    await bot.command(ADMIN, "/settings")
    menu = bot.fake.last_message(GROUP_ID)
    assert "Settings" in (menu.plain_text or "")
    assert any(b["text"] == "Who may call Cheat: anyone" for b in menu.buttons)
    # Open "Challengeable plays", choose "last two plays".
    await bot.press(ADMIN, GROUP_ID, "Challengeable plays")
    await bot.press(ADMIN, GROUP_ID, "last two plays")
    assert _answers(bot)[-1] == "Saved for the next games."
    rules = await bot.store.settings.group_rules(GROUP_ID)
    assert rules is not None and rules.challenge_window.value == "two"
    # Now "next player" for challengers is refused, with the reason, and nothing is saved.
    await bot.press(ADMIN, GROUP_ID, "Who may call Cheat")
    await bot.press(ADMIN, GROUP_ID, "next player")
    assert "only the last play can stay open" in _answers(bot)[-1]
    assert await bot.store.settings.group_rules(GROUP_ID) == rules
    # A non-admin's press on the menu is refused.
    await bot.press(BOB, GROUP_ID, "« Back")
    assert "Only whoever opened the game" in _answers(bot)[-1]
    # Forged settings data is refused.
    await bot.feed(bot.updates.callback(ADMIN, menu, f"v:{GROUP_ID}:99:0"))
    assert _answers(bot)[-1] == "This button is out of date."
    # The group's next game uses them; /rules shows them.
    await bot.command(ADMIN, "/new")
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None and session.rules == rules
    await bot.command(ADMIN, "/rules")
    shown = bot.fake.last_message(GROUP_ID).plain_text or ""
    assert "Challengeable plays: last two plays" in shown


async def test_new_with_a_preset_and_an_unknown_one(bot: BotHarness) -> None:
    await bot.command(ADMIN, "/new nonsense")
    assert "Unknown rules" in (bot.fake.last_message(GROUP_ID).plain_text or "")
    await bot.command(ADMIN, "/new verju")
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None and session.rules == PRESETS["verju"]
    assert "Verju (Russian rules)" in (bot.fake.last_message(GROUP_ID).plain_text or "")


async def test_verju_opener_names_the_rank_and_the_next_player_answers_privately(
    bot: BotHarness,
) -> None:
    await bot.command(ADMIN, "/new verju")
    for user in (ADMIN, BOB, CAROL):
        await join_by_button(bot, user)
    await bot.press(ADMIN, GROUP_ID, has_op(Op.START))
    state = await game_state(bot)
    users = {u.id: u for u in (ADMIN, BOB, CAROL)}
    opener = users[state.players[state.turn].user_id]
    assert state.required is None
    # Pick one card, then name the rank: a queen, whatever the card is.
    await bot.press(opener, opener.id, has_op(Op.PICK, state.players[state.turn].hand[0].rank))
    assert "tap the rank you claim" in (bot.fake.last_message(opener.id).plain_text or "")
    await bot.press(opener, opener.id, has_op(Op.PLAY, Rank.QUEEN))
    state = await game_state(bot)
    assert state.required is Rank.QUEEN and state.plays == 1
    # The table offers no Cheat! button: only the next player may, in private.
    table = bot.fake.message(GROUP_ID, bot.fake.visible_messages(GROUP_ID)[0].message_id)
    assert not any("Cheat" in b["text"] for b in table.buttons)
    nxt = users[state.players[state.turn].user_id]
    other = next(u for u in users.values() if u not in (opener, nxt))
    private = bot.fake.last_message(nxt.id)
    assert "Believe it and play, or call Cheat!" in (private.plain_text or "")
    forged = ClaimPress(Op.CHALLENGE, GROUP_ID, (await bot.store.load(GROUP_ID))[0].game_id, 1)  # type: ignore[union-attr]
    await bot.feed(bot.updates.callback(other, private, forged.encode()))
    assert _answers(bot)[-1] == "Only the next player may answer this play."
    await bot.press(nxt, nxt.id, has_op(Op.CHALLENGE))
    after = await game_state(bot)
    assert after.pile == () and after.required is None
    assert latest_group_text(bot, "calls Cheat")


async def test_final_check_next_asks_only_the_next_player(bot: BotHarness) -> None:
    rules = PRESETS["verju"]
    state = state_with(
        [cards("Q♣"), cards("2♣", "3♣"), cards("4♣")],
        required=Rank.QUEEN,
        rules=rules,
        rest_to=2,
    )
    await install_game(bot, seated(state, [ADMIN, BOB, CAROL]))
    # "My cards" (a deep link) brings the hand message with its keyboard.
    await bot.start_private(ADMIN, f"h{GROUP_ID}")
    await play(bot, ADMIN, [Rank.QUEEN])
    final = await game_state(bot)
    assert final.phase is Phase.FINAL_CHECK
    bob_private = bot.fake.last_message(BOB.id)
    assert "Last cards!" in (bob_private.plain_text or "")
    await bot.press(BOB, BOB.id, has_op(Op.ACCEPT))
    done = await game_state(bot)
    assert done.phase is Phase.FINISHED and done.result is not None and done.result.winner == 0
    assert "Ann played out their hand and wins!" in group_texts(bot)


async def test_pass_button_only_when_the_rank_is_used_up(bot: BotHarness) -> None:
    rules = Rules(passing=Passing.EXHAUSTED)
    aces = cards("A♣", "A♦", "A♥", "A♠")
    state = state_with(
        [cards("2♣", "3♣"), cards("5♣"), cards("6♣")],
        pile=aces,
        required=Rank.ACE,
        rules=rules,
        rest_to=2,
    )
    await install_game(bot, seated(state, [ADMIN, BOB, CAROL]))
    await bot.start_private(ADMIN, f"h{GROUP_ID}")
    hand = bot.fake.last_message(ADMIN.id)
    assert any(b["text"] == "⏭ Pass" for b in hand.buttons)
    await bot.press(ADMIN, ADMIN.id, "⏭ Pass")
    after = await game_state(bot)
    assert after.turn == 1 and after.required is Rank.TWO
    assert "every card of aces is in the pile" in group_texts(bot)
    await bot.start_private(BOB, f"h{GROUP_ID}")
    assert not any("Pass" in b["text"] for b in bot.fake.last_message(BOB.id).buttons)


async def test_pass_by_vote_needs_every_other_player(bot: BotHarness) -> None:
    rules = Rules(passing=Passing.VOTE)
    state = state_with(
        [cards("2♣", "3♣"), cards("5♣"), cards("6♣")],
        required=Rank.ACE,
        rules=rules,
        rest_to=2,
    )
    await install_game(bot, seated(state, [ADMIN, BOB, CAROL]))
    await bot.start_private(ADMIN, f"h{GROUP_ID}")
    await bot.press(ADMIN, ADMIN.id, "Ask to pass")
    assert "asks to pass" in (bot.fake.last_message(BOB.id).plain_text or "")
    await bot.press(BOB, BOB.id, "👍 Yes")
    assert (await game_state(bot)).turn == 0
    await bot.press(CAROL, CAROL.id, "👍 Yes")
    after = await game_state(bot)
    assert after.turn == 1
    assert "everyone agreed" in group_texts(bot)


async def test_jokers_are_shown_and_playable(bot: BotHarness) -> None:
    from tgcheat.engine.rules import Jokers

    rules = Rules(jokers=Jokers.WILD)
    state = state_with(
        [cards("★0", "2♣"), cards("5♣"), cards("6♣")], required=Rank.ACE, rules=rules, rest_to=2
    )
    await install_game(bot, seated(state, [ADMIN, BOB, CAROL]))
    await bot.start_private(ADMIN, f"h{GROUP_ID}")
    hand = bot.fake.last_message(ADMIN.id)
    assert "★" in (hand.plain_text or "")
    await bot.press(ADMIN, ADMIN.id, has_op(Op.PICK, Rank.JOKER))
    await bot.press(ADMIN, ADMIN.id, has_op(Op.PLAY))
    await bot.press(BOB, GROUP_ID, has_op(Op.CHALLENGE))
    # A wild joker counts as the claimed ace: Bob was wrong and takes the pile.
    assert "It was true!" in group_texts(bot)
    after = await game_state(bot)
    assert len(after.players[1].hand) == 2
