"""Why the table turns a request down before the engine is asked (the engine's own reasons are
``tgcheat.engine.game.Refusal``); every code has a catalog message in the bot."""

from __future__ import annotations

import enum


class SessionRefusal(enum.StrEnum):
    #: /new while a lobby is open or a game is being played.
    GAME_OPEN = "game_open"
    #: Join or leave a lobby when none is open.
    NO_LOBBY = "no_lobby"
    #: A command about the game when there is none.
    NO_GAME = "no_game"
    #: A button drawn for another game, another turn or a claim no longer open.
    STALE = "stale"
    #: Only the game's creator or a group admin may do this.
    NOT_ALLOWED = "not_allowed"
    #: A pick of a rank the player holds no more cards of.
    NO_MORE_OF_RANK = "no_more_of_rank"
    #: "My cards" from someone who does not play the group's game.
    NOT_PLAYING_THERE = "not_playing_there"
    #: /kick with neither a reply to the player's message nor their number (their seat at
    #: the table, their place in the lobby's list).
    NO_KICK_TARGET = "no_kick_target"
    #: /kick of someone who is not in the lobby or the game (or has left it).
    NOT_A_PLAYER = "not_a_player"
    #: /kick by the game's creator, who is no admin, of a player who is not absent: they may
    #: remove only a player who missed their turn and has not acted since.
    KICK_NOT_ABSENT = "kick_not_absent"
    #: Remove a computer player from a lobby that has none.
    NO_COMPUTER = "no_computer"
    #: /play with too few or too many computer players.
    SOLO_OPPONENTS = "solo_opponents"
    #: The story of a game asked for while it is being played.
    GAME_NOT_OVER = "game_not_over"
    #: The story of a game asked for once more: it was posted already.
    STORY_TOLD = "story_told"


class SessionRefused(Exception):
    """A request the table turns down; ``reason`` says why and never needs parsing."""

    def __init__(self, reason: SessionRefusal) -> None:
        super().__init__(reason.value)
        self.reason = reason


class AdminUnknown(Exception):
    """Whether the actor is an admin of the group decides the request, and it is not known
    yet (``Actor.admin`` is None): the bot asks Telegram, then computes the change again. So
    Telegram is asked only when the answer matters (not for the game's creator)."""
