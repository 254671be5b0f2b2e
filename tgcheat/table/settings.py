"""A group's rules as chosen in the /settings menu: a preset, or one option's value, picked by
their numbers (buttons carry numbers, and a number no option has is a stale button)."""

from __future__ import annotations

from tgcheat.engine.rules import OPTION_NAMES, OPTION_VALUES, PRESETS, Rules, with_preset
from tgcheat.table.refusals import SessionRefusal, SessionRefused


def option_number(index: int) -> int:
    """``index`` when it names an option of ``OPTION_NAMES``; else refused as stale."""
    if not 0 <= index < len(OPTION_NAMES):
        raise SessionRefused(SessionRefusal.STALE)
    return index


def with_preset_number(rules: Rules, preset: int) -> Rules:
    if not 0 <= preset < len(PRESETS):
        raise SessionRefused(SessionRefusal.STALE)
    return with_preset(rules, list(PRESETS)[preset])


def with_option_value(rules: Rules, option: int, value: int) -> Rules:
    """``rules`` with value number ``value`` of option number ``option``; an invalid
    combination raises ``InvalidRules`` (refused when chosen, never at play time)."""
    name = OPTION_NAMES[option_number(option)]
    values = OPTION_VALUES[name]
    if not 0 <= value < len(values):
        raise SessionRefused(SessionRefusal.STALE)
    return rules.with_option(name, values[value])
