"""Translations: gettext catalogs read from ``locales/<lang>/LC_MESSAGES/tgcheat.po``.

The .po files are compiled in memory at start-up (Babel), so a fresh checkout needs no
compiled files. A ``Translator`` is a value handed to each view call; there is no global
"current language", so two languages can be rendered side by side (a group in French, a
player in Russian).
"""

from __future__ import annotations

import gettext
import io
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path

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
    """Telegram's ``language_code`` (an IETF tag such as ``pt-br``) to one of our catalogs,
    else English."""
    if language_code:
        base = language_code.replace("_", "-").split("-")[0].lower()
        if base in available_languages():
            return base
    return DEFAULT_LANGUAGE


def translator(language: str | None) -> Translator:
    lang = normalize(language)
    return Translator(lang, _load(lang))
