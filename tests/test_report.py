"""Figures that are never stale: every table of figures in the docs names the command that
printed it and the commit it ran at, and ``benchmarks/report.py`` (which runs those commands
and rewrites the tables) still runs them."""

from __future__ import annotations

import datetime
import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "report.py"
#: The pages whose tables are figures (the others' tables are settings, commands, series).
FIGURE_PAGES = ("docs/benchmarks.md", "docs/capacity.md")
#: How far above a table its command and commit may be named (lines).
NAMED_WITHIN = 16
#: The reports whose commands run in seconds at tiny sizes: run by the test suite. The others
#: (the webhook under load, the Mini App's streams, delivery beside its baseline commit) start
#: servers or a git worktree and take a minute: ``python benchmarks/report.py --quick`` runs
#: them all.
QUICK_IN_TESTS = ("ai", "stats", "simulate", "send_budget")

_COMMAND = re.compile(r"`(python|tgcheat) [^`]+`")
_COMMIT = re.compile(r"\bcommits? ([0-9a-f]{7,40})\b")
_HEADER = re.compile(
    r"(Printed by `python [^`]+` on \d{4}-\d{2}-\d{2} at commits? [0-9a-f]{7}"
    r"|Not yet printed by `python benchmarks/report.py --only [a-z_]+`)"
)


@pytest.fixture(scope="module")
def report() -> ModuleType:
    spec = importlib.util.spec_from_file_location("report", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _in_history(commit: str) -> bool | None:
    """Whether git knows the commit (None: no git history to ask, e.g. a shallow copy)."""
    try:
        shallow = subprocess.run(
            ["git", "rev-parse", "--is-shallow-repository"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    if shallow != "false":
        return None
    known = subprocess.run(
        ["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=ROOT, capture_output=True
    )
    return known.returncode == 0


def test_every_report_has_a_block_that_names_its_command_and_commit(report: ModuleType) -> None:
    page = (ROOT / "docs" / "benchmarks.md").read_text()
    blocks = report.blocks_of(page)
    assert set(blocks) == {r.name for r in report.REPORTS}
    for name, body in blocks.items():
        header = body.strip().splitlines()[0]
        assert _HEADER.match(header), f"report {name}: {header!r}"
        for commit in _COMMIT.findall(header):
            assert _in_history(commit) in (True, None), f"report {name}: unknown commit {commit}"


@pytest.mark.parametrize("path", FIGURE_PAGES)
def test_every_table_of_figures_names_its_command_and_commit(path: str) -> None:
    """A table inside a report block says it in the block's first line; any other names its
    command (in the table, or in the lines above it) and the commit it ran at (above it)."""
    lines = (ROOT / path).read_text().splitlines()
    in_block = False
    unnamed = []
    for number, line in enumerate(lines):
        if line.startswith("<!-- report:"):
            in_block = True
        elif line.startswith("<!-- /report:"):
            in_block = False
        starts_table = line.startswith("|") and not (number and lines[number - 1].startswith("|"))
        if not starts_table or in_block:
            continue
        end = number
        while end < len(lines) and lines[end].startswith("|"):
            end += 1
        above = "\n".join(lines[max(0, number - NAMED_WITHIN) : number])
        table = "\n".join(lines[number:end])
        if not (_COMMAND.search(above) or _COMMAND.search(table)) or not _COMMIT.search(above):
            unnamed.append(f"{path}:{number + 1}: {line[:60]}")
    assert not unnamed, "tables without their command and commit:\n" + "\n".join(unnamed)


def test_rewrite_replaces_blocks_and_leaves_the_prose(report: ModuleType) -> None:
    page = (
        "# Benchmarks\n\nWhat it means.\n\n<!-- report: ai -->\nold\n<!-- /report: ai -->\n\n"
        "Written by hand.\n"
    )
    ai = report.BY_NAME["ai"]
    body = report.block(
        ai, "| a | b |\n|---|---|\n| 1 | 2 |\nmean 3\n", datetime.date(2026, 1, 2), "abc1234", False
    )
    rewritten = report.rewrite(page, {"ai": body, "stats": "new\n"})
    assert "old" not in rewritten and "Written by hand." in rewritten
    assert rewritten.count("<!-- report: ai -->") == 1
    assert (
        "Printed by `python benchmarks/ai_move.py --games 30` on 2026-01-02 at commit abc1234"
        in rewritten
    )
    assert "| 1 | 2 |" in rewritten and "```text\nmean 3\n```" in rewritten
    # A report with no block yet gets one at the end of the page.
    assert rewritten.rstrip().endswith("new\n<!-- /report: stats -->".rstrip())
    assert report.blocks_of(rewritten)["ai"] == body


def test_the_quick_reports_run(tmp_path: Path) -> None:
    """The commands still run (at tiny sizes), and their blocks name command and commit."""
    page = tmp_path / "benchmarks.md"
    page.write_text("# Benchmarks\n")
    done = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--quick",
            "--write",
            "--page",
            str(page),
            "--only",
            ",".join(QUICK_IN_TESTS),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    written = page.read_text()
    for name in QUICK_IN_TESTS:
        assert f"<!-- report: {name} -->\nPrinted by `python " in written
    assert "| games | send budget |" in written
    assert "invariant violations: 0" in written
