"""The bot uses only the public API of python-telegram-bot and redis-py: a private module or
name (any part starting with ``_``) may change or vanish in any release of theirs."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import tgcheat

PACKAGE = Path(tgcheat.__file__).resolve().parent
#: The libraries whose internals are off limits.
LIBRARIES = ("telegram", "redis")


def private_imports(source: str, filename: str) -> Iterator[str]:
    """Each import in the source that names a private module or name of those libraries, as
    ``line: what``. Relative imports are the package's own and never match."""
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Import):
            imported = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            imported = [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        for dotted in imported:
            parts = dotted.split(".")
            if parts[0] in LIBRARIES and any(part.startswith("_") for part in parts):
                yield f"{node.lineno}: {dotted}"


def test_every_import_of_the_libraries_is_public() -> None:
    modules = sorted(PACKAGE.rglob("*.py"))
    assert modules, f"no modules under {PACKAGE}"
    found = [
        f"{path.relative_to(PACKAGE.parent)}:{where}"
        for path in modules
        for where in private_imports(path.read_text(encoding="utf-8"), str(path))
    ]
    assert not found, "private imports:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "source",
    [
        "from telegram.request._requestparameter import RequestParameter",
        "from telegram._utils.types import JSONDict",
        "import telegram._bot",
        "from telegram.request import _requestdata",
        "from redis.asyncio.connection import _Reader",
        "import redis._parsers as parsers",
        "def f():\n    from telegram.ext._application import Application",
    ],
)
def test_a_private_import_is_found(source: str) -> None:
    assert list(private_imports(source, "<case>"))


@pytest.mark.parametrize(
    "source",
    [
        "from telegram.request import BaseRequest, RequestData",
        "import redis.asyncio",
        "from redis.asyncio.connection import ConnectionPool",
        "from ._private import helper",
        "from __future__ import annotations",
        "import _thread",
    ],
)
def test_a_public_or_unrelated_import_passes(source: str) -> None:
    assert not list(private_imports(source, "<case>"))
