"""How each rule option and value reads in a menu and a rules summary (msgids, in English)."""

from __future__ import annotations

from tgcheat.bot.texts import NC_, Nn_
from tgcheat.engine.rules import OPTION_NAMES, PRESETS, Pace, RulesProblem
from tgcheat.i18n import N_, Translator

#: Option → (its name, a one-line explanation).
OPTION_TEXTS: dict[str, tuple[str, str]] = {
    "rank_rule": (
        N_("Rank"),
        N_("Which rank a play must claim: the next in A, 2…K; the round's rank; or any."),
    ),
    "challengers": (N_("Who may call Cheat"), N_("Everyone else, or only the next player.")),
    "after_challenge": (
        N_("After a challenge"),
        N_("Play goes on with the next player, or the challenge's winner opens a new round."),
    ),
    "challenge_priority": (
        N_("Cheat! calls at once"),
        N_("The first press counts, or the nearest player clockwise after a short wait."),
    ),
    "challenge_grace_s": (
        N_("Wait for other Cheat! calls"),
        N_("Seconds others may still join a Cheat! call (nearest clockwise wins)."),
    ),
    "challenge_window": (
        N_("Challengeable plays"),
        N_("Only the last play can be challenged, or the last two."),
    ),
    "final_check": (
        N_("Last cards"),
        N_("Everyone must believe a player's last cards, or only the next player answers."),
    ),
    "max_cards": (N_("Cards per play"), N_("The most cards one play may hold.")),
    "decks": (N_("Decks"), N_("One deck up to 6 players and two from 7 (auto), or fixed.")),
    "jokers": (N_("Jokers"), N_("Two jokers per deck that count as the claimed rank.")),
    "passing": (
        N_("Passing"),
        N_("Never; when every card of the rank is in the pile; or when all others agree."),
    ),
    "move_cap": (
        N_("Play limit"),
        N_("After this many plays the game ends: fewest cards wins."),
    ),
    "players": (N_("Players"), N_("How many may play.")),
    "match": (
        N_("Match"),
        N_("One game, first to N wins, best of N, or N games scoring cards left (lowest wins)."),
    ),
    "turn_timeout_s": (
        N_("Turn time"),
        N_("Seconds to play before one card is played for you; off for slow friendly games."),
    ),
    "afk_limit": (
        N_("Missed turns"),
        N_("Timeouts in a row after which a player is removed."),
    ),
    "deck": (
        N_("Which deck"),
        N_("The full deck, or Liar's Bar's 20 cards (A, K, Q): five to each, 2 to 4 players."),
    ),
    "penalty": (
        N_("Penalty"),
        N_("Whoever was wrong takes the pile, or pulls the trigger of their revolver."),
    ),
}
assert set(OPTION_TEXTS) == set(OPTION_NAMES)

#: The words of option values; numbers are shown as they are, seconds with their unit.
VALUE_TEXTS: dict[str, str] = {
    "ascending": N_("ascending"),
    "same": N_("same in a round"),
    "free": N_("free"),
    "anyone": N_("anyone"),
    "next": N_("next player"),
    "continue": N_("play goes on"),
    "winner_opens": N_("winner opens"),
    "first": N_("first press"),
    "clockwise": N_("nearest clockwise"),
    "last": N_("last play"),
    "two": N_("last two plays"),
    "all": N_("everyone"),
    "wild": N_("wild"),
    "never": N_("never"),
    "exhausted": N_("rank used up"),
    "vote": N_("by vote"),
    "any": N_("any number"),
    "auto": N_("auto"),
    "single": N_("one game"),
    "table": N_("drawn each round"),
    "standard": N_("full deck"),
    "short": N_("Liar's Bar, 20 cards"),
    "pile": N_("take the pile"),
    "revolver": N_("revolver"),
}

#: Values whose words depend on the option they set, with a message context each: "off" is
#: no jokers for one option and no clock for another, and many languages say those apart.
OPTION_VALUE_TEXTS: dict[tuple[str, str], tuple[str, str]] = {
    ("jokers", "off"): NC_("jokers", "off"),
    ("turn_timeout_s", "off"): NC_("turn timer", "off"),
    ("move_cap", "none"): NC_("play limit", "none"),
}

#: Each pace's name, beside its turn time in the menu ("15 s · blitz").
PACE_TEXTS: dict[Pace, tuple[str, str]] = {
    Pace.BLITZ: NC_("pace", "blitz"),
    Pace.NORMAL: NC_("pace", "normal"),
    Pace.SLOW: NC_("pace", "slow"),
    Pace.CORRESPONDENCE: NC_("pace", "correspondence"),
}

#: Options whose numbers are seconds: "90 s", not a bare "90".
SECONDS_OPTIONS = frozenset({"challenge_grace_s", "turn_timeout_s"})

#: A match's length, short enough for two values to share a row of the menu (the option's
#: explanation says the rest); plural messages, because many languages decline the noun.
MATCH_TEXTS: dict[str, tuple[str, str]] = {
    "first_to": Nn_("first to {n} win", "first to {n} wins"),
    "best_of": Nn_("best of {n}", "best of {n}"),
    "penalty": Nn_("{n} game, points", "{n} games, points"),
}

PRESET_TEXTS: dict[str, str] = {
    "cheat": N_("Cheat (classic)"),
    "verju": N_("Verju (Russian rules)"),
    "free": N_("Free rank (Italian)"),
    "liars": N_("Liar's Bar (revolver)"),
}

#: Each preset in one line, for /rules when a group plays it unchanged.
PRESET_SUMMARIES: dict[str, str] = {
    "cheat": N_("Claim the next rank each turn: A, 2, 3 … K, then A again. Anyone may call Cheat!"),
    "verju": N_(
        "One rank per round, named by whoever opens it. Only the next player may call Cheat!"
    ),
    "free": N_("Claim any rank you like, every turn. Anyone may call Cheat!"),
    "liars": N_(
        "20 cards, five each, one rank a round. Only the next player may call Liar! "
        "Whoever was wrong pulls the trigger; the last alive wins."
    ),
}
assert set(PRESET_TEXTS) == set(PRESET_SUMMARIES) == set(PRESETS)

RULES_PROBLEMS: dict[RulesProblem, str] = {
    RulesProblem.NEXT_WITH_WINDOW_TWO: N_(
        "When only the next player may call Cheat, only the last play can stay open."
    ),
    RulesProblem.EXHAUSTED_NEEDS_REQUIRED_RANK: N_(
        "Passing when a rank is used up needs a required rank: not with free ranks."
    ),
    RulesProblem.BAD_MAX_CARDS: N_("That number of cards per play is not allowed."),
    RulesProblem.BAD_DECKS: N_("Choose one deck, two, or auto."),
    RulesProblem.BAD_PLAYERS: N_("Between 2 and 10 players can play."),
    RulesProblem.ONE_DECK_TOO_MANY_PLAYERS: N_("One deck is enough for 6 players at most."),
    RulesProblem.BAD_MOVE_CAP: N_("That play limit is not allowed."),
    RulesProblem.BAD_MATCH: N_("That match length is not allowed."),
    RulesProblem.BAD_TIMER: N_("That turn time is not allowed."),
    RulesProblem.BAD_AFK_LIMIT: N_("That number of missed turns is not allowed."),
    RulesProblem.BAD_GRACE: N_("That waiting time is not allowed."),
    RulesProblem.SHORT_DECK_TOO_MANY_PLAYERS: N_(
        "Liar's Bar's deck is enough for 4 players at most (3 without jokers)."
    ),
    RulesProblem.REVOLVER_WITHOUT_PASSING: N_("With the revolver nobody may pass."),
    RulesProblem.SHORT_DECK_NOT_ASCENDING: N_(
        "Liar's Bar's deck has only A, K and Q: the rank cannot go up one step a play."
    ),
    RulesProblem.UNKNOWN_OPTION: N_("There is no such setting."),
    RulesProblem.BAD_VALUE: N_("That value is not allowed."),
}


def value_text(tr: Translator, option: str, value: str) -> str:
    """A value of ``option`` in words ("off", "first to 3 wins", "90 s")."""
    contextual = OPTION_VALUE_TEXTS.get((option, value))
    if contextual is not None:
        return tr.pgettext(*contextual)
    if value in VALUE_TEXTS:
        return tr._(VALUE_TEXTS[value])
    if option in SECONDS_OPTIONS and value.isdigit():
        seconds = int(value)
        if seconds >= HOUR_S and seconds % HOUR_S == 0:
            text = tr._("{n} h").format(n=seconds // HOUR_S)
        else:
            text = tr._("{n} s").format(n=value)
        return text
    kind, _, number = value.rpartition("_")
    if kind in MATCH_TEXTS and number.isdigit():
        singular, plural = MATCH_TEXTS[kind]
        return tr.ngettext(singular, plural, int(number)).format(n=number)
    return value


HOUR_S = 3600


def pace_name(tr: Translator, pace: Pace) -> str:
    return tr.pgettext(*PACE_TEXTS[pace])


def option_value_line(tr: Translator, option: str, value: str) -> str:
    """ "Turn time: 90 s", as plain text; the separator is the language's own ("Valeur :
    croissante" in French)."""
    return tr._("{option}: {value}").format(
        option=option_name(tr, option), value=value_text(tr, option, value)
    )


def option_name(tr: Translator, option: str) -> str:
    return tr._(OPTION_TEXTS[option][0])


def option_help(tr: Translator, option: str) -> str:
    return tr._(OPTION_TEXTS[option][1])
