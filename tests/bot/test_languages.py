"""A whole game with the group in French and its players in Russian and Italian."""

from __future__ import annotations

from pathlib import Path

from babel.messages.pofile import read_po

from tests.bot.conftest import GROUP_ID, BotHarness
from tests.bot.play import has_op, join_by_button, play_to_the_end
from tests.support.updates import User
from tgcheat.bot.callbacks import Op
from tgcheat.engine.state import Phase

LOCALES = Path(__file__).resolve().parents[2] / "locales"
CHLOE = User(31, "Chloé", language_code="fr")
IVAN = User(32, "Иван", language_code="ru")
OLGA = User(33, "Ольга", language_code="ru-RU")
GIULIA = User(34, "Giulia", language_code="it")


def _english_only_texts() -> set[str]:
    """English catalog texts that differ from their French, Russian and Italian translations
    (long enough to be telling), so finding one in a message means English leaked in."""
    catalogs = {}
    for language in ("en", "fr", "ru", "it"):
        with (LOCALES / language / "LC_MESSAGES" / "tgcheat.po").open("rb") as po:
            catalogs[language] = {
                m.id if isinstance(m.id, str) else m.id[0]: m.string for m in read_po(po) if m.id
            }
    english: set[str] = set()
    for msgid, text in catalogs["en"].items():
        strings = [text] if isinstance(text, str) else list(text)
        for string in strings:
            fragments = [f.strip() for f in string.replace("{", "\n{").split("\n")]
            for fragment in fragments:
                words = fragment.split("}")[-1].strip(" .:!?,")
                if len(words) >= 8 and all(
                    words not in str(catalogs[lang].get(msgid, "")) for lang in ("fr", "ru", "it")
                ):
                    english.add(words)
    return english


async def test_a_french_group_with_russian_and_italian_players(bot: BotHarness) -> None:
    players = [CHLOE, IVAN, OLGA, GIULIA]
    await bot.command(CHLOE, "/new")
    lobby = bot.fake.last_message(GROUP_ID)
    assert "Menteur" in (lobby.plain_text or "")
    for user in players:
        await join_by_button(bot, user)
    # A refused press answers in the presser's language: Ivan may not start Chloé's game.
    await bot.press(IVAN, GROUP_ID, has_op(Op.START))
    refusal = str(bot.fake.calls_to("answerCallbackQuery")[-1].params.get("text"))
    assert refusal and not refusal.isascii()
    await bot.press(CHLOE, GROUP_ID, has_op(Op.START))
    state = await play_to_the_end(bot, players)
    assert state.phase is Phase.FINISHED
    english = _english_only_texts()
    assert english, "the check must have English texts to look for"

    def leaks(chat_id: int) -> list[str]:
        found = []
        for record in bot.fake.bot_messages(chat_id, include_deleted=True):
            for version in record.history:
                texts = [version.text or ""] + [
                    b["text"]
                    for row in (version.reply_markup or {}).get("inline_keyboard", [])
                    for b in row
                ]
                found += [e for e in english for t in texts if e in t]
        return found

    assert leaks(GROUP_ID) == []
    for user in players:
        assert leaks(user.id) == []
    # The tables that named the game were posted anew at the bottom and the old ones deleted.
    group_text = "\n".join(
        v.text or ""
        for m in bot.fake.bot_messages(GROUP_ID, include_deleted=True)
        for v in m.history
    )
    assert "Menteur" in group_text
    ivan = "\n".join(v.text or "" for m in bot.fake.bot_messages(IVAN.id) for v in m.history)
    giulia = "\n".join(v.text or "" for m in bot.fake.bot_messages(GIULIA.id) for v in m.history)
    assert "Твои карты" in ivan or "Ваши карты" in ivan
    assert "carte" in giulia
