"""Refusals as the reader sees them: a short text for every reason code."""

from __future__ import annotations

from tgcheat.bot.views.base import directed
from tgcheat.engine.game import Refusal
from tgcheat.i18n import N_, Translator
from tgcheat.table.refusals import SessionRefusal

Reason = Refusal | SessionRefusal

REFUSALS: dict[Reason, str] = {
    SessionRefusal.GAME_OPEN: N_("A game is already open here. /stop ends it."),
    SessionRefusal.NO_LOBBY: N_("No game is open to join here."),
    SessionRefusal.NO_GAME: N_("There is no game here. Send /new to open one."),
    SessionRefusal.STALE: N_("This button is out of date."),
    SessionRefusal.NOT_ALLOWED: N_("Only whoever opened the game, or a group admin, can do that."),
    SessionRefusal.NO_MORE_OF_RANK: N_("You have no more cards of that rank."),
    SessionRefusal.NOT_PLAYING_THERE: N_("You are not playing in a game there."),
    SessionRefusal.NO_KICK_TARGET: N_(
        "Reply to a message of the player with /kick, or give their seat number."
    ),
    SessionRefusal.NOT_A_PLAYER: N_("That person is not playing in this game."),
    SessionRefusal.KICK_NOT_ABSENT: N_(
        "You can remove only a player who missed their turn and has not played since. "
        "A group admin can remove anyone."
    ),
    SessionRefusal.NO_COMPUTER: N_("There is no computer player in this game to remove."),
    SessionRefusal.SOLO_OPPONENTS: N_("You can play against 1 to 5 computer players."),
    SessionRefusal.GAME_NOT_OVER: N_("The game's story is told once the game is over."),
    SessionRefusal.STORY_TOLD: N_("📜 This game's story is already in the chat, above."),
    Refusal.GAME_OVER: N_("This game is over."),
    Refusal.NOT_IN_GAME: N_("You are not playing in this game."),
    Refusal.NOT_YOUR_TURN: N_("It is not your turn."),
    Refusal.WAITING_FOR_FINAL: N_("Wait: the last cards played must be answered first."),
    Refusal.BAD_CARD_COUNT: N_("Pick at least one card and no more than you may play."),
    Refusal.CARDS_NOT_IN_HAND: N_("You do not hold those cards any more."),
    Refusal.WRONG_RANK: N_("You must claim the required rank."),
    Refusal.NO_SUCH_CLAIM: N_("Too late: that play can no longer be challenged."),
    Refusal.OWN_CLAIM: N_("You cannot call Cheat on your own play."),
    Refusal.NOT_NEXT_PLAYER: N_("Only the next player may answer this play."),
    Refusal.NOT_FINAL: N_("Only a player's last cards need an answer."),
    Refusal.ALREADY_ACCEPTED: N_("You already believed it."),
    Refusal.STALE_TIMEOUT: N_("This button is out of date."),
    Refusal.TOO_FEW_PLAYERS: N_("Not enough players yet."),
    Refusal.ALREADY_JOINED: N_("You are already in this game."),
    Refusal.LOBBY_FULL: N_("This game is full."),
    Refusal.CHALLENGE_PENDING: N_("Wait: a Cheat! call is being settled."),
    Refusal.ALREADY_CHALLENGED: N_("You already called Cheat on that play."),
    Refusal.TOO_EARLY: N_("Not yet."),
    Refusal.PASSING_OFF: N_("Passing is not allowed in this game."),
    Refusal.RANK_NOT_EXHAUSTED: N_(
        "You may pass only when every card of the required rank is in the pile."
    ),
    Refusal.VOTE_PENDING: N_("Wait: the others are voting on a pass."),
    Refusal.VOTE_REFUSED: N_("Your request to pass was refused this turn: play."),
    Refusal.NO_VOTE: N_("There is no vote going on."),
    Refusal.NOT_A_VOTER: N_("This vote is not yours."),
    Refusal.ALREADY_VOTED: N_("You already voted."),
    Refusal.TOO_MANY_PLAYERS: N_("Too many players for these rules."),
    Refusal.MUST_CALL: N_("Nobody else has cards left: call the last play."),
    Refusal.PULL_PENDING: N_("Wait: a trigger is about to be pulled."),
    Refusal.RANK_NOT_IN_DECK: N_("This deck has no such rank."),
}


def refusal_text(tr: Translator, reason: Reason) -> str:
    return directed(tr, tr._(REFUSALS[reason]))
