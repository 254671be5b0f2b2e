"""What every view is made of: a text and a keyboard, names made safe, links, cards, and the
direction a right-to-left language reads in."""

from __future__ import annotations

import datetime
import functools
import html
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from babel.dates import format_skeleton

from tgcheat.bot.settings_texts import (
    PRESET_TEXTS,
    pace_name,
)
from tgcheat.bot.texts import claim_phrase, rank_symbol
from tgcheat.engine.cards import Card
from tgcheat.engine.rules import (
    Pace,
    Rules,
    pace_of,
    preset_of,
)
from tgcheat.engine.state import Claim, GameState
from tgcheat.i18n import Translator
from tgcheat.table.computers import is_computer
from tgcheat.table.place import Place, Where

MAX_NAME_CHARS = 64
#: Telegram allows a group title of 128 characters.
MAX_TITLE_CHARS = 128
KEYBOARD_ROW = 4


#: An inline keyboard as the Bot API takes it. Plain JSON rather than python-telegram-bot's
#: objects: a keyboard is built for every hand on every play, and only ever sent.
#: A button: its text, and what it does (callback_data, url, or a web_app object).
Button = dict[str, Any]
Keyboard = dict[str, list[list[Button]]]


def button(text: str, *, callback_data: str | None = None, url: str | None = None) -> Button:
    if callback_data is not None:
        return {"text": text, "callback_data": callback_data}
    assert url is not None, "a button either calls back or opens a link"
    return {"text": text, "url": url}


def keyboard(rows: list[list[Button]]) -> Keyboard:
    return {"inline_keyboard": rows}


#: How wide a button's label may be, by how many buttons share its row, for a phone to show it
#: whole (Telegram cuts a label too wide for its button with "…"), in ``label_width``'s units.
ROW_WIDTH = {1: 40, 2: 18, 3: 12, 4: 9, 5: 7}


def label_width(label: str) -> int:
    """How wide a label shows, in letters: an emoji counts as two, what draws nothing (marks,
    isolates, joiners, variation selectors) as none."""
    width = 0
    for index, char in enumerate(label):
        if unicodedata.category(char) in _ZERO_WIDTH:  # variation selectors are marks (Mn)
            continue
        wide = unicodedata.east_asian_width(char) in ("W", "F")
        width += 2 if wide or label[index + 1 : index + 2] == "\ufe0f" else 1
    return width


def fits_in_rows(labels: Iterable[str], width: int) -> bool:
    """Whether every label fits a row of ``width`` buttons."""
    return all(label_width(label) <= ROW_WIDTH[width] for label in labels)


_ZERO_WIDTH = frozenset({"Mn", "Me", "Cf"})


@dataclass(frozen=True, slots=True)
class View:
    text: str
    markup: Keyboard | None = None


# --- right to left -------------------------------------------------------------------------
#
# Telegram lays out each line of a message in the direction of its first strong letter (names'
# isolates skipped) and each keyboard row's buttons from left to right whatever the language
# (Telegram's apps do not mirror bots' keyboards; the Bot API has no setting for it). So that an
# Arabic message reads right to left on every line, however it begins (a seat's number, a name,
# a card), and its keyboard with it:
#
# - every line of the text starts with RIGHT-TO-LEFT MARK, and so does every button's label
#   (a tick or an icon leads, on the right);
# - each keyboard row is reversed: its first button is the rightmost;
# - a /command is isolated left to right (else its slash shows after it: "rules/");
# - cards are isolated left to right one by one (``ltr``): "7♣" keeps its suit after its rank,
#   and a row of cards ("A A · 2 2 · K") reads from the right as the keyboard does, whether it
#   begins with a letter or a digit.
#
# Telegram removes the embedding controls (U+202A-U+202E) from messages; marks and isolates
# stay. Left-to-right languages are left as they are.

RLM = "\u200f"
LRI = "\u2066"
PDI = "\u2069"
# A bot command as Telegram finds one: a slash not after a letter, digit, slash or "<" (so
# neither "</b>", "2/6" nor a link's path), then its name.
_COMMAND = re.compile("(?<![\\w/<>\u2066])/[A-Za-z0-9_]+")


def page(tr: Translator, text: str, markup: Keyboard | None = None) -> View:
    """A message in the reader's direction (see above)."""
    return View(directed(tr, text), mirrored(tr, markup) if markup is not None else None)


def directed(tr: Translator, text: str) -> str:
    """``text`` with every line in the reader's direction; unchanged in a left-to-right
    language, and when it already is."""
    if not tr.rtl:
        return text
    return "\n".join(_rtl_line(line) if line else line for line in text.split("\n"))


def _rtl_line(line: str) -> str:
    line = _COMMAND.sub(lambda found: f"{LRI}{found.group(0)}{PDI}", line)
    return line if line.startswith(RLM) else RLM + line


def mirrored(tr: Translator, markup: Keyboard) -> Keyboard:
    """A keyboard as a right-to-left reader reads it: each row from the right, each label in
    that direction."""
    if not tr.rtl:
        return markup
    return keyboard(
        [
            [{**b, "text": _rtl_line(b["text"])} for b in reversed(row)]
            for row in markup["inline_keyboard"]
        ]
    )


#: How a language separates the items of a list (names), where it is not ", ".
_LIST_SEPARATORS = {"ar": "، "}


def joined(tr: Translator, items: Iterable[str]) -> str:
    """Items of a list (names) in the reader's punctuation: "Ann, Bob", «أمل، باسم»."""
    return _LIST_SEPARATORS.get(tr.language, ", ").join(items)


def ltr(tr: Translator, text: str) -> str:
    """A card (or a run of one rank's cards) kept left to right in a right-to-left line."""
    return f"{LRI}{text}{PDI}" if tr.rtl else text


#: Shown for a name that would show nothing.
UNREADABLE_NAME = "?"
#: A name sits between FIRST STRONG ISOLATE and POP DIRECTIONAL ISOLATE: its direction is its
#: own (an Arabic or Hebrew name reads right to left) and does not reorder the rest of the line.
NAME_ISOLATE_START = "\u2068"
NAME_ISOLATE_END = "\u2069"
# The characters that set the direction of the text after them: the marks (LRM, RLM, ALM), the
# embeddings and overrides (LRE, RLE, PDF, LRO, RLO) and the isolates (LRI, RLI, FSI, PDI). In a
# name they serve only to open a direction that outlives it (or to close the name's isolate).
_BIDI_CONTROLS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# Letters that draw nothing: Hangul fillers (U+115F, U+1160, U+3164, U+FFA0) and the blank
# braille pattern (U+2800), used for names that look empty.
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
# Categories that draw nothing on their own: controls, format characters (zero-width spaces
# and joiners, U+2060...), unassigned code points, separators, and marks with no base letter.
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cn", "Zs", "Zl", "Zp", "Mn", "Me"})


def name_html(name: str, most: int = MAX_NAME_CHARS) -> str:
    """A user's name, safe in an HTML message: isolated for bidirectional text, without
    direction controls of its own, "?" when it shows nothing, longer than ``most`` shortened."""
    return f"<b>{_isolated(name, most)}</b>"


def title_html(title: str) -> str:
    """A group's title, made safe as a name is: a Latin title in an Arabic line, or an Arabic
    one in an English line, keeps its own direction and leaves the line's alone."""
    return f"<b>{_isolated(title, MAX_TITLE_CHARS)}</b>"


# Names are drawn again for every message of every play; the same few recur.
@functools.lru_cache(maxsize=4096)
def _isolated(text: str, most: int) -> str:
    clean = " ".join(_BIDI_CONTROLS.sub("", text).split())
    if not any(_visible(char) for char in clean):
        clean = UNREADABLE_NAME
    if len(clean) > most:
        clean = clean[: most - 1] + "…"
    return f"{NAME_ISOLATE_START}{html.escape(clean)}{NAME_ISOLATE_END}"


def _visible(char: str) -> bool:
    return char not in _BLANK_LETTERS and unicodedata.category(char) not in _INVISIBLE_CATEGORIES


def mention_html(name: str, user_id: int) -> str:
    """A user's name that notifies them (a mention), safe in an HTML message; a computer
    player's name only (nobody to notify)."""
    if is_computer(user_id):
        return name_html(name)
    return f'<a href="tg://user?id={user_id}">{name_html(name)}</a>'


def deep_link(bot_username: str, payload: str) -> str:
    return f"https://t.me/{bot_username}?start={payload}"


def app_link(bot_username: str, where: Where) -> str:
    """The bot's Mini App opened on this place's game from any chat (a ``startapp`` link; the
    parameter cannot hold ":", so a topic's place is spelled with "_")."""
    return f"https://t.me/{bot_username}?startapp={Place.of(where).key.replace(':', '_')}"


def join_payload(where: Where) -> str:
    return f"j{_payload_place(where)}"


def hand_payload(where: Where) -> str:
    return f"h{_payload_place(where)}"


def _payload_place(where: Where) -> str:
    """A place in a /start link: the chat id, and a topic after an underscore (a link's
    payload may hold letters, digits, "_" and "-" only)."""
    place = Place.of(where)
    return str(place.chat_id) if place.topic is None else f"{place.chat_id}_{place.topic}"


def count_cards(tr: Translator, count: int) -> str:
    if count == 0:
        # A message of its own: where 0 takes the singular by the plural rule (pt, fr), a
        # language may still say "0 cartas" of an empty pile or hand.
        return tr.pgettext("no cards", "0 cards")
    return tr.ngettext("{count} card", "{count} cards", count).format(count=count)


def rules_name(tr: Translator, rules: Rules) -> str:
    preset = preset_of(rules)
    name = tr._(PRESET_TEXTS[preset]) if preset is not None else tr._("house rules")
    pace = pace_of(rules)
    if pace is None or pace is Pace.NORMAL:
        return name
    # A pace other than the usual one is named with the rules ("Cheat (classic), blitz").
    return tr._("{rules} · {pace}").format(rules=name, pace=pace_name(tr, pace))


# --- the table (group) -------------------------------------------------------------------------


def claim_line(tr: Translator, state: GameState, claim: Claim) -> str:
    return tr._("{name} — {claim}").format(
        name=name_html(state.players[claim.seat].name),
        claim=claim_phrase(tr, len(claim.cards), claim.rank),
    )


def card_label(tr: Translator, card: Card) -> str:
    """A revealed card in the reader's letters, with its suit for flavour: "7♣", "Д♥"."""
    suit = card.suit
    return ltr(tr, rank_symbol(tr, card.rank) + (suit.symbol if suit is not None else ""))


def in_rows(buttons: list[Button], width: int = KEYBOARD_ROW) -> list[list[Button]]:
    return [buttons[i : i + width] for i in range(0, len(buttons), width)]


def moment(tr: Translator, ms: int) -> str:
    """A moment in the reader's words, in UTC ("3 Dec, 21:30 UTC"): a long turn says since
    when the game waits (the bot does not know the reader's time zone, so it says which)."""
    when = datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC)
    day = format_skeleton("MMMd", when, locale=tr.language)
    return ltr(tr, f"{day}, {when:%H:%M} UTC")
