"""The /settings menu's choices by number: a preset, or one value of one option; a number
that names nothing is a stale button."""

from __future__ import annotations

import pytest

from tgcheat.engine.rules import (
    OPTION_NAMES,
    OPTION_VALUES,
    PRESETS,
    Challengers,
    ChallengeWindow,
    FinalCheck,
    InvalidRules,
    RankRule,
    Rules,
    RulesProblem,
)
from tgcheat.table.refusals import SessionRefusal, SessionRefused
from tgcheat.table.settings import option_number, with_option_value, with_preset_number


def test_with_preset_number_plays_the_preset_of_that_number() -> None:
    """Presets are numbered in the order of ``PRESETS``: cheat, verju, free, liars; the
    options a preset does not decide stay as the group chose them."""
    assert list(PRESETS) == ["cheat", "verju", "free", "liars"]
    assert with_preset_number(Rules(), 3).revolver
    rules = Rules(turn_timeout_s=30)
    verju = with_preset_number(rules, 1)
    assert verju.rank_rule is RankRule.SAME
    assert verju.challengers is Challengers.NEXT
    assert verju.final_check is FinalCheck.NEXT
    assert verju.turn_timeout_s == 30
    assert with_preset_number(verju, 0) == rules
    assert with_preset_number(rules, 2).rank_rule is RankRule.FREE


@pytest.mark.parametrize("preset", [-1, 4, 99])
def test_with_preset_number_out_of_range_is_stale(preset: int) -> None:
    with pytest.raises(SessionRefused) as refused:
        with_preset_number(Rules(), preset)
    assert refused.value.reason is SessionRefusal.STALE


def test_with_option_value_sets_the_value_of_that_number() -> None:
    timer = OPTION_NAMES.index("turn_timeout_s")
    assert OPTION_VALUES["turn_timeout_s"][1] == "30"
    assert with_option_value(Rules(), timer, 1) == Rules(turn_timeout_s=30)
    players = OPTION_NAMES.index("players")
    assert OPTION_VALUES["players"][4] == "2-10"
    changed = with_option_value(Rules(), players, 4)
    assert (changed.min_players, changed.max_players) == (2, 10)


@pytest.mark.parametrize(
    ("option", "value"),
    [(-1, 0), (len(OPTION_NAMES), 0), (0, -1), (0, len(OPTION_VALUES[OPTION_NAMES[0]]))],
)
def test_with_option_value_out_of_range_is_stale(option: int, value: int) -> None:
    with pytest.raises(SessionRefused) as refused:
        with_option_value(Rules(), option, value)
    assert refused.value.reason is SessionRefusal.STALE


def test_with_option_value_refuses_an_invalid_combination_when_chosen() -> None:
    """``challengers=next`` with ``challenge_window=two`` is refused with its reason."""
    rules = Rules(challengers=Challengers.NEXT)
    window = OPTION_NAMES.index("challenge_window")
    two = OPTION_VALUES["challenge_window"].index(ChallengeWindow.TWO)
    with pytest.raises(InvalidRules) as invalid:
        with_option_value(rules, window, two)
    assert invalid.value.reason is RulesProblem.NEXT_WITH_WINDOW_TWO


def test_option_number_names_an_option_or_is_stale() -> None:
    last = len(OPTION_NAMES) - 1
    assert option_number(0) == 0
    assert option_number(last) == last
    for index in (-1, last + 1):
        with pytest.raises(SessionRefused) as refused:
            option_number(index)
        assert refused.value.reason is SessionRefusal.STALE
