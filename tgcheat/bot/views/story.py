"""📜 How it went: a finished game's story, one line a play (claim, true cards, how it was
answered), the piles taken set apart, long games folded. Its button is on the result
(``tgcheat.bot.views.table.final_table_view``).

Only a finished game's story is drawn: during the game the true cards are its players' secret.
"""

from __future__ import annotations

import html
import re

from tgcheat.bot.texts import claim_phrase
from tgcheat.bot.views.base import View, card_label, directed, name_html
from tgcheat.bot.views.table import notice_line, passed_view
from tgcheat.engine.events import Passed
from tgcheat.engine.state import GameState, Phase
from tgcheat.i18n import Translator
from tgcheat.table.chronicle import Notice, NoticeKind
from tgcheat.table.session import Session
from tgcheat.table.story import AsideEntry, AsideKind, Entry, PlayEntry

#: Telegram's limit for a message's text (after its HTML is read), in UTF-16 code units.
MESSAGE_LIMIT = 4096
#: A name in the story: short, so that a play fits a phone's line.
STORY_NAME_CHARS = 16
_TAG = re.compile("<[^>]*>")


class LiveGameStory(ValueError):
    """The story of a game still being played was asked for: it is never drawn."""


def story_view(tr: Translator, session: Session) -> View:
    """The finished game's story, in one message: the first moves and the last ones kept
    whole, those between folded into one line when the game is too long for it."""
    state = session.game
    if state is None or state.phase is not Phase.FINISHED:
        raise LiveGameStory(session.game_id)
    story = session.story
    opening = [_entry_lines(tr, state, entry) for entry in story.opening]
    closing = [_entry_lines(tr, state, entry) for entry in story.closing]
    folded = story.folded
    while True:
        text = directed(tr, _composed(tr, opening, folded, closing))
        if telegram_length(text) <= MESSAGE_LIMIT or not closing:
            return View(text)
        closing.pop(0)
        folded += 1


def telegram_length(text: str) -> int:
    """A message's length as Telegram counts it: its text once the HTML is read, in UTF-16
    code units."""
    return len(html.unescape(_TAG.sub("", text)).encode("utf-16-le")) // 2


def _composed(
    tr: Translator, opening: list[list[str]], folded: int, closing: list[list[str]]
) -> str:
    lines = [tr._("📜 <b>How it went</b>"), ""]
    for entry in opening:
        lines += entry
    if folded:
        lines.append(
            tr.ngettext("⋯ {count} move not shown ⋯", "⋯ {count} moves not shown ⋯", folded).format(
                count=folded
            )
        )
    for entry in closing:
        lines += entry
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def _entry_lines(tr: Translator, state: GameState, entry: Entry) -> list[str]:
    """An entry's line, and an empty line after a play whose pile was taken (a new pile
    begins)."""
    if isinstance(entry, AsideEntry):
        return [_aside_line(tr, state, entry)]
    line = _play_line(tr, state, entry)
    return [line, ""] if entry.caller is not None else [line]


def _play_line(tr: Translator, state: GameState, play: PlayEntry) -> str:
    marks = ("⏰ " if play.by_timeout else "") + ("🏁 " if play.final else "")
    # The whole line is the catalog's, its punctuation included ("Léa : un as" in French).
    line = tr._("{number}. {name}: {claim} — {cards} {verdict}").format(
        number=play.number,
        name=marks + _name(state, play.seat),
        claim=claim_phrase(tr, len(play.cards), play.rank),
        cards=" ".join(card_label(tr, card) for card in play.cards),
        verdict="❌" if play.lie else "✅",
    )
    if play.caller is None:
        return line
    caller = _name(state, play.caller)
    if state.rules.revolver:
        loser = _name(state, play.seat) if play.lie else caller
        verdict = tr._("{name} catches the bluff") if play.lie else tr._("{name} calls it wrongly")
        return f"{line} " + tr._("{outcome}; {loser} pulls the trigger").format(
            outcome=verdict.format(name=caller), loser=loser
        )
    if play.lie:
        # Who takes the pile is named (the liar: whoever played): "caught by Ann, takes 3"
        # read in several languages as if the one who caught the bluff took it.
        outcome = tr._("{name} catches the bluff; {liar} takes {count}").format(
            name=caller, liar=_name(state, play.seat), count=play.taken
        )
    else:
        outcome = tr._("{name} calls it wrongly and takes {count}").format(
            name=caller, count=play.taken
        )
    return f"{line} {outcome}"


def _aside_line(tr: Translator, state: GameState, aside: AsideEntry) -> str:
    match aside.kind:
        case AsideKind.LEFT:
            return notice_line(tr, state, Notice(NoticeKind.LEFT, aside.seat))
        case AsideKind.REMOVED_FOR_TIMEOUTS:
            return notice_line(tr, state, Notice(NoticeKind.REMOVED_FOR_TIMEOUTS, aside.seat))
        case AsideKind.PASSED_EXHAUSTED:
            return passed_view(tr, state, Passed(aside.seat, aside.rank))
        case AsideKind.PASSED_BY_VOTE:
            return passed_view(tr, state, Passed(aside.seat, None, by_vote=True))
        case AsideKind.PASSED:
            return passed_view(tr, state, Passed(aside.seat, None))


def _name(state: GameState, seat: int) -> str:
    return name_html(state.players[seat].name, STORY_NAME_CHARS)
