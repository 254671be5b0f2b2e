"""A session's document (tgcheat.store.codec): it survives encoding, and it is small."""

from __future__ import annotations

import dataclasses
import random

import orjson
import pytest

from tests.engine.helpers import random_action
from tests.store.helpers import CHAT, game_session
from tgcheat.engine.game import apply
from tgcheat.engine.lobby import Lobby
from tgcheat.engine.rules import Rules
from tgcheat.engine.state import Phase
from tgcheat.store.codec import decode, encode
from tgcheat.table.progress import advance
from tgcheat.table.session import LobbyClock, Session
from tgcheat.table.told import told_after


def test_a_session_survives_encoding_at_every_step_of_a_game() -> None:
    rng = random.Random(5)
    session = game_session()
    assert session.game is not None
    state = session.game
    while state.phase is not Phase.FINISHED:
        state, _ = apply(state, random_action(state, rng))
        again = decode(encode(dataclasses.replace(session, game=state)))
        assert again.game == state
    lobby = Session(CHAT, "zz9", 5, lobby=Lobby(5, Rules(max_cards=0), ((5, "Ann <&>"),)))
    assert decode(encode(lobby)) == lobby


def test_a_lobby_keeps_its_clock_and_a_document_stored_without_one_still_reads() -> None:
    lobby = Session(
        CHAT,
        "zz9",
        5,
        lobby=Lobby(5, Rules(), ((5, "Ann"), (6, "Bob"), (7, "Cy"))),
        deadline_ms=1_700_000_180_000,
        lobby_clock=LobbyClock(touched_ms=1_700_000_000_500, minimum_reached_ms=1_700_000_000_000),
    )
    assert decode(encode(lobby)) == lobby
    older = orjson.loads(encode(lobby))
    del older["lc"]
    assert decode(orjson.dumps(older)) == dataclasses.replace(lobby, lobby_clock=None)


def test_a_six_player_game_is_small() -> None:
    assert len(encode(game_session(6))) <= 4096


@pytest.mark.parametrize("players", [3, 6])
def test_rules_keep_only_what_differs_from_the_defaults(players: int) -> None:
    session = game_session(players)
    assert b'"r":{}' in encode(session)


def test_a_finished_game_keeps_when_it_ended() -> None:
    finished = dataclasses.replace(game_session(), ended_ms=1_700_000_000_123)
    assert decode(encode(finished)).ended_ms == 1_700_000_000_123
    # A game still played, or stored before the time was kept, reads 0.
    assert "em" not in orjson.loads(encode(game_session()))
    assert decode(encode(game_session())).ended_ms == 0


def test_what_players_must_be_told_survives_encoding() -> None:
    """The session's log (reveals and passes, the epochs) as every change leaves it, through
    the table's ``advance``: read back equal, at every step of a game with reveals."""
    rng = random.Random(11)
    session = game_session()
    assert session.game is not None
    state = session.game
    lines = 0
    while state.phase is not Phase.FINISHED:
        state, events = apply(state, random_action(state, rng))
        session = advance(session, state, events, 1_000)
        assert decode(encode(session)).told == session.told
        lines = session.told.count
    assert lines > 0, "the game had reveals or passes to tell"
    # A new game does not continue the last one's log.
    restarted = told_after(session.told, "other-game", state, ())
    assert restarted.game_id == "other-game" and restarted.count == 0
