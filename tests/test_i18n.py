"""The catalogs: complete, up to date with the code, placeholders, HTML tags and plural forms
right (as many forms as CLDR gives the language, and the standard gettext Plural-Forms), accepted
by ``msgfmt --check``, Telegram HTML accepted, Russian numerals agreeing with their nouns, pop-ups
and buttons short, Telegram's language tags matched to them, and Arabic reading right to left.

Every language found in ``locales/`` is checked; the ones the bot ships are listed in
``SHIPPED`` so that losing a catalog fails too.
"""

from __future__ import annotations

import ast
import gettext
import importlib.util
import re
import shutil
import string
import subprocess
import unicodedata
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest
from babel import Locale
from babel.messages.catalog import Catalog, Message
from babel.messages.plurals import get_plural
from babel.messages.pofile import read_po

from tests.support.fake_telegram import check_telegram_html
from tgcheat.bot import settings_texts, views
from tgcheat.bot.callbacks import MAX_CALLBACK_BYTES, LanguagePress, parse
from tgcheat.bot.texts import CLAIM_MANY, CLAIM_WORDS, RANK_SYMBOL, claim_phrase
from tgcheat.engine.cards import CLAIMABLE_RANKS, Rank
from tgcheat.engine.rules import OPTION_VALUES
from tgcheat.i18n import (
    LOCALES_DIR,
    available_languages,
    normalize,
    right_to_left,
    telegram_code,
    translator,
)

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "locales" / "tgcheat.pot"
BOT_SOURCES = ROOT / "tgcheat" / "bot"
SHIPPED = ("en", "ru", "es", "fr", "it", "nl", "de", "uk", "pt_BR", "pl", "tr", "id", "ar")
LANGUAGES = sorted(set(SHIPPED) | set(available_languages()))
TRANSLATED = [lang for lang in LANGUAGES if lang != "en"]

#: Telegram shows at most 200 characters in a callback query's answer (a pop-up).
POPUP_LIMIT = 200
#: A button that shares a phone's keyboard row with others.
BUTTON_LIMIT = 24
#: The most cards one play may hold ("any number" lets a whole hand go: 52 cards, 2 decks).
MOST_CARDS_IN_A_PLAY = 13

#: Placeholders that hold the number a plural message counts.
COUNT_PLACEHOLDERS = frozenset({"count", "most", "games", "n", "plays", "minutes", "seconds"})
#: CLDR plural categories, in the order gettext numbers the forms.
_CATEGORY_ORDER = ("zero", "one", "two", "few", "many", "other")
#: Counts a game can show: cards, plays, games, seconds.
_GAME_COUNTS = range(0, 1001)


class Samples(dict[str, object]):
    """Sample values for every placeholder: known names get realistic ones, others "X"."""

    def __missing__(self, key: str) -> object:
        return "X"


SAMPLES = Samples(
    name="Ann",
    names="Ann, Bob",
    challenger="Ann",
    claimant="Bob",
    group="Friday club",
    count=2,
    most=4,
    least=3,
    pile="12",
    claim="2 × 7",
    rank="7",
    cards="7♣ K♦",
    plays=300,
    place=2,
    rules="cheat",
    presets="cheat, verju, free",
    games=3,
    score=5,
    n=3,
    minutes=3,
    seconds=10,
)


@cache
def template() -> Catalog:
    with TEMPLATE.open("rb") as po_file:
        return read_po(po_file)


@cache
def catalog(lang: str) -> Catalog:
    path = LOCALES_DIR / lang / "LC_MESSAGES" / "tgcheat.po"
    assert path.is_file(), f"no catalog for {lang!r} at {path}"
    with path.open("rb") as po_file:
        return read_po(po_file, locale=lang)


def entries(cat: Catalog) -> Iterator[Message]:
    return (message for message in cat if message.id)


def key(message: Message) -> tuple[str | None, tuple[str, ...]]:
    return message.context, ids(message)


def forms(message: Message) -> tuple[str, ...]:
    """The translation: one string, or one per plural form."""
    string_ = message.string
    return tuple(string_) if isinstance(string_, (tuple, list)) else (string_ or "",)


def ids(message: Message) -> tuple[str, ...]:
    """The msgid, with the plural msgid for a plural message."""
    return tuple(message.id) if isinstance(message.id, (tuple, list)) else (message.id,)


def placeholders(text: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(text) if field is not None}


@cache
def single_number_forms(lang: str) -> frozenset[int]:
    """The plural forms that only one number takes (Arabic's forms for 0, 1 and 2; not
    Russian's "one", which 21 takes too). There the words say the number, as Arabic's dual
    does ("ورقتان": two cards, "2 ورقتان" being wrong), and the numeral may be left out:
    msgfmt --check allows it for the same forms."""
    cat = catalog(lang)
    choose = gettext.c2py(cat.plural_expr)
    numbers: dict[int, set[int]] = {}
    for n in _GAME_COUNTS:
        numbers.setdefault(choose(n), set()).add(n)
    return frozenset(form for form, counts in numbers.items() if len(counts) == 1)


def kept(lang: str, message: Message, index: int, found: set[str], wanted: set[str]) -> bool:
    """Whether a form keeps the msgid's placeholders: all of them, or all but the number in a
    form only one number takes."""
    if found == wanted:
        return True
    return (
        message.pluralizable
        and index in single_number_forms(lang)
        and found <= wanted
        and wanted - found <= COUNT_PLACEHOLDERS
    )


def load_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "update_catalogs", ROOT / "tools" / "update_catalogs.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- completeness --------------------------------------------------------------------------


def test_every_shipped_language_has_a_catalog() -> None:
    missing = [lang for lang in SHIPPED if lang not in available_languages()]
    assert not missing, f"catalogs missing: {missing}"


def test_the_template_is_up_to_date_with_the_code() -> None:
    tool = load_tool()
    extracted = tool.extract()
    in_code = {key(m) for m in entries(extracted)}
    in_template = {key(m) for m in entries(template())}
    assert in_code - in_template == set(), "run python tools/update_catalogs.py"
    assert in_template - in_code == set(), "run python tools/update_catalogs.py"
    # What `python tools/update_catalogs.py --check` checks: the template as extraction
    # writes it, order and source files too; every catalog merged with it and translated.
    assert tool.template_is_current(), "run python tools/update_catalogs.py"
    assert tool.check(extracted, tool.render(extracted)) == []
    assert tool.main(["--check"]) == 0


@pytest.mark.parametrize("lang", LANGUAGES)
def test_catalog_has_every_template_message_translated(lang: str) -> None:
    cat = catalog(lang)
    wanted = {key(m) for m in entries(template())}
    present = {key(m) for m in entries(cat)}
    assert wanted - present == set(), f"{lang}: not merged, run python tools/update_catalogs.py"
    assert present - wanted == set(), f"{lang}: messages the code no longer has"
    assert not cat.obsolete, f"{lang}: obsolete entries"
    problems = []
    for message in entries(cat):
        if message.fuzzy:
            problems.append(f"fuzzy: {message.id!r}")
        if not all(form.strip() for form in forms(message)):
            problems.append(f"empty: {message.id!r}")
    assert not problems, f"{lang}:\n" + "\n".join(problems)


#: Msgids a language may keep as they are: words it writes like English.
SAME_AS_ENGLISH: dict[str, set[str]] = {
    "fr": {"Jokers", "jokers", "Match", "Marathon", "Champion", "Bronze"},
    "nl": {
        "Jokers",
        "jokers",
        "Comeback",
        "Marathon",
    },
    "es": {"normal"},
    "de": {"Comeback", "Marathon", "Paranoid", "Veteran", "Champion", "Gold", "Bronze"},
    "id": {"Paranoid", "Veteran", "Platinum"},
    "pt_BR": {"Bronze"},
}
_FIELD = re.compile(r"\{[^{}]*\}|<[^>]+>|/[a-z_]+")


def english_words(text: str) -> list[str]:
    """The words of a msgid outside its placeholders, tags and /commands (four letters or
    more: rank letters, "OK" and the like are the same everywhere)."""
    return re.findall(r"[A-Za-z]{4,}", _FIELD.sub(" ", text))


@pytest.mark.parametrize("lang", TRANSLATED)
def test_no_translation_is_a_copy_of_the_english(lang: str) -> None:
    """A message merged without a translation once got its English text as one: every
    msgstr equal to its msgid is flagged when the msgid has English words in it."""
    allowed = SAME_AS_ENGLISH.get(lang, set())
    copies = [
        form
        for message in entries(catalog(lang))
        for form in forms(message)
        if form in ids(message) and form not in allowed and english_words(form)
    ]
    assert not copies, f"{lang}: English left as a translation: {copies}"


def test_the_copy_check_sees_words_not_placeholders() -> None:
    assert english_words("⏰ {name} left the game.") == ["left", "game"]
    assert english_words("{place}. {name} · {cards}") == []
    assert english_words("<b>{name}</b>: {score}") == []


# --- placeholders ----------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGUAGES)
def test_placeholders_are_kept(lang: str) -> None:
    problems = []
    for message in entries(catalog(lang)):
        wanted = set().union(*(placeholders(text) for text in ids(message)))
        for index, form in enumerate(forms(message)):
            try:
                found = placeholders(form)
                form.format_map(SAMPLES)
            except (ValueError, IndexError, KeyError, AttributeError) as error:
                problems.append(f"{message.id!r}: {form!r} does not format: {error}")
                continue
            if not kept(lang, message, index, found, wanted):
                problems.append(f"{message.id!r}: {form!r} has {found or '{}'}, not {wanted}")
    assert not problems, f"{lang}:\n" + "\n".join(problems)


def test_placeholder_check_catches_a_lost_placeholder() -> None:
    assert placeholders("{name} takes {count}") != placeholders("{name} prend")
    assert placeholders("{count} карт") == placeholders("{count} cards")
    # Arabic's dual says "two" itself; Russian's "one" form is 21's too and keeps its number.
    assert single_number_forms("ar") == {0, 1, 2}
    assert single_number_forms("ru") == set()
    dual = next(m for m in entries(catalog("ar")) if m.id == ("{count} card", "{count} cards"))
    assert kept("ar", dual, 2, set(), {"count"})
    assert not kept("ar", dual, 3, set(), {"count"})


_TAG = re.compile(r"</?[a-z]+[^>]*>")


def tags(text: str) -> list[str]:
    return sorted(_TAG.findall(text))


@pytest.mark.parametrize("lang", LANGUAGES)
def test_html_tags_are_kept(lang: str) -> None:
    """A translation carries the HTML of its English text, tag for tag: a bold button name
    stays bold, and no tag is added that the code does not expect."""
    problems = [
        f"{message.id!r}: {form!r}"
        for message in entries(catalog(lang))
        for form in forms(message)
        if tags(form) != tags(ids(message)[-1])
    ]
    assert not problems, f"{lang}:\n" + "\n".join(problems)


def test_the_tag_check_catches_a_lost_tag() -> None:
    assert tags("Tap <b>Join</b>") != tags("Appuie sur Rejoindre")
    assert tags("Tap <b>Join</b>") == tags("Натисни <b>Приєднатися</b>")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_babel_finds_no_problem_in_the_catalog(lang: str) -> None:
    """Babel's own checks: python-format placeholders and the number of plural forms."""
    problems = [
        f"{message.id!r}: {error}" for message, errors in catalog(lang).check() for error in errors
    ]
    assert not problems, f"{lang}:\n" + "\n".join(problems)


MSGFMT = shutil.which("msgfmt")


@pytest.mark.skipif(MSGFMT is None, reason="gettext's msgfmt is not installed")
@pytest.mark.parametrize("lang", LANGUAGES)
def test_msgfmt_accepts_the_catalog(lang: str) -> None:
    """``msgfmt --check`` (GNU gettext): header, plural forms and formats, and with
    ``--statistics`` nothing fuzzy or untranslated."""
    assert MSGFMT is not None
    path = LOCALES_DIR / lang / "LC_MESSAGES" / "tgcheat.po"
    done = subprocess.run(
        [MSGFMT, "--check", "--statistics", "-o", "/dev/null", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    wanted = len(list(entries(template())))
    assert done.stderr.strip().endswith(f"{wanted} translated messages."), done.stderr


# --- plural forms ----------------------------------------------------------------------------


def cldr_categories(lang: str) -> list[str]:
    """The CLDR plural categories a count in a game can fall into, in gettext's order."""
    rule = Locale.parse(lang).plural_form
    found = {rule(n) for n in _GAME_COUNTS}
    return [category for category in _CATEGORY_ORDER if category in found]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_plural_header_fits_the_language(lang: str) -> None:
    cat = catalog(lang)
    categories = cldr_categories(lang)
    assert cat.num_plurals == len(categories), (
        f"{lang}: nplurals={cat.num_plurals}, but counts fall into {categories} (CLDR)"
    )
    plural = gettext.c2py(cat.plural_expr)
    rule = Locale.parse(lang).plural_form
    wrong = [n for n in _GAME_COUNTS if categories[plural(n)] != rule(n)]
    assert not wrong, f"{lang}: Plural-Forms picks the wrong form for {wrong[:10]}"


def test_russian_has_three_plural_forms() -> None:
    assert catalog("ru").num_plurals == 3 == get_plural("ru").num_plurals


#: What CLDR gives each language for the counts of a game, and the Plural-Forms gettext's own
#: documentation writes for it.
PLURAL_FORMS = {
    "uk": "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && "
    "(n%100<10 || n%100>=20) ? 1 : 2);",
    "pl": "nplurals=3; plural=(n==1 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);",
    "pt_BR": "nplurals=2; plural=(n > 1);",
    "tr": "nplurals=2; plural=(n != 1);",
    "id": "nplurals=1; plural=0;",
    "ar": "nplurals=6; plural=(n==0 ? 0 : n==1 ? 1 : n==2 ? 2 : n%100>=3 && n%100<=10 ? 3 : "
    "n%100>=11 ? 4 : 5);",
}


@pytest.mark.parametrize("lang", sorted(PLURAL_FORMS))
def test_new_languages_have_the_standard_plural_forms(lang: str) -> None:
    header = PLURAL_FORMS[lang]
    cat = catalog(lang)
    assert f"nplurals={cat.num_plurals}; plural={cat.plural_expr};" == header
    assert cat.num_plurals == len(cldr_categories(lang))


@pytest.mark.parametrize("lang", LANGUAGES)
def test_plural_entries_have_every_form_and_render(lang: str) -> None:
    cat = catalog(lang)
    tr = translator(lang)
    assert tr.language == lang
    problems = []
    for message in entries(cat):
        if not message.pluralizable:
            continue
        if len(forms(message)) != cat.num_plurals:
            problems.append(f"{message.id!r}: {len(forms(message))} forms")
        singular, plural = message.id[0], message.id[1]
        counted = placeholders(plural) & COUNT_PLACEHOLDERS
        choose = gettext.c2py(cat.plural_expr)
        for n in range(31):
            values = Samples(SAMPLES, **dict.fromkeys(COUNT_PLACEHOLDERS, n))
            text = tr.ngettext(singular, plural, n).format_map(values)
            if not text.strip():
                problems.append(f"{message.id!r} for {n}: empty")
            elif counted and str(n) not in text and choose(n) not in single_number_forms(lang):
                problems.append(f"{message.id!r} for {n}: the number is lost in {text!r}")
    assert not problems, f"{lang}:\n" + "\n".join(problems)


def test_plural_forms_are_the_languages_own() -> None:
    """Spot checks of the forms gettext picks (French counts 0 as singular; Russian has
    one/few/many)."""
    assert translator("fr").ngettext("{count} card", "{count} cards", 0) == "{count} carte"
    assert translator("de").ngettext("{count} card", "{count} cards", 0) == "{count} Karten"
    ru = translator("ru")
    got = {n: ru.ngettext("{count} card", "{count} cards", n) for n in (1, 2, 5, 11, 21, 22, 25)}
    assert got == {
        1: "{count} карта",
        2: "{count} карты",
        5: "{count} карт",
        11: "{count} карт",
        21: "{count} карта",
        22: "{count} карты",
        25: "{count} карт",
    }


def cards_in(lang: str, *counts: int) -> dict[int, str]:
    tr = translator(lang)
    return {n: tr.ngettext("{count} card", "{count} cards", n).format(count=n) for n in counts}


def test_new_languages_count_cards_as_their_speakers_do() -> None:
    """Ukrainian one/few/many like Russian; Polish 21 takes the "many" form; Brazilian
    Portuguese counts 0 as singular; Turkish and Indonesian keep the noun singular after a
    number; Arabic has a form for 0, 1, 2, 3–10, 11–99 and 100–102."""
    assert cards_in("uk", 1, 3, 5, 21, 112) == {
        1: "1 карта",
        3: "3 карти",
        5: "5 карт",
        21: "21 карта",
        112: "112 карт",
    }
    assert cards_in("pl", 1, 2, 5, 21, 22) == {
        1: "1 karta",
        2: "2 karty",
        5: "5 kart",
        21: "21 kart",
        22: "22 karty",
    }
    assert cards_in("pt_BR", 0, 1, 2) == {0: "0 carta", 1: "1 carta", 2: "2 cartas"}
    # An empty pile or hand has words of its own: "0 cartas" as Brazilians write it.
    assert views.count_cards(translator("pt_BR"), 0) == "0 cartas"
    assert views.count_cards(translator("fr"), 0) == "0 carte"
    assert cards_in("tr", 1, 13) == {1: "1 kart", 13: "13 kart"}
    assert cards_in("id", 1, 13) == {1: "1 kartu", 13: "13 kartu"}
    assert cards_in("ar", 0, 1, 2, 3, 10, 11, 99, 100, 102, 103) == {
        0: "0 ورقة",
        1: "ورقة واحدة",
        2: "ورقتان",
        3: "3 أوراق",
        10: "10 أوراق",
        11: "11 ورقة",
        99: "99 ورقة",
        100: "100 ورقة",
        102: "102 ورقة",
        103: "103 أوراق",
    }


# --- Telegram's language tags ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("language_code", "catalog_name"),
    [
        ("pt-br", "pt_BR"),
        ("pt-BR", "pt_BR"),
        ("pt", "pt_BR"),
        ("pt-PT", "pt_BR"),
        ("pt_BR", "pt_BR"),
        ("uk", "uk"),
        ("uk-UA", "uk"),
        ("pl", "pl"),
        ("tr-TR", "tr"),
        ("id", "id"),
        ("ar", "ar"),
        ("ar-EG", "ar"),
        ("ru-RU", "ru"),
        ("en-GB", "en"),
        ("zh-hans", "en"),
        ("", "en"),
        (None, "en"),
    ],
)
def test_telegram_language_codes_find_their_catalog(
    language_code: str | None, catalog_name: str
) -> None:
    assert normalize(language_code) == catalog_name
    assert translator(language_code).language == catalog_name


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_language_button_fits_telegram_callback_data(lang: str) -> None:
    """The longest chat id Telegram gives a group, with the language's catalog name."""
    for chat_id in (-1009999999999999, 9999999999):
        data = LanguagePress(chat_id, lang).encode()
        assert len(data.encode()) <= MAX_CALLBACK_BYTES
        assert parse(data) == LanguagePress(chat_id, lang)


def test_every_catalog_has_a_two_letter_code_for_the_command_menu() -> None:
    codes = [telegram_code(lang) for lang in available_languages()]
    assert telegram_code("pt_BR") == "pt"
    assert all(re.fullmatch("[a-z]{2}", code) for code in codes), codes
    assert len(set(codes)) == len(codes), "two catalogs would share a menu"


# --- right to left -----------------------------------------------------------------------------

RTL_LANGUAGES = [lang for lang in LANGUAGES if right_to_left(lang)]
_NOT_WORDS = re.compile(r"\{[^{}]*\}|<[^>]+>|/[a-z_]+")


def first_strong(text: str) -> str | None:
    """The bidirectional class of the first letter that sets a direction ("L", "R", "AL")."""
    for char in text:
        kind = unicodedata.bidirectional(char)
        if kind in ("L", "R", "AL"):
            return kind
    return None


def test_arabic_is_the_right_to_left_language() -> None:
    assert RTL_LANGUAGES == ["ar"]
    assert translator("ar").rtl and not translator("he").rtl and not translator("en").rtl


@pytest.mark.parametrize("lang", RTL_LANGUAGES)
def test_right_to_left_texts_begin_right_to_left(lang: str) -> None:
    """Every translation with words of its own begins with a right-to-left letter, so that a
    pop-up or a button reads right to left with no mark added; only the card symbols (Latin
    letters, as printed on the cards) do not."""
    symbols = set(RANK_SYMBOL.values())
    problems = [
        f"{message.id!r}: {form!r}"
        for message in entries(catalog(lang))
        if message.id not in symbols
        for form in forms(message)
        if first_strong(_NOT_WORDS.sub(" ", form)) not in (None, "R", "AL")
    ]
    assert not problems, f"{lang}:\n" + "\n".join(problems)


# --- Telegram HTML ---------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGUAGES)
def test_translations_are_html_telegram_accepts(lang: str) -> None:
    problems = []
    for message in entries(catalog(lang)):
        for form in forms(message):
            found = check_telegram_html(form.format_map(SAMPLES))
            if found:
                problems.append(f"{form!r}: {found}")
    assert not problems, f"{lang}:\n" + "\n".join(problems)


def test_html_check_catches_broken_markup() -> None:
    assert check_telegram_html("<b>Menteur !</b> & co")
    assert check_telegram_html("<b>Dubito!")
    assert not check_telegram_html("<b>Dubito!</b> &amp; co")


# --- Russian numerals agree with their nouns ---------------------------------------------------

RUSSIAN_CLAIMS = {
    (1, Rank.QUEEN): "одна дама",
    (2, Rank.QUEEN): "две дамы",
    (4, Rank.QUEEN): "четыре дамы",
    (5, Rank.QUEEN): "5 дам",
    (11, Rank.QUEEN): "11 дам",
    (21, Rank.QUEEN): "21 дама",
    (22, Rank.QUEEN): "22 дамы",
    (1, Rank.KING): "один король",
    (2, Rank.KING): "два короля",
    (3, Rank.KING): "три короля",
    (5, Rank.KING): "5 королей",
    (1, Rank.SEVEN): "одна семёрка",
    (2, Rank.SEVEN): "две семёрки",
    (5, Rank.SEVEN): "5 семёрок",
    (1, Rank.ACE): "один туз",
    (2, Rank.ACE): "два туза",
    (6, Rank.ACE): "6 тузов",
    (2, Rank.JACK): "два валета",
    (2, Rank.TEN): "две десятки",
}


@pytest.mark.parametrize(("count", "rank"), list(RUSSIAN_CLAIMS))
def test_russian_claims_are_grammatical(count: int, rank: Rank) -> None:
    assert claim_phrase(translator("ru"), count, rank) == RUSSIAN_CLAIMS[count, rank]


@pytest.mark.parametrize("lang", TRANSLATED)
def test_every_claim_is_translated(lang: str) -> None:
    tr = translator(lang)
    english = translator("en")
    same = [
        (count, rank)
        for rank in CLAIMABLE_RANKS
        for count in range(1, 8)
        if claim_phrase(tr, count, rank) == claim_phrase(english, count, rank)
    ]
    assert not same, f"{lang}: claims left in English: {same}"
    assert all(len(words) == 4 for words in CLAIM_WORDS.values())
    assert set(CLAIM_MANY) == set(CLAIM_WORDS) == set(CLAIMABLE_RANKS)


# --- pop-ups and buttons -----------------------------------------------------------------------


def _constant(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _call_name(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _marked(node: ast.AST | None, constants: dict[str, str]) -> set[str]:
    """Msgids an expression shows: N_("…"), tr._("…"), tr._("…").format(…), NAME = N_("…"),
    and both branches of a conditional."""
    if node is None:
        return set()
    if isinstance(node, ast.IfExp):
        return _marked(node.body, constants) | _marked(node.orelse, constants)
    if isinstance(node, ast.Name) and node.id in constants:
        return {constants[node.id]}
    if isinstance(node, ast.Call):
        name = _call_name(node)
        if name in ("N_", "_") and node.args and (text := _constant(node.args[0])) is not None:
            return {text}
        if name == "format" and isinstance(node.func, ast.Attribute):
            return _marked(node.func.value, constants)
    return set()


def _module_constants(tree: ast.Module) -> dict[str, str]:
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            marked = _marked(node.value, {})
            if isinstance(target, ast.Name) and len(marked) == 1:
                found[target.id] = marked.pop()
    return found


@cache
def popup_msgids() -> frozenset[str]:
    """Every text the bot may show in a pop-up (a callback query's answer): refusals, the
    handlers' ``Answer`` texts and ``answer=`` texts, and rule problems."""
    found = set(views.REFUSALS.values()) | set(settings_texts.RULES_PROBLEMS.values())
    for path in sorted(BOT_SOURCES.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        constants = _module_constants(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = _call_name(node)
            if name == "Answer" and node.args:
                found |= _marked(node.args[0], constants)
            if name == "answer" and len(node.args) > 1:
                found |= _marked(node.args[1], constants)
            for keyword in node.keywords:
                if keyword.arg == "answer":
                    found |= _marked(keyword.value, constants)
    return frozenset(found)


BUTTON_CALLS = ("button", "InlineKeyboardButton")


@cache
def button_msgids() -> frozenset[str]:
    """Msgids shown as a button label: the first argument of ``button`` (or of
    ``InlineKeyboardButton``), or a variable assigned in the same function just for it."""
    found: set[str] = set()
    for path in sorted(BOT_SOURCES.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        constants = _module_constants(tree)
        for function in ast.walk(tree):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            assigned: dict[str, set[str]] = {}
            for node in ast.walk(function):
                if isinstance(node, ast.Assign):
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            assigned.setdefault(target.id, set()).update(
                                _marked(node.value, constants)
                            )
            for node in ast.walk(function):
                if isinstance(node, ast.Call) and _call_name(node) in BUTTON_CALLS:
                    label = node.args[0] if node.args else None
                    if isinstance(label, ast.Name):
                        found |= assigned.get(label.id, set())
                    else:
                        found |= _marked(label, constants)
    return frozenset(found)


def test_the_collectors_find_popups_and_buttons() -> None:
    popups, buttons = popup_msgids(), button_msgids()
    assert {"This button is out of date.", "You believe it.", "It is not your turn."} <= popups
    assert {"❗ Cheat!", "✅ I believe you", "▶️ Play: {claim}", "🃏 My cards"} <= buttons
    known = {m.id for m in entries(template())}
    assert popups <= known
    assert buttons <= known


@pytest.mark.parametrize("lang", LANGUAGES)
def test_popups_fit_telegram(lang: str) -> None:
    tr = translator(lang)
    too_long = {
        msgid: text
        for msgid in popup_msgids()
        if len(text := tr._(msgid).format_map(SAMPLES)) > POPUP_LIMIT
    }
    assert not too_long, f"{lang}: pop-ups over {POPUP_LIMIT} characters: {too_long}"


def longest_claim(lang: str) -> str:
    tr = translator(lang)
    claims = (
        claim_phrase(tr, count, rank)
        for rank in CLAIMABLE_RANKS
        for count in range(1, MOST_CARDS_IN_A_PLAY + 1)
    )
    return max(claims, key=len)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_buttons_are_short(lang: str) -> None:
    tr = translator(lang)
    values = Samples(SAMPLES, claim=longest_claim(lang))
    too_long = {
        msgid: label
        for msgid in button_msgids()
        if len(label := tr._(msgid).format_map(values)) > BUTTON_LIMIT
    }
    assert not too_long, f"{lang}: button labels over {BUTTON_LIMIT} characters: {too_long}"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_presets_fit_their_row(lang: str) -> None:
    """Each preset has a row of its own in the settings menu, and its name fits there."""
    tr = translator(lang)
    too_long = [
        label
        for msgid in settings_texts.PRESET_TEXTS.values()
        if len(label := tr._(msgid)) > BUTTON_LIMIT
    ]
    assert not too_long, f"{lang}: {too_long}"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_option_values_fit_a_row(lang: str) -> None:
    """An option's menu shows its values two to a row when each fits half a phone, else one
    to a row (``views.option_view``; tests/test_views_i18n.py measures the rows drawn): each
    value, the current one ticked, fits a row of its own."""
    tr = translator(lang)
    too_long = [
        label
        for option, values in OPTION_VALUES.items()
        for value in values
        if views.label_width(label := "✅ " + settings_texts.value_text(tr, option, value))
        > views.ROW_WIDTH[1]
    ]
    assert not too_long, f"{lang}: {too_long}"


#: The playing card back (U+1F0A0): many Android fonts draw it as an empty box.
CARD_BACK = "\U0001f0a0"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_card_back_emoji(lang: str) -> None:
    shown = [form for message in entries(catalog(lang)) for form in forms(message)]
    assert [text for text in shown if CARD_BACK in text] == []


def test_the_direction_check_sees_the_first_letter_outside_placeholders() -> None:
    assert first_strong(_NOT_WORDS.sub(" ", "{name} يأخذ الكومة")) == "AL"
    assert first_strong(_NOT_WORDS.sub(" ", "<b>{name}</b> takes يأخذ")) == "L"
    assert first_strong(_NOT_WORDS.sub(" ", "/rules · {rules}")) is None
