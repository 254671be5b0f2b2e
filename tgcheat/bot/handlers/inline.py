"""Inline mode: a person types the bot's name in any chat (or taps a "📣 Share" button, which
does it for them) and picks a card to post there: their last game's result, their profile.
Answers to inline queries are no messages of the bot's: they cost nothing of its send budget.
A query's text is only matched against the cards' names; whatever else it says changes
nothing and is not kept."""

from __future__ import annotations

import re
from html import unescape
from typing import Any

from telegram import Update
from telegram.ext import ContextTypes

from tgcheat.bot import views
from tgcheat.bot.handlers.shell import Asker, Shell
from tgcheat.bot.views.profile import SHARE_PROFILE, SHARE_RESULT
from tgcheat.i18n import Translator
from tgcheat.table.standing import Profile

#: How long Telegram may show the same answer to the same person again (s): a profile changes
#: with each game, so briefly.
CACHE_S = 10


def share_results(
    tr: Translator, profile: Profile | None, query: str, bot_username: str
) -> list[dict[str, Any]]:
    """The cards a person may share for ``query`` (InlineQueryResultArticle objects): the ones
    whose name starts with what they typed, all for anything else."""
    wanted = query.strip().lower()
    cards: list[tuple[str, dict[str, Any]]] = []
    if profile is None:
        invite = tr._("🃏 Let's play Cheat, the bluffing card game: add @{bot} to a group.").format(
            bot=bot_username
        )
        cards.append(
            (
                SHARE_PROFILE,
                _article(
                    "invite", tr._("🃏 Invite to Cheat"), tr._("No games counted yet."), invite
                ),
            )
        )
        return [card for _, card in cards]
    result = views.result_card(tr, profile)
    if result is not None:
        cards.append(
            (
                SHARE_RESULT,
                _article("result", tr._("🏁 My last game"), _plain(result), result),
            )
        )
    card = views.profile_card(tr, profile)
    cards.append((SHARE_PROFILE, _article("profile", tr._("👤 My profile"), _plain(card), card)))
    chosen = [card for name, card in cards if wanted and name.startswith(wanted)]
    return chosen or [card for _, card in cards]


def _article(result_id: str, title: str, description: str, text: str) -> dict[str, Any]:
    return {
        "type": "article",
        "id": result_id,
        "title": title,
        "description": description[:200],
        "input_message_content": {"message_text": text, "parse_mode": "HTML"},
    }


def _plain(html_text: str) -> str:
    """A card's text without its markup, on one line (a result's description)."""
    return unescape(re.sub(r"<[^>]+>", "", html_text)).replace("\n", " · ")


class InlineHandlers:
    def __init__(self, shell: Shell) -> None:
        self.shell = shell

    async def query(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        inline = update.inline_query
        if inline is None:
            return
        shell = self.shell
        user = inline.from_user
        tr = await shell.language_of(Asker(user.id, user.language_code))
        profile = await shell.store.stats.profile(user.id, shell.clock())
        results = share_results(tr, profile, inline.query, shell.sender.bot.username)
        await shell.sender.answer_inline(inline.id, results, CACHE_S)
