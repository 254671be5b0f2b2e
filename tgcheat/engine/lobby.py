"""The lobby before a game: who has joined, and whether the game can start."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from tgcheat.engine.game import IllegalAction, Refusal
from tgcheat.engine.rules import Rules


@dataclass(frozen=True, slots=True)
class Lobby:
    creator: int
    rules: Rules
    #: (user id, name) in the order they joined.
    players: tuple[tuple[int, str], ...] = ()

    def has(self, user_id: int) -> bool:
        return any(uid == user_id for uid, _ in self.players)

    @property
    def full(self) -> bool:
        return len(self.players) >= self.rules.max_players

    def start_refusal(self) -> Refusal | None:
        if len(self.players) < self.rules.min_players:
            return Refusal.TOO_FEW_PLAYERS
        return None


def join(lobby: Lobby, user_id: int, name: str) -> Lobby:
    if lobby.has(user_id):
        raise IllegalAction(Refusal.ALREADY_JOINED)
    if lobby.full:
        raise IllegalAction(Refusal.LOBBY_FULL)
    return dataclasses.replace(lobby, players=(*lobby.players, (user_id, name)))


def leave(lobby: Lobby, user_id: int) -> Lobby:
    if not lobby.has(user_id):
        raise IllegalAction(Refusal.NOT_IN_GAME)
    return dataclasses.replace(lobby, players=tuple(p for p in lobby.players if p[0] != user_id))
