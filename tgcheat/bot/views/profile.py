"""Ratings, achievements and profiles: a game's result's news (the rating's change and the
achievements earned, in private; the achievements and a season's turn, briefly, in the group),
/profile, the rating boards, and the cards a person shares into a chat (inline mode)."""

from __future__ import annotations

import datetime
from collections.abc import Iterable

from babel.dates import format_date

from tgcheat.bot.callbacks import BoardPress
from tgcheat.bot.views.base import (
    Button,
    View,
    button,
    directed,
    keyboard,
    name_html,
    page,
)
from tgcheat.engine.state import GameState
from tgcheat.i18n import N_, Translator
from tgcheat.table.achievements import CODES
from tgcheat.table.rating import NEWCOMER, tier_of
from tgcheat.table.standing import GameNews, PersonNews, Profile

#: Each achievement's name and condition (tgcheat.table.achievements decides them).
ACHIEVEMENTS: dict[str, tuple[str, str]] = {
    "g1": (N_("First game"), N_("Finish a game.")),
    "w1": (N_("First win"), N_("Win a game against people.")),
    "pc": (N_("Classic"), N_("Win a game with the classic rules.")),
    "pv": (N_("Believe it or not"), N_("Win a game with the Russian rules.")),
    "pf": (N_("Free spirit"), N_("Win a game with the free-rank rules.")),
    "cw": (N_("Machine breaker"), N_("Win a game with computer players.")),
    "pk": (N_("Poker face"), N_("Five bluffs nobody caught in one game.")),
    "ee": (N_("Eagle eye"), N_("Three right Cheat! calls in a row.")),
    "sh": (N_("Sharpshooter"), N_("Five right Cheat! calls in one game, none wrong.")),
    "cb": (N_("Comeback"), N_("Win after taking a pile of 20 cards or more.")),
    "ha": (N_("Honest Abe"), N_("Win without a single bluff.")),
    "ut": (N_("Untouchable"), N_("Win without taking the pile once.")),
    "ll": (N_("Last lie"), N_("Win with a bluff as your last cards.")),
    "lt": (N_("Lightning"), N_("Win a game of 20 plays or fewer.")),
    "mr": (N_("Marathon"), N_("Play a game of 150 plays or more.")),
    "mt": (N_("Mountain"), N_("Take a pile of 30 cards or more.")),
    "fh": (N_("Full house"), N_("Play a game of 10 players.")),
    "rh": (N_("Red-handed"), N_("Get caught bluffing three times in one game.")),
    "pa": (N_("Paranoid"), N_("Three wrong Cheat! calls in one game.")),
    "mw": (N_("Match winner"), N_("Win a match.")),
    "s3": (N_("Hat trick"), N_("Win three games in a row.")),
    "s5": (N_("Unstoppable"), N_("Win five games in a row.")),
    "gx": (N_("Regular"), N_("Play 25 games.")),
    "gc": (N_("Veteran"), N_("Play 100 games.")),
    "wx": (N_("Champion"), N_("Win 25 games.")),
    "rg": (N_("Gold"), N_("Reach a rating of 1400.")),
    "rd": (N_("Diamond"), N_("Reach a rating of 1800.")),
}
assert set(ACHIEVEMENTS) == set(CODES)

TIERS = {
    "bronze": N_("Bronze"),
    "silver": N_("Silver"),
    "gold": N_("Gold"),
    "platinum": N_("Platinum"),
    "diamond": N_("Diamond"),
}

#: What a share button puts after the bot's name in the chosen chat (the inline query).
SHARE_RESULT = "result"
SHARE_PROFILE = "profile"


def tier_name(tr: Translator, rating: int) -> str:
    return tr._(TIERS[tier_of(rating)])


def achievement_name(tr: Translator, code: str) -> str:
    return tr._(ACHIEVEMENTS[code][0])


def achievement_condition(tr: Translator, code: str) -> str:
    return tr._(ACHIEVEMENTS[code][1])


def season_name(tr: Translator, season: int) -> str:
    """A season by its month, in the reader's language ("December 2026")."""
    year, month = divmod(season, 100)
    locale = tr.language if tr.language != "pt_BR" else "pt_BR"
    return format_date(datetime.date(year, month, 1), "LLLL y", locale=locale)


def listed(tr: Translator, items: Iterable[str]) -> str:
    """Items one after the other, with the language's own comma (Arabic writes "،")."""
    return tr.pgettext("list separator", ", ").join(items)


def signed(change: int) -> str:
    """A rating's change as people write it: "+14", "−3", "±0"."""
    if change > 0:
        return f"+{change}"
    if change < 0:
        return f"−{-change}"
    return "±0"


def rating_text(tr: Translator, rating: int) -> str:
    return tr._("{rating} ({tier})").format(rating=rating, tier=tier_name(tr, rating))


def private_news_lines(tr: Translator, news: PersonNews | None) -> list[str]:
    """A player's own result's news: their rating's change, and each achievement earned for
    the first time with its condition."""
    if news is None:
        return []
    lines = []
    if news.rated:
        lines.append(
            tr._("📈 Rating: {rating} ({change}) · {tier}").format(
                rating=news.after, change=signed(news.change), tier=tier_name(tr, news.after)
            )
        )
    for code in news.earned:
        if code in ACHIEVEMENTS:
            lines.append(
                tr._("🏅 New achievement: <b>{name}</b>. {condition}").format(
                    name=achievement_name(tr, code), condition=achievement_condition(tr, code)
                )
            )
    return lines


def group_news_lines(tr: Translator, state: GameState, news: GameNews | None) -> list[str]:
    """The group's result's news, briefly: who earned what for the first time (one line), and a
    season that turned with this game (its best here)."""
    if news is None:
        return []
    lines = []
    earned = []
    names = {player.user_id: player.name for player in state.players}
    for person in news.people:
        # Everyone's first game is no news to the group.
        known = [code for code in person.earned if code in ACHIEVEMENTS and code != "g1"]
        if known and person.user_id in names:
            titles = listed(tr, (achievement_name(tr, code) for code in known))
            earned.append(f"{name_html(names[person.user_id])}: {titles}")
    if earned:
        lines.append("🏅 " + " · ".join(earned))
    if news.season_top:
        best = " · ".join(
            f"{place}. {name_html(name)} {rating}"
            for place, (name, rating) in enumerate(news.season_top, start=1)
        )
        lines.append(
            tr._("🗓 The season of {season} is over. Best here: {best}").format(
                season=season_name(tr, news.season_over), best=best
            )
        )
    return lines


def share_button(tr: Translator, query: str) -> Button:
    """A button that lets the person pick a chat and share a card there (inline mode)."""
    return {
        "text": tr._("📣 Share"),
        "switch_inline_query_chosen_chat": {
            "query": query,
            "allow_user_chats": True,
            "allow_group_chats": True,
            "allow_channel_chats": True,
        },
    }


def profile_lines(tr: Translator, profile: Profile | None) -> list[str]:
    if profile is None:
        return [tr._("No games counted yet.")]
    row = profile.row
    rating = profile.shown if profile.skill is not None else NEWCOMER
    lines = [tr._("📈 Rating: {rating}").format(rating=rating_text(tr, rating))]
    if profile.skill is None:
        lines.append(tr._("Rated games are played in groups by three people or more."))
    if profile.season_rank is not None:
        lines.append(tr._("🌍 This season: #{rank} across groups").format(rank=profile.season_rank))
    lines.append(
        tr._("Games: {games} · wins: {wins} · best streak: {streak}").format(
            games=row.games, wins=row.wins, streak=row.best_streak
        )
    )
    lines.append(
        tr._("🏅 Achievements: {earned} of {all}").format(
            earned=len(profile.achievements), all=len(ACHIEVEMENTS)
        )
    )
    if profile.achievements:
        lines.append(listed(tr, (achievement_name(tr, code) for code in profile.achievements)))
    return lines


def profile_view(
    tr: Translator,
    profile: Profile | None,
    name: str,
    *,
    in_private: bool,
    user_id: int,
    app_url: str | None = None,
) -> View:
    """/profile: in private with the board setting, sharing and the Mini App's page; in a group
    only the figures."""
    head = tr._("👤 {name}").format(name=name_html(profile.name if profile else name))
    lines = [head, *profile_lines(tr, profile)]
    if not in_private:
        return page(tr, "\n".join(lines))
    hidden = profile is not None and profile.hidden
    lines += [
        "",
        tr._("You are not listed on the global board.")
        if hidden
        else tr._("You are listed on the global board (by your name in Telegram)."),
    ]
    press = BoardPress(user_id, not hidden)
    label = tr._("🌍 List me again") if hidden else tr._("🙈 Leave the global board")
    toggle = button(label, callback_data=press.encode())
    rows: list[list[Button]] = [[toggle]]
    if profile is not None:
        rows.append([share_button(tr, SHARE_PROFILE)])
    if app_url is not None:
        rows.append([{"text": tr._("👤 Open profile"), "web_app": {"url": f"{app_url}?v=profile"}}])
    return page(tr, "\n".join(lines), keyboard(rows))


def board_lines(tr: Translator, title: str, board: list[tuple[str, int]]) -> list[str]:
    lines = [title]
    if not board:
        return [*lines, tr._("Nobody yet.")]
    return lines + [
        f"{place}. {name_html(name)} — {rating}"
        for place, (name, rating) in enumerate(board, start=1)
    ]


def global_board_view(
    tr: Translator, season: int, this_season: list[tuple[str, int]], ever: list[tuple[str, int]]
) -> View:
    """/top in private: the boards across groups."""
    lines = board_lines(
        tr,
        tr._("🌍 <b>Across groups</b>, {season}").format(season=season_name(tr, season)),
        this_season,
    )
    lines += ["", *board_lines(tr, tr._("🌍 <b>Across groups</b>, all time"), ever)]
    return page(tr, "\n".join(lines))


def group_board_lines(
    tr: Translator, season: int, this_season: list[tuple[str, int]], ever: list[tuple[str, int]]
) -> list[str]:
    """A group's rating boards (in /top)."""
    lines = board_lines(
        tr, tr._("📈 <b>Rating</b>, {season}").format(season=season_name(tr, season)), this_season
    )
    return [*lines, "", *board_lines(tr, tr._("📈 <b>Rating</b>, all time"), ever)]


def profile_card(tr: Translator, profile: Profile) -> str:
    """A profile shared into a chat (HTML)."""
    lines = [tr._("🃏 {name} plays Cheat").format(name=name_html(profile.name))]
    return directed(tr, "\n".join([*lines, *profile_lines(tr, profile)]))


def result_card(tr: Translator, profile: Profile) -> str | None:
    """A person's last game shared into a chat (HTML); None without one."""
    last = profile.last
    if last is None or not profile.last_players:
        return None
    name = name_html(profile.name)
    if profile.last_place == 1:
        text = tr._("🏆 {name} won a game of Cheat of {count} players.").format(
            name=name, count=profile.last_players
        )
    elif profile.last_place:
        text = tr._("🃏 {name} came {place} of {count} in a game of Cheat.").format(
            name=name, place=profile.last_place, count=profile.last_players
        )
    else:
        text = tr._("🃏 {name} played a game of Cheat of {count} players.").format(
            name=name, count=profile.last_players
        )
    lines = [text]
    if last.rated:
        lines.append(
            tr._("📈 Rating: {rating} ({change}) · {tier}").format(
                rating=last.after, change=signed(last.change), tier=tier_name(tr, last.after)
            )
        )
    earned = [achievement_name(tr, code) for code in last.earned if code in ACHIEVEMENTS]
    if earned:
        lines.append("🏅 " + listed(tr, earned))
    return directed(tr, "\n".join(lines))
