"""Runs the benchmark scripts and writes what they print into docs/benchmarks.md, each block with
its command, the date and the commit that printed it.

    python benchmarks/report.py                  # every report, full sizes (long: see below)
    python benchmarks/report.py --only stats,ai  # some reports only
    python benchmarks/report.py --quick          # tiny sizes, to check that every command runs
    python benchmarks/report.py --list           # the reports and their commands

docs/benchmarks.md holds one block per report, between two markers:

    <!-- report: NAME -->
    Printed by `COMMAND` on DATE at commit COMMIT (`python benchmarks/report.py --only NAME`).
    ...what the command printed: its Markdown tables as they are, other lines as text...
    <!-- /report: NAME -->

A run replaces the blocks of the reports it ran and leaves the rest of the page alone (the
prose around the blocks is written by hand, and says what the figures mean). ``--quick`` runs
each command at tiny sizes and writes nothing unless ``--write`` is given: the build runs it so
that a command that no longer runs fails it (the quickest in ``tests/test_report.py``, which
also checks that every table of figures in the docs names its command and commit; three more in
``.ci/run``; ``delivery`` needs its baseline commit's history).

Full sizes take long on a small machine (``bench``: about 5 minutes; ``send_budget``: about 10;
``delivery``: a few minutes, with a ``git worktree`` of its baseline commit); run them on a
quiet machine, at low priority (``nice -n 19``).
"""

from __future__ import annotations

import argparse
import datetime
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "benchmarks.md"


@dataclass(frozen=True, slots=True)
class Report:
    name: str
    #: The command's arguments after ``python`` (a script of benchmarks/, or ``-m tgcheat``).
    full: tuple[str, ...]
    quick: tuple[str, ...]
    #: Keep only the Markdown tables of what the command prints (its other output is a
    #: profile or raw numbers, for the person who runs it).
    tables_only: bool = False


REPORTS = (
    Report(
        "bench",
        ("benchmarks/bench.py",),
        ("benchmarks/bench.py", "--quick", "--only", "engine,bytes"),
        tables_only=True,
    ),
    Report(
        "requests_per_play",
        ("benchmarks/requests_per_play.py", "--games", "20"),
        ("benchmarks/requests_per_play.py", "--games", "1", "--players", "3"),
    ),
    Report(
        "delivery",
        ("benchmarks/delivery_bench.py", "--games", "8"),
        ("benchmarks/delivery_bench.py", "--games", "1"),
    ),
    Report(
        "send_budget",
        ("benchmarks/send_budget.py", "--games", "50", "200", "--minutes", "2"),
        ("benchmarks/send_budget.py", "--games", "2", "--minutes", "0.1"),
    ),
    Report(
        "miniapp",
        ("benchmarks/miniapp_bench.py", "--plays", "15", "--clients", "200"),
        ("benchmarks/miniapp_bench.py", "--plays", "2", "--clients", "2"),
    ),
    Report(
        "stats",
        ("benchmarks/stats_bench.py", "--games", "2000"),
        ("benchmarks/stats_bench.py", "--games", "20"),
    ),
    Report(
        "ai",
        ("benchmarks/ai_move.py", "--games", "30"),
        ("benchmarks/ai_move.py", "--games", "1"),
    ),
    Report(
        "simulate",
        ("-m", "tgcheat", "simulate", "--players", "4", "--games", "200", "--seed", "1"),
        ("-m", "tgcheat", "simulate", "--players", "4", "--games", "2", "--seed", "1"),
    ),
)
BY_NAME = {report.name: report for report in REPORTS}

_BLOCK = re.compile(
    r"(?P<open><!-- report: (?P<name>[a-z_]+) -->\n)(?P<body>.*?)"
    r"(?P<close><!-- /report: (?P=name) -->)",
    re.DOTALL,
)


def command_line(args: Sequence[str]) -> str:
    return "python " + shlex.join(args)


def commit() -> str:
    """HEAD's short hash, with "+ local changes" when the tree differs from it."""
    head = _git("rev-parse", "--short=7", "HEAD") or "unknown"
    dirty = _git("status", "--porcelain", "--untracked-files=no")
    return f"{head} + local changes" if dirty else head


def _git(*args: str) -> str:
    try:
        done = subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip()


def run(report: Report, quick: bool) -> str:
    """What the report's command prints (its stdout); its failure raises."""
    args = report.quick if quick else report.full
    started = time.monotonic()
    print(f"report: {report.name}: {command_line(args)}", file=sys.stderr, flush=True)
    done = subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"{command_line(args)} failed with status {done.returncode}:\n{done.stderr[-3000:]}"
        )
    print(
        f"report: {report.name}: done in {time.monotonic() - started:.0f} s",
        file=sys.stderr,
        flush=True,
    )
    return done.stdout


def as_markdown(output: str, tables_only: bool) -> str:
    """Markdown tables as they are; the other lines as text in a fence (none with
    ``tables_only``)."""
    parts: list[str] = []
    run_lines: list[str] = []
    in_table = False

    def flush() -> None:
        text = "\n".join(run_lines).strip("\n")
        if text.strip():
            if in_table:
                parts.append(text)
            elif not tables_only:
                parts.append(f"```text\n{text}\n```")
        run_lines.clear()

    for line in output.splitlines():
        is_table = line.startswith("|")
        if is_table != in_table:
            flush()
            in_table = is_table
        run_lines.append(line)
    flush()
    return "\n\n".join(parts)


def block(report: Report, output: str, when: datetime.date, at: str, quick: bool) -> str:
    args = report.quick if quick else report.full
    size = " (tiny sizes: `--quick`)" if quick else ""
    header = (
        f"Printed by `{command_line(args)}` on {when.isoformat()} at commit {at}{size} "
        f"(`python benchmarks/report.py --only {report.name}`)."
    )
    return f"{header}\n\n{as_markdown(output, report.tables_only)}\n"


def rewrite(page: str, blocks: dict[str, str]) -> str:
    """``page`` with the blocks of ``blocks`` replaced; a report without a block on the page
    is added at its end, under its name."""
    seen: set[str] = set()

    def replace(match: re.Match[str]) -> str:
        name = match["name"]
        if name not in blocks:
            return match[0]
        seen.add(name)
        return f"{match['open']}{blocks[name]}{match['close']}"

    page = _BLOCK.sub(replace, page)
    for name, body in blocks.items():
        if name not in seen:
            page = page.rstrip("\n") + (
                f"\n\n## {name}\n\n<!-- report: {name} -->\n{body}<!-- /report: {name} -->\n"
            )
    return page


def blocks_of(page: str) -> dict[str, str]:
    """The report blocks on a page, by name."""
    return {match["name"]: match["body"] for match in _BLOCK.finditer(page)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated report names (see --list)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes; writes nothing")
    parser.add_argument("--write", action="store_true", help="with --quick: write all the same")
    parser.add_argument("--page", type=Path, default=PAGE, help="the page to rewrite")
    parser.add_argument("--list", action="store_true", help="the reports and their commands")
    args = parser.parse_args(argv)
    if args.list:
        for report in REPORTS:
            print(f"{report.name}: {command_line(report.full)}")
        return 0
    names = args.only.split(",") if args.only else [r.name for r in REPORTS]
    unknown = [name for name in names if name not in BY_NAME]
    if unknown:
        parser.error(f"unknown report(s): {', '.join(unknown)}; see --list")
    at, today = commit(), datetime.datetime.now(datetime.UTC).date()
    blocks = {}
    for name in names:
        report = BY_NAME[name]
        blocks[name] = block(report, run(report, args.quick), today, at, args.quick)
    if args.quick and not args.write:
        for body in blocks.values():
            print(body)
        return 0
    page = args.page.read_text() if args.page.exists() else "# Benchmarks\n"
    args.page.write_text(rewrite(page, blocks))
    print(f"report: {args.page} rewritten ({', '.join(names)})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
