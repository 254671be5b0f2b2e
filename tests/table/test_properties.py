"""Random sequences of what a group does (open a lobby, join and leave, start, play legal and
illegal moves, let the clock run, stop, kick, deal the next game of a match, change language
or rules, migrate, remove the bot) keep the session's invariants after every step, whether
the step was done or refused; a refused step leaves the session as it was. The lobby's clock
is followed from what the steps did: a full lobby counts down to the deal, and any player
may start one that has had its minimum of players long enough."""

from __future__ import annotations

import dataclasses
import pickle
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from tests.engine.helpers import random_action
from tgcheat.engine.actions import Accept, Action, Challenge, Pass, PassVote, Play
from tgcheat.engine.cards import Rank
from tgcheat.engine.game import ActionRefused, deck_of, pending_deadline_ms, play_limit
from tgcheat.engine.invariants import violations
from tgcheat.engine.rules import (
    PRESETS,
    ChallengePriority,
    InvalidRules,
    MatchKind,
    Passing,
    Rules,
    with_preset,
)
from tgcheat.engine.state import EndReason, GameState, Phase
from tgcheat.table import transitions as table
from tgcheat.table.chronicle import NoticeKind
from tgcheat.table.clock import (
    ANY_PLAYER_MAY_START_AFTER_S,
    FULL_LOBBY_COUNTDOWN_S,
    LOBBY_TIMEOUT_S,
)
from tgcheat.table.commands import (
    Believe,
    CallCheat,
    GameCommand,
    LeaveGame,
    PassTurn,
    PlayCards,
    StopGame,
    VoteOnPass,
)
from tgcheat.table.refusals import AdminUnknown, SessionRefusal, SessionRefused
from tgcheat.table.session import LobbyClock, Session
from tgcheat.table.transitions import Actor

from .builders import CHAT, T0

USERS = (1, 2, 3, 4, 5, 6, 7)
LANGUAGES = ("en", "it", "ru")
#: /kick arguments, numbers of seats at the table and others.
SEAT_NUMBERS = ("", "1", "2", "3", "5", "0", "-1", "x", "²", "٣")
LOBBY_MS = LOBBY_TIMEOUT_S * 1000
COUNTDOWN_MS = FULL_LOBBY_COUNTDOWN_S * 1000
WAIT_MS = ANY_PLAYER_MAY_START_AFTER_S * 1000


def _rule_sets() -> tuple[Rules, ...]:
    """Small tables with short games (a move cap), the clock on or off, each preset, each way
    of passing, Cheat! calls settled at once or after a grace period, single games and
    matches; invalid combinations left out."""
    found: list[Rules] = []
    for preset in PRESETS:
        for passing in Passing:
            for priority in ChallengePriority:
                for timer in (0, 30):
                    for match, target in ((MatchKind.SINGLE, 0), (MatchKind.FIRST_TO, 2)):
                        for low, high in ((2, 3), (3, 5)):
                            base = Rules(
                                passing=passing,
                                turn_timeout_s=timer,
                                match=match,
                                match_target=target,
                                min_players=low,
                                max_players=high,
                                move_cap=10,
                                afk_limit=2,
                            )
                            try:
                                rules = with_preset(base, preset)
                            except InvalidRules:
                                continue
                            found.append(dataclasses.replace(rules, challenge_priority=priority))
    return tuple(found)


RULE_SETS = _rule_sets()


@dataclass
class Group:
    """One group's session as the bot keeps it, and what the test knows of its past."""

    session: Session | None = None
    now: int = T0
    #: Every moment a step happened at: a deadline is counted from one of them.
    moments: set[int] = field(default_factory=lambda: {T0})
    #: Each person's language when they last joined this session's lobby.
    languages: dict[int, str] = field(default_factory=dict)
    #: Games of the session's match that have ended.
    games_ended: int = 0
    #: When the lobby was last opened, joined or filled by new rules, or any player was let
    #: start it.
    lobby_touched: int = 0
    #: When the lobby last reached its minimum of players (0: it has fewer).
    minimum_reached: int = 0
    ids: int = 0

    def new_id(self) -> str:
        self.ids += 1
        return f"g{self.ids}"


# --- the steps -----------------------------------------------------------------------------------


def _as_actor(user: int, rng: random.Random, change: Callable[[Actor], object]) -> object:
    """As the bot does: ask without knowing whether the person is an admin; when that
    matters, ask Telegram (here: a coin) and compute the change again."""
    try:
        return change(Actor(user))
    except AdminUnknown:
        return change(Actor(user, admin=rng.random() < 0.3))


def _manager_or_anyone(group: Group, user: int, rng: random.Random) -> int:
    session = group.session
    return session.creator if session is not None and rng.random() < 0.5 else user


def _game_id(group: Group, rng: random.Random) -> str:
    """Mostly the current game's, sometimes an older button's."""
    session = group.session
    if session is None or rng.random() < 0.1:
        return "g0"
    return session.game_id


def _as_command(game: GameState, action: Action) -> GameCommand | None:
    def uid(seat: int) -> int:
        return game.players[seat].user_id

    match action:
        case Play(seat, played, rank):
            return PlayCards(uid(seat), game.plays, Counter(c.rank for c in played), rank)
        case Challenge(seat, claim, now_ms):
            return CallCheat(uid(seat), claim, now_ms)
        case Accept(seat, claim):
            return Believe(uid(seat), claim)
        case Pass(seat):
            return PassTurn(uid(seat), game.plays)
        case PassVote(seat, yes):
            return VoteOnPass(uid(seat), game.plays, yes)
    return None


def _any_command(game: GameState | None, user: int, rng: random.Random, now: int) -> GameCommand:
    """A command from anybody, of any kind, at about the current play count: mostly refused."""
    players = [p.user_id for p in game.players] if game is not None else []
    user = rng.choice(players) if players and rng.random() < 0.8 else user
    plays = (game.plays if game is not None else 0) + rng.choice((0, 0, 0, -1, 1))
    rank = rng.choice(list(Rank))
    match rng.randrange(7):
        case 0:
            picked = Counter({rng.choice(list(Rank)): rng.randint(0, 3)})
            return PlayCards(user, plays, picked, rank)
        case 1:
            return CallCheat(user, plays + rng.choice((0, 1)), now)
        case 2:
            return Believe(user, plays + rng.choice((0, 1)))
        case 3:
            return PassTurn(user, plays)
        case 4:
            return VoteOnPass(user, plays, rng.random() < 0.5)
        case 5:
            return LeaveGame(user)
        case _:
            return StopGame()


def _act(group: Group, user: int, rng: random.Random) -> object:
    session = group.session
    game = session.game if session is not None else None
    command: GameCommand | None = None
    if game is not None and game.phase is not Phase.FINISHED and rng.random() < 0.85:
        command = _as_command(game, random_action(game, rng, group.now))
    if command is None:
        command = _any_command(game, user, rng, group.now)
    game_id = None if rng.random() < 0.1 else _game_id(group, rng)
    return table.act(session, game_id=game_id, command=command, now_ms=group.now)


def _open(group: Group, user: int, rng: random.Random) -> object:
    return table.open_lobby(
        group.session,
        chat_id=CHAT,
        game_id=group.new_id(),
        creator=user,
        rules=rng.choice(RULE_SETS),
        title="Friday cards",
        language=rng.choice(LANGUAGES),
        now_ms=group.now,
    )


def _join(group: Group, user: int, rng: random.Random) -> object:
    language = rng.choice(LANGUAGES)
    joined = table.join(
        group.session, user_id=user, name=f"U{user}", language=language, now_ms=group.now
    )
    group.languages[user] = language
    return joined


def _start(group: Group, user: int, rng: random.Random) -> object:
    game_id = _game_id(group, rng)
    return _as_actor(
        _manager_or_anyone(group, user, rng),
        rng,
        lambda actor: table.start(
            group.session, game_id=game_id, actor=actor, rng=rng, now_ms=group.now
        ),
    )


def _start_as_player(group: Group, user: int, rng: random.Random) -> object:
    """Start tapped by someone who is not an admin, mostly a player in the lobby: let through
    when they opened it, or when they are in it and it has had its minimum of players for the
    wait; else NOT_ALLOWED."""
    session = group.session
    lobby = session.lobby if session is not None else None
    if lobby is not None and lobby.players and rng.random() < 0.8:
        user = rng.choice(lobby.players)[0]
    waited = group.minimum_reached != 0 and group.now >= group.minimum_reached + WAIT_MS
    allowed = session is not None and (
        user == session.creator or (lobby is not None and lobby.has(user) and waited)
    )
    try:
        dealt = table.start(
            session,
            game_id=_game_id(group, rng),
            actor=Actor(user, admin=False),
            rng=rng,
            now_ms=group.now,
        )
    except SessionRefused as refused:
        assert refused.reason is not SessionRefusal.NOT_ALLOWED or not allowed, "let wait"
        raise
    assert allowed, "a player started the game before the wait was over"
    return dealt


def _deal(group: Group, user: int, rng: random.Random) -> object:
    """The lobby's creator taps Start."""
    session = group.session
    creator = session.creator if session is not None else user
    return table.start(
        session, game_id=_game_id(group, rng), actor=Actor(creator), rng=rng, now_ms=group.now
    )


def _cancel(group: Group, user: int, rng: random.Random) -> object:
    game_id = None if rng.random() < 0.3 else _game_id(group, rng)
    return _as_actor(
        _manager_or_anyone(group, user, rng),
        rng,
        lambda actor: table.cancel(group.session, game_id=game_id, actor=actor),
    )


def _stop(group: Group, user: int, rng: random.Random) -> object:
    return _as_actor(
        _manager_or_anyone(group, user, rng),
        rng,
        lambda actor: table.stop(group.session, actor=actor, now_ms=group.now),
    )


def _kick(group: Group, user: int, rng: random.Random) -> object:
    """/kick by the creator (half the time) or anyone, by reply or by number. Nobody kicks
    their way to a win: in a game, a creator who is no admin removes only an absent player,
    and a kick never leaves a last player as the winner."""
    session = group.session
    game = session.live_game if session is not None else None
    if game is not None and rng.random() < 0.6:
        user = rng.choice(game.players).user_id
    target = user if rng.random() < 0.5 else None
    seat_number = rng.choice(SEAT_NUMBERS)
    actors: list[Actor] = []

    def kick(actor: Actor) -> tuple[Session | None, table.Events]:
        actors.append(actor)
        return table.kick(
            session, target=target, seat_number=seat_number, actor=actor, now_ms=group.now
        )

    try:
        after, events = _as_actor(_manager_or_anyone(group, rng.choice(USERS), rng), rng, kick)
    except SessionRefused as refused:
        if refused.reason is SessionRefusal.KICK_NOT_ABSENT:
            assert actors[-1].admin is not True, "an admin was refused a kick"
        raise
    if game is not None and after is not None and after.game is not None:
        notice = after.notice
        assert notice is not None and notice.kind is NoticeKind.KICKED, "a kick is told"
        if not actors[-1].admin:
            assert table.is_absent(game, notice.seat), "the creator kicked a player who is there"
        result = after.game.result
        assert result is None or result.reason is not EndReason.LAST_PLAYER, "a kick won a game"
        if result is not None and result.reason is EndReason.STOPPED:
            assert len(game.active_seats()) == 2, "a kick stopped a game that could go on"
    return after, events


def _next_game(group: Group, user: int, rng: random.Random) -> object:
    """Mostly a player of the match taps Next game."""
    session = group.session
    if session is not None and session.match is not None and rng.random() < 0.7:
        user = rng.choice(session.match.players)[0]
    game_id = _game_id(group, rng)
    new_game_id = group.new_id()
    return _as_actor(
        user,
        rng,
        lambda actor: table.next_game(
            group.session,
            game_id=game_id,
            actor=actor,
            new_game_id=new_game_id,
            rng=rng,
            now_ms=group.now,
        ),
    )


def _tick_later(group: Group, user: int, rng: random.Random) -> object:
    """The clock's look some time later: mostly within a turn, now and then long after (a
    lobby nobody started expires)."""
    group.now += rng.randrange(0, 60_000) if rng.random() < 0.9 else rng.randrange(0, 2_400_000)
    return table.tick(group.session, group.now, rng=rng)


def _tick_when_due(group: Group, user: int, rng: random.Random) -> object:
    """The clock fires a game's deadline, a full lobby's countdown or the moment any player
    may start a lobby (a lobby's expiry is left to ``tick later``)."""
    session = group.session
    if session is not None and session.deadline_ms:
        soon = session.deadline_ms - group.now <= WAIT_MS
        if session.game is not None or (session.lobby is not None and soon):
            group.now = max(group.now, session.deadline_ms)
    return table.tick(group.session, group.now, rng=rng)


def _migrate(group: Group, user: int, rng: random.Random) -> object:
    session = group.session
    if session is None or not session.in_progress:
        return session
    moved = table.migrated(session, new_chat_id=CHAT - 1, new_game_id=group.new_id())
    return table.arrive(None, moved)


def _pick(group: Group, user: int, rng: random.Random) -> object:
    """A tap on a rank of a hand keyboard, mostly the player to play's, on top of some
    selection already made."""
    session = group.session
    game = session.game if session is not None else None
    selected: Counter[Rank] = Counter()
    plays = 0
    if game is not None:
        seat = game.turn if rng.random() < 0.6 else rng.randrange(len(game.players))
        user = game.players[seat].user_id
        plays = game.plays + rng.choice((0, 0, 0, 1))
        held = Counter(c.rank for c in game.players[seat].hand)
        selected = Counter({r: rng.randint(1, n) for r, n in held.items() if rng.random() < 0.2})
    rank = rng.choice([*Rank, None])
    same, shown, seat, chosen = table.pick(
        session,
        game_id=_game_id(group, rng),
        user_id=user,
        plays=plays,
        selected=selected,
        rank=rank,
    )
    # Only the selection is stored (for the hand to show): the session is otherwise as it
    # was. The selection grows by the card tapped (or is cleared), within what the hand holds
    # and the play allows.
    assert session is not None and shown is game
    assert dataclasses.replace(same, picks=session.picks) == session
    assert same.picked(user) == "".join(r.code for r in sorted(chosen.elements()))
    assert chosen == (Counter() if rank is None else selected + Counter({rank: 1}))
    hand = Counter(c.rank for c in shown.players[seat].hand)
    assert all(count <= hand[r] for r, count in chosen.items())
    assert sum(chosen.values()) <= play_limit(shown, seat)
    return same


STEPS: dict[str, Callable[[Group, int, random.Random], object]] = {
    "open": _open,
    "join": _join,
    "leave": lambda g, user, rng: table.leave_table(g.session, user, g.now),
    "start": _start,
    "deal": _deal,
    "start as a player": _start_as_player,
    "leave button": lambda g, user, rng: table.leave(g.session, user, game_id=_game_id(g, rng)),
    "cancel": _cancel,
    "act": _act,
    "tick later": _tick_later,
    "tick when due": _tick_when_due,
    "stop": _stop,
    "kick": _kick,
    "remove": lambda g, user, rng: table.remove(g.session, user, g.now),
    "next game": _next_game,
    "language": lambda g, user, rng: table.set_language(g.session, rng.choice(LANGUAGES)),
    "rules": lambda g, user, rng: table.adopt_rules(g.session, rng.choice(RULE_SETS), now_ms=g.now),
    "migrate": _migrate,
    "bot removed": lambda g, user, rng: table.end_without_group(g.session),
    "pick": _pick,
}
#: How often each step is drawn (out of the sum): mostly playing, joining, dealing and the
#: clock; the bot removed from the group (the session then forgotten) seldom.
WEIGHTS = {
    "act": 40,
    "join": 12,
    "open": 8,
    "deal": 8,
    "tick when due": 8,
    "tick later": 4,
    "next game": 6,
    "pick": 4,
    "migrate": 2,
    "stop": 1,
    "cancel": 1,
    "bot removed": 1,
}
KINDS = tuple(STEPS)
KIND_WEIGHTS = tuple(WEIGHTS.get(kind, 3) for kind in KINDS)


# --- the invariants ------------------------------------------------------------------------------


def _deck_size(game: GameState) -> int:
    return len(deck_of(game.rules, len(game.players)))


def _check(group: Group) -> None:
    session = group.session
    if session is None:
        return
    lobby, game = session.lobby, session.game
    assert lobby is None or game is None, "a lobby and a game at once"
    if lobby is not None:
        ids = [uid for uid, _ in lobby.players]
        assert len(ids) == len(set(ids)), "someone joined twice"
        assert len(ids) <= lobby.rules.max_players, "more players than the rules allow"
        assert lobby.creator == session.creator
        clock = LobbyClock(group.lobby_touched, group.minimum_reached)
        assert session.lobby_clock == clock, "the lobby's clock follows what happened"
        opening = group.minimum_reached + WAIT_MS
        if lobby.full:
            assert session.deadline_ms == group.lobby_touched + COUNTDOWN_MS, "a countdown"
        elif group.minimum_reached and opening > group.lobby_touched:
            assert session.deadline_ms == opening, "any player is let start it on time"
        else:
            assert session.deadline_ms == group.lobby_touched + LOBBY_MS, "30 min after a join"
        for uid in ids:
            assert session.language_of(uid) == group.languages[uid], "language of the last join"
        return
    if game is None:
        assert session.deadline_ms == 0, "nothing waits, yet a deadline"
        return
    ids = [p.user_id for p in game.players]
    assert len(ids) == len(set(ids)), "someone seated twice"
    assert violations(game, _deck_size(game)) == []
    for uid in ids:
        assert session.language_of(uid) == group.languages[uid], "language of the last join"
    _check_deadline(group, session, game)
    match = session.match
    if match is not None:
        assert match.games == group.games_ended, "each game of the match scored once"
        assert set(ids) <= {uid for uid, _ in match.players}
        assert game.rules == match.rules


def _check_deadline(group: Group, session: Session, game: GameState) -> None:
    """As ``game_deadline`` defines it: never once finished; the end of the grace period of
    a pending Cheat! call; else never without a turn timer, and otherwise a whole turn after
    some moment a wait began."""
    deadline = session.deadline_ms
    if game.phase is Phase.FINISHED:
        assert deadline == 0, "a finished game keeps a deadline"
        return
    grace_end = pending_deadline_ms(game)
    if grace_end is not None:
        assert deadline == grace_end, "a Cheat! call is settled at the end of its grace period"
        return
    timeout_ms = game.rules.turn_timeout_s * 1000
    if timeout_ms == 0:
        assert deadline == 0, "no turn timer, yet a deadline"
        return
    assert deadline - timeout_ms in group.moments, "a turn deadline is a whole turn long"


def _observe(group: Group, kind: str, before: Session | None, after: Session | None) -> None:
    """What the test must remember of a step that was done."""
    if kind == "open":
        # A new session: nobody has joined it yet.
        group.languages = {}
    if kind in ("open", "start", "deal", "start as a player"):
        group.games_ended = 0
    if kind == "open":
        group.minimum_reached = 0
    if before is not None and before.lobby is not None and after is not None:
        if after.game is not None:
            # Dealt: by Start (checked by its step) or by the clock, for a full lobby only.
            assert kind.startswith("start") or kind == "deal" or before.lobby.full
            group.games_ended = 0
        elif after.lobby is None and kind.startswith("tick"):
            assert not before.lobby.full, "a full lobby expired instead of being dealt"
    was_live = before is not None and before.live_game is not None
    ended = after is not None and after.game is not None and after.game.phase is Phase.FINISHED
    if was_live and ended and after is not None and after.match is not None:
        group.games_ended += 1
    _observe_lobby(group, kind, before, after)


def _observe_lobby(group: Group, kind: str, before: Session | None, after: Session | None) -> None:
    """The moments the lobby's clock counts from, as the steps moved them."""
    lobby = after.lobby if after is not None else None
    if lobby is None or after is before:
        return
    was_full = before is not None and before.lobby is not None and before.lobby.full
    if kind in ("open", "join") or (kind == "rules" and lobby.full and not was_full):
        group.lobby_touched = group.now
    elif kind.startswith("tick"):
        # The clock touched a lobby it neither dealt nor closed: any player may now start it.
        opening = group.minimum_reached + WAIT_MS
        assert group.minimum_reached and opening <= group.now, "the clock acted early"
        group.lobby_touched = opening
    if len(lobby.players) < lobby.rules.min_players:
        group.minimum_reached = 0
    elif not group.minimum_reached:
        group.minimum_reached = group.now


def _run(group: Group, kind: str, user: int, seed: int) -> None:
    rng = random.Random(seed)
    group.now += rng.randrange(1, 5_000)
    group.moments.add(group.now)
    before = group.session
    # The session given, byte for byte: no step may change it, done or refused.
    given_bytes = pickle.dumps(before)
    after: object
    try:
        result = STEPS[kind](group, user, rng)
    except (SessionRefused, ActionRefused) as refused:
        # Refused: the caller keeps the session it had.
        note(f"{kind} by {user} at {group.now}: refused, {refused.reason}")
        after = before
    else:
        note(f"{kind} by {user} at {group.now}: done")
        after = result[0] if isinstance(result, tuple) else result
        assert after is None or isinstance(after, Session)
        _observe(group, kind, before, after)
    assert pickle.dumps(before) == given_bytes, f"{kind} changed the session it was given"
    group.moments.add(group.now)
    group.session = after
    _check(group)
    if kind == "bot removed":
        # The bot forgets the group (``forget_chat``) once the players were told.
        group.session = None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**32 - 1), length=st.integers(30, 120))
def test_random_group_activity_keeps_the_session_invariants(seed: int, length: int) -> None:
    """Each group begins with a lobby some people joined, most often dealt, so that the
    ``length`` random steps that follow (drawn from ``seed``) meet games in every phase."""
    rng = random.Random(seed)
    group = Group()
    creator = rng.choice(USERS)
    _run(group, "open", creator, rng.getrandbits(32))
    for user in rng.sample(USERS, rng.randint(2, 6)):
        _run(group, "join", user, rng.getrandbits(32))
    if rng.random() < 0.9:
        _run(group, "deal", creator, rng.getrandbits(32))
    for _ in range(length):
        kind = rng.choices(KINDS, KIND_WEIGHTS)[0]
        _run(group, kind, rng.choice(USERS), rng.getrandbits(32))


def test_rule_sets_cover_the_options_the_table_branches_on() -> None:
    """The random groups play under both ways of answering, with and without a clock, single
    games and matches, every way of passing and of settling Cheat! calls."""
    assert {r.challengers for r in RULE_SETS} == {r.challengers for r in PRESETS.values()}
    assert {r.final_check for r in RULE_SETS} == {r.final_check for r in PRESETS.values()}
    assert {r.turn_timeout_s for r in RULE_SETS} == {0, 30}
    assert {r.match for r in RULE_SETS} == {MatchKind.SINGLE, MatchKind.FIRST_TO}
    assert set(Passing) == {r.passing for r in RULE_SETS}
    assert set(ChallengePriority) == {r.challenge_priority for r in RULE_SETS}
    assert all(r.validate() is r for r in RULE_SETS)
