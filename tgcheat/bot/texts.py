"""Phrases about cards, in English as msgids: each rank's claim for one to four cards is its
own message, because many languages make the numeral agree with the noun («одна дама»,
«два короля»); larger counts use a plural-form message with a number."""

from __future__ import annotations

import gettext

from tgcheat.engine.cards import Rank
from tgcheat.i18n import N_, Translator


def Nn_(singular: str, plural: str) -> tuple[str, str]:
    """Marks a plural pair for extraction; translated with ``Translator.ngettext``."""
    return singular, plural


def NC_(context: str, message: str) -> tuple[str, str]:
    """Marks a message with its context (a msgctxt) for extraction; translated with
    ``Translator.pgettext``. For a word that reads differently where it is shown ("off" for
    jokers and for the turn timer)."""
    return context, message


#: "one 7", "two 7s", "three 7s", "four 7s" for every rank a claim may name (never a joker).
CLAIM_WORDS: dict[Rank, tuple[str, str, str, str]] = {
    Rank.ACE: (
        N_("one ace"),
        N_("two aces"),
        N_("three aces"),
        N_("four aces"),
    ),
    Rank.TWO: (
        N_("one 2"),
        N_("two 2s"),
        N_("three 2s"),
        N_("four 2s"),
    ),
    Rank.THREE: (
        N_("one 3"),
        N_("two 3s"),
        N_("three 3s"),
        N_("four 3s"),
    ),
    Rank.FOUR: (
        N_("one 4"),
        N_("two 4s"),
        N_("three 4s"),
        N_("four 4s"),
    ),
    Rank.FIVE: (
        N_("one 5"),
        N_("two 5s"),
        N_("three 5s"),
        N_("four 5s"),
    ),
    Rank.SIX: (
        N_("one 6"),
        N_("two 6s"),
        N_("three 6s"),
        N_("four 6s"),
    ),
    Rank.SEVEN: (
        N_("one 7"),
        N_("two 7s"),
        N_("three 7s"),
        N_("four 7s"),
    ),
    Rank.EIGHT: (
        N_("one 8"),
        N_("two 8s"),
        N_("three 8s"),
        N_("four 8s"),
    ),
    Rank.NINE: (
        N_("one 9"),
        N_("two 9s"),
        N_("three 9s"),
        N_("four 9s"),
    ),
    Rank.TEN: (
        N_("one 10"),
        N_("two 10s"),
        N_("three 10s"),
        N_("four 10s"),
    ),
    Rank.JACK: (
        N_("one jack"),
        N_("two jacks"),
        N_("three jacks"),
        N_("four jacks"),
    ),
    Rank.QUEEN: (
        N_("one queen"),
        N_("two queens"),
        N_("three queens"),
        N_("four queens"),
    ),
    Rank.KING: (
        N_("one king"),
        N_("two kings"),
        N_("three kings"),
        N_("four kings"),
    ),
}

#: A claim of five cards or more.
CLAIM_MANY: dict[Rank, tuple[str, str]] = {
    Rank.ACE: Nn_("{count} ace", "{count} aces"),
    Rank.TWO: Nn_("{count} 2", "{count} 2s"),
    Rank.THREE: Nn_("{count} 3", "{count} 3s"),
    Rank.FOUR: Nn_("{count} 4", "{count} 4s"),
    Rank.FIVE: Nn_("{count} 5", "{count} 5s"),
    Rank.SIX: Nn_("{count} 6", "{count} 6s"),
    Rank.SEVEN: Nn_("{count} 7", "{count} 7s"),
    Rank.EIGHT: Nn_("{count} 8", "{count} 8s"),
    Rank.NINE: Nn_("{count} 9", "{count} 9s"),
    Rank.TEN: Nn_("{count} 10", "{count} 10s"),
    Rank.JACK: Nn_("{count} jack", "{count} jacks"),
    Rank.QUEEN: Nn_("{count} queen", "{count} queens"),
    Rank.KING: Nn_("{count} king", "{count} kings"),
}

#: The rank a player must claim: "play 8s", "play queens".
RANK_PLURAL: dict[Rank, str] = {
    Rank.ACE: N_("aces"),
    Rank.TWO: N_("2s"),
    Rank.THREE: N_("3s"),
    Rank.FOUR: N_("4s"),
    Rank.FIVE: N_("5s"),
    Rank.SIX: N_("6s"),
    Rank.SEVEN: N_("7s"),
    Rank.EIGHT: N_("8s"),
    Rank.NINE: N_("9s"),
    Rank.TEN: N_("10s"),
    Rank.JACK: N_("jacks"),
    Rank.QUEEN: N_("queens"),
    Rank.KING: N_("kings"),
    Rank.JOKER: N_("jokers"),
}

#: The short name on a card button; languages with other letters for court cards change it.
RANK_SYMBOL: dict[Rank, str] = {
    Rank.ACE: N_("A"),
    Rank.TWO: "2",
    Rank.THREE: "3",
    Rank.FOUR: "4",
    Rank.FIVE: "5",
    Rank.SIX: "6",
    Rank.SEVEN: "7",
    Rank.EIGHT: "8",
    Rank.NINE: "9",
    Rank.TEN: "10",
    Rank.JACK: N_("J"),
    Rank.QUEEN: N_("Q"),
    Rank.KING: N_("K"),
    Rank.JOKER: N_("★"),
}


def claim_phrase(tr: Translator, count: int, rank: Rank) -> str:
    """ "two 7s", «две дамы», «пять дам»."""
    if 1 <= count <= 4:
        return tr._(CLAIM_WORDS[rank][count - 1])
    singular, plural = CLAIM_MANY[rank]
    return tr.ngettext(singular, plural, count).format(count=count)


def rank_plural(tr: Translator, rank: Rank) -> str:
    return tr._(RANK_PLURAL[rank])


def rank_symbol(tr: Translator, rank: Rank) -> str:
    known = _SYMBOLS.get((tr.catalog, rank))
    if known is None:
        symbol = RANK_SYMBOL[rank]
        known = tr._(symbol) if rank in _TRANSLATED_SYMBOLS else symbol
        _SYMBOLS[tr.catalog, rank] = known
    return known


#: Rank symbols by language, looked up once: a hand keyboard shows a dozen of them.
#: Keyed by the catalog itself, not its language's name: two translators of one language with
#: other catalogs (a test's marking one) must not share symbols.
_SYMBOLS: dict[tuple[gettext.NullTranslations, Rank], str] = {}


_TRANSLATED_SYMBOLS = frozenset({Rank.ACE, Rank.JACK, Rank.QUEEN, Rank.KING, Rank.JOKER})
