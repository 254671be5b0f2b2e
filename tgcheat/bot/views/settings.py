"""Settings, rules and languages."""

from __future__ import annotations

import html

from babel import Locale

from tgcheat.bot.callbacks import (
    LanguagePress,
    OptionMenu,
    PresetChoice,
    SettingsMenu,
    SettingsPress,
    ValueChoice,
)
from tgcheat.bot.settings_texts import (
    PRESET_SUMMARIES,
    PRESET_TEXTS,
    option_help,
    option_name,
    option_value_line,
    value_text,
)
from tgcheat.bot.views.base import (
    View,
    button,
    fits_in_rows,
    in_rows,
    keyboard,
    page,
    rules_name,
)
from tgcheat.engine.rules import (
    OPTION_NAMES,
    OPTION_VALUES,
    PRESETS,
    Rules,
)
from tgcheat.i18n import Translator, available_languages


def settings_view(tr: Translator, chat_id: int, rules: Rules) -> View:
    lines = [
        tr._("⚙️ <b>Settings</b> for this group's next games"),
        tr._("Rules: {rules}").format(rules=html.escape(rules_name(tr, rules))),
        tr._("Tap a setting to change it, or pick a preset."),
    ]
    rows = [
        [
            button(
                option_value_line(tr, option, rules.option_value(option)),
                callback_data=SettingsPress(chat_id, OptionMenu(index)).encode(),
            )
        ]
        for index, option in enumerate(OPTION_NAMES)
    ]
    # A preset's name is words ("Free rank (Italian)"): one per row, none cut short on a phone.
    rows += [
        [
            button(
                tr._(PRESET_TEXTS[name]),
                callback_data=SettingsPress(chat_id, PresetChoice(number)).encode(),
            )
        ]
        for number, name in enumerate(PRESETS)
    ]
    return page(tr, "\n".join(lines), keyboard(rows))


def option_view(tr: Translator, chat_id: int, rules: Rules, index: int) -> View:
    option = OPTION_NAMES[index]
    current = rules.option_value(option)
    lines = [
        "⚙️ " + _option_value_html(tr, option, current),
        html.escape(option_help(tr, option)),
    ]
    buttons = [
        button(
            ("✅ " if value == current else "") + value_text(tr, option, value),
            callback_data=SettingsPress(chat_id, ValueChoice(index, number)).encode(),
        )
        for number, value in enumerate(OPTION_VALUES[option])
    ]
    # Two values a row when each fits half a phone's width; else one a row, whole.
    rows = in_rows(buttons, width=2 if fits_in_rows((b["text"] for b in buttons), 2) else 1)
    rows.append(
        [button(tr._("« Back"), callback_data=SettingsPress(chat_id, SettingsMenu()).encode())]
    )
    return page(tr, "\n".join(lines), keyboard(rows))


def _option_value_html(tr: Translator, option: str, value: str) -> str:
    """ "<b>Turn time</b>: 90 s", with the language's own separator."""
    return tr._("{option}: {value}").format(
        option=f"<b>{html.escape(option_name(tr, option))}</b>",
        value=html.escape(value_text(tr, option, value)),
    )


def language_view(tr: Translator, chat_id: int, current: str, group: bool) -> View:
    text = (
        tr._("🌐 The language of this group's game messages:")
        if group
        else tr._("🌐 The language of your private messages:")
    )
    buttons = [
        button(
            ("✅ " if language == current else "") + language_name(language),
            callback_data=LanguagePress(chat_id, language).encode(),
        )
        for language in available_languages()
    ]
    return page(tr, text, keyboard(in_rows(buttons, width=2)))


#: Where CLDR's name of a language in itself is not the one its speakers look for in a list
#: of languages (Telegram's own list says "Bahasa Indonesia").
OWN_NAMES = {"id": "Bahasa Indonesia"}


def language_name(language: str) -> str:
    """A language's name in itself ("Deutsch", "Русский", "Português (Brasil)"): how people
    find their own."""
    name = OWN_NAMES.get(language) or Locale.parse(language).get_display_name(language)
    name = name or language
    return name[:1].upper() + name[1:]


def rules_view(tr: Translator, rules: Rules) -> View:
    """The rules in force as the preset they are nearest to and only what differs from it:
    a list of every option is more than a phone shows at once, and most are never changed."""
    preset = nearest_preset(rules)
    name = html.escape(tr._(PRESET_TEXTS[preset]))
    changed = differing_options(rules, PRESETS[preset])
    if changed:
        lines = [tr._("🃏 <b>Rules</b>: {rules}, with these changes:").format(rules=name)]
        lines += [
            "• " + _option_value_html(tr, option, rules.option_value(option)) for option in changed
        ]
    else:
        lines = [
            tr._("🃏 <b>Rules</b>: {rules}").format(rules=name),
            html.escape(tr._(PRESET_SUMMARIES[preset])),
        ]
    lines += ["", tr._("Admins change them with /settings.")]
    return page(tr, "\n".join(lines))


def differing_options(rules: Rules, other: Rules) -> list[str]:
    """The options (in menu order) whose values differ between ``rules`` and ``other``."""
    return [
        option
        for option in OPTION_NAMES
        if rules.option_value(option) != other.option_value(option)
    ]


def nearest_preset(rules: Rules) -> str:
    """The preset that differs from ``rules`` in the fewest options (the first listed on a
    tie, so the classic game wins over its variants)."""
    return min(PRESETS, key=lambda name: len(differing_options(rules, PRESETS[name])))
