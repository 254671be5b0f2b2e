"""What every view is made of: a text and a keyboard, names made safe, links, cards."""

from __future__ import annotations

import html
from dataclasses import dataclass

from tgcheat.bot.settings_texts import (
    PRESET_TEXTS,
)
from tgcheat.bot.texts import claim_phrase, rank_symbol
from tgcheat.engine.cards import Card
from tgcheat.engine.rules import (
    Rules,
    preset_of,
)
from tgcheat.engine.state import Claim, GameState
from tgcheat.i18n import Translator

MAX_NAME_CHARS = 64
KEYBOARD_ROW = 4


#: An inline keyboard as the Bot API takes it. Plain JSON rather than python-telegram-bot's
#: objects: a keyboard is built for every hand on every play, and only ever sent.
Button = dict[str, str]
Keyboard = dict[str, list[list[Button]]]


def button(text: str, *, callback_data: str | None = None, url: str | None = None) -> Button:
    if callback_data is not None:
        return {"text": text, "callback_data": callback_data}
    assert url is not None, "a button either calls back or opens a link"
    return {"text": text, "url": url}


def keyboard(rows: list[list[Button]]) -> Keyboard:
    return {"inline_keyboard": rows}


@dataclass(frozen=True, slots=True)
class View:
    text: str
    markup: Keyboard | None = None


def name_html(name: str) -> str:
    """A user's name, safe in an HTML message (long names are shortened)."""
    clean = " ".join(name.split()) or "?"
    if len(clean) > MAX_NAME_CHARS:
        clean = clean[: MAX_NAME_CHARS - 1] + "…"
    return f"<b>{html.escape(clean)}</b>"


def mention_html(name: str, user_id: int) -> str:
    """A user's name that notifies them (a mention), safe in an HTML message."""
    return f'<a href="tg://user?id={user_id}">{name_html(name)}</a>'


def deep_link(bot_username: str, payload: str) -> str:
    return f"https://t.me/{bot_username}?start={payload}"


def join_payload(chat_id: int) -> str:
    return f"j{chat_id}"


def hand_payload(chat_id: int) -> str:
    return f"h{chat_id}"


def count_cards(tr: Translator, count: int) -> str:
    return tr.ngettext("{count} card", "{count} cards", count).format(count=count)



def rules_name(tr: Translator, rules: Rules) -> str:
    preset = preset_of(rules)
    return tr._(PRESET_TEXTS[preset]) if preset is not None else tr._("house rules")


# --- the table (group) -------------------------------------------------------------------------


def claim_line(tr: Translator, state: GameState, claim: Claim) -> str:
    return tr._("{name} — {claim}").format(
        name=name_html(state.players[claim.seat].name),
        claim=claim_phrase(tr, len(claim.cards), claim.rank),
    )


def card_label(tr: Translator, card: Card) -> str:
    """A revealed card in the reader's letters, with its suit for flavour: "7♣", "Д♥"."""
    suit = card.suit
    return rank_symbol(tr, card.rank) + (suit.symbol if suit is not None else "")



def in_rows(buttons: list[Button], width: int = KEYBOARD_ROW) -> list[list[Button]]:
    return [buttons[i : i + width] for i in range(0, len(buttons), width)]

