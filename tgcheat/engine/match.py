"""A match of games (RULES.md ``match``): single, first_to_N, best_of_N or penalty_N.

The seating stays the same for the whole match and the dealer moves one seat on for each game
(RULES.md "Common to every variant"). Scores are kept per user id, so a game's seats map back
to the match's players whoever left.

Where RULES.md is silent, decided as players of the Italian text's optional scoring expect:

- ``first_to_N``: a game won scores 1; the first to N wins. A draw (move cap) scores nothing.
- ``best_of_N``: a game won scores 1; after N games the most wins takes the match, or earlier
  once no one can catch up with the leader.
- ``penalty_N``: after each game every loser scores the cards left in their hand («conta le
  carte che ogni perdente ha in mano»); the winner scores 0, also at the move cap (they are not
  a loser); in a draw everyone scores their cards. After N games the lowest total wins.
- A tie for the lead when the N games are over (best_of, penalty) is settled by playing on, one
  game at a time, until one player leads alone: Cheat has a single winner («ogni turno ha un
  solo vincitore»), and that is what a table does. A shared win never happens.
- A player who leaves or is removed during a game leaves the match: they are not seated again
  and cannot win it (their score stays on the board, after the others). When fewer players
  remain than the rules need (``min_players``, at least two), the match ends: the leader among
  those left wins, or nobody on a tie.
- A game stopped by its creator or an admin ends the match without a winner.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from tgcheat.engine.game import Seating
from tgcheat.engine.rules import MIN_PLAYERS, MatchKind, Rules
from tgcheat.engine.state import EndReason, GameState, Phase


@dataclass(frozen=True, slots=True)
class Match:
    rules: Rules
    #: (user id, name) in seating order, for every game of the match.
    players: tuple[tuple[int, str], ...]
    #: Seat (index into ``players``) of the next game's dealer.
    dealer: int
    #: (user id, score) in seating order: games won, or penalty cards under ``penalty_N``.
    scores: tuple[tuple[int, int], ...]
    #: Games recorded so far.
    games: int = 0
    #: User ids of players who left the match.
    left: tuple[int, ...] = ()
    finished: bool = False
    #: User id of the match's winner; None while it goes on, or when it ended without one.
    winner: int | None = None

    def score_of(self, user_id: int) -> int:
        return dict(self.scores)[user_id]


def new_match(rules: Rules, seating: Seating) -> Match:
    """A match for the first game's seating (``random_seating``: random seats and dealer)."""
    return Match(
        rules=rules,
        players=seating.players,
        dealer=seating.dealer,
        scores=tuple((uid, 0) for uid, _ in seating.players),
    )


def remaining(match: Match) -> tuple[tuple[int, str], ...]:
    """The players still in the match, in seating order."""
    return tuple(p for p in match.players if p[0] not in match.left)


def next_seating(match: Match) -> Seating:
    """The next game's seating: the same order without those who left, and the dealer."""
    players = remaining(match)
    dealer_uid = match.players[match.dealer][0]
    return Seating(players, next(i for i, p in enumerate(players) if p[0] == dealer_uid))


def record_game(match: Match, game: GameState) -> Match:
    """The match after ``game`` (played with ``next_seating(match)``) has finished."""
    if match.finished:
        raise ValueError("the match is over")
    result = game.result
    if game.phase is not Phase.FINISHED or result is None:
        raise ValueError("the game is not finished")
    uids = [p.user_id for p in game.players]
    leavers = tuple(p.user_id for p in game.players if p.left and p.user_id not in match.left)
    left = match.left + leavers
    winner_uid = uids[result.winner] if result.winner is not None else None
    scores = dict(match.scores)
    if match.rules.match is MatchKind.PENALTY:
        for player in game.players:
            if not player.left and player.user_id != winner_uid:
                scores[player.user_id] += len(player.hand)
    elif winner_uid is not None:
        scores[winner_uid] += 1
    match = dataclasses.replace(
        match,
        scores=tuple((uid, scores[uid]) for uid, _ in match.players),
        games=match.games + 1,
        left=left,
        dealer=_next_dealer(match, left),
    )
    if result.reason is EndReason.STOPPED:
        return dataclasses.replace(match, finished=True, winner=None)
    return _settle(match)


def _next_dealer(match: Match, left: tuple[int, ...]) -> int:
    count = len(match.players)
    for step in range(1, count + 1):
        seat = (match.dealer + step) % count
        if match.players[seat][0] not in left:
            return seat
    return match.dealer


def _settle(match: Match) -> Match:
    rules = match.rules
    board = scoreboard(match)
    still_in = [(uid, score) for uid, score in board if uid not in match.left]
    target = rules.match_target
    leader: int | None = None
    if len(still_in) < max(MIN_PLAYERS, rules.min_players):
        alone = len(still_in) == 1 or (len(still_in) > 1 and still_in[0][1] != still_in[1][1])
        return dataclasses.replace(
            match, finished=True, winner=still_in[0][0] if still_in and alone else None
        )
    sole = still_in[0][1] != still_in[1][1]
    match rules.match:
        case MatchKind.SINGLE:
            return dataclasses.replace(match, finished=True, winner=_single_winner(match))
        case MatchKind.FIRST_TO:
            if still_in[0][1] >= target:
                leader = still_in[0][0]
        case MatchKind.BEST_OF:
            games_left = max(target - match.games, 0)
            if (match.games >= target and sole) or still_in[0][1] > still_in[1][1] + games_left:
                leader = still_in[0][0]
        case MatchKind.PENALTY:
            if match.games >= target and sole:
                leader = still_in[0][0]
    if leader is None:
        return match
    return dataclasses.replace(match, finished=True, winner=leader)


def _single_winner(match: Match) -> int | None:
    winners = [uid for uid, score in match.scores if score > 0]
    return winners[0] if len(winners) == 1 else None


def is_over(match: Match) -> bool:
    return match.finished


def scoreboard(match: Match) -> list[tuple[int, int]]:
    """(user id, score), best first: most wins, or fewest penalty cards under ``penalty_N``;
    equal scores in seating order; players who left the match last."""
    order = {uid: i for i, (uid, _) in enumerate(match.players)}
    sign = 1 if match.rules.match is MatchKind.PENALTY else -1
    return sorted(
        match.scores,
        key=lambda us: (us[0] in match.left, sign * us[1], order[us[0]]),
    )
