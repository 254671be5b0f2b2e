"""What must hold in every state of a game (RULES.md "Card conservation", DESIGN.md "Tests"),
and under ``penalty=revolver`` the bullets' (one per revolver, never moved, a player shot once
and then out): used by the property tests and by ``tgcheat simulate``."""

from __future__ import annotations

from tgcheat.engine.game import awaited, final_answerers, pass_voters, pending_deadline_ms
from tgcheat.engine.rules import CHAMBERS
from tgcheat.engine.state import GameState, Phase


def violations(state: GameState, deck_size: int) -> list[str]:
    """Every invariant ``state`` breaks, as short descriptions (empty when all hold).

    ``deck_size`` is the number of cards dealt at the start of the game.
    """
    problems: list[str] = []
    every_card = [c for p in state.players for c in p.hand] + [
        *state.pile,
        *state.set_aside,
        *state.stock,
    ]
    if len(every_card) != deck_size or len(set(every_card)) != deck_size:
        problems.append("cards not conserved")
    problems += _bullet_violations(state)
    if any(p.left and p.hand for p in state.players):
        problems.append("a player who left holds cards")
    cap = state.rules.move_cap
    # Under the revolver the bullets, not a count of plays, end the game.
    if cap and state.plays > cap and not state.rules.revolver:
        problems.append("move cap exceeded")
    waiting = awaited(state)
    deadline = pending_deadline_ms(state)
    if state.phase is Phase.FINISHED:
        if state.result is None or waiting:
            problems.append("finished without a result, or still waiting")
        return problems
    if state.result is not None:
        problems.append("a result before the end")
    if len(state.active_seats()) < 2:
        problems.append("fewer than two players and not finished")
    turn_player = state.players[state.turn]
    if turn_player.left:
        problems.append("the player to play is out of the game or has no cards")
    if state.pull_by is not None:
        # Nobody plays while a trigger waits (whoever pulled opens the next round, dealt
        # anew): the turn may rest with a player whose hand the round emptied.
        if waiting or deadline != state.pull_at_ms or state.challenges or state.open_claims:
            problems.append("a trigger to pull with players awaited, or a call still open")
        return problems
    if not turn_player.hand and not turn_player.left:
        problems.append("the player to play is out of the game or has no cards")
    if state.challenges:
        if waiting or deadline is None:
            problems.append("a Cheat! call without a deadline, or with players awaited")
        if state.vote_by is not None:
            problems.append("a vote and a Cheat! call at once")
        numbers = {pending.claim for pending in state.challenges}
        if len(numbers) != 1 or not any(c.number in numbers for c in state.open_claims):
            problems.append("a Cheat! call on a closed play")
    elif deadline is not None:
        problems.append("a deadline without a Cheat! call")
    if state.phase is Phase.FINAL_CHECK:
        claim = state.final_claim
        if claim is None or not claim.final or state.players[claim.seat].hand:
            problems.append("a final check without a final play")
        if not state.challenges and (
            not waiting or not waiting <= final_answerers(state) - state.accepted
        ):
            problems.append("a final check that waits for nobody")
        empty = [s for s in state.active_seats() if not state.players[s].hand]
        if claim is not None and empty != [claim.seat]:
            problems.append("an empty hand other than the final claimant's")
        return problems
    if not state.rules.revolver and any(not state.players[s].hand for s in state.active_seats()):
        # Under the revolver a player with no cards sits the rest of the round out.
        problems.append("an empty hand while playing")
    if any(c.final for c in state.open_claims):
        problems.append("an open final play while playing")
    if state.vote_by is not None:
        if (
            state.vote_by != state.turn
            or not waiting
            or waiting != (pass_voters(state) - set(state.votes_yes))
        ):
            problems.append("a vote that is not the player to play's, or waits for nobody")
    elif not state.challenges and waiting != {state.turn}:
        problems.append("not exactly one player to act")
    return problems


def _bullet_violations(state: GameState) -> list[str]:
    """One bullet in each revolver, in a chamber that never changes: a player has pulled at
    most up to it, and is out (shot, in ``fallen``) exactly when they reached it."""
    if not state.rules.revolver:
        if any(p.bullet != -1 or p.pulls for p in state.players) or state.fallen:
            return ["a revolver without the revolver's rules"]
        return []
    problems: list[str] = []
    if any(not 0 <= p.bullet < CHAMBERS or p.pulls > p.bullet + 1 for p in state.players):
        problems.append("bullets not conserved")
    shot = [seat for seat, p in enumerate(state.players) if p.shot]
    if sorted(shot) != sorted(state.fallen) or len(set(state.fallen)) != len(state.fallen):
        problems.append("the fallen are not those shot")
    if any(not state.players[seat].left for seat in shot):
        problems.append("a player shot still in the game")
    return problems
