"""Arabic reads right to left on a phone: every view in Arabic, laid out with the Unicode
Bidirectional Algorithm (python-bidi, the Rust crate unicode-bidi: isolates included) as a
Telegram app lays out each line, keeps names, cards, numbers and /commands whole, its lines
right to left however they begin, the table's columns in place, and its keyboards mirrored.

Telegram's apps lay out each line (paragraph) of a message in the direction of its first strong
letter, isolates skipped, and a keyboard row's buttons from left to right whatever the language.
The views therefore open every Arabic line and label with RIGHT-TO-LEFT MARK, reverse each row
and isolate cards and commands left to right (``tgcheat.bot.views.base``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator

import pytest
from bidi import get_base_level, get_display

from tests.engine.helpers import cards
from tests.support.fake_telegram import parse_telegram_html
from tests.test_views_i18n import (
    BOT,
    CHAT,
    NAMES,
    TITLE,
    Shown,
    challenged,
    final_check,
    game,
    play,
    rendered,
    session,
)
from tgcheat.bot import views
from tgcheat.engine.cards import count_by_rank
from tgcheat.engine.lobby import Lobby
from tgcheat.engine.rules import Rules
from tgcheat.i18n import translator

AR = translator("ar")
EN = translator("en")
RLM, LRI, FSI, PDI = "\u200f", "\u2066", "\u2068", "\u2069"
_CONTROLS = re.compile("[\u200e\u200f\u2066-\u2069]")
#: A revealed card: its rank's symbol and its suit.
_CARD = re.compile(r"[0-9AJQK★]{1,2}[♣♦♥♠]")
_COMMAND = re.compile(r"(?<![\w/])/[a-z_]+")


def visual(line: str) -> str:
    """``line`` as the screen shows it, from left to right, controls dropped."""
    return _CONTROLS.sub("", get_display(line))


def plain_lines(html_text: str) -> list[str]:
    parsed = parse_telegram_html(html_text)
    assert not parsed.problems, parsed.problems
    return [line for line in parsed.text.split("\n") if line]


#: What ``rendered`` shows of parts of a message (a line, a list of cards): each is shown
#: within a message, whose lines are directed as a whole.
FRAGMENTS = (
    "hand text",
    "card labels",
    "card counts",
    "claim line",
    "result,",
    "summary",
    "notice ",
    "scoreboard",
    "rules name",
)


@pytest.fixture(scope="module")
def arabic() -> tuple[Shown, ...]:
    return tuple(
        (what, views.directed(AR, text) if what.startswith(FRAGMENTS) else text, rows)
        for what, text, rows in rendered(AR)
    )


def lines_of(shown: tuple[Shown, ...]) -> Iterator[tuple[str, str]]:
    for what, text, _ in shown:
        for line in plain_lines(text) if text else []:
            yield what, line


# --- every line and label --------------------------------------------------------------------


def test_every_arabic_line_opens_right_to_left(arabic: tuple[Shown, ...]) -> None:
    problems = [
        f"{what}: {line!r}"
        for what, line in lines_of(arabic)
        if not line.startswith(RLM) or get_base_level(line) != 1
    ]
    assert not problems, "\n".join(problems)


def test_every_arabic_button_reads_right_to_left(arabic: tuple[Shown, ...]) -> None:
    problems = [
        f"{what}: {label!r}"
        for what, _, rows in arabic
        for row in rows
        for label in row
        if not label.startswith(RLM) or get_base_level(label) != 1
    ]
    assert not problems, "\n".join(problems)


def test_left_to_right_languages_are_left_as_they_were() -> None:
    for lang in ("en", "ru", "uk", "pt_BR", "pl", "tr", "id"):
        for what, text, rows in rendered(translator(lang)):
            shown = [text, *(label for row in rows for label in row)]
            assert not any(RLM in t or LRI in t for t in shown), (lang, what)


# --- names, cards, numbers and commands stay whole ---------------------------------------------


def test_latin_names_cards_and_commands_stay_whole(arabic: tuple[Shown, ...]) -> None:
    problems = []
    for what, line in lines_of(arabic):
        seen = visual(line)
        logical = _CONTROLS.sub("", line)
        whole = [name for name in NAMES if name in logical]
        whole += _CARD.findall(logical) + _COMMAND.findall(logical)
        whole += re.findall(r"\d+", logical)
        problems += [f"{what}: {t!r} broken in {seen!r}" for t in whole if t not in seen]
    assert not problems, "\n".join(problems)


def test_the_check_catches_a_card_turned_around() -> None:
    """Without its isolate a card after Arabic words shows its suit before its rank, and a
    command its slash after it."""
    assert "7♣" not in visual(f"{RLM}يكشف: 7♣ K♦")
    assert "7♣" in visual(f"{RLM}يكشف: {LRI}7♣{PDI} {LRI}K♦{PDI}")
    assert "/rules" not in visual(f"{RLM}القواعد: كلاسيكية · /rules")
    assert "/rules" in visual(f"{RLM}القواعد: كلاسيكية · {LRI}/rules{PDI}")


# --- the table's columns, the hand's order, who called whom --------------------------------------


def test_the_table_rows_keep_their_columns() -> None:
    """Seat number on the right, then the name, then the cards held, on every row, whether the
    name is Latin or Arabic and whether it begins the line or not."""
    names = ("Ann", "أمل", "Ali علي", "دينا")
    state = game()
    players = tuple(
        dataclasses.replace(p, name=n) for p, n in zip(state.players, names, strict=True)
    )
    state = dataclasses.replace(state, players=players)
    text = views.table_view(AR, session(), state, BOT).text
    rows = [line for line in plain_lines(text) if re.match(rf"{RLM}\d\. ", line)]
    assert len(rows) == 4
    for seat, row in enumerate(rows, 1):
        seen = visual(row).split()
        held = len(state.players[seat - 1].hand)
        assert seen[-1] == f".{seat}" or seen[-1] == str(seat), seen  # rightmost: the seat
        assert seen[1] == str(held) or seen[0] == str(held), seen  # leftmost: the count


def test_the_turn_marker_points_at_the_name() -> None:
    """Before the name of the player whose turn it is, an arrow that points at it: ▶️ in a
    left-to-right line, ◀️ in a right-to-left one (the name is on the arrow's left)."""
    state = game()
    turn = state.turn + 1
    arabic = next(
        line
        for line in plain_lines(views.table_view(AR, session(), state, BOT).text)
        if re.match(rf"{RLM}{turn}\. ", line)
    )
    seen = visual(arabic)
    name = state.players[state.turn].name
    assert "\u25c0" in seen and "\u25b6" not in seen  # ◀ and ▶, their emoji selector aside
    # Reading from the right: the seat, the arrow, then the name on its left.
    assert seen.index(name) < seen.index("\u25c0") < seen.index(str(turn)), seen
    english = plain_lines(views.table_view(EN, session(), state, BOT).text)
    assert any(line.startswith(f"{turn}. ▶️ ") for line in english), english


def test_the_hand_reads_from_the_right_like_its_keyboard() -> None:
    hand = cards("A♣", "A♦", "2♥", "7♣", "7♦", "7♥", "10♠", "K♠")
    # The hand's line, as its message shows it.
    shown = views.directed(AR, views.hand_text(AR, count_by_rank(hand)))
    groups = visual(shown).split(" · ")
    assert groups == ["K", "10", "7 7 7", "2", "A A"]
    # Reading from the right: A A, 2, 7 7 7, 10, K, as in English from the left.
    assert _CONTROLS.sub("", views.hand_text(EN, count_by_rank(hand))) == "A A · 2 · 7 7 7 · 10 · K"


def test_a_reveal_names_the_caller_first_from_the_right() -> None:
    state, event = challenged(lie=True)
    text = views.reveal_view(AR, state, event).text
    first = plain_lines(text)[0]
    seen = visual(first)
    challenger = state.players[event.challenger].name
    claimant = state.players[event.claim.seat].name
    # Reading right to left, the caller comes before the one called.
    assert seen.rindex(challenger) > seen.rindex(claimant), seen


# --- keyboards are mirrored ----------------------------------------------------------------------


def data_rows(markup: views.Keyboard | None) -> list[list[str]]:
    assert markup is not None
    rows = markup["inline_keyboard"]
    return [[b.get("callback_data") or b.get("url", "") for b in row] for row in rows]


def keyboards() -> Iterator[tuple[str, views.Keyboard | None, views.Keyboard | None]]:
    """The same keyboards drawn in English and in Arabic."""
    lobby = Lobby(creator=100, rules=Rules(), players=((100, "Ann"), (101, "Bob")))
    yield "lobby", *(views.lobby_view(tr, session(), lobby, BOT).markup for tr in (EN, AR))
    start = game()
    both = (EN, AR)
    yield "hand", *(views.hand_view(tr, session(), start, 0, TITLE, "77").markup for tr in both)
    final = final_check()
    yield "table, last cards", *(views.table_view(tr, session(), final, BOT).markup for tr in both)
    played, _ = play(start, "7♣")
    yield "hand, Cheat!", *(views.hand_view(tr, session(), played, 1, TITLE).markup for tr in both)
    for group in (True, False):
        yield "languages", *(views.language_view(tr, CHAT, "ar", group).markup for tr in (EN, AR))
    yield "settings", *(views.settings_view(tr, CHAT, Rules()).markup for tr in (EN, AR))
    yield "option", *(views.option_view(tr, CHAT, Rules(), 0).markup for tr in (EN, AR))


@pytest.mark.parametrize(("what", "english", "arabic"), list(keyboards()))
def test_each_row_of_an_arabic_keyboard_is_the_english_row_mirrored(
    what: str, english: views.Keyboard | None, arabic: views.Keyboard | None
) -> None:
    assert [list(reversed(row)) for row in data_rows(english)] == data_rows(arabic), what


# --- the helpers ---------------------------------------------------------------------------------


def test_directing_a_text_twice_changes_nothing_more() -> None:
    text = "القواعد · /rules\n\n<b>x</b> 2/6 https://t.me/bot?start=j-1"
    once = views.directed(AR, text)
    assert views.directed(AR, once) == once
    assert once.split("\n") == [
        f"{RLM}القواعد · {LRI}/rules{PDI}",
        "",
        f"{RLM}<b>x</b> 2/6 https://t.me/bot?start=j-1",
    ]
    assert views.directed(EN, text) == text


def test_arabic_lists_use_the_arabic_comma() -> None:
    assert views.joined(AR, ["أ", "ب"]) == "أ، ب"
    assert views.joined(EN, ["a", "b"]) == "a, b"
    assert views.title_html("ورق <الجمعة>") == f"<b>{FSI}ورق &lt;الجمعة&gt;{PDI}</b>"
