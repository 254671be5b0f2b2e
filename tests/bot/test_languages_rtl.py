"""A whole game with the group in Arabic (right to left) and its players in Ukrainian (Telegram
in uk-UA), Polish (chosen with /language in private) and Brazilian Portuguese (Telegram in
pt-br): each reads their own language in their private chat and their pop-ups, and the group's
table reads in Arabic, right to left."""

from __future__ import annotations

import re

from tests.bot.conftest import GROUP_ID, BotHarness
from tests.bot.play import has_op, join_by_button, play_to_the_end
from tests.support.fake_telegram import MessageRecord
from tests.support.updates import User, private
from tgcheat.bot import views
from tgcheat.bot.callbacks import Op
from tgcheat.engine.state import Phase
from tgcheat.i18n import available_languages, translator

ADMIN = User(41, "أمل", language_code="ar")
OKSANA = User(42, "Оксана", language_code="uk-UA")
BARTEK = User(43, "Bartek", language_code="en")
ANA = User(44, "Ana", language_code="pt-br")
PLAYERS = [OKSANA, BARTEK, ANA]
#: The language each player reads in private.
LANGUAGES = {OKSANA.id: "uk", BARTEK.id: "pl", ANA.id: "pt_BR"}
RLM = "\u200f"
ARABIC = re.compile("[\u0600-\u06ff]")
NEW_LANGUAGES = (
    "Українська",
    "Português (Brasil)",
    "Polski",
    "Türkçe",
    "Bahasa Indonesia",
    "العربية",
)


def texts(record: MessageRecord) -> list[str]:
    """Every text a message showed, and its buttons' labels, over all its versions."""
    found = []
    for version in record.history:
        found.append(version.plain_text or "")
        for row in (version.reply_markup or {}).get("inline_keyboard", []):
            found += [button["text"] for button in row]
    return found


def last_popup(bot: BotHarness) -> str:
    return str(bot.fake.calls_to("answerCallbackQuery")[-1].params.get("text", ""))


async def test_an_arabic_group_with_ukrainian_polish_and_brazilian_players(
    bot: BotHarness,
) -> None:
    # Bartek's Telegram is in English: he picks Polish for his private messages.
    bot.fake.started_users.add(BARTEK.id)
    await bot.command(BARTEK, "/language", chat=private(BARTEK))
    labels = [b["text"] for b in bot.fake.last_message(BARTEK.id).buttons]
    assert all(any(name in label for label in labels) for name in NEW_LANGUAGES), labels
    await bot.press(BARTEK, BARTEK.id, "Polski")
    assert await bot.store.settings.user_language(BARTEK.id) == "pl"
    assert last_popup(bot) == translator("pl")._("Language saved.")

    # An admin who does not play puts the group in Arabic.
    bot.fake.set_admins(GROUP_ID, {ADMIN.id})
    await bot.command(ADMIN, "/language")
    await bot.press(ADMIN, GROUP_ID, "العربية")
    assert await bot.store.settings.group_language(GROUP_ID) == "ar"
    assert last_popup(bot) == translator("ar")._("Language saved.")
    admins_popups = len(bot.fake.calls_to("answerCallbackQuery"))

    # Oksana opens the game: the group's language, not hers.
    await bot.command(OKSANA, "/new")
    lobby = bot.fake.last_message(GROUP_ID)
    assert "كذّاب" in (lobby.plain_text or "")
    for user in (OKSANA, BARTEK):
        await join_by_button(bot, user)
    # Each pop-up in the presser's own language: too few players for Oksana...
    await bot.press(OKSANA, GROUP_ID, has_op(Op.START))
    assert last_popup(bot) == translator("uk")._("Not enough players yet.")
    await join_by_button(bot, ANA)
    # ... and neither Ana nor Bartek may start Oksana's game.
    refusal = "Only whoever opened the game, or a group admin, can do that."
    await bot.press(ANA, GROUP_ID, has_op(Op.START))
    assert last_popup(bot) == translator("pt_BR")._(refusal) != refusal
    await bot.press(BARTEK, GROUP_ID, has_op(Op.START))
    assert last_popup(bot) == translator("pl")._(refusal) != refusal
    await bot.press(OKSANA, GROUP_ID, has_op(Op.START))

    state = await play_to_the_end(bot, PLAYERS)
    assert state.phase is Phase.FINISHED

    # The group: Arabic, every line and every button label opening right to left, the
    # players' names in their own letters.
    group = bot.fake.bot_messages(GROUP_ID, include_deleted=True)
    shown = [text for record in group for text in texts(record)]
    assert any("كذّاب" in text for text in shown)
    assert any("Оксана" in text for text in shown) and any("Bartek" in text for text in shown)
    lines = [line for text in shown for line in text.split("\n") if line]
    assert [line for line in lines if not line.startswith(RLM)] == []
    final = bot.fake.last_message(GROUP_ID).plain_text or ""
    assert "🏆" in final and ARABIC.search(final)

    # Each player's private chat: their own language only, left to right.
    for user in PLAYERS:
        tr = translator(LANGUAGES[user.id])
        mine = [t for r in bot.fake.bot_messages(user.id, include_deleted=True) for t in texts(r)]
        your_cards = tr._("🃏 Your cards in {group} ({count}):").split("{group}")[0]
        assert any(text.startswith(your_cards) for text in mine), (user, your_cards)
        # (Bartek's language picker names Arabic in Arabic: each language is named in itself.)
        names = {views.language_name(lang) for lang in available_languages()}
        arabic = [t for t in mine if ARABIC.search(t) or RLM in t]
        assert [t for t in arabic if t.removeprefix("✅ ") not in names] == [], user
        hands = bot.fake.bot_messages(user.id)
        assert hands[-1].seen_text.startswith(your_cards)
    # The players' pop-ups during the game (a belief, say) were theirs too: none in Arabic.
    calls = bot.fake.calls_to("answerCallbackQuery")[admins_popups:]
    popups = [str(c.params.get("text", "")) for c in calls]
    assert [p for p in popups if ARABIC.search(p)] == []
