"""Extract every translatable string from tgcheat/ into locales/tgcheat.pot (Babel) and merge it
into each catalog; the English catalog's translations are its msgids. Messages are located by
file only, not line: an edit that moves a message within its file changes no catalog.

    python tools/update_catalogs.py            # rewrite the template and the catalogs
    python tools/update_catalogs.py --check    # exit 1 if anything is out of date or missing

``--check`` writes nothing and says what is wrong: the template out of date with the code, a
catalog not merged with the template (a message missing, or one the code no longer has), or a
message left untranslated or fuzzy (every form of a plural).
"""

from __future__ import annotations

import argparse
import copy
import io
import sys
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parent.parent
LOCALES = ROOT / "locales"
TEMPLATE = LOCALES / "tgcheat.pot"
KEYWORDS = {**DEFAULT_KEYWORDS, "N_": None, "Nn_": (1, 2), "NC_": ((1, "c"), 2)}


def extract() -> Catalog:
    template = Catalog(project="tgcheat", charset="utf-8", fuzzy=False)
    for filename, lineno, message, comments, context in extract_from_dir(
        str(ROOT / "tgcheat"), method_map=[("**.py", "python")], keywords=KEYWORDS
    ):
        template.add(
            message,
            None,
            [(f"tgcheat/{filename}", lineno)],
            auto_comments=comments,
            context=context,
        )
    return template


def render(catalog: Catalog) -> bytes:
    buffer = io.BytesIO()
    write_po(buffer, catalog, width=100, omit_header=False, sort_output=False, include_lineno=False)
    return buffer.getvalue()


def without_dates(po: bytes) -> bytes:
    dated = (b'"POT-Creation-Date', b'"PO-Revision-Date')
    return b"\n".join(line for line in po.splitlines() if not line.startswith(dated))


def template_is_current(rendered: bytes | None = None) -> bool:
    """Whether locales/tgcheat.pot is what extraction writes now (its dates aside): every
    message, context, plural, comment and source file, in order."""
    if rendered is None:
        rendered = render(extract())
    current = TEMPLATE.read_bytes() if TEMPLATE.exists() else b""
    return without_dates(current) == without_dates(rendered)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    template = extract()
    rendered = render(template)
    if args.check:
        problems = check(template, rendered)
        for problem in problems:
            print(problem)
        return 1 if problems else 0
    _write_if_changed(TEMPLATE, rendered)
    for po_path in catalog_paths():
        if _write_if_changed(po_path, render(merged(po_path, template))):
            print(f"updated {po_path.relative_to(ROOT)}")
    return 0


def catalog_paths() -> list[Path]:
    return sorted(LOCALES.glob("*/LC_MESSAGES/tgcheat.po"))


def merged(po_path: Path, template: Catalog) -> Catalog:
    """A catalog merged with the template: the template's messages, in its order, with the
    catalog's translations; the English catalog's translations are its msgids."""
    language = po_path.parent.parent.name
    with po_path.open("rb") as po_file:
        catalog = read_po(po_file, locale=language)
    # A copy: update() adopts the template's new messages as they are, and filling the
    # English catalog below would otherwise give every later language English texts.
    catalog.update(copy.deepcopy(template), no_fuzzy_matching=True)
    catalog.obsolete.clear()
    if language == "en":
        catalog.fuzzy = False
        for message in catalog:
            if message.id:
                message.string = message.id
                message.flags.discard("fuzzy")
    return catalog


def check(template: Catalog, rendered: bytes) -> list[str]:
    """What ``--check`` finds wrong, one line each; nothing when all is up to date."""
    problems = []
    if not template_is_current(rendered):
        problems.append("locales/tgcheat.pot is out of date: run python tools/update_catalogs.py")
    for po_path in catalog_paths():
        name = po_path.relative_to(ROOT)
        catalog = merged(po_path, template)
        if without_dates(po_path.read_bytes()) != without_dates(render(catalog)):
            problems.append(f"{name} is not merged: run python tools/update_catalogs.py")
        for message in catalog:
            if not message.id:
                continue
            forms = message.string if isinstance(message.string, tuple) else (message.string,)
            if message.fuzzy or not all(forms):
                msgid = message.id[0] if isinstance(message.id, tuple) else message.id
                problems.append(f"{name}: not translated: {msgid!r}")
    return problems


def _write_if_changed(path: Path, rendered: bytes) -> bool:
    """Write a catalog only when more than its dates changed: a run that changes no message
    leaves every file as it was (no churn of dates to merge between branches)."""
    if path.exists() and without_dates(path.read_bytes()) == without_dates(rendered):
        return False
    path.write_bytes(rendered)
    return True


if __name__ == "__main__":
    sys.exit(main())
