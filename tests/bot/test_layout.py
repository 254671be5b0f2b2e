"""What a player sees on a phone held in one hand, through the bot's update JSON: the hand as
cards, the keyboard of a turn (Play alone on its row, the rank to claim marked, a claim grid
unlike the pick grid), prompts that say what to tap next, the settings menu's rows, /help and
/rules, and no card-back emoji that many Android fonts draw as a box."""

from __future__ import annotations

from typing import Any

import pytest

from tests.bot.conftest import GROUP_ID, BotHarness
from tests.bot.play import has_op, install_game, join_by_button, play_to_the_end, seated
from tests.engine.helpers import cards, state_with
from tests.support.buttons import press_matcher
from tests.support.updates import User, private
from tgcheat.bot.callbacks import HandPress, Op, PresetChoice, SettingsPress
from tgcheat.engine.cards import CLAIMABLE_RANKS, Rank
from tgcheat.engine.rules import PRESETS, Passing, Rules
from tgcheat.engine.state import Phase
from tgcheat.i18n import available_languages

ANN, BOB, CAROL = User(100, "Ann"), User(101, "Bob"), User(102, "Carol")

#: The card back (U+1F0A0): a box on many Android fonts.
CARD_BACK = "🂠"


def rows_of(bot: BotHarness, chat_id: int) -> list[list[dict[str, Any]]]:
    markup = bot.fake.last_message(chat_id).current.reply_markup or {}
    rows: list[list[dict[str, Any]]] = markup.get("inline_keyboard", [])
    return rows


def labels(bot: BotHarness, chat_id: int) -> list[list[str]]:
    return [[button["text"] for button in row] for row in rows_of(bot, chat_id)]


def text_of(bot: BotHarness, chat_id: int) -> str:
    return bot.fake.last_message(chat_id).plain_text or ""


def row_of(bot: BotHarness, chat_id: int, op: Op) -> list[str]:
    """The labels of the keyboard row holding the button for ``op``."""
    wanted = has_op(op)
    for row in rows_of(bot, chat_id):
        if any(wanted(button) for button in row):
            return [button["text"] for button in row]
    raise AssertionError(f"no {op} button in {labels(bot, chat_id)}")


def claim_buttons(bot: BotHarness, chat_id: int) -> list[dict[str, Any]]:
    """Buttons that play the selection under a claimed rank."""
    is_claim = press_matcher(lambda p: isinstance(p, HandPress) and p.op is Op.PLAY)
    return [b for row in rows_of(bot, chat_id) for b in row if is_claim(b)]


async def ann_on_turn(bot: BotHarness, rules: Rules, required: Rank | None) -> None:
    """Ann to play with 2 2 · 7 7 · K in her hand; her hand message is open."""
    state = state_with(
        [cards("2♥", "2♦", "7♣", "7♦", "K♠"), cards("5♣"), cards("6♣")],
        required=required,
        rules=rules,
        rest_to=2,
    )
    await install_game(bot, seated(state, [ANN, BOB, CAROL]))
    await bot.start_private(ANN, f"h{GROUP_ID}")


# --- the hand ------------------------------------------------------------------------------------


async def test_the_hand_reads_as_cards_and_the_pick_buttons_match(bot: BotHarness) -> None:
    await ann_on_turn(bot, Rules(), Rank.SEVEN)
    text = text_of(bot, ANN.id)
    assert "2 2 · 7 7 · K" in text
    assert "×" not in text
    picks = labels(bot, ANN.id)[0]
    assert picks == ["2 2", "• 7 7 •", "K"]
    assert not any("×" in label for row in labels(bot, ANN.id) for label in row)


async def test_long_labels_make_shorter_rows_that_picking_does_not_change(
    bot: BotHarness,
) -> None:
    four_tens = cards("10♣", "10♦", "10♥", "10♠", "2♣", "3♣", "4♣", "5♣")
    state = state_with([four_tens, cards("6♣"), cards("7♣")], required=Rank.ACE, rest_to=2)
    await install_game(bot, seated(state, [ANN, BOB, CAROL]))
    await bot.start_private(ANN, f"h{GROUP_ID}")
    widths = [len(row) for row in labels(bot, ANN.id)]
    assert widths == [3, 2]
    assert labels(bot, ANN.id)[1] == ["5", "10 10 10 10"]
    await bot.press(ANN, ANN.id, has_op(Op.PICK, Rank.TEN))
    assert [len(row) for row in labels(bot, ANN.id)][:2] == widths


async def test_the_required_rank_is_marked_and_a_picked_rank_is_ticked(bot: BotHarness) -> None:
    await ann_on_turn(bot, Rules(), Rank.SEVEN)
    assert "• 7 7 •" in labels(bot, ANN.id)[0]
    # Picking a 2 ticks it; the sevens stay marked as the rank to claim.
    await bot.press(ANN, ANN.id, has_op(Op.PICK, Rank.TWO))
    assert labels(bot, ANN.id)[0] == ["✅ 2", "• 7 7 •", "K"]
    # Each tap adds a card to the tick; the mark and the tick are never on one button.
    await bot.press(ANN, ANN.id, has_op(Op.PICK, Rank.SEVEN))
    await bot.press(ANN, ANN.id, has_op(Op.PICK, Rank.SEVEN))
    picks = labels(bot, ANN.id)[0]
    assert picks == ["✅ 2", "✅ 7 7", "K"]
    assert not any("•" in label for label in picks)


async def test_the_play_button_has_a_row_of_its_own(bot: BotHarness) -> None:
    await ann_on_turn(bot, Rules(), Rank.SEVEN)
    # Before a pick, the one Play button is the one-tap play of the sevens held.
    assert row_of(bot, ANN.id, Op.PLAY) == ["▶️ Play your 7 7"]
    await bot.press(ANN, ANN.id, has_op(Op.PICK, Rank.SEVEN))
    await bot.press(ANN, ANN.id, has_op(Op.PICK, Rank.SEVEN))
    assert row_of(bot, ANN.id, Op.PLAY) == ["▶️ Play: two 7s"]
    assert row_of(bot, ANN.id, Op.CLEAR) == ["✖️ Clear"]
    # Play sits right under the cards, Clear under Play.
    rows = labels(bot, ANN.id)
    assert rows.index(["▶️ Play: two 7s"]) + 1 == rows.index(["✖️ Clear"])
    await bot.press(ANN, ANN.id, has_op(Op.PLAY))
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None and session.game is not None and session.game.plays == 1


async def test_one_tap_plays_every_card_of_the_required_rank_held(bot: BotHarness) -> None:
    await ann_on_turn(bot, Rules(), Rank.SEVEN)
    rows = labels(bot, ANN.id)
    # Under the cards, above the way to pass.
    assert rows.index(["▶️ Play your 7 7"]) == 1
    # One tap, no pick before it.
    await bot.press(ANN, ANN.id, has_op(Op.PLAY))
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None and session.game is not None
    claim = session.game.last_claim
    assert claim is not None and claim.rank is Rank.SEVEN
    assert sorted(card.rank for card in claim.cards) == [Rank.SEVEN, Rank.SEVEN]


async def test_one_tap_keeps_to_the_most_cards_a_play_may_have(bot: BotHarness) -> None:
    await ann_on_turn(bot, Rules(max_cards=1), Rank.SEVEN)
    assert row_of(bot, ANN.id, Op.PLAY) == ["▶️ Play your 7"]


async def test_no_one_tap_play_without_a_card_of_the_required_rank(bot: BotHarness) -> None:
    await ann_on_turn(bot, Rules(), Rank.NINE)
    assert not any(has_op(Op.PLAY)(b) for row in rows_of(bot, ANN.id) for b in row)


async def test_the_prompts_say_what_to_tap_next(bot: BotHarness) -> None:
    await ann_on_turn(bot, Rules(max_cards=2), Rank.SEVEN)
    assert "🔔 Your turn: play up to 2 cards as 7s." in text_of(bot, ANN.id)
    await bot.press(ANN, ANN.id, has_op(Op.PICK, Rank.SEVEN))
    assert "Tap ▶️ Play, or more cards." in text_of(bot, ANN.id)
    await bot.press(ANN, ANN.id, has_op(Op.PICK, Rank.SEVEN))
    text = text_of(bot, ANN.id)
    assert "Tap ▶️ Play." in text
    assert "or more cards" not in text


async def test_a_limit_of_one_card_is_said_as_one_card(bot: BotHarness) -> None:
    await ann_on_turn(bot, Rules(max_cards=1), Rank.SEVEN)
    text = text_of(bot, ANN.id)
    assert "🔔 Your turn: play one card and claim one 7." in text
    assert "up to 1" not in text
    await bot.press(ANN, ANN.id, has_op(Op.PICK, Rank.KING))
    assert "Tap ▶️ Play." in text_of(bot, ANN.id)
    assert row_of(bot, ANN.id, Op.PLAY) == ["▶️ Play: one 7"]


async def test_a_single_card_under_free_ranks_names_any_rank(bot: BotHarness) -> None:
    await ann_on_turn(bot, Rules(max_cards=1, rank_rule=PRESETS["free"].rank_rule), None)
    assert "🔔 Your turn: play one card and name any rank." in text_of(bot, ANN.id)
    await bot.press(ANN, ANN.id, has_op(Op.PICK, Rank.KING))
    text = text_of(bot, ANN.id)
    assert "Now tap the rank you claim." in text
    assert "or more cards" not in text


async def test_the_claim_grid_is_unlike_the_pick_grid(bot: BotHarness) -> None:
    await ann_on_turn(bot, PRESETS["free"], None)
    assert claim_buttons(bot, ANN.id) == []
    await bot.press(ANN, ANN.id, has_op(Op.PICK, Rank.SEVEN))
    assert "Now tap the rank you claim, or more cards." in text_of(bot, ANN.id)
    claims = claim_buttons(bot, ANN.id)
    assert [b["text"] for b in claims] == [
        "= A", "= 2", "= 3", "= 4", "= 5", "= 6", "= 7", "= 8", "= 9", "= 10", "= J", "= Q", "= K"
    ]  # fmt: skip
    # The picks show cards, never "= ": the two grids cannot be taken for one another.
    assert labels(bot, ANN.id)[0] == ["2 2", "✅ 7", "K"]
    # A claim grid of A–5, 6–10 and the court cards, then Clear on its own row.
    claim_rows = [row for row in labels(bot, ANN.id) if row and row[0].startswith("= ")]
    assert [len(row) for row in claim_rows] == [5, 5, 3]
    assert row_of(bot, ANN.id, Op.CLEAR) == ["✖️ Clear"]
    # Tapping "= Q" plays the seven as a queen.
    await bot.press(ANN, ANN.id, has_op(Op.PLAY, Rank.QUEEN))
    session, _ = await bot.store.load(GROUP_ID)
    assert session is not None and session.game is not None
    assert session.game.last_claim is not None and session.game.last_claim.rank is Rank.QUEEN
    assert len(CLAIMABLE_RANKS) == len(claims)


# --- settings, /help and /rules ------------------------------------------------------------------


is_preset = press_matcher(
    lambda press: isinstance(press, SettingsPress) and isinstance(press.target, PresetChoice)
)


async def test_settings_presets_one_per_row_and_values_two_per_row(bot: BotHarness) -> None:
    bot.fake.set_admins(GROUP_ID, {ANN.id})
    await bot.command(ANN, "/settings")
    preset_rows = [row for row in rows_of(bot, GROUP_ID) if any(is_preset(b) for b in row)]
    assert [[b["text"] for b in row] for row in preset_rows] == [
        ["Cheat (classic)"],
        ["Verju (Russian rules)"],
        ["Free rank (Italian)"],
        ["Liar's Bar (revolver)"],
    ]
    await bot.press(ANN, GROUP_ID, "Match")
    values = labels(bot, GROUP_ID)[:-1]
    assert values == [
        ["✅ one game", "first to 3 wins"],
        ["first to 5 wins", "best of 3"],
        ["best of 5", "3 games, points"],
        ["5 games, points"],
    ]
    assert labels(bot, GROUP_ID)[-1] == ["« Back"]


async def test_help_explains_the_required_rank_and_bluffing(bot: BotHarness) -> None:
    bot.fake.started_users.add(ANN.id)
    await bot.command(ANN, "/help", chat=private(ANN))
    text = text_of(bot, ANN.id)
    assert "the rank to claim goes up each turn: A, 2, 3 … K" in text
    assert "the number is always true, the rank may be a lie" in text
    assert "Bluffing is the point" in text


async def test_rules_of_a_preset_are_its_name_and_one_line(bot: BotHarness) -> None:
    await bot.command(ANN, "/rules")
    text = text_of(bot, GROUP_ID)
    assert text.startswith("🃏 Rules: Cheat (classic)\n")
    assert "Claim the next rank each turn" in text
    assert "•" not in text
    assert text.endswith("Admins change them with /settings.")


async def test_rules_show_only_what_differs_from_the_nearest_preset(bot: BotHarness) -> None:
    await bot.store.settings.save_group_rules(GROUP_ID, Rules(passing=Passing.VOTE))
    await bot.command(ANN, "/new")
    await bot.command(ANN, "/rules")
    text = text_of(bot, GROUP_ID)
    assert "🃏 Rules: Cheat (classic), with these changes:" in text
    bullets = [line for line in text.splitlines() if line.startswith("• ")]
    assert bullets == ["• Passing: by vote"]
    assert not any(name in text for name in ("Rank:", "Turn time", "Decks"))
    assert "Admins change them with /settings." in text


async def test_rules_near_a_variant_name_the_variant(bot: BotHarness) -> None:
    """Two changes from «Верю — не верю» are nearer to it than to the classic game."""
    verju = PRESETS["verju"].to_dict()
    await bot.store.settings.save_group_rules(
        GROUP_ID, Rules.from_dict({**verju, "turn_timeout_s": 30, "afk_limit": 2})
    )
    await bot.command(ANN, "/rules")
    text = text_of(bot, GROUP_ID)
    assert "🃏 Rules: Verju (Russian rules), with these changes:" in text
    assert [line for line in text.splitlines() if line.startswith("• ")] == [
        "• Turn time: 30 s",
        "• Missed turns: 2",
    ]


# --- no card back in any language ----------------------------------------------------------------


@pytest.mark.parametrize("language", available_languages())
async def test_no_card_back_emoji_in_any_language(bot: BotHarness, language: str) -> None:
    players = [User(200 + i, name, language_code=language) for i, name in enumerate("ABC")]
    await bot.command(players[0], "/new")
    for user in players:
        await join_by_button(bot, user)
    await bot.press(players[0], GROUP_ID, has_op(Op.START))
    # Each player opens their cards from the table's link, as a phone user does.
    for user in players:
        await bot.start_private(user, f"h{GROUP_ID}")
    state = await play_to_the_end(bot, players)
    assert state.phase is Phase.FINISHED
    await bot.command(players[0], "/rules")
    await bot.command(players[0], "/help", chat=private(players[0]))
    shown: list[str] = []
    for chat_id in (GROUP_ID, *(user.id for user in players)):
        for record in bot.fake.bot_messages(chat_id, include_deleted=True):
            for version in record.history:
                shown.append(version.text or "")
                for row in (version.reply_markup or {}).get("inline_keyboard", []):
                    shown += [button["text"] for button in row]
    shown += [str(c.params.get("text", "")) for c in bot.fake.calls_to("answerCallbackQuery")]
    assert any("🃏" in text for text in shown)
    assert [text for text in shown if CARD_BACK in text] == []
