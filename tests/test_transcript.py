"""The transcript tool (tools/transcript.py): a short game of three, written down twice from the
same seed."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

TOOL = Path(__file__).resolve().parents[1] / "tools" / "transcript.py"


@pytest.fixture(scope="module")
def transcript_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("transcript_tool", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def test_a_game_of_three_is_written_down_the_same_way_twice(
    transcript_tool: ModuleType, tmp_path: Path
) -> None:
    paths = [tmp_path / "first.md", tmp_path / "second.md"]
    for path in paths:
        args = ["--lang", "en", "--seed", "7", "--players", "3", "--out", str(path)]
        assert transcript_tool.main(args) == 0
    text = paths[0].read_text(encoding="utf-8")

    assert "**Ann** sends `/new` in the group" in text
    assert "🃏 **Cheat**: a new game is open" in text
    # Each player joined through the lobby's link and was dealt a hand in private.
    for name in ("Ann", "Bob", "Carol"):
        assert f"**{name}** taps [➕ Join ↗] in the group" in text
        assert f"📨 **private: {name}** · new message" in text
    # The group's title keeps its own direction, as names do (between FSI and PDI).
    assert "> 🃏 Your cards in **\u2068Friday cards\u2069** (" in text
    assert "[▶️ Start] [✖️ Cancel]" in text
    # Plays by the hand keyboard, a turn run out on the clock, a Cheat! call revealed.
    assert "taps [▶️ Play: " in text
    assert "the turn's time is up, and the bot plays for them" in text
    assert "taps [❗ Cheat!]" in text
    assert " calls Cheat on " in text
    # The end: the final table in the group, each hand closed with its own result.
    assert "## The end" in text
    assert "🏆 " in text
    assert "[🔁 Play again]" in text
    assert "> 🏆 You won!" in text
    assert "> 🏁 The game is over. Your place: 2 of 3." in text

    assert paths[1].read_text(encoding="utf-8") == text


def test_an_unknown_language_is_refused(transcript_tool: ModuleType) -> None:
    with pytest.raises(SystemExit):
        transcript_tool.main(["--lang", "xx"])


#: The game's name as the table shows it in each language added after the first seven.
GAME_NAMES = {
    "uk": "Вірю — не вірю",
    "pt_BR": "Duvido",
    "pl": "Oszust",
    "tr": "Blöf",
    "id": "Bohong",
    "ar": "كذّاب",
}


@pytest.mark.parametrize("lang", sorted(GAME_NAMES))
def test_a_whole_game_is_written_down_in_each_new_language(
    transcript_tool: ModuleType, tmp_path: Path, lang: str
) -> None:
    path = tmp_path / f"{lang}.md"
    args = ["--lang", lang, "--seed", "3", "--players", "3", "--out", str(path)]
    assert transcript_tool.main(args) == 0
    text = path.read_text(encoding="utf-8")
    assert f"**{GAME_NAMES[lang]}**" in text
    assert "## The end" in text and "🏆 " in text
    quoted = [
        line.removeprefix("> ").removeprefix("[")
        for line in text.splitlines()
        if line.startswith("> ") and len(line) > 2
    ]
    # Arabic lines open right to left (RIGHT-TO-LEFT MARK); the others are left as they are.
    opening = {line.startswith("\u200f") for line in quoted}
    assert opening == ({True} if lang == "ar" else {False}), lang
