"""Views: sessions and events turned into message texts and keyboards, in one reader's language.

Pure functions of their arguments. Every text a person reads comes from the catalog; every
user name is HTML-escaped here, before it enters a message. Where an answer (Cheat!, I believe
you, a vote) is given is read from ``tgcheat.table.audiences``, never re-decided from the rules.
"""

from tgcheat.bot.views.base import (
    KEYBOARD_ROW,
    MAX_NAME_CHARS,
    Button,
    Keyboard,
    View,
    button,
    card_label,
    claim_line,
    count_cards,
    deep_link,
    hand_payload,
    in_rows,
    join_payload,
    keyboard,
    mention_html,
    name_html,
    rules_name,
)
from tgcheat.bot.views.hand import hand_text, hand_view
from tgcheat.bot.views.lobby import lobby_closed_view, lobby_view
from tgcheat.bot.views.refusals import REFUSALS, Reason, refusal_text
from tgcheat.bot.views.settings import (
    language_name,
    language_view,
    option_view,
    rules_view,
    settings_view,
)
from tgcheat.bot.views.table import (
    final_table_view,
    next_game_markup,
    notice_line,
    passed_view,
    result_lines,
    reveal_view,
    scoreboard_lines,
    summary_lines,
    table_view,
)

__all__ = [
    "KEYBOARD_ROW",
    "MAX_NAME_CHARS",
    "REFUSALS",
    "Button",
    "Keyboard",
    "Reason",
    "View",
    "button",
    "card_label",
    "claim_line",
    "count_cards",
    "deep_link",
    "final_table_view",
    "hand_payload",
    "hand_text",
    "hand_view",
    "in_rows",
    "join_payload",
    "keyboard",
    "language_name",
    "language_view",
    "lobby_closed_view",
    "lobby_view",
    "mention_html",
    "name_html",
    "next_game_markup",
    "notice_line",
    "option_view",
    "passed_view",
    "refusal_text",
    "result_lines",
    "reveal_view",
    "rules_name",
    "rules_view",
    "scoreboard_lines",
    "settings_view",
    "summary_lines",
    "table_view",
]
