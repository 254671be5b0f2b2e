"""The lobby's message in the group."""

from __future__ import annotations

import html
import math

from tgcheat.bot.callbacks import ComputerPress, Op, TablePress
from tgcheat.bot.views.base import (
    Button,
    View,
    app_link,
    button,
    deep_link,
    join_payload,
    joined,
    keyboard,
    name_html,
    page,
    rules_name,
    title_html,
)
from tgcheat.engine.lobby import Lobby
from tgcheat.i18n import N_, Translator
from tgcheat.table.clock import FULL_LOBBY_COUNTDOWN_S, any_player_may_start_ms, lobby_clock_of
from tgcheat.table.computers import Level, is_computer, level_of
from tgcheat.table.session import Session


def lobby_view(
    tr: Translator, session: Session, lobby: Lobby, bot_username: str, *, app: bool = False
) -> View:
    """The lobby; ``app``: the bot serves the Mini App (a button opens the game there, where
    one may join too)."""
    rules = lobby.rules
    # Numbered as /kick <n> counts them before the deal.
    names = joined(
        tr,
        (
            f"{number}. {_seat_name(tr, session, user_id, name)}"
            for number, (user_id, name) in enumerate(lobby.players, 1)
        ),
    ) or tr._("nobody yet")
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
            "{least}–{most} players are in; a full table starts by itself."
        ).format(least=rules.min_players, most=rules.max_players),
    ]
    status = _start_status(tr, session, lobby)
    if status:
        lines.append(status)
    press = TablePress(Op.START, session.chat_id, session.game_id, session.topic)
    leave = TablePress(Op.LEAVE, session.chat_id, session.game_id, session.topic)
    cancel = TablePress(Op.CANCEL, session.chat_id, session.game_id, session.topic)
    rows = [
        [
            button(tr._("➕ Join"), url=deep_link(bot_username, join_payload(session.place))),
            button(tr._("🚪 Leave"), callback_data=leave.encode()),
        ],
        [button(tr._("📱 Table in the app"), url=app_link(bot_username, session.place))]
        if app
        else [],
        *_computer_rows(tr, session, lobby),
        [
            button(tr._("▶️ Start"), callback_data=press.encode()),
            button(tr._("✖️ Cancel"), callback_data=cancel.encode()),
        ],
    ]
    return page(tr, "\n".join(lines), keyboard([row for row in rows if row]))


LEVEL_NAMES = {
    Level.EASY: N_("easy"),
    Level.NORMAL: N_("normal"),
    Level.HARD: N_("hard"),
}


def level_name(tr: Translator, level: Level) -> str:
    return tr._(LEVEL_NAMES[level])


def _seat_name(tr: Translator, session: Session, user_id: int, name: str) -> str:
    """A lobby seat: the person's name, or the computer player's and its level."""
    if not is_computer(user_id):
        return name_html(name)
    level = level_name(tr, level_of(session, user_id))
    return f"{name_html(name)} ({html.escape(level)})"


def _computer_rows(tr: Translator, session: Session, lobby: Lobby) -> list[list[Button]]:
    """Seats for computer players, one button a level (while there is room), and below them
    one that removes the last added (in a row of its own: four buttons in a row leave too
    little room for a level's name)."""
    levels = []
    if not lobby.full:
        for level in Level:
            add = ComputerPress(
                Op.ADD_COMPUTER, session.chat_id, session.game_id, level, session.topic
            )
            label = f"➕🤖 {level_name(tr, level)}"
            levels.append(button(label, callback_data=add.encode()))
    rows = [levels]
    if any(is_computer(user_id) for user_id, _ in lobby.players):
        remove = ComputerPress(
            Op.REMOVE_COMPUTER, session.chat_id, session.game_id, topic=session.topic
        )
        rows.append([button("➖🤖", callback_data=remove.encode())])
    return rows


def _start_status(tr: Translator, session: Session, lobby: Lobby) -> str:
    """When the game starts by itself, or from when any player may start it, read from the
    lobby's clock as of its last touch: exact when a join or the clock shows the message
    (the clock shows it again when any player may start it); shown again after a leave, it
    may say a little more than remains, never less."""
    if lobby.full:
        seconds = FULL_LOBBY_COUNTDOWN_S
        return tr.ngettext(
            "⏱ The table is full: the game starts in {seconds} second.",
            "⏱ The table is full: the game starts in {seconds} seconds.",
            seconds,
        ).format(seconds=seconds)
    clock = lobby_clock_of(session, lobby)
    opening = any_player_may_start_ms(clock)
    if opening is None:
        return ""
    if opening <= clock.touched_ms:
        return tr._("▶️ Any player may start it now.")
    # Whole minutes, rounded up: never "now" before it is so.
    minutes = math.ceil((opening - clock.touched_ms) / 60_000)
    return tr.ngettext(
        "⏳ Any player may start it in {minutes} minute.",
        "⏳ Any player may start it in {minutes} minutes.",
        minutes,
    ).format(minutes=minutes)


def ping_view(tr: Translator, session: Session, bot_username: str) -> View:
    """A next-game ping in a signed-up person's private chat (/notify)."""
    text = tr._("🔔 A new game of Cheat is open in {group}.").format(
        group=title_html(session.place_title)
    )
    join = button(tr._("➕ Join"), url=deep_link(bot_username, join_payload(session.place)))
    return page(tr, text, keyboard([[join]]))


def lobby_closed_view(tr: Translator, *, expired: bool = False) -> View:
    if expired:
        return page(tr, tr._("🃏 Nobody started this game in time. Send /new to open another."))
    return page(tr, tr._("🃏 This game was cancelled. Send /new to open another."))
