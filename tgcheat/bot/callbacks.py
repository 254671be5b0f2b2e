"""Callback data: short (≤ 64 bytes), naming the game and its version, parsed as untrusted input.

Layout: ``<op>:<chat id>:<game id>:<number>[:<selection>]`` where <number> is the claim a
Cheat!/accept button answers, or the play count a hand keyboard was drawn at, so a button of
an older state is recognised as stale. The card selection of the hand keyboard travels in the
data itself (one rank code per card), so picking cards needs no write to Redis.
"""

from __future__ import annotations

import enum
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from tgcheat.engine.cards import Rank

MAX_CALLBACK_BYTES = 64


class Op(enum.StrEnum):
    START = "s"
    CANCEL = "x"
    CHALLENGE = "c"
    ACCEPT = "a"
    PICK = "k"
    CLEAR = "r"
    PLAY = "p"
    PASS = "q"
    VOTE_YES = "y"
    VOTE_NO = "n"
    NEXT_GAME = "g"
    #: Settings menu: show the menu (game id "m") or one option (game id = its index).
    SETTINGS_SHOW = "o"
    #: Settings menu: set option <game id> to its value number <number>; game id "p" picks
    #: preset number <number>.
    SETTINGS_SET = "v"
    #: Choose a language: game id = the language code, for the chat of <chat id>.
    LANGUAGE = "l"


@dataclass(frozen=True, slots=True)
class Press:
    op: Op
    chat_id: int
    game_id: str
    number: int
    #: Cards chosen so far (hand keyboard), as a rank code per card, e.g. "77K".
    selection: str = ""
    #: The rank a PICK adds, or the rank a PLAY claims.
    rank: Rank | None = None

    def _head(self) -> str:
        return f"{self.op}:{self.chat_id}:{self.game_id}:{self.number}"

    def encode(self) -> str:
        data = self._head()
        if self.op in _WITH_SELECTION:
            data += f":{self.selection}:{self.rank.code if self.rank is not None else ''}"
        if len(data.encode()) > MAX_CALLBACK_BYTES:
            raise ValueError(f"callback data too long: {data!r}")
        return data

    def encode_each(self, ranks: Iterable[Rank]) -> list[str]:
        """The data of this press with each of ``ranks`` (a keyboard's row of ranks): one
        encoding, the rank code appended to it."""
        assert self.op in _WITH_SELECTION, "only a hand keyboard's presses name a rank"
        base = f"{self._head()}:{self.selection}:"
        if len(base.encode()) + 1 > MAX_CALLBACK_BYTES:
            raise ValueError(f"callback data too long: {base!r}")
        return [base + rank.code for rank in ranks]

    def selected(self) -> Counter[Rank]:
        return Counter(Rank.from_code(code) for code in self.selection)


#: Ops of the hand keyboard, whose data carries the selection and a rank.
_WITH_SELECTION = frozenset({Op.PICK, Op.PLAY, Op.CLEAR})


class BadCallback(ValueError):
    """Data no button of ours carries: forged, truncated, or from another bot version."""


_GAME_ID = re.compile(r"[a-z0-9]{1,12}")
#: Ops whose "game id" field names a settings menu entry instead of a game.
SETTINGS_OPS = frozenset({Op.SETTINGS_SHOW, Op.SETTINGS_SET})
_CHAT_ID = re.compile(r"-?[0-9]{1,16}")
_NUMBER = re.compile(r"[0-9]{1,6}")
_RANK_CODES = frozenset(rank.code for rank in Rank)


def parse(data: str | None) -> Press:
    if not data or len(data.encode()) > MAX_CALLBACK_BYTES:
        raise BadCallback("empty or too long")
    parts = data.split(":")
    try:
        op = Op(parts[0])
    except ValueError:
        raise BadCallback(f"unknown op {parts[0]!r}") from None
    with_selection = op in _WITH_SELECTION
    if len(parts) != (6 if with_selection else 4):
        raise BadCallback("wrong number of fields")
    _, chat, game_id, number = parts[:4]
    if not (_CHAT_ID.fullmatch(chat) and _GAME_ID.fullmatch(game_id) and _NUMBER.fullmatch(number)):
        raise BadCallback("malformed field")
    selection, rank = "", None
    if with_selection:
        selection, rank_code = parts[4], parts[5]
        if not set(selection) <= _RANK_CODES or len(rank_code) > 1:
            raise BadCallback("malformed selection")
        if rank_code:
            if rank_code not in _RANK_CODES:
                raise BadCallback("malformed rank")
            rank = Rank.from_code(rank_code)
    return Press(op, int(chat), game_id, int(number), selection, rank)
