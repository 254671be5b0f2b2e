"""Compare this tree's bot with another tree's (a git worktree of an earlier commit): both serve
the same game traffic at the same time, each taking every other game, and each counts its own
CPU time per update.

This machine's speed drifts by a third within seconds, so two runs of ``bench.py`` a minute
apart compare the machine more than the code; two servers measured side by side see the same
machine. Differences under about 3 % are noise (two copies of one tree differ by that much).

    git worktree add /tmp/before <commit>
    python benchmarks/compare.py /tmp/before
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import bench
from driver import Http


class Comparison(bench.Bench):
    """The two-process phase, with ``tgcheat2`` from the other tree, counting each server."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.server_cpu_s = [0.0, 0.0]
        self.server_updates = [0, 0]

    async def _window(
        self, servers: list[bench.WebServer], http: Http, window_s: float, *, last: bool
    ) -> dict[str, Any]:
        window = await super()._window(servers, http, window_s, last=last)
        for index, stats in enumerate(window["stats"]):
            self.server_cpu_s[index] += stats["cpu_s"]
            self.server_updates[index] += sum(kind["updates"] for kind in stats["kinds"].values())
        return window


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("other", type=Path, help="the other tree (e.g. a git worktree)")
    parser.add_argument("--quick", action="store_true", help="a short window")
    args = parser.parse_args(argv)
    other = args.other.resolve()
    if not (other / "benchmarks" / "serve_bench.py").exists():
        parser.error(f"{other} has no benchmarks/serve_bench.py")
    sizes = bench.QUICK if args.quick else bench.FULL
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="tgcheat-compare-") as tmp:
        comparison = Comparison(sizes, Path(tmp), "raw", ("tgcheat_2proc",))

        # Only the second web process comes from the other tree.
        comparison.trees["tgcheat2"] = other
        with contextlib.redirect_stdout(io.StringIO()):
            results = asyncio.run(comparison.run())
    if "errors" in results:
        print(f"failed: {results['errors']}", file=sys.stderr)
        return 1
    mine, theirs = (
        comparison.server_cpu_s[i] / comparison.server_updates[i] * 1000
        if comparison.server_updates[i]
        else 0.0
        for i in range(2)
    )
    seconds = time.perf_counter() - started
    print(f"server CPU per update, the same load at the same time ({seconds:.0f} s):")
    print(f"  this tree   {mine:.3f} ms over {comparison.server_updates[0]:,} updates")
    print(f"  {other}  {theirs:.3f} ms over {comparison.server_updates[1]:,} updates")
    print(f"  this / other: {mine / theirs:.3f}" if theirs else "  (no updates)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
