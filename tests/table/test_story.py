"""A game's story, kept from the engine's events: every play as it really was, how it was
answered, bounded however long the game; and its view, which never draws a live game and
always fits one Telegram message."""

from __future__ import annotations

import dataclasses
import random
import re

import pytest

from tests.engine.helpers import cards, random_action, state_with
from tgcheat.bot import views
from tgcheat.engine.cards import Card, Rank
from tgcheat.engine.events import CardsPlayed, ChallengeResolved, Event, Passed, PlayerLeft
from tgcheat.engine.game import apply, is_lie, new_game, random_seating
from tgcheat.engine.rules import MAX_MOVE_CAP, Passing, Rules
from tgcheat.engine.state import Claim, EndReason, Phase, Result
from tgcheat.i18n import available_languages, translator
from tgcheat.store.codec import decode, encode
from tgcheat.table.chronicle import GameTally, SeatTally
from tgcheat.table.progress import advance
from tgcheat.table.session import Session
from tgcheat.table.story import (
    CLOSING,
    OPENING,
    AsideEntry,
    AsideKind,
    PlayEntry,
    Story,
    storied,
)

RULES = Rules(passing=Passing.VOTE, move_cap=MAX_MOVE_CAP)


def _random_game(seed: int) -> tuple[Session, list[Event]]:
    """A game of four random players, through the session layer; its events in order."""
    rng = random.Random(seed)
    seating = random_seating(tuple((i, f"P{i}") for i in range(1, 5)), rng)
    state, events = new_game(RULES, seating, rng)
    session = advance(Session(-1, "g", 1), state, events, 0)
    every: list[Event] = list(events)
    step = 0
    while state.phase is not Phase.FINISHED:
        step += 1
        state, events = apply(state, random_action(state, rng, step * 1000))
        session = advance(session, state, events, step * 1000)
        every += events
    return session, every


@pytest.mark.parametrize("seed", range(6))
def test_a_random_games_story_is_its_plays_and_calls(seed: int) -> None:
    session, events = _random_game(seed)
    plays = {e.claim.number: e for e in events if isinstance(e, CardsPlayed)}
    calls = {e.claim.number: e for e in events if isinstance(e, ChallengeResolved)}
    moves = [e for e in events if isinstance(e, CardsPlayed | Passed | PlayerLeft)]
    story = session.story
    assert len(story.opening) == min(OPENING, len(moves))
    assert len(story.entries) + story.folded == len(moves)
    assert len(story.closing) <= CLOSING
    for entry in story.entries:
        if not isinstance(entry, PlayEntry):
            continue
        played = plays[entry.number].claim
        assert (entry.seat, entry.rank, entry.cards) == (played.seat, played.rank, played.cards)
        assert entry.lie == is_lie(RULES, played) and entry.final == played.final
        call = calls.get(entry.number)
        if call is None:
            assert entry.caller is None
        else:
            assert (entry.caller, entry.taker, entry.taken) == (
                call.challenger,
                call.taker,
                call.taken,
            )
    assert decode(encode(session)).story == story


def _longest_story(cards_a_play: int) -> Story:
    """As many plays as the move cap allows, each of ``cards_a_play`` cards, every other one
    called."""
    story = Story()
    hand = tuple(Card(code) for code in range(cards_a_play))
    for number in range(1, MAX_MOVE_CAP + 1):
        claim = Claim(number, number % 6, hand, Rank.KING, final=number == MAX_MOVE_CAP)
        events: list[Event] = [CardsPlayed(claim, by_timeout=number % 5 == 0)]
        if number % 2 == 0:
            events.append(ChallengeResolved((number + 1) % 6, claim, hand, True, claim.seat, 99))
        story = storied(story, RULES, events)
    return story


def test_the_story_stays_bounded_however_long_the_game() -> None:
    story = _longest_story(4)
    assert len(story.entries) == OPENING + CLOSING
    assert story.folded == MAX_MOVE_CAP - OPENING - CLOSING
    assert [e.number for e in story.opening] == list(range(1, OPENING + 1))
    assert story.closing[-1].number == MAX_MOVE_CAP  # type: ignore[union-attr]
    session = Session(-1, "g", 1, story=story)
    grown = len(encode(session)) - len(encode(Session(-1, "g", 1)))
    # 50 plays of 4 cards, half of them called: about 1.6 KB whatever the game's length.
    assert grown < 2_500


def _finished_session(story: Story, name: str) -> Session:
    state = state_with(
        [cards("A♣"), cards("2♣"), cards("3♣"), cards("4♣"), cards("5♣"), cards("6♣")]
    )
    players = tuple(
        dataclasses.replace(p, name=f"{name}{seat}") for seat, p in enumerate(state.players)
    )
    done = dataclasses.replace(
        state,
        players=players,
        phase=Phase.FINISHED,
        result=Result(EndReason.MOVE_CAP, 0, ((0, 1),)),
    )
    return Session(-1, "g", 1, game=done, story=story)


@pytest.mark.parametrize("lang", available_languages())
def test_the_longest_games_story_fits_one_message(lang: str) -> None:
    """Plays of twelve cards (``max_cards`` may allow the whole hand), long names, the move
    cap's 10,000 plays: more is folded, never cut by Telegram."""
    story = _longest_story(12)
    view = views.story_view(translator(lang), _finished_session(story, "Long-named player " * 4))
    assert views.telegram_length(view.text) <= 4096
    [fold] = [line for line in view.text.split("\n") if "⋯" in line]
    # The message folds more than the story stored folded: twelve cards a line are long.
    assert int("".join(c for c in fold if c.isdigit())) > story.folded


def test_a_short_games_story_is_whole() -> None:
    story = _longest_story(1)
    short = Story(opening=story.opening[:3])
    text = views.story_view(translator("en"), _finished_session(short, "P")).text
    # The header and a blank line, three plays, a blank line after the pile taken.
    assert "⋯" not in text and text.count("\n") == 2 + 2 + 1


def test_a_story_line_is_punctuated_as_its_language_writes() -> None:
    """The line's punctuation is the catalog's, not the code's: French puts a non-breaking
    space before the colon ("P0 : un as"), English none; the outcome of a caught bluff
    names who takes the pile."""
    play = PlayEntry(1, 0, Rank.ACE, cards("K♦"), lie=True, caller=1, taker=0, taken=3)
    session = _finished_session(Story(opening=(play,)), "P")
    french = views.story_view(translator("fr"), session).text
    english = views.story_view(translator("en"), session).text
    p0, p1 = views.name_html("P0", 16), views.name_html("P1", 16)
    assert f"1. {p0}\u00a0: un as" in french
    assert f"1. {p0}: one ace — K♦ ❌ {p1} catches the bluff; {p0} takes 3" in english


def test_the_story_of_a_live_game_is_never_drawn() -> None:
    session = _finished_session(_longest_story(1), "P")
    assert session.game is not None
    live = dataclasses.replace(
        session, game=dataclasses.replace(session.game, phase=Phase.PLAYING, result=None)
    )
    with pytest.raises(views.LiveGameStory):
        views.story_view(translator("en"), live)


def test_every_entry_survives_the_store() -> None:
    entries = (
        PlayEntry(1, 0, Rank.SEVEN, cards("7♣", "7♥"), lie=False),
        PlayEntry(2, 1, Rank.EIGHT, cards("K♦"), lie=True, caller=2, taker=1, taken=3),
        PlayEntry(3, 2, Rank.NINE, cards("K♦"), lie=True, by_timeout=True, final=True),
        *(
            AsideEntry(kind, 1, Rank.JACK if kind is AsideKind.PASSED_EXHAUSTED else None)
            for kind in AsideKind
        ),
    )
    story = Story(opening=entries[:2], folded=7, closing=entries[2:], told=True)
    assert decode(encode(Session(-1, "g", 1, story=story))).story == story


# --- the awards, on the result -----------------------------------------------------------------


def _summary(tally: GameTally) -> str:
    state = _finished_session(Story(), "P").game
    assert state is not None
    text = "\n".join(views.summary_lines(translator("en"), state, tally))
    return re.sub("<[^>]*>|[\u2068\u2069]", "", text)


def test_awards_level_at_the_top_are_shared() -> None:
    tally = GameTally(
        (SeatTally(5, 3, 1, 2, 0, 0), SeatTally(4, 2, 0, 2, 1, 7), SeatTally(3, 1, 1, 1, 0, 0)),
        (7, 1),
    )
    text = _summary(tally)
    # A title shared is said in the plural: "Best liars: A and B", not "Best liar: A and B".
    assert "🔎 Sharpest eyes: P0 and P1, each with 2 bluffs caught." in text
    assert "🤥 Best liars: P0 and P1, each with 2 bluffs nobody caught." in text
    assert "🧺 Biggest pile taken: 7 cards, by P1." in text
    three = GameTally(tuple(SeatTally(3, 1, 0, 0, 0, 0) for _ in range(3)), None)
    assert "🤥 Best liars: P0, P1 and P2, each with 1 bluff nobody caught." in _summary(three)


def test_a_shared_award_has_a_plural_title_in_every_language() -> None:
    """Each language's title for an award two players share is its own, not the singular's."""
    state = _finished_session(Story(), "P").game
    assert state is not None
    shared = GameTally((SeatTally(4, 2, 0, 2, 0, 0), SeatTally(4, 2, 0, 2, 0, 0)), None)
    alone = GameTally((SeatTally(4, 2, 0, 2, 0, 0), SeatTally(4, 1, 0, 1, 0, 0)), None)
    for lang in available_languages():
        tr = translator(lang)
        both = views.summary_lines(tr, state, shared)[1:]
        one = views.summary_lines(tr, state, alone)[1:]
        assert len(both) == len(one) == 2, (lang, both, one)
        for with_two, with_one in zip(both, one, strict=True):
            title = with_one.split(views.name_html("P0"))[0]
            if lang == "id":
                # Indonesian nouns take no plural: "masing-masing" (each) says it is shared.
                assert "masing-masing" in with_two, with_two
            else:
                assert not with_two.startswith(title), (lang, with_two, with_one)


def test_an_award_nobody_earned_is_not_given() -> None:
    honest = GameTally((SeatTally(5, 0, 0, 0, 2, 3), SeatTally(4, 1, 1, 0, 0, 0)), None)
    text = _summary(honest)
    assert "Best liar" not in text and "Sharpest eye" not in text and "Biggest pile" not in text
    liar = GameTally((SeatTally(5, 1, 0, 0, 0, 0), SeatTally(4, 0, 0, 0, 0, 0)), None)
    assert "🤥 Best liar: P0, 1 bluff nobody caught." in _summary(liar)
