"""The lobby's message in the group."""

from __future__ import annotations

import html

from tgcheat.bot.callbacks import Op, TablePress
from tgcheat.bot.views.base import (
    View,
    button,
    deep_link,
    join_payload,
    keyboard,
    name_html,
    rules_name,
)
from tgcheat.engine.lobby import Lobby
from tgcheat.i18n import Translator
from tgcheat.table.session import Session


def lobby_view(tr: Translator, session: Session, lobby: Lobby, bot_username: str) -> View:
    rules = lobby.rules
    names = ", ".join(name_html(name) for _, name in lobby.players) or tr._("nobody yet")
    lines = [
        tr._("🃏 <b>Cheat</b>: a new game is open"),
        tr._("Rules: {rules} · /rules").format(rules=html.escape(rules_name(tr, rules))),
        tr._("Players ({count}/{most}): {names}").format(
            count=len(lobby.players), most=rules.max_players, names=names
        ),
        "",
        tr._(
            "Tap <b>Join</b> to get your cards in a private chat with me. "
            "Whoever opened the game (or an admin) taps <b>Start</b> when "
            "{least}–{most} players are in."
        ).format(least=rules.min_players, most=rules.max_players),
    ]
    press = TablePress(Op.START, session.chat_id, session.game_id)
    cancel = TablePress(Op.CANCEL, session.chat_id, session.game_id)
    markup = keyboard(
        [
            [button(tr._("➕ Join"), url=deep_link(bot_username, join_payload(session.chat_id)))],
            [
                button(tr._("▶️ Start"), callback_data=press.encode()),
                button(tr._("✖️ Cancel"), callback_data=cancel.encode()),
            ],
        ]
    )
    return View("\n".join(lines), markup)


def lobby_closed_view(tr: Translator, *, expired: bool = False) -> View:
    if expired:
        return View(tr._("🃏 Nobody started this game in time. Send /new to open another."))
    return View(tr._("🃏 This game was cancelled. Send /new to open another."))

