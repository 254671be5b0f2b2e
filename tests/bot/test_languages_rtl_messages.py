"""Every kind of message the bot sends, in Arabic, through the handlers as Telegram gets them:
/start and /help (the first message a new player reads), /rules, /settings, /language,
/stats (a person's own, and a group's), /top, /forgetme and refusals, in a private chat and in
a group. Each line is laid out with the Unicode Bidirectional Algorithm (python-bidi) as a
Telegram app lays it out: every line reads right to left, however it begins (a /command, a
number, a name), and each /command stays whole ("/new", not "new/").

Every handler's message goes through the same direction step (``views.page``); a message sent
as a plain ``View`` would fail here."""

from __future__ import annotations

import re

from bidi import get_base_level, get_display

from tests.bot.conftest import GROUP_ID, BotHarness
from tests.support.fake_telegram import MessageRecord
from tests.support.updates import User, private

AMAL = User(51, "أمل", language_code="ar")
SAMI = User(52, "Sami", language_code="ar")
RLM = "\u200f"
_CONTROLS = re.compile("[\u200e\u200f\u2066-\u2069]")
_COMMAND = re.compile(r"(?<![\w/])/[a-z_]+")
ARABIC = re.compile("[\u0600-\u06ff]")

#: What each command sent in a private chat must show, and in a group.
PRIVATE = ("/start", "/help", "/rules", "/settings", "/language", "/stats", "/forgetme")
#: Refusals: /top and /new belong in a group, "/play xyz" names a word the bot does not know.
PRIVATE_REFUSED = ("/top", "/new", "/play xyz", "/notify")
GROUP = ("/help", "/start", "/rules", "/settings", "/stats", "/top", "/language")
#: Refusals in a group: /forgetme belongs in private, /join and /stop need a game.
GROUP_REFUSED = ("/forgetme", "/join", "/stop", "/kick", "/play")


def visual(line: str) -> str:
    """``line`` as the screen shows it, from left to right, controls dropped."""
    return _CONTROLS.sub("", get_display(line))


def shown_lines(record: MessageRecord) -> list[str]:
    """Every line a message showed, its buttons' labels included, over all its versions."""
    found = []
    for version in record.history:
        found += [line for line in (version.plain_text or "").split("\n") if line]
        for row in (version.reply_markup or {}).get("inline_keyboard", []):
            found += [button["text"] for button in row]
    return found


def problems_in(lines: list[str]) -> list[str]:
    problems = []
    for line in lines:
        if not line.startswith(RLM) or get_base_level(line) != 1:
            problems.append(f"not right to left: {line!r}")
        seen = visual(line)
        logical = _CONTROLS.sub("", line)
        problems += [
            f"{command} broken in {seen!r}"
            for command in _COMMAND.findall(logical)
            if command not in seen
        ]
    return problems


async def test_every_kind_of_message_reads_right_to_left_in_arabic(bot: BotHarness) -> None:
    bot.fake.started_users.update({AMAL.id, SAMI.id})
    bot.fake.set_admins(GROUP_ID, {AMAL.id})
    await bot.store.settings.save_group_language(GROUP_ID, "ar")

    for text in (*PRIVATE, *PRIVATE_REFUSED):
        await bot.command(AMAL, text, chat=private(AMAL))
    for text in (*GROUP, *GROUP_REFUSED):
        await bot.command(AMAL, text)
    # A player's own statistics and the group's, with a game counted.
    await bot.command(SAMI, "/stats")

    sent = {chat: bot.fake.bot_messages(chat, include_deleted=True) for chat in (AMAL.id, GROUP_ID)}
    # Something was said to every command (the refusals included), all of it in Arabic.
    assert len(sent[AMAL.id]) >= len(PRIVATE) + len(PRIVATE_REFUSED)
    assert len(sent[GROUP_ID]) >= len(GROUP) + len(GROUP_REFUSED)
    problems = []
    for chat, records in sent.items():
        for record in records:
            lines = shown_lines(record)
            assert any(ARABIC.search(line) for line in lines), lines
            problems += [f"{chat}: {problem}" for problem in problems_in(lines)]
    assert not problems, "\n".join(problems)

    # The help, the first message a new player reads: "/new" whole, right to left.
    help_text = next(
        text
        for text in (r.plain_text or "" for r in sent[AMAL.id])
        if "/new" in text and "/forgetme" in text
    )
    line = next(line for line in help_text.split("\n") if line.lstrip(RLM).startswith("\u2066/new"))
    assert visual(line).split()[-1] == "/new", visual(line)


def test_the_check_catches_a_line_left_to_right() -> None:
    """What /help showed before it went through the direction step: its lines that begin with
    a /command read left to right, and "أرسل فيها /new." shows "new/"."""
    assert problems_in(["/new يفتح لعبة · /join · /leave"])
    assert problems_in(["\u200fأضفني إلى مجموعة وأرسل فيها /new."])
    assert problems_in(["\u200fأضفني إلى مجموعة وأرسل فيها \u2066/new\u2069."]) == []
