"""A group's session as one compact JSON document, as it is stored.

The document is small on purpose (a 6-player game is under 4 KB, its story included: that keeps
its first and last moves only): cards are numbers, and rules are stored as the options that
differ from the defaults.
"""

from __future__ import annotations

from typing import Any

import orjson

from tgcheat.engine.cards import Card, Rank
from tgcheat.engine.events import ChallengeResolved, Passed, TriggerPulled
from tgcheat.engine.lobby import Lobby
from tgcheat.engine.match import Match
from tgcheat.engine.rules import Rules
from tgcheat.engine.state import (
    Claim,
    EndReason,
    GameState,
    PendingChallenge,
    Phase,
    Player,
    Result,
)
from tgcheat.engine.strategies import ComputerPlayers
from tgcheat.table.audiences import Announcement
from tgcheat.table.chronicle import GameTally, Notice, NoticeKind, SeatTally
from tgcheat.table.session import LobbyClock, Session
from tgcheat.table.story import AsideEntry, AsideKind, Entry, PlayEntry, Story
from tgcheat.table.told import Told

_DEFAULT_RULES = Rules().to_dict()


def encode(session: Session) -> bytes:
    doc: dict[str, Any] = {
        "c": session.chat_id,
        "g": session.game_id,
        "o": session.creator,
        "t": session.title,
        "lg": session.language,
        "pl": session.player_languages,
        "dl": session.deadline_ms,
    }
    if session.match is not None:
        doc["m"] = _match_doc(session.match)
    if session.notice is not None:
        notice = session.notice
        doc["nt"] = [notice.kind.value, notice.seat, notice.cards]
    if session.tally.seats:
        doc["ty"] = _tally_doc(session.tally)
    if not session.story.empty or session.story.told:
        doc["sy"] = _story_doc(session.story)
    if session.lobby is not None:
        doc["l"] = {"r": _rules_doc(session.lobby.rules), "p": session.lobby.players}
    if session.lobby_clock is not None:
        doc["lc"] = [session.lobby_clock.touched_ms, session.lobby_clock.minimum_reached_ms]
    if session.game is not None:
        doc["s"] = _state_doc(session.game)
    if session.computers:
        doc["cp"] = session.computers
    if session.computers_due_ms:
        doc["cd"] = session.computers_due_ms
    if session.computer_players is not None:
        doc["cx"] = session.computer_players.to_data()
    # Only a topic's session has them: a chat's document stays as it was.
    if session.topic is not None:
        doc["tp"] = session.topic
    if session.topic_title:
        doc["tt"] = session.topic_title
    if session.ended_ms:
        doc["em"] = session.ended_ms
    if session.changed_ms:
        doc["cm"] = session.changed_ms
    if session.lobby_expired:
        doc["lx"] = 1
    if session.without_group:
        doc["wg"] = 1
    if session.reminded_ms:
        doc["rm"] = session.reminded_ms
    if session.picks:
        doc["pk"] = [list(pick) for pick in session.picks]
    if session.told != Told():
        doc["td"] = _told_doc(session.told)
    return orjson.dumps(doc)


def decode(raw: bytes) -> Session:
    doc = orjson.loads(raw)
    lobby = None
    if "l" in doc:
        lobby = Lobby(
            creator=doc["o"],
            rules=Rules.from_dict(doc["l"]["r"]),
            players=tuple((uid, name) for uid, name in doc["l"]["p"]),
        )
    game = _state_from_doc(doc["s"]) if "s" in doc else None
    return Session(
        chat_id=doc["c"],
        game_id=doc["g"],
        creator=doc["o"],
        lobby=lobby,
        game=game,
        title=doc.get("t", ""),
        language=doc.get("lg", "en"),
        player_languages=tuple((uid, lang) for uid, lang in doc.get("pl", ())),
        deadline_ms=doc.get("dl", 0),
        match=_match_from_doc(doc["m"]) if "m" in doc else None,
        notice=_notice_from_doc(doc["nt"]) if "nt" in doc else None,
        tally=_tally_from_doc(doc["ty"]) if "ty" in doc else GameTally(),
        story=_story_from_doc(doc["sy"]) if "sy" in doc else Story(),
        # Absent from documents stored before lobbies had a clock (see ``lobby_clock_of``).
        lobby_clock=LobbyClock(*doc["lc"]) if "lc" in doc else None,
        computers=tuple((uid, level) for uid, level in doc.get("cp", ())),
        computers_due_ms=doc.get("cd", 0),
        computer_players=ComputerPlayers.from_data(doc["cx"]) if "cx" in doc else None,
        topic=doc.get("tp"),
        topic_title=doc.get("tt", ""),
        ended_ms=doc.get("em", 0),
        changed_ms=doc.get("cm", 0),
        lobby_expired=bool(doc.get("lx", 0)),
        without_group=bool(doc.get("wg", 0)),
        picks=tuple((int(u), int(n), str(sel)) for u, n, sel in doc.get("pk", ())),
        told=_told_from_doc(doc["td"]) if "td" in doc else Told(),
        reminded_ms=doc.get("rm", 0),
    )


def _told_doc(told: Told) -> list[Any]:
    lines: list[list[Any]] = []
    for seq, event in told.lines:
        if isinstance(event, ChallengeResolved):
            lines.append(
                [
                    seq,
                    event.challenger,
                    _claim_doc(event.claim),
                    list(event.revealed),
                    int(event.lie),
                    event.taker,
                    event.taken,
                    list(event.callers),
                ]
            )
        elif isinstance(event, TriggerPulled):
            lines.append([seq, event.seat, event.chamber, int(event.hit), "t"])
        else:
            rank = int(event.rank) if event.rank is not None else None
            lines.append([seq, event.seat, rank, int(event.by_vote)])
    epochs = [list(pair) for pair in told.hand_epochs]
    return [told.game_id, told.count, told.table_epoch, epochs, lines, list(told.turn_told)]


def _told_from_doc(doc: list[Any]) -> Told:
    game_id, count, table_epoch, epochs, lines, *rest = doc
    turn_told = (int(rest[0][0]), int(rest[0][1])) if rest else (-1, -1)
    numbered: list[tuple[int, Announcement]] = []
    for line in lines:
        if len(line) == 8:
            seq, challenger, claim, revealed, lie, taker, taken, callers = line
            event: Announcement = ChallengeResolved(
                challenger,
                _claim_from_doc(claim),
                tuple(Card(c) for c in revealed),
                bool(lie),
                taker,
                taken,
                tuple(callers),
            )
        elif len(line) == 5:
            seq, seat, chamber, hit, _ = line
            event = TriggerPulled(seat, chamber, bool(hit))
        else:
            seq, seat, rank, by_vote = line
            event = Passed(seat, Rank(rank) if rank is not None else None, bool(by_vote))
        numbered.append((seq, event))
    return Told(
        game_id=game_id,
        lines=tuple(numbered),
        count=count,
        table_epoch=table_epoch,
        hand_epochs=tuple((user, epoch) for user, epoch in epochs),
        turn_told=turn_told,
    )


def _notice_from_doc(doc: list[Any]) -> Notice:
    kind, seat, cards = doc
    return Notice(NoticeKind(kind), seat, cards)


def _tally_doc(tally: GameTally) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "s": [
            [s.plays, s.bluffs, s.bluffs_caught, s.right_calls, s.wrong_calls, s.cards_taken]
            for s in tally.seats
        ]
    }
    if tally.biggest_pile is not None:
        doc["b"] = list(tally.biggest_pile)
    return doc


def _tally_from_doc(doc: dict[str, Any]) -> GameTally:
    biggest = doc.get("b")
    return GameTally(
        tuple(SeatTally(*seat) for seat in doc["s"]),
        (biggest[0], biggest[1]) if biggest is not None else None,
    )


def _story_doc(story: Story) -> dict[str, Any]:
    doc: dict[str, Any] = {"o": [_entry_doc(e) for e in story.opening]}
    if story.closing:
        doc["c"] = [_entry_doc(e) for e in story.closing]
    if story.folded:
        doc["f"] = story.folded
    if story.told:
        doc["k"] = 1
    return doc


def _story_from_doc(doc: dict[str, Any]) -> Story:
    return Story(
        opening=tuple(_entry_from_doc(e) for e in doc["o"]),
        folded=doc.get("f", 0),
        closing=tuple(_entry_from_doc(e) for e in doc.get("c", ())),
        told=bool(doc.get("k", 0)),
    )


# A play: [number, seat, rank, cards, flags (1: a lie, 2: by timeout, 4: last cards)], then,
# when it was called, [caller, taker, taken]; an aside: [kind, seat], then its rank if it has one.
_LIE, _BY_TIMEOUT, _FINAL = 1, 2, 4


def _entry_doc(entry: Entry) -> list[Any]:
    if isinstance(entry, AsideEntry):
        rank = [int(entry.rank)] if entry.rank is not None else []
        return [entry.kind.value, entry.seat, *rank]
    flags = _LIE * entry.lie | _BY_TIMEOUT * entry.by_timeout | _FINAL * entry.final
    doc = [entry.number, entry.seat, int(entry.rank), list(entry.cards), flags]
    if entry.caller is not None:
        doc += [entry.caller, entry.taker, entry.taken]
    return doc


def _entry_from_doc(doc: list[Any]) -> Entry:
    if isinstance(doc[0], str):
        return AsideEntry(AsideKind(doc[0]), doc[1], Rank(doc[2]) if len(doc) > 2 else None)
    number, seat, rank, cards, flags, *called = doc
    caller, taker, taken = called or (None, None, 0)
    return PlayEntry(
        number,
        seat,
        Rank(rank),
        tuple(map(Card, cards)),
        bool(flags & _LIE),
        bool(flags & _BY_TIMEOUT),
        bool(flags & _FINAL),
        caller,
        taker,
        taken,
    )


def _match_doc(match: Match) -> dict[str, Any]:
    return {
        "r": _rules_doc(match.rules),
        "p": match.players,
        "d": match.dealer,
        "s": match.scores,
        "g": match.games,
        "l": match.left,
        "f": int(match.finished),
        "w": match.winner,
    }


def _match_from_doc(doc: dict[str, Any]) -> Match:
    return Match(
        rules=Rules.from_dict(doc["r"]),
        players=tuple((uid, name) for uid, name in doc["p"]),
        dealer=doc["d"],
        scores=tuple((uid, score) for uid, score in doc["s"]),
        games=doc["g"],
        left=tuple(doc["l"]),
        finished=bool(doc["f"]),
        winner=doc["w"],
    )


def _rules_doc(rules: Rules) -> dict[str, Any]:
    return {k: v for k, v in rules.to_dict().items() if _DEFAULT_RULES[k] != v}


def _claim_doc(claim: Claim) -> list[Any]:
    return [claim.number, claim.seat, list(claim.cards), int(claim.rank), int(claim.final)]


def _claim_from_doc(doc: list[Any]) -> Claim:
    number, seat, cards, rank, final = doc
    return Claim(number, seat, tuple(Card(c) for c in cards), Rank(rank), bool(final))


def _state_doc(state: GameState) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "r": _rules_doc(state.rules),
        "p": [_player_doc(p) for p in state.players],
        "d": state.dealer,
        "t": state.turn,
        "q": int(state.required) if state.required is not None else 0,
        "k": list(state.pile),
        "o": [_claim_doc(c) for c in state.open_claims],
        "n": state.plays,
        "f": state.phase.value,
    }
    if state.set_aside:
        doc["x"] = list(state.set_aside)
    if state.accepted:
        doc["a"] = sorted(state.accepted)
    if state.result is not None:
        doc["z"] = [state.result.reason.value, state.result.winner, state.result.places]
    if state.challenges:
        doc["ch"] = [[p.seat, p.claim, p.at_ms] for p in state.challenges]
    if state.vote_by is not None:
        doc["vb"] = state.vote_by
        doc["vy"] = state.votes_yes
    if state.pass_refused:
        doc["pr"] = 1
    if state.stock:
        doc["sk"] = list(state.stock)
    if state.round:
        doc["rd"] = state.round
    if state.seed:
        # Hexadecimal: the seed is wider than a JSON number keeps exactly.
        doc["sd"] = format(state.seed, "x")
    if state.pull_by is not None:
        doc["pb"] = [state.pull_by, state.pull_at_ms]
    if state.fallen:
        doc["fl"] = list(state.fallen)
    return doc


def _player_doc(player: Player) -> list[Any]:
    doc: list[Any] = [player.user_id, player.name, list(player.hand), int(player.left)]
    doc.append(player.timeouts)
    if player.bullet >= 0:
        # The revolver (``penalty=revolver``): its bullet's chamber and the pulls so far.
        doc += [player.bullet, player.pulls]
    return doc


def _player_from_doc(doc: list[Any]) -> Player:
    uid, name, hand, left, timeouts, *revolver = doc
    bullet, pulls = revolver or (-1, 0)
    return Player(uid, name, tuple(map(Card, hand)), bool(left), timeouts, bullet, pulls)


def _state_from_doc(doc: dict[str, Any]) -> GameState:
    result = None
    if "z" in doc:
        reason, winner, places = doc["z"]
        result = Result(EndReason(reason), winner, tuple((s, p) for s, p in places))
    return GameState(
        rules=Rules.from_dict(doc["r"]),
        players=tuple(_player_from_doc(p) for p in doc["p"]),
        dealer=doc["d"],
        turn=doc["t"],
        required=Rank(doc["q"]) if doc["q"] else None,
        pile=tuple(map(Card, doc["k"])),
        open_claims=tuple(_claim_from_doc(c) for c in doc["o"]),
        set_aside=tuple(map(Card, doc.get("x", ()))),
        plays=doc["n"],
        phase=Phase(doc["f"]),
        accepted=frozenset(doc.get("a", ())),
        result=result,
        challenges=tuple(
            PendingChallenge(seat, claim, at) for seat, claim, at in doc.get("ch", ())
        ),
        vote_by=doc.get("vb"),
        votes_yes=tuple(doc.get("vy", ())),
        pass_refused=bool(doc.get("pr", 0)),
        stock=tuple(map(Card, doc.get("sk", ()))),
        round=doc.get("rd", 0),
        seed=int(doc.get("sd", "0"), 16),
        pull_by=doc["pb"][0] if "pb" in doc else None,
        pull_at_ms=doc["pb"][1] if "pb" in doc else 0,
        fallen=tuple(doc.get("fl", ())),
    )
