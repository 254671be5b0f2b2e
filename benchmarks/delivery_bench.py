"""Delivery's cost and pace, today's code beside a baseline commit's, in one run.

    python benchmarks/delivery_bench.py [--baseline 1c3aae7] [--games 4] [--seed 1] [--json]

Two figures, each measured by a child process that imports the code of one checkout (today's
tree, and the baseline commit checked out in a throwaway ``git worktree``), both with the same
games (the same seed):

- **Redis round trips per press** (each write of commands to a connection's socket, as
  ``tests/store/roundtrips.py`` counts them) for a Play, a Cheat! call and a card pick, with
  the defaults (the group's budget of 20 messages a minute and the bot's of 30 a second) and
  with both budgets off. Games of four computer-chosen moves are played through real update
  JSON against the offline Bot API of the tests; taps come two seconds apart on a virtual
  clock, the game clock looking once a second between them (not counted: it is no press).
- **A fast group** (``--fast``, the defaults on): a tap every half second across the table,
  far over the group's 20 messages a minute. It prints the longest time the live table (the
  message with the game's buttons) was not the group's last message, whether every reveal
  was posted (as many reveal messages as calls), and whether every last play to answer came
  as a new message.

It asserts nothing: it prints the figures side by side, and their ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
#: The last commit before one sync per place replaced the publisher.
DEFAULT_BASELINE = "1c3aae7"
TAP_MS = 2_000
FAST_TAP_MS = 500
#: The table's words for last cards to answer (the players' language is English).
LAST_CARDS = "Last cards!"
START_MS = 1_800_000_000_000
MAX_MOVES = 400


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default=DEFAULT_BASELINE)
    parser.add_argument("--games", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # a child: the checkout to import
    args = parser.parse_args(argv)
    if args.measure:
        sys.path.insert(0, args.measure)
        print(json.dumps(asyncio.run(measure(args.games, args.seed))))
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        baseline = Path(scratch) / "baseline"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(baseline), args.baseline],
            check=True,
            capture_output=True,
        )
        try:
            results = {
                "today": _child(ROOT, args),
                f"baseline {args.baseline}": _child(baseline, args),
            }
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(baseline)],
                check=False,
                capture_output=True,
            )
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        _print(results)
    return 0


def _child(root: Path, args: argparse.Namespace) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).resolve()),
            "--measure",
            str(root),
            "--games",
            str(args.games),
            "--seed",
            str(args.seed),
        ],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
    )
    if out.returncode != 0:
        raise RuntimeError(f"the measurement of {root} failed:\n{out.stderr[-3000:]}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def _print(results: dict[str, dict[str, Any]]) -> None:
    today, (base_name, base) = (
        results["today"],
        next((k, v) for k, v in results.items() if k != "today"),
    )
    print(f"| Redis round trips per press | today | {base_name} | ratio |")
    print("|---|---|---|---|")
    for budgets in ("defaults", "budgets off"):
        for press in ("play", "cheat", "pick"):
            mine, theirs = today[budgets][press], base[budgets][press]
            ratio = f"{mine / theirs:.2f}" if theirs else "-"
            print(f"| {press}, {budgets} | {mine:.2f} | {theirs:.2f} | {ratio} |")
    print()
    print(f"| a fast group (a tap every {FAST_TAP_MS} ms) | today | {base_name} |")
    print("|---|---|---|")
    for key, label in (
        ("longest_table_not_last_s", "longest time the live table was not the last message (s)"),
        ("reveals", "reveal messages / calls"),
        ("final_plays_posted", "last plays posted as a new message / last plays"),
        ("slowest_final_play_s", "longest wait for last cards' new message (s)"),
        ("taps", "taps"),
    ):
        print(f"| {label} | {today['fast'][key]} | {base['fast'][key]} |")


# --- the child: one checkout's figures ---------------------------------------------------------


async def measure(games: int, seed: int) -> dict[str, Any]:
    from tests.support.redis_server import throwaway_redis_server

    with throwaway_redis_server() as url:
        defaults = await _round_trips(url, games, seed, budgets=True)
        off = await _round_trips(url, games, seed, budgets=False)
        fast = await _fast_group(url, seed, games)
    return {"defaults": defaults, "budgets off": off, "fast": fast}


class _Clock:
    def __init__(self) -> None:
        self.now_ms = START_MS

    def __call__(self) -> int:
        return self.now_ms


async def _harness(url: str, *, budgets: bool, clock: _Clock, seed: int) -> Any:
    import redis.asyncio as aioredis

    from tests.bot.conftest import make_harness
    from tests.support.fake_telegram import FakeTelegram

    client = aioredis.from_url(url)
    await client.flushdb()
    fake = FakeTelegram(clock=lambda: clock.now_ms / 1000)
    bot = await make_harness(
        client,
        fake,
        group_messages_per_minute=20 if budgets else 1_000_000,
        send_rate=30 if budgets else 0,
    )
    shell = bot.shell
    shell.clock = clock
    # The same deal for both checkouts.
    shell.rng = random.Random(seed)
    # The baseline's clocks were several; today's read the shell's.
    for owner in (shell.store.sessions, shell.sender, getattr(shell, "publisher", None)):
        if owner is not None and hasattr(owner, "clock"):
            owner.clock = clock
    timers = bot.app.timers
    timers.clock = clock
    return bot, client


async def _tick(bot: Any, clock: _Clock, ms: int) -> None:
    """``ms`` pass, the game clock looking once a second (as a process does)."""
    end = clock.now_ms + ms
    timers = bot.app.timers
    while clock.now_ms < end:
        clock.now_ms = min(end, clock.now_ms + 1_000)
        await timers.fire_due(clock.now_ms)
        held = getattr(timers, "sync_due", None) or timers.refresh_deferred_tables
        await held(clock.now_ms)


async def _open(bot: Any, users: list[Any], clock: _Clock, tap_ms: int) -> None:
    from tests.bot.conftest import GROUP_ID
    from tests.bot.play import has_op
    from tgcheat.bot.callbacks import Op

    bot.fake.set_members(GROUP_ID, [u.id for u in users])
    await bot.command(users[0], "/new")
    for user in users:
        await bot.start_private(user, f"j{GROUP_ID}")
        await _tick(bot, clock, tap_ms)
    await bot.press(users[0], GROUP_ID, has_op(Op.START))
    await _tick(bot, clock, tap_ms)


async def _round_trips(url: str, games: int, seed: int, *, budgets: bool) -> dict[str, float]:
    from tests.bot.conftest import GROUP_ID
    from tests.support.updates import User

    counts: Counter[str] = Counter()
    presses: Counter[str] = Counter()
    for game in range(games):
        clock = _Clock()
        bot, client = await _harness(url, budgets=budgets, clock=clock, seed=seed * 1000 + game)
        users = [User(10 + i, name) for i, name in enumerate(("Ann", "Ben", "Cy", "Di"))]
        try:
            await _open(bot, users, clock, TAP_MS)
            rng = random.Random(seed * 1000 + game)
            for _ in range(MAX_MOVES):
                if not await _move(bot, users, rng, counts, presses, GROUP_ID):
                    break
                await _tick(bot, clock, TAP_MS)
        finally:
            await bot.app.shutdown()
            await client.aclose()
    return {
        kind: round(counts[kind] / presses[kind], 2) if presses[kind] else 0.0
        for kind in ("play", "cheat", "pick")
    }


async def _move(
    bot: Any,
    users: list[Any],
    rng: random.Random,
    counts: Counter[str],
    presses: Counter[str],
    group_id: int,
) -> bool:
    """One move chosen by the engine's computer player, made by the buttons; False when the
    game is over or its button does not show."""
    from redis.asyncio.connection import AbstractConnection

    from tests.bot.play import game_state
    from tests.support.buttons import press_matcher
    from tgcheat.bot.callbacks import Op
    from tgcheat.engine.actions import Accept, Challenge, Play
    from tgcheat.engine.ai import choose_action
    from tgcheat.engine.game import awaited
    from tgcheat.engine.state import Phase

    state = await game_state(bot)
    if state.phase is Phase.FINISHED:
        return False
    seat = sorted(awaited(state))[0]
    action = choose_action(state, seat, rng)
    user = next(u for u in users if u.id == state.players[seat].user_id)
    send = AbstractConnection.send_packed_command

    async def tap(kind: str, chat: int, wanted: Any) -> bool:
        if bot.fake.find_button(chat, press_matcher(wanted)) is None:
            return False
        update = bot.updates.press(bot.fake, user, chat, press_matcher(wanted))
        trips = 0

        async def counted(self: Any, *args: Any, **kwargs: Any) -> None:
            nonlocal trips
            trips += 1
            await send(self, *args, **kwargs)

        AbstractConnection.send_packed_command = counted  # type: ignore[method-assign]
        try:
            await bot.feed(update)
        finally:
            AbstractConnection.send_packed_command = send  # type: ignore[method-assign]
        counts[kind] += trips
        presses[kind] += 1
        return True

    if isinstance(action, Play):
        for card in sorted(action.cards):
            if not await tap(
                "pick", user.id, lambda p, r=card.rank: p.op is Op.PICK and p.rank is r
            ):
                return False
        return await tap("play", user.id, lambda p: p.op is Op.PLAY and p.rank is action.rank)
    if isinstance(action, Challenge):
        return await tap("cheat", group_id, lambda p: p.op is Op.CHALLENGE) or await tap(
            "cheat", user.id, lambda p: p.op is Op.CHALLENGE
        )
    if isinstance(action, Accept):
        return await tap("accept", group_id, lambda p: p.op is Op.ACCEPT) or await tap(
            "accept", user.id, lambda p: p.op is Op.ACCEPT
        )
    return False


async def _fast_group(url: str, seed: int, games: int) -> dict[str, Any]:
    longest_ms = final_plays = final_posted = taps = reveals = challenges = slowest = 0
    for game in range(games):
        figures = await _fast_game(url, seed * 1000 + game)
        longest_ms = max(longest_ms, figures["longest_ms"])
        slowest = max(slowest, figures["slowest_final_ms"])
        final_plays += figures["final_plays"]
        final_posted += figures["final_posted"]
        taps += figures["taps"]
        reveals += figures["reveals"]
        challenges += figures["challenges"]
    return {
        "longest_table_not_last_s": round(longest_ms / 1000, 1),
        "reveals": f"{reveals} / {challenges}",
        "final_plays_posted": f"{final_posted} / {final_plays}",
        "slowest_final_play_s": round(slowest / 1000, 1),
        "taps": taps,
    }


async def _fast_game(url: str, seed: int) -> dict[str, int]:
    from tests.bot.conftest import GROUP_ID
    from tests.bot.play import game_state
    from tests.support.updates import User
    from tgcheat.engine.state import Phase

    clock = _Clock()
    bot, client = await _harness(url, budgets=True, clock=clock, seed=seed)
    users = [User(10 + i, name) for i, name in enumerate(("Ann", "Ben", "Cy", "Di"))]
    counts: Counter[str] = Counter()
    presses: Counter[str] = Counter()
    longest_ms, buried_since = 0, None
    final_plays = final_posted = taps = slowest_final_ms = 0
    final_at: list[int] = []
    try:
        await _open(bot, users, clock, FAST_TAP_MS)
        rng = random.Random(seed)
        for _ in range(MAX_MOVES):
            before = await game_state(bot)
            moved = await _move(bot, users, rng, counts, presses, GROUP_ID)
            if not moved and before.phase is Phase.FINISHED:
                break
            taps += 1
            after = await game_state(bot)
            if after.phase is Phase.FINAL_CHECK and before.phase is not Phase.FINAL_CHECK:
                final_plays += 1
                final_at.append(clock.now_ms)
            await _tick(bot, clock, FAST_TAP_MS)
            posted = sum(LAST_CARDS in str(c.params.get("text", "")) for c in _group_sends(bot))
            while final_posted < min(posted, len(final_at)):
                slowest_final_ms = max(slowest_final_ms, clock.now_ms - final_at[final_posted])
                final_posted += 1
            if _table_is_last(bot, GROUP_ID):
                buried_since = None
            elif buried_since is None:
                buried_since = clock.now_ms
            if buried_since is not None:
                longest_ms = max(longest_ms, clock.now_ms - buried_since)
        # A minute for the clock to show what the group's budget still holds back.
        await _tick(bot, clock, 60_000)
        session, _ = await bot.store.load(GROUP_ID)
        texts = [m.plain_text or "" for m in bot.fake.bot_messages(GROUP_ID, include_deleted=True)]
    finally:
        await bot.app.shutdown()
        await client.aclose()
    return {
        "longest_ms": longest_ms,
        "slowest_final_ms": slowest_final_ms,
        "final_plays": final_plays,
        "final_posted": final_posted,
        "taps": taps,
        "reveals": sum(" calls Cheat on " in text for text in texts),
        # The game's reveals, as its log counts them (the preset has no passes).
        "challenges": session.told.count,
    }


def _group_sends(bot: Any) -> list[Any]:
    from tests.bot.conftest import GROUP_ID

    return [c for c in bot.fake.calls_to("sendMessage") if c.params.get("chat_id") == GROUP_ID]


def _table_is_last(bot: Any, group_id: int) -> bool:
    visible = bot.fake.visible_messages(group_id)
    if not visible:
        return False
    return any("start=h" in str(button.get("url", "")) for button in visible[-1].buttons)


if __name__ == "__main__":
    sys.exit(main())
