"""Statistics: /stats (a person's figures in a group, or across groups), /top (a group's
leaderboards) and /forgetme's question. Short lines, for a phone."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from tgcheat.bot.callbacks import ForgetPress
from tgcheat.bot.views.base import (
    View,
    button,
    directed,
    keyboard,
    name_html,
    page,
    title_html,
)
from tgcheat.i18n import Translator
from tgcheat.table.stats import MIN_CALLS, MIN_GAMES, Ranked, Row, leaderboards


def _percent(share: float) -> int:
    return round(share * 100)


def stats_lines(tr: Translator, row: Row | None) -> list[str]:
    """A person's figures, a line each (in the reader's direction); games with computer
    players apart, marked 🤖."""
    return [directed(tr, line) for line in _stats_lines(tr, row)]


def _stats_lines(tr: Translator, row: Row | None) -> list[str]:
    if row is None or (row.games == 0 and row.computer_games == 0):
        return [tr._("No games counted yet.")]
    lines = []
    if row.games:
        lines += [
            tr._("Games: {games} · wins: {wins} ({rate}%)").format(
                games=row.games, wins=row.wins, rate=_percent(row.win_rate)
            ),
            tr._("Places: 🥇 {first} · 🥈 {second} · 🥉 {third}").format(
                first=row.wins, second=row.second, third=row.third
            ),
            tr._("Bluffs: {bluffs} · got away: {unseen} · caught: {caught}").format(
                bluffs=row.bluffs, unseen=row.bluffs_unseen, caught=row.bluffs_caught
            ),
            tr._("Cheat! calls: right {right} · wrong {wrong}").format(
                right=row.right_calls, wrong=row.wrong_calls
            ),
            tr._("Plays: {plays} · piles taken: {piles} ({cards} cards)").format(
                plays=row.plays, piles=row.piles_taken, cards=row.cards_taken
            ),
            tr._("Longest win streak: {streak} · matches won: {matches}").format(
                streak=row.best_streak, matches=row.matches_won
            ),
        ]
    if row.computer_games:
        lines.append(
            tr._(
                "🤖 With computer players (counted separately): games: {games} · wins: {wins}"
            ).format(games=row.computer_games, wins=row.computer_wins)
        )
    return lines


def my_stats_view(tr: Translator, row: Row | None) -> View:
    """/stats in private: one's own figures across groups."""
    return page(tr, "\n".join([tr._("📊 <b>Your games</b> in every group"), *stats_lines(tr, row)]))


def group_stats_view(
    tr: Translator, name: str, rows: Mapping[int, tuple[str, Row]], user_id: int
) -> View:
    """/stats in a group: the asker's figures there, and the group's best by wins."""
    mine = rows.get(user_id)
    head = tr._("📊 <b>{name}</b> in this group").format(name=name_html(name))
    lines = [head, *stats_lines(tr, mine[1] if mine is not None else None), ""]
    lines += _wins(tr, leaderboards(rows).wins)
    return page(tr, "\n".join(lines))


def top_view(
    tr: Translator,
    title: str,
    rows: Mapping[int, tuple[str, Row]],
    rating_lines: list[str] | None = None,
) -> View:
    """/top: the group's rating boards (``rating_lines``) and leaderboards (see
    ``tgcheat.table.stats.Leaderboards``)."""
    boards = leaderboards(rows)
    lines = [tr._("🏆 <b>The best of {group}</b>").format(group=title_html(title)), ""]
    if rating_lines:
        lines += [*rating_lines, ""]
    lines += _wins(tr, boards.wins)
    lines += ["", tr._("🎭 <b>Best bluffer</b> (bluffs that got away)")]
    lines += _ranked(
        tr,
        boards.bluffers,
        lambda row: f"{row.bluffs_unseen} ({row.bluffs_unseen}/{row.bluffs})",
    )
    lines += ["", tr._("🔍 <b>Best detective</b> (right calls, from {min})").format(min=MIN_CALLS)]
    lines += _ranked(
        tr,
        boards.detectives,
        lambda row: f"{_percent(row.call_rate)}% ({row.right_calls}/{row.calls})",
    )
    return page(tr, "\n".join(lines))


def _wins(tr: Translator, ranked: tuple[Ranked, ...]) -> list[str]:
    head = tr._("🏅 <b>Most wins</b> (win rate, from {min} games)").format(min=MIN_GAMES)
    return [
        head,
        *_ranked(tr, ranked, lambda row: f"{_percent(row.win_rate)}% ({row.wins}/{row.games})"),
    ]


def _ranked(tr: Translator, ranked: tuple[Ranked, ...], figure: Callable[[Row], str]) -> list[str]:
    if not ranked:
        return [tr._("Nobody yet.")]
    return [
        f"{place}. {name_html(entry.name)} — {figure(entry.row)}"
        for place, entry in enumerate(ranked, start=1)
    ]


def forget_view(tr: Translator, user_id: int) -> View:
    """/forgetme's question, with its one button (nothing goes until it is pressed)."""
    text = tr._(
        "🗑 Delete your statistics (and your rows in the groups' tables), your next-game "
        "sign-ups and your settings? This cannot be undone."
    )
    press = ForgetPress(user_id)
    return page(tr, text, keyboard([[button(tr._("🗑 Delete"), callback_data=press.encode())]]))
