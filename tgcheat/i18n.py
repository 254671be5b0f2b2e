"""Translations: gettext catalogs read from ``locales/<lang>/LC_MESSAGES/tgcheat.po``.

The .po files are compiled in memory at start-up (Babel), so a fresh checkout needs no
compiled files. A ``Translator`` is a value handed to each view call; there is no global
"current language", so two languages can be rendered side by side (a group in French, a
player in Russian).

A catalog's directory is its language as gettext names it: ``ru``, or a language with its
region (``pt_BR``) where the region's usage is the one written. Telegram's ``language_code``
(an IETF tag: ``pt-br``, ``uk-UA``, ``pt``) is matched to it by ``normalize``.
"""

from __future__ import annotations

import gettext
import io
import os
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from babel import Locale, UnknownLocaleError
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

DOMAIN = "tgcheat"
DEFAULT_LANGUAGE = "en"
LOCALES_DIR = Path(
    os.environ.get("TGCHEAT_LOCALES_DIR", Path(__file__).resolve().parent.parent / "locales")
)


def N_(message: str) -> str:
    """Marks a string for extraction where it is defined; it is translated where it is shown."""
    return message


@dataclass(frozen=True, slots=True)
class Translator:
    language: str
    catalog: gettext.NullTranslations
    #: Whether the language is written right to left (Arabic): read for every card and line
    #: drawn, so worked out once.
    rtl: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "rtl", right_to_left(self.language))

    def _(self, message: str) -> str:
        return self.catalog.gettext(message)

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        return self.catalog.ngettext(singular, plural, n)

    def pgettext(self, context: str, message: str) -> str:
        return self.catalog.pgettext(context, message)

    def npgettext(self, context: str, singular: str, plural: str, n: int) -> str:
        return self.catalog.npgettext(context, singular, plural, n)


@cache
def available_languages() -> tuple[str, ...]:
    """Languages that have a catalog, English first."""
    found = (
        sorted(
            p.name for p in LOCALES_DIR.iterdir() if (p / "LC_MESSAGES" / f"{DOMAIN}.po").is_file()
        )
        if LOCALES_DIR.is_dir()
        else []
    )
    return tuple(sorted(found, key=lambda lang: lang != DEFAULT_LANGUAGE))


@cache
def _load(language: str) -> gettext.NullTranslations:
    po_path = LOCALES_DIR / language / "LC_MESSAGES" / f"{DOMAIN}.po"
    if not po_path.is_file():
        return gettext.NullTranslations()
    with po_path.open("rb") as po_file:
        catalog = read_po(po_file, locale=language)
    buffer = io.BytesIO()
    write_mo(buffer, catalog, use_fuzzy=False)
    buffer.seek(0)
    return gettext.GNUTranslations(buffer)


def load_all() -> None:
    """Compile every catalog once, at start-up, so no request pays for it."""
    for language in available_languages():
        _load(language)


def normalize(language_code: str | None) -> str:
    """Telegram's ``language_code`` (an IETF tag such as ``pt-br``), or a catalog's own name
    (``pt_BR``), to one of our catalogs, else English: the catalog of that language and
    region, else of the language alone, else of the language in another region (``pt`` and
    ``pt-PT`` are read in ``pt_BR``)."""
    if not language_code:
        return DEFAULT_LANGUAGE
    return _catalog_for(language_code.replace("_", "-").lower())


@cache
def _catalog_for(tag: str) -> str:
    language, _, rest = tag.partition("-")
    region = rest.split("-")[0].upper()
    found = available_languages()
    for wanted in (f"{language}_{region}" if region else None, language):
        if wanted in found:
            return wanted
    return next((lang for lang in found if lang.startswith(f"{language}_")), DEFAULT_LANGUAGE)


def telegram_code(language: str) -> str:
    """The two-letter code Telegram takes for a language's command menu (``setMyCommands``
    accepts ISO 639-1 only): ``pt_BR`` is ``pt``."""
    return language.split("_")[0]


@cache
def right_to_left(language: str) -> bool:
    try:
        return bool(Locale.parse(language).character_order == "right-to-left")
    except (ValueError, UnknownLocaleError):
        return False


def translator(language: str | None) -> Translator:
    return _translator_of(normalize(language))


@cache
def _translator_of(language: str) -> Translator:
    """One translator per catalog: every message drawn asks for its reader's."""
    return Translator(language, _load(language))
