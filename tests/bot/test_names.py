"""People's names in the bot's messages: each one isolated for bidirectional text, without
direction controls of its own, readable when it would show nothing, and never too long."""

from __future__ import annotations

import re

import pytest

from tests.bot.conftest import GROUP_ID, BotHarness
from tests.bot.play import has_op, join_by_button, table_record
from tests.support.fake_telegram import check_telegram_html, parse_telegram_html
from tests.support.updates import User
from tgcheat.bot import views
from tgcheat.bot.callbacks import Op
from tgcheat.bot.views.base import UNREADABLE_NAME

FSI, PDI = "\u2068", "\u2069"
RLO = "\u202e"
#: Every character that sets the direction of what follows it.
BIDI_CONTROLS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")

EVIL = User(701, f"{RLO}evil")
FILLER = User(702, "\u3164")
OPENER = User(703, "Opener")


def shown(name: str) -> str:
    """What ``name_html`` shows of a name: its text after Telegram parses the HTML."""
    parsed = parse_telegram_html(views.name_html(name))
    assert not parsed.problems, parsed.problems
    return parsed.text


def test_a_name_is_isolated_and_bold() -> None:
    assert views.name_html("Alice") == f"<b>{FSI}Alice{PDI}</b>"
    assert shown("محمد") == f"{FSI}محمد{PDI}"


@pytest.mark.parametrize(
    ("name", "inside"),
    [
        (f"{RLO}evil", "evil"),
        # An isolate of the name's own cannot close the bot's and reverse what follows.
        (f"a{PDI}{RLO}b", "ab"),
        ("\u202bx\u202c\u2066y\u2067z\u200e\u200f\u061c", "xyz"),
        # Joiners stay: they make one emoji of several.
        ("👩\u200d💻 Ann", "👩\u200d💻 Ann"),
    ],
)
def test_direction_controls_in_a_name_are_removed(name: str, inside: str) -> None:
    text = shown(name)
    assert text == f"{FSI}{inside}{PDI}"
    assert BIDI_CONTROLS.findall(text) == [FSI, PDI]


@pytest.mark.parametrize(
    "name",
    [
        "",
        "   ",
        "\u3164",  # HANGUL FILLER
        "\u115f\u1160",  # HANGUL CHOSEONG and JUNGSEONG FILLER
        "\uffa0",  # HALFWIDTH HANGUL FILLER
        "\u200b\u2060\ufeff",  # zero-width space, word joiner, zero-width no-break space
        "\u2800",  # BRAILLE PATTERN BLANK
        f"{RLO}\u200f \u3000",
        "\u0301\u0301",  # marks with nothing to mark
    ],
)
def test_a_name_that_shows_nothing_shows_a_question_mark(name: str) -> None:
    assert shown(name) == f"{FSI}{UNREADABLE_NAME}{PDI}"


def test_a_long_name_is_cut_and_stays_one_isolate() -> None:
    name = "<&>" * 100
    text = shown(name)
    assert text.startswith(FSI) and text.endswith(PDI)
    assert len(text) == views.MAX_NAME_CHARS + 2 and text[-2] == "…"
    assert not check_telegram_html(views.mention_html(name, 5))


async def test_hostile_names_read_as_intended_in_the_lobby_and_on_the_table(
    bot: BotHarness,
) -> None:
    await bot.command(OPENER, "/new")
    for user in (OPENER, EVIL, FILLER):
        await join_by_button(bot, user)
    lobby = bot.fake.last_message(GROUP_ID)
    assert f"1. {FSI}Opener{PDI}, 2. {FSI}evil{PDI}, 3. {FSI}?{PDI}" in (lobby.plain_text or "")
    await bot.press(OPENER, GROUP_ID, has_op(Op.START))
    table = (await table_record(bot)).plain_text or ""
    assert RLO not in table and "\u3164" not in table
    lines = table.splitlines()
    evil_line = next(line for line in lines if "evil" in line)
    filler_line = next(line for line in lines if f"{FSI}?{PDI}" in line)
    # The seat's number before the name and the card count after it stay outside the name.
    assert re.fullmatch(rf"\d\. (▶️ )?{FSI}evil{PDI} · \d+ cards", evil_line), evil_line
    assert re.fullmatch(rf"\d\. (▶️ )?{FSI}\?{PDI} · \d+ cards", filler_line), filler_line
    for line in lines:
        # Every isolate opened on a line is closed on it, and nothing else sets a direction.
        controls = "".join(BIDI_CONTROLS.findall(line))
        assert controls == f"{FSI}{PDI}" * (len(controls) // 2), repr(line)
