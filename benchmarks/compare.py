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
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import bench
from driver import Http

from tests.support.redis_server import free_port


def _server_in(tree: Path, base: type[bench.WebServer]) -> type[bench.WebServer]:
    """A WebServer that runs ``serve_bench.py`` of ``tree``, importing that tree's tgcheat
    (PYTHONPATH comes before the editable install of this one)."""

    class OtherTreeServer(base):  # type: ignore[valid-type,misc]
        def start(self) -> None:
            port = free_port()
            self.url = f"http://127.0.0.1:{port}"
            with open(self.log_path, "wb") as log_file:
                self.process = subprocess.Popen(
                    [
                        sys.executable,
                        str(tree / "benchmarks" / "serve_bench.py"),
                        "--port", str(port),
                        "--redis-url", self.redis_url,
                        "--mode", self.mode,
                        *self.extra,
                    ],
                    cwd=tree,
                    env={**os.environ, "PYTHONPATH": str(tree)},
                    stdin=subprocess.DEVNULL,
                    stdout=log_file,
                    stderr=log_file,
                    start_new_session=True,
                )  # fmt: skip

    return OtherTreeServer


class Comparison(bench.Bench):
    """The two-process phase, with ``tgcheat2`` from the other tree, counting each server."""

    def __init__(self, other: Path, *args: Any) -> None:
        super().__init__(*args)
        self.other = other
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
    original = bench.WebServer
    sizes = bench.QUICK if args.quick else bench.FULL
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="tgcheat-compare-") as tmp:
        comparison = Comparison(other, sizes, Path(tmp), "raw", ("tgcheat_2proc",))

        # Only the second web process comes from the other tree.
        def web_server(mode: str, url: str, workdir: Path, name: str, extra: Any = ()) -> Any:
            kind = _server_in(other, original) if name == "tgcheat2" else original
            return kind(mode, url, workdir, name, extra)

        bench.WebServer = web_server  # type: ignore[misc,assignment]
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                results = asyncio.run(comparison.run())
        finally:
            bench.WebServer = original  # type: ignore[misc]
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
