"""Options, presets, validation, and setting an option from a menu's string."""

from __future__ import annotations

import dataclasses

import pytest

from tgcheat.engine.rules import (
    OPTION_NAMES,
    OPTION_VALUES,
    PRESETS,
    AfterChallenge,
    ChallengePriority,
    Challengers,
    ChallengeWindow,
    FinalCheck,
    InvalidRules,
    Jokers,
    MatchKind,
    Passing,
    RankRule,
    Rules,
    RulesProblem,
    preset_of,
)


def test_presets_match_the_table_of_rules_md() -> None:
    cheat, verju, free = PRESETS["cheat"], PRESETS["verju"], PRESETS["free"]
    assert (cheat.rank_rule, cheat.challengers, cheat.after_challenge, cheat.final_check) == (
        RankRule.ASCENDING,
        Challengers.ANYONE,
        AfterChallenge.CONTINUE,
        FinalCheck.ALL,
    )
    assert (verju.rank_rule, verju.challengers, verju.after_challenge, verju.final_check) == (
        RankRule.SAME,
        Challengers.NEXT,
        AfterChallenge.WINNER_OPENS,
        FinalCheck.NEXT,
    )
    assert (free.rank_rule, free.challengers, free.after_challenge, free.final_check) == (
        RankRule.FREE,
        Challengers.ANYONE,
        AfterChallenge.CONTINUE,
        FinalCheck.ALL,
    )
    for name, rules in PRESETS.items():
        assert rules.validate() is rules
        assert preset_of(rules) == name
    assert Rules() == cheat


def test_defaults_are_the_first_value_of_each_option() -> None:
    rules = Rules()
    for name, values in OPTION_VALUES.items():
        assert rules.option_value(name) == values[0], name
    assert tuple(OPTION_VALUES) == OPTION_NAMES


@pytest.mark.parametrize("name", OPTION_NAMES)
def test_every_offered_value_can_be_set_and_reads_back(name: str) -> None:
    # The short deck seats four at most and has no ascending sequence: it is set from rules
    # that allow it (Liar's Bar's); and from the defaults it is refused with its reason.
    start = PRESETS["liars"] if name == "deck" else Rules()
    if name == "deck":
        with pytest.raises(InvalidRules):
            Rules().with_option("deck", "short")
    for value in OPTION_VALUES[name]:
        rules = start.with_option(name, value)
        assert rules.option_value(name) == value
        assert rules.validate() is rules


@pytest.mark.parametrize(
    ("name", "value", "field", "expected"),
    [
        ("rank_rule", "same", "rank_rule", RankRule.SAME),
        ("challengers", "next", "challengers", Challengers.NEXT),
        ("after_challenge", "winner_opens", "after_challenge", AfterChallenge.WINNER_OPENS),
        ("challenge_priority", "clockwise", "challenge_priority", ChallengePriority.CLOCKWISE),
        ("challenge_grace_s", "7", "challenge_grace_s", 7),
        ("challenge_window", "two", "challenge_window", ChallengeWindow.TWO),
        ("final_check", "next", "final_check", FinalCheck.NEXT),
        ("max_cards", "any", "max_cards", 0),
        ("max_cards", "0", "max_cards", 0),
        ("max_cards", "13", "max_cards", 13),
        ("decks", "auto", "decks", 0),
        ("decks", "2", "decks", 2),
        ("jokers", "WILD", "jokers", Jokers.WILD),
        ("passing", "vote", "passing", Passing.VOTE),
        ("move_cap", "none", "move_cap", 0),
        ("move_cap", " 150 ", "move_cap", 150),
        ("players", "2-10", "max_players", 10),
        ("players", "4", "min_players", 4),
        ("match", "first_to_3", "match", MatchKind.FIRST_TO),
        ("match", "penalty_7", "match_target", 7),
        ("turn_timeout_s", "off", "turn_timeout_s", 0),
        ("afk_limit", "5", "afk_limit", 5),
    ],
)
def test_with_option_parses_the_string(name: str, value: str, field: str, expected: object) -> None:
    assert getattr(Rules().with_option(name, value), field) == expected


@pytest.mark.parametrize(
    ("name", "value", "reason"),
    [
        ("colour", "red", RulesProblem.UNKNOWN_OPTION),
        ("rank_rule", "descending", RulesProblem.BAD_VALUE),
        ("max_cards", "-1", RulesProblem.BAD_VALUE),
        ("max_cards", "lots", RulesProblem.BAD_VALUE),
        ("max_cards", "53", RulesProblem.BAD_MAX_CARDS),
        ("decks", "3", RulesProblem.BAD_DECKS),
        ("move_cap", "5", RulesProblem.BAD_MOVE_CAP),
        ("players", "1-4", RulesProblem.BAD_PLAYERS),
        ("players", "6-3", RulesProblem.BAD_PLAYERS),
        ("players", "2-11", RulesProblem.BAD_PLAYERS),
        ("match", "first_to_0", RulesProblem.BAD_MATCH),
        ("match", "first_to", RulesProblem.BAD_VALUE),
        ("match", "best_of_x", RulesProblem.BAD_VALUE),
        ("turn_timeout_s", "3", RulesProblem.BAD_TIMER),
        ("afk_limit", "0", RulesProblem.BAD_AFK_LIMIT),
        ("challenge_grace_s", "60", RulesProblem.BAD_GRACE),
    ],
)
def test_with_option_refuses_a_bad_value(name: str, value: str, reason: RulesProblem) -> None:
    with pytest.raises(InvalidRules) as refused:
        Rules().with_option(name, value)
    assert refused.value.reason is reason


def test_invalid_combinations_are_refused_when_the_settings_change() -> None:
    # RULES.md's own example: under `next` the next play closes the claim.
    with pytest.raises(InvalidRules) as refused:
        PRESETS["verju"].with_option("challenge_window", "two")
    assert refused.value.reason is RulesProblem.NEXT_WITH_WINDOW_TWO
    assert refused.value.option == "challenge_window"
    # Under `free` no rank is ever required, so nobody could ever pass by `exhausted`.
    with pytest.raises(InvalidRules) as refused:
        PRESETS["free"].with_option("passing", "exhausted")
    assert refused.value.reason is RulesProblem.EXHAUSTED_NEEDS_REQUIRED_RANK
    assert refused.value.option == "passing"
    # One deck is for six players at most (RULES.md `players`).
    with pytest.raises(InvalidRules) as refused:
        Rules().with_option("decks", "1").with_option("players", "3-8")
    assert refused.value.reason is RulesProblem.ONE_DECK_TOO_MANY_PLAYERS
    assert Rules().with_option("players", "3-8").deck_count(8) == 2
    assert Rules(decks=2).deck_count(6) == 2
    # `single` carries no N; the others need one.
    with pytest.raises(InvalidRules):
        Rules(match=MatchKind.SINGLE, match_target=3).validate()
    with pytest.raises(InvalidRules):
        Rules(match=MatchKind.BEST_OF, match_target=0).validate()


def test_a_one_challenger_rule_with_clockwise_priority_is_allowed() -> None:
    # Nothing to collect when only one player may call Cheat!: it resolves at once.
    rules = PRESETS["verju"].with_option("challenge_priority", "clockwise")
    assert rules.challenge_priority is ChallengePriority.CLOCKWISE


def test_rules_round_trip_through_a_dict() -> None:
    rules = dataclasses.replace(
        PRESETS["verju"], jokers=Jokers.WILD, match=MatchKind.PENALTY, match_target=3
    )
    assert Rules.from_dict(rules.to_dict()) == rules
    assert Rules.from_dict({"rank_rule": "free", "from_the_future": 1}) == PRESETS["free"]


def test_play_limit() -> None:
    assert Rules().play_limit(10) == 4
    assert Rules().play_limit(2) == 2
    assert Rules(max_cards=0).play_limit(17) == 17


def test_a_preset_keeps_the_groups_other_choices() -> None:
    from tgcheat.engine.rules import PRESETS, with_preset

    mine = Rules().with_option("turn_timeout_s", "off").with_option("jokers", "wild")
    verju = with_preset(mine, "verju")
    assert verju.rank_rule is PRESETS["verju"].rank_rule
    assert verju.final_check is PRESETS["verju"].final_check
    assert verju.turn_timeout_s == 0 and verju.jokers.value == "wild"
