"""Every view rendered in every language: no English left in a translated message or button,
nothing hard-coded outside the catalog, and the HTML is what Telegram accepts.

Two checks:

- **No English catalog text**: each English msgstr (locales/en), cut into its literal pieces
  (between placeholders, HTML tags and /commands), must not appear in a view rendered in
  another language, pieces of three letters or fewer and those that a language writes the same
  by nature (``IDENTICAL``) aside.
- **Nothing outside the catalog**: the views are rendered with a pseudo-language that marks
  every catalog text ⟦like this⟧; what is left outside the marks (user names and the group
  title taken out) must hold no word, so a hard-coded English string fails even if it is not
  in the catalog. Single letters pass: a revealed card shows its suit and rank symbol.
"""

from __future__ import annotations

import dataclasses
import gettext
import inspect
import random
import re
import string
from collections.abc import Iterator
from functools import cache

import pytest
from babel.messages.pofile import read_po

from tests.engine.helpers import cards, state_with
from tests.support.fake_telegram import check_telegram_html
from tgcheat.bot import views
from tgcheat.bot.views.profile import ACHIEVEMENTS
from tgcheat.engine.actions import (
    Accept,
    Challenge,
    Leave,
    Pass,
    PassVote,
    Play,
    PullTrigger,
    Stop,
)
from tgcheat.engine.cards import Card, Rank, count_by_rank
from tgcheat.engine.events import ChallengeResolved, Event, Passed, TriggerPulled
from tgcheat.engine.game import Refusal, Seating, apply, deck_of, new_game
from tgcheat.engine.lobby import Lobby
from tgcheat.engine.match import Match
from tgcheat.engine.rules import (
    OPTION_NAMES,
    PRESETS,
    ChallengePriority,
    FinalCheck,
    Jokers,
    MatchKind,
    Passing,
    RankRule,
    Rules,
)
from tgcheat.engine.state import EndReason, GameState, Phase, Result, evolve
from tgcheat.i18n import LOCALES_DIR, Translator, available_languages, translator
from tgcheat.table.chronicle import GameTally, Notice, NoticeKind, SeatTally
from tgcheat.table.place import Place
from tgcheat.table.rating import Skill
from tgcheat.table.refusals import SessionRefusal
from tgcheat.table.session import Session
from tgcheat.table.standing import GameNews, PersonNews, Profile
from tgcheat.table.stats import Row
from tgcheat.table.story import AsideEntry, AsideKind, PlayEntry, Story

LANGUAGES = [lang for lang in available_languages() if lang != "en"]
#: Words a language writes like English, by nature (loanwords, the same noun).
IDENTICAL: dict[str, set[str]] = {
    "fr": {"Jokers", "jokers", "Match", "Bluffs", "revolver", "Marathon", "Champion", "Bronze"},
    "nl": {"Jokers", "jokers", "Bluffs", "Start", "revolver", "Comeback", "Marathon"},
    "de": {"Bluffs", "Comeback", "Marathon", "Paranoid", "Veteran", "Champion", "Gold", "Bronze"},
    "es": {"normal"},
    "id": {"Paranoid", "Veteran", "Platinum", "revolver"},
    "pt_BR": {"Bronze"},
}
BOT = "tgcheat_bot"
CHAT = -1001234567890
NAMES = ("Ann", "Bob", "Cleo", "Dan & <Co>")
TITLE = "Friday club"

# --- the English catalog, cut into pieces ------------------------------------------------------

_CUT = re.compile(r"<[^>]+>|/[a-z_]+\b")
_LETTER = re.compile(r"[^\W\d_]")


@cache
def english_pieces() -> tuple[str, ...]:
    with (LOCALES_DIR / "en" / "LC_MESSAGES" / "tgcheat.po").open("rb") as po_file:
        catalog = read_po(po_file, locale="en")
    pieces: set[str] = set()
    for message in catalog:
        if not message.id:
            continue
        texts = message.string if isinstance(message.string, tuple) else (message.string,)
        for text in texts:
            assert isinstance(text, str)
            for literal, *_ in string.Formatter().parse(text):
                for piece in _CUT.split(literal):
                    piece = piece.strip(" \n:·,.()")
                    if len(_LETTER.findall(piece)) > 3:
                        pieces.add(piece)
    return tuple(sorted(pieces, key=len, reverse=True))


def _pattern(piece: str) -> re.Pattern[str]:
    start = r"(?<!\w)" if re.match(r"\w", piece) else ""
    end = r"(?!\w)" if re.search(r"\w$", piece) else ""
    return re.compile(start + re.escape(piece) + end)


def english_left(lang: str, texts: list[str]) -> list[str]:
    allowed = IDENTICAL.get(lang, set())
    found = []
    for piece in english_pieces():
        if piece in allowed:
            continue
        pattern = _pattern(piece)
        found += [f"{piece!r} in {text!r}" for text in texts if pattern.search(text)]
    return found


# --- a pseudo-language that marks every catalog text -----------------------------------------


class Marked(gettext.NullTranslations):
    def gettext(self, message: str) -> str:
        return f"⟦{message}⟧"

    def ngettext(self, msgid1: str, msgid2: str, n: int) -> str:
        return f"⟦{msgid1 if n == 1 else msgid2}⟧"

    def pgettext(self, context: str, message: str) -> str:
        return f"⟦{message}⟧"

    def npgettext(self, context: str, msgid1: str, msgid2: str, n: int) -> str:
        return f"⟦{msgid1 if n == 1 else msgid2}⟧"


MARKED = Translator("en", Marked())
_INNERMOST = re.compile(r"⟦[^⟦⟧]*⟧")
_TAG = re.compile(r"</?[a-z-]+[^>]*>")
_WORD = re.compile(r"[^\W\d_]{2,}")


def unmarked_words(text: str) -> list[str]:
    """Words outside the catalog's marks; user names, the group title and the languages'
    own names (a language picker shows each in itself) aside."""
    for name in (*NAMES, TITLE):
        text = text.replace(views.name_html(name), " ").replace(views.title_html(TITLE), " ")
    for language in available_languages():
        text = text.replace(views.language_name(language), " ")
    while _INNERMOST.search(text):
        text = _INNERMOST.sub(" ", text)
    return _WORD.findall(_TAG.sub(" ", text))


# --- games to show -----------------------------------------------------------------------------


def session() -> Session:
    """Views read the chat, the game id and the title from the session (buttons, titles)."""
    return Session(chat_id=CHAT, game_id="g7k2p9", creator=100, title=TITLE)


def named(state: GameState) -> GameState:
    players = tuple(
        dataclasses.replace(p, name=NAMES[i % len(NAMES)]) for i, p in enumerate(state.players)
    )
    return dataclasses.replace(state, players=players)


def game(
    hands: list[tuple[Card, ...]] | None = None,
    *,
    rules: Rules | None = None,
    required: Rank | None = Rank.SEVEN,
) -> GameState:
    hands = hands or [
        cards("7♣", "7♦", "K♠", "2♥", "2♦"),
        cards("7♥", "Q♣", "Q♦"),
        cards("A♠", "3♦", "9♣"),
        cards("5♣", "9♦", "J♥"),
    ]
    return named(state_with(hands, required=required, rules=rules or Rules()))


def play(state: GameState, *labels: str, rank: Rank = Rank.SEVEN) -> tuple[GameState, list[Event]]:
    return apply(state, Play(state.turn, cards(*labels), rank))


def challenged(lie: bool) -> tuple[GameState, ChallengeResolved]:
    state, _ = play(game(), "7♣", "K♠" if lie else "7♦")
    claim = state.last_claim
    assert claim is not None
    state, events = apply(state, Challenge(1, claim.number))
    resolved = [e for e in events if isinstance(e, ChallengeResolved)]
    assert len(resolved) == 1 and resolved[0].lie is lie
    return state, resolved[0]


def final_check(rules: Rules | None = None) -> GameState:
    hands = [cards("7♣"), cards("7♥", "Q♣"), cards("A♠", "3♦"), cards("5♣", "9♦")]
    state, _ = play(game(hands, rules=rules), "7♣")
    assert state.phase is Phase.FINAL_CHECK
    return state


def finished() -> GameState:
    state = final_check()
    for seat in (1, 2, 3):
        state, _ = apply(state, Accept(seat, state.open_claims[-1].number))
    assert state.phase is Phase.FINISHED and state.result is not None
    assert state.result.reason is EndReason.WENT_OUT
    return state


def exhausted_rules() -> Rules:
    return Rules(passing=Passing.EXHAUSTED)


def no_sevens_game(rules: Rules) -> GameState:
    """Seat 0 is to play 7s and nobody holds one: every 7 is in the pile."""
    hands = [cards("K♠", "2♥"), cards("Q♣", "Q♦"), cards("A♠", "3♦"), cards("5♣", "9♦")]
    return game(hands, rules=rules)


def passed_events() -> list[Passed]:
    _, by_rank = apply(no_sevens_game(exhausted_rules()), Pass(0))
    state, _ = apply(no_sevens_game(Rules(passing=Passing.VOTE)), Pass(0))
    by_vote: list[Event] = []
    for seat in (1, 2, 3):
        state, events = apply(state, PassVote(seat, True))
        by_vote += events
    found = [e for e in (*by_rank, *by_vote) if isinstance(e, Passed)]
    assert {e.by_vote for e in found} == {False, True}
    return [*found, Passed(seat=0, rank=None)]


def vote_open() -> GameState:
    state, _ = apply(no_sevens_game(Rules(passing=Passing.VOTE)), Pass(0))
    assert state.vote_by == 0
    return state


def match(kind: MatchKind, *, finished: bool, winner: int | None) -> Match:
    players = tuple((100 + i, name) for i, name in enumerate(NAMES))
    return Match(
        rules=Rules(match=kind, match_target=3),
        players=players,
        dealer=0,
        scores=tuple((uid, 3 - i) for i, (uid, _) in enumerate(players)),
        games=3 if finished else 1,
        finished=finished,
        winner=winner,
    )


def house_rules() -> Rules:
    """Every option away from its default, so each value's words are shown."""
    return Rules(
        rank_rule=RankRule.SAME,
        challenge_priority=ChallengePriority.CLOCKWISE,
        final_check=FinalCheck.NEXT,
        max_cards=0,
        decks=2,
        jokers=Jokers.WILD,
        passing=Passing.VOTE,
        move_cap=0,
        min_players=2,
        max_players=10,
        match=MatchKind.PENALTY,
        match_target=5,
        turn_timeout_s=0,
        afk_limit=1,
    )


# --- every view, as (what, text, button labels) -------------------------------------------------


Rows = tuple[tuple[str, ...], ...]
Shown = tuple[str, str, Rows]


def _rows(markup: views.Keyboard | None) -> Rows:
    if markup is None:
        return ()
    return tuple(tuple(button["text"] for button in row) for row in markup["inline_keyboard"])


def _view(what: str, view: views.View) -> Shown:
    return what, view.text, _rows(view.markup)


def rendered(tr: Translator) -> Iterator[Shown]:
    """Every view function, in every situation that changes its words."""
    rules = Rules()
    lobby = Lobby(creator=100, rules=rules, players=((100, NAMES[0]), (101, NAMES[3])))
    yield _view("lobby", views.lobby_view(tr, session(), lobby, BOT))
    yield _view("empty lobby", views.lobby_view(tr, session(), Lobby(100, rules), BOT))
    seated = Lobby(creator=100, rules=rules, players=((100, NAMES[0]), (-1, "🤖 Ada")))
    yield _view("lobby with a computer player", views.lobby_view(tr, session(), seated, BOT))
    yield _view("lobby cancelled", views.lobby_closed_view(tr))
    yield _view("lobby expired", views.lobby_closed_view(tr, expired=True))
    yield _view("next-game ping", views.ping_view(tr, session(), BOT))
    full = Row(
        games=4,
        wins=2,
        second=1,
        third=1,
        plays=30,
        bluffs=9,
        bluffs_caught=3,
        bluffs_unseen=6,
        right_calls=4,
        wrong_calls=2,
        piles_taken=5,
        cards_taken=40,
        matches_won=1,
        computer_games=2,
        computer_wins=1,
        best_streak=2,
    )
    table_rows = {100: (NAMES[0], full), 101: (NAMES[3], Row(games=1))}
    yield "stats lines", "\n".join(views.stats_lines(tr, full)), ()
    yield _view("my stats", views.my_stats_view(tr, full))
    yield _view("no stats", views.my_stats_view(tr, None))
    yield _view("group stats", views.group_stats_view(tr, NAMES[0], table_rows, 100))
    yield _view("top", views.top_view(tr, TITLE, table_rows))
    yield _view("top, nobody", views.top_view(tr, TITLE, {}))
    yield _view("forget me", views.forget_view(tr, 100))

    start = game()
    yield _view("table, first play", views.table_view(tr, session(), start, BOT))
    yield _view("hand on turn", views.hand_view(tr, session(), start, 0, TITLE))
    app = "https://cheat.example.com/app"
    yield _view("hand with the Mini App", views.hand_view(tr, session(), start, 0, TITLE, "", app))
    for selection in ("7", "77", "27K"):
        shown = views.hand_view(tr, session(), start, 0, TITLE, selection)
        yield _view(f"hand with selection {selection}", shown)
    # The longest Play button: four of a rank, or many cards when any number may be played.
    many = game(
        [cards(*(f"{r}{s}" for r in "78" for s in "♣♦♥♠")), cards("K♠"), cards("A♠")],
        rules=Rules(max_cards=0),
    )
    for selection in ("7777", "77778888"):
        shown = views.hand_view(tr, session(), many, 0, TITLE, selection)
        yield _view(f"hand with selection {selection}", shown)
    yield _view("hand not on turn", views.hand_view(tr, session(), start, 2, TITLE))
    # One card left: the limit is said as one card, with or without a rank to claim.
    last = [cards("7♣"), cards("7♥", "Q♣"), cards("A♠", "3♦"), cards("5♣", "9♦")]
    for what, state in {
        "rank": game(last),
        "any rank": game(last, rules=PRESETS["free"], required=None),
    }.items():
        for selection in ("", "7"):
            shown = views.hand_view(tr, session(), state, 0, TITLE, selection)
            yield _view(f"hand, last card, {what}, selection {selection!r}", shown)
    yield "hand text", views.hand_text(tr, count_by_rank(start.players[0].hand)), ()
    yield "card labels", " ".join(views.card_label(tr, c) for c in start.players[0].hand), ()
    yield "card counts", " / ".join(views.count_cards(tr, n) for n in (0, 1, 2, 5, 21)), ()

    played, _ = play(start, "7♣", "K♠")
    assert played.last_claim is not None
    yield _view("table after a play", views.table_view(tr, session(), played, BOT))
    yield "claim line", views.claim_line(tr, played, played.last_claim), ()
    yield _view("hand after a play", views.hand_view(tr, session(), played, 1, TITLE, "Q"))
    for lie in (True, False):
        state, event = challenged(lie)
        yield _view(f"reveal, lie={lie}", views.reveal_view(tr, state, event))

    left, _ = apply(played, Leave(3))
    yield _view("table with a player gone", views.table_view(tr, session(), left, BOT))
    yield _view("hand of a player gone", views.hand_view(tr, session(), left, 3, TITLE))

    free = game(rules=PRESETS["free"], required=None)
    yield _view("table, any rank", views.table_view(tr, session(), free, BOT))
    yield _view("hand, any rank", views.hand_view(tr, session(), free, 0, TITLE))
    yield _view("hand, naming a rank", views.hand_view(tr, session(), free, 0, TITLE, "72"))

    verju, _ = play(game(rules=PRESETS["verju"]), "7♣", "7♦")
    yield _view("table, next player answers", views.table_view(tr, session(), verju, BOT))
    yield _view("hand, believe or Cheat", views.hand_view(tr, session(), verju, 1, TITLE))

    clockwise, _ = play(game(rules=Rules(challenge_priority=ChallengePriority.CLOCKWISE)), "7♣")
    assert clockwise.last_claim is not None
    calling, _ = apply(clockwise, Challenge(2, clockwise.last_claim.number, 0))
    assert calling.challenges
    yield _view("table, Cheat! being called", views.table_view(tr, session(), calling, BOT))

    may_pass = no_sevens_game(exhausted_rules())
    yield _view("hand, may pass", views.hand_view(tr, session(), may_pass, 0, TITLE))
    asking = no_sevens_game(Rules(passing=Passing.VOTE))
    yield _view("hand, may ask to pass", views.hand_view(tr, session(), asking, 0, TITLE))
    voting = vote_open()
    yield _view("table, vote", views.table_view(tr, session(), voting, BOT))
    yield _view("hand, voter", views.hand_view(tr, session(), voting, 1, TITLE))
    for passed in passed_events():
        yield f"passed {passed}", views.passed_view(tr, no_sevens_game(Rules()), passed), ()
    unreachable = no_sevens_game(Rules())
    yield _view(
        "players unreachable",
        views.unreachable_view(tr, unreachable, [p.user_id for p in unreachable.players[:2]]),
    )

    final = final_check()
    yield _view("table, final check", views.table_view(tr, session(), final, BOT))
    yield _view("hand, final answerer", views.hand_view(tr, session(), final, 1, TITLE))
    final_next = final_check(PRESETS["verju"])
    yield _view("table, final check (next)", views.table_view(tr, session(), final_next, BOT))
    yield _view("hand, final (next)", views.hand_view(tr, session(), final_next, 1, TITLE))

    yield from _liars_bar(tr)
    slow = game(rules=Rules(turn_timeout_s=86_400))
    waiting = dataclasses.replace(
        session(), game=slow, deadline_ms=1_800_000_000_000, reminded_ms=1_800_000_000_000
    )
    yield _view("table, a long turn", views.table_view(tr, waiting, slow, BOT))
    yield _view("hand, reminded", views.hand_view(tr, waiting, slow, slow.turn, TITLE))

    done = finished()
    assert done.result is not None
    yield _view("table, finished", views.table_view(tr, session(), done, BOT))
    yield _view("hand, finished", views.hand_view(tr, session(), done, 1, TITLE))
    yield "result, went out", "\n".join(views.result_lines(tr, done, done.result)), ()
    stopped, _ = apply(played, Stop())
    assert stopped.result is not None
    yield "result, stopped", "\n".join(views.result_lines(tr, stopped, stopped.result)), ()
    tally = GameTally(
        (SeatTally(3, 2, 1, 1, 0, 4), SeatTally(2, 0, 0, 0, 1, 6), SeatTally(), SeatTally()),
        (6, 1),
    )
    told = dataclasses.replace(session(), tally=tally)
    yield _view("final table", views.final_table_view(tr, told, done, done.result))
    yield "summary", "\n".join(views.summary_lines(tr, done, tally)), ()
    yield "summary, nothing caught", "\n".join(views.summary_lines(tr, done, GameTally())), ()
    level = GameTally((SeatTally(2, 2, 0, 1, 0, 0), SeatTally(2, 2, 0, 1, 0, 0)), None)
    yield "summary, awards shared", "\n".join(views.summary_lines(tr, done, level)), ()
    yield _view(
        "story", views.story_view(tr, dataclasses.replace(told, game=done, story=every_story()))
    )
    for kind in NoticeKind:
        notice = Notice(kind, 1, 2)
        noticed = dataclasses.replace(session(), notice=notice)
        yield f"notice {kind}", views.notice_line(tr, played, notice), ()
        yield _view(f"hand, notice {kind}", views.hand_view(tr, noticed, played, 1, TITLE))
    yield _view("hand, finished, own result", views.hand_view(tr, told, done, 0, TITLE))
    # A quick game: the wait, and its table and hand in each player's private chat.
    for waiting in (1, 3):
        yield _view(f"quick, {waiting} waiting", views.quick_waiting_view(tr, waiting))
    yield "quick, waiting in the app", views.quick_waiting_text(tr, 2, in_chat=False), ()
    yield _view("quick, left", views.quick_left_view(tr))
    yield _view("quick, found", views.quick_found_view(tr))
    quick = dataclasses.replace(session(), chat_id=Place.of_quick_game(7).chat_id, title="")
    yield _view("quick: table", views.table_view(tr, quick, final, BOT))
    yield _view("quick: hand", views.hand_view(tr, quick, final, 1, ""))
    quick_done = dataclasses.replace(quick, tally=tally)
    yield _view("quick: final table", views.final_table_view(tr, quick_done, done, done.result))
    # What counting the game brought: every achievement at once, a rating up and one down, a
    # season turned.
    everything = tuple(ACHIEVEMENTS)
    people = tuple(
        PersonNews(player.user_id, 1000, 1000 + 37 * (1 - 2 * seat), everything)
        for seat, player in enumerate(done.players)
    )
    news = GameNews(people, 202612, ((NAMES[0], 1650), (NAMES[3], 1420)))
    yield _view("final table, news", views.final_table_view(tr, told, done, done.result, news))
    for seat in (0, 1):
        hand = views.hand_view(tr, told, done, seat, TITLE, news=people[seat])
        yield _view(f"hand, finished, news {seat}", hand)
    for profile in profiles():
        for private in (True, False):
            shown = views.profile_view(
                tr, profile, NAMES[0], in_private=private, user_id=100, app_url=app
            )
            yield _view(f"profile {profile is not None} {private}", shown)
        if profile is not None:
            yield "profile card", views.profile_card(tr, profile), ()
            yield "result card", views.result_card(tr, profile) or "", ()
    top = [(NAMES[0], 1650), (NAMES[3], 1420)]
    for board in (top, []):
        yield _view(f"global board {len(board)}", views.global_board_view(tr, 202612, board, top))
        lines = views.group_board_lines(tr, 202612, board, top)
        yield _view(f"top with ratings {len(board)}", views.top_view(tr, TITLE, table_rows, lines))
    capped = dataclasses.replace(played, plays=300)
    for what, result in {
        "move cap win": Result(EndReason.MOVE_CAP, 1, ((1, 1), (0, 2), (2, 2), (3, 3))),
        "move cap draw": Result(EndReason.MOVE_CAP, None, ((1, 1), (2, 1), (0, 2), (3, 3))),
        "last player": Result(EndReason.LAST_PLAYER, 2, ((2, 1),)),
    }.items():
        yield f"result, {what}", "\n".join(views.result_lines(tr, capped, result)), ()

    for kind in (MatchKind.FIRST_TO, MatchKind.PENALTY):
        for over, winner in ((False, None), (True, 100), (True, None)):
            board = views.scoreboard_lines(tr, match(kind, finished=over, winner=winner))
            yield f"scoreboard {kind} {over} {winner}", "\n".join(board), ()
    yield "next game", "", _rows(views.next_game_markup(tr, session()))

    for name, preset in {**PRESETS, "house": house_rules()}.items():
        yield _view(f"settings, {name}", views.settings_view(tr, CHAT, preset))
        yield _view(f"rules, {name}", views.rules_view(tr, preset))
        changed = dataclasses.replace(preset, passing=Passing.VOTE, turn_timeout_s=30)
        yield _view(f"rules, {name} changed", views.rules_view(tr, changed))
        yield f"rules name {name}", views.rules_name(tr, preset), ()
        for index in range(len(OPTION_NAMES)):
            yield _view(f"option {index}, {name}", views.option_view(tr, CHAT, preset, index))

    for refusal in (*Refusal, *SessionRefusal):
        yield f"refusal {refusal}", views.refusal_text(tr, refusal), ()

    for group in (True, False):
        yield _view(f"languages, group={group}", views.language_view(tr, CHAT, "ru", group))


def profiles() -> list[Profile | None]:
    """No profile; one of a newcomer not yet rated; the winner of a last game, hidden from the
    global board; one placed second; one whose last game gave no place."""
    row = Row(games=12, wins=5, best_streak=3)
    last = PersonNews(100, 1210, 1234, ("pk", "ee"))
    rated = Profile(
        NAMES[0], row, Skill(31.0, 3.0, 202612), ("g1", "pk", "ee"), 3, False, last, 1, 4
    )
    return [
        None,
        Profile(NAMES[0], Row(computer_games=1), None, ("g1",), None, False),
        dataclasses.replace(rated, hidden=True),
        dataclasses.replace(rated, last_place=2),
        dataclasses.replace(rated, last_place=0, last=PersonNews(100, 1234, 1234)),
    ]


def every_story() -> Story:
    """A story with every kind of line: true and false plays, called or not, by the clock,
    last cards; every pass and leaving; moves folded."""
    seven, king = cards("7♣", "7♥"), cards("K♦")
    entries = (
        PlayEntry(1, 0, Rank.SEVEN, seven, lie=False),
        PlayEntry(2, 1, Rank.EIGHT, king, lie=True, caller=2, taker=1, taken=3),
        PlayEntry(3, 2, Rank.NINE, king, lie=True, by_timeout=True),
        PlayEntry(4, 3, Rank.TEN, seven[:1], lie=False, caller=0, taker=0, taken=2),
        *(AsideEntry(kind, 1, Rank.JACK) for kind in AsideKind),
        PlayEntry(9, 0, Rank.QUEEN, king, lie=True, final=True),
    )
    return Story(opening=entries[:3], folded=12, closing=entries[3:])


#: The view functions the test renders; a new one must be added to ``rendered`` (and here).
COVERED = {
    "story_view",
    "profile_view",
    "profile_card",
    "result_card",
    "global_board_view",
    "group_board_lines",
    "lobby_view",
    "lobby_closed_view",
    "ping_view",
    "stats_lines",
    "my_stats_view",
    "group_stats_view",
    "top_view",
    "forget_view",
    "rules_name",
    "claim_line",
    "table_view",
    "reveal_view",
    "passed_view",
    "unreachable_view",
    "pull_view",
    "pulling_line",
    "scoreboard_lines",
    "next_game_markup",
    "result_lines",
    "final_table_view",
    "summary_lines",
    "notice_line",
    "hand_text",
    "card_label",
    "count_cards",
    "hand_view",
    "settings_view",
    "option_view",
    "rules_view",
    "refusal_text",
    "language_view",
    "quick_waiting_view",
    "quick_waiting_text",
    "quick_left_view",
    "quick_found_view",
    # What every view's text and keyboard go through: the reader's direction.
    "page",
    "directed",
    "mirrored",
    "ltr",
    "joined",
}


def test_every_view_function_is_rendered() -> None:
    shown = {
        name
        for name, function in inspect.getmembers(views, inspect.isfunction)
        if function.__module__.startswith(views.__name__ + ".")
        and not name.startswith("_")
        and next(iter(inspect.signature(function).parameters), None) == "tr"
    }
    assert shown - COVERED == set(), "render these views in rendered() too"
    assert COVERED - shown == set(), "views that no longer exist"


def test_there_are_languages_to_check() -> None:
    assert {"ru", "es", "fr", "it", "nl", "de"} <= set(LANGUAGES)


@cache
def _liars_bar(tr: Translator) -> Iterator[Shown]:
    """Liar's Bar: the round's table, the reveal, the pull and its two endings, a player
    sitting out, one who must call, one shot, the last alive."""
    seating = Seating(tuple((100 + i, NAMES[i]) for i in range(3)), dealer=2)
    state, _ = new_game(PRESETS["liars"], seating, random.Random(3))
    assert state.required is not None
    yield _view("liars: table", views.table_view(tr, session(), state, BOT))
    yield _view("liars: hand", views.hand_view(tr, session(), state, state.turn, TITLE))
    seat = state.turn
    played, _ = apply(state, Play(seat, state.players[seat].hand[:1], state.required))
    number = played.open_claims[-1].number
    called, events = apply(played, Challenge(played.turn, number, 0))
    reveal = next(e for e in events if isinstance(e, ChallengeResolved))
    puller = called.pull_by
    assert puller is not None
    yield _view("liars: reveal", views.reveal_view(tr, called, reveal))
    yield _view("liars: table, pull", views.table_view(tr, session(), called, BOT))
    yield _view("liars: hand, pulling", views.hand_view(tr, session(), called, puller, TITLE))
    yield "liars: the pause before the pull", views.pulling_line(tr, called, puller), ()
    for hit in (False, True):
        pulled = TriggerPulled(puller, 1, hit)
        yield f"liars: pull, hit={hit}", views.pull_view(tr, called, pulled), ()
    doomed = tuple(evolve(p, bullet=0) if i == puller else p for i, p in enumerate(called.players))
    shot, _ = apply(evolve(called, players=doomed), PullTrigger(10**6))
    yield _view("liars: table after a shot", views.table_view(tr, session(), shot, BOT))
    yield _view("liars: hand, shot", views.hand_view(tr, session(), shot, puller, TITLE))
    alive = shot.active_seats()
    last, second = alive[0], alive[1]
    hands = {last: cards("K♣"), second: cards("Q♣", "A♣")}
    held = {c for hand in hands.values() for c in hand}
    two = evolve(
        shot,
        players=tuple(
            evolve(p, hand=hands.get(i, ()), bullet=0) for i, p in enumerate(shot.players)
        ),
        stock=tuple(c for c in deck_of(shot.rules, 3) if c not in held),
        set_aside=(),
        turn=last,
        required=Rank.ACE,
    )
    two, _ = apply(two, Play(last, hands[last], Rank.ACE))
    yield _view("liars: hand, sitting out", views.hand_view(tr, session(), two, last, TITLE))
    yield _view("liars: hand, must call", views.hand_view(tr, session(), two, second, TITLE))
    two, _ = apply(two, Challenge(second, two.open_claims[-1].number, 0))
    over, _ = apply(two, PullTrigger(10**6))
    assert over.result is not None and over.result.reason is EndReason.LAST_ALIVE
    yield _view("liars: final table", views.table_view(tr, session(), over, BOT))
    yield _view("liars: hand, last alive", views.hand_view(tr, session(), over, second, TITLE))


def rendered_in(lang: str) -> tuple[Shown, ...]:
    return tuple(rendered(translator(lang)))


def _texts(text: str, rows: Rows) -> list[str]:
    return [text, *(label for row in rows for label in row)]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_english_catalog_text_is_left(lang: str) -> None:
    problems = []
    for what, text, rows in rendered_in(lang):
        problems += [f"{what}: {found}" for found in english_left(lang, _texts(text, rows))]
    assert not problems, f"{lang}:\n" + "\n".join(problems)


def test_the_english_check_catches_english() -> None:
    assert english_left("fr", ["🃏 <b>Menteur</b> · tas : 12 cartes", "❗ Menteur !"]) == []
    assert english_left("fr", ["❗ Cheat!"])
    assert english_left("fr", ["Tu joues ; Last cards were played"])
    assert english_left("de", ["⏭ Passen"]) == []
    assert english_left("de", ["⏭ Pass"])


def test_no_view_text_is_outside_the_catalog() -> None:
    problems = []
    for what, text, rows in rendered(MARKED):
        for shown in _texts(text, rows):
            if words := unmarked_words(shown):
                problems.append(f"{what}: {words} in {shown!r}")
    assert not problems, "\n".join(problems)


def test_the_outside_check_catches_a_hard_coded_string() -> None:
    ann = views.name_html("Ann")
    assert unmarked_words(f"⟦Last play: {{claim}}⟧ {ann} ⟦two 7s⟧ · K♦ 10♣") == []
    assert unmarked_words("⟦Last play⟧ · pile: 3") == ["pile"]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_views_are_html_telegram_accepts(lang: str) -> None:
    problems = [
        f"{what}: {found}"
        for what, text, _ in rendered_in(lang)
        if text and (found := check_telegram_html(text))
    ]
    assert not problems, f"{lang}:\n" + "\n".join(problems)


# --- buttons fit a phone ------------------------------------------------------------------------
#
# A phone shows a keyboard row's buttons side by side in its width, each label centred in its
# button and cut short with "…" when it does not fit: about 36-40 letters across a phone, so
# about 18 for each of two buttons and 12 for each of three (``views.ROW_WIDTH``), an emoji
# counting as two letters.


@pytest.mark.parametrize("lang", available_languages())
def test_every_button_fits_its_row_on_a_phone(lang: str) -> None:
    """Every button label of every keyboard the views draw, in every language, measured
    against the width a button has in its row."""
    problems = []
    for what, _, rows in rendered_in(lang):
        for row in rows:
            budget = views.ROW_WIDTH[len(row)]
            problems += [
                f"{what}: {label!r} is {views.label_width(label)} wide, over {budget} "
                f"for a row of {len(row)}"
                for label in row
                if views.label_width(label) > budget
            ]
    assert not problems, f"{lang}: buttons too wide:\n" + "\n".join(sorted(set(problems)))


def test_a_label_is_measured_as_a_phone_shows_it() -> None:
    """An emoji counts as two letters (with or without its variation selector), what draws
    nothing as none: Arabic's RIGHT-TO-LEFT MARK, isolates."""
    assert views.label_width("Ann") == 3
    assert views.label_width("➕🤖 easy") == 9
    assert views.label_width("▶️ Start") == views.label_width("🃏 Start") == 8
    assert views.label_width("✅ nearest clockwise") == 20
    assert views.label_width("\u200f✅ سهل") == 6
    assert views.label_width("\u2066A\u2069 ×2") == 4
    # The review's examples: too wide for a row of two, and their replacements not.
    assert views.label_width("🔔 Permainan berikutnya") > views.ROW_WIDTH[2]
    assert views.label_width("🔔 Main berikutnya") <= views.ROW_WIDTH[2]
    assert views.label_width("➕🤖 makkelijk") > views.ROW_WIDTH[3]


def test_the_rows_are_those_a_phone_shows() -> None:
    """The lobby's levels are a row of three with ➖🤖 below them, not a row of four; a
    setting's values sit two a row only when each fits half a phone."""
    en, nl = translator("en"), translator("nl")
    seated = Lobby(creator=100, rules=Rules(), players=((100, "Ann"), (-1, "🤖 Ada")))
    rows = _rows(views.lobby_view(en, session(), seated, BOT).markup)
    assert ("➕🤖 easy", "➕🤖 normal", "➕🤖 hard") in rows and ("➖🤖",) in rows
    timer = OPTION_NAMES.index("turn_timeout_s")
    timers = _rows(views.option_view(en, CHAT, Rules(), timer).markup)
    assert max(len(row) for row in timers) == 2
    nearest = OPTION_NAMES.index("challenge_priority")
    wide = _rows(views.option_view(nl, CHAT, house_rules(), nearest).markup)
    labels = [label for row in wide for label in row]
    one_a_row = any(views.label_width(label) > views.ROW_WIDTH[2] for label in labels)
    assert max(len(row) for row in wide) == (1 if one_a_row else 2)


#: The playing card back (U+1F0A0): many Android fonts draw it as an empty box.
CARD_BACK = "\U0001f0a0"


@pytest.mark.parametrize("lang", available_languages())
def test_no_card_back_emoji_in_any_view(lang: str) -> None:
    found = [
        f"{what}: {shown!r}"
        for what, text, rows in rendered(translator(lang))
        for shown in _texts(text, rows)
        if CARD_BACK in shown
    ]
    assert not found, "\n".join(found)
