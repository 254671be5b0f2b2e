"""Callback data: short (≤ 64 bytes), naming the game and its version, parsed as untrusted input.

Every kind of button has a type of its own, and every field one meaning:

- ``TablePress``: Start, Leave, Cancel (the lobby), Next game, Play again, 🔔 Next game and
  📜 How it went (a finished game's table): the game only.
- ``ClaimPress``: Cheat! and I believe you, answering claim number ``claim``.
- ``TurnPress``: Pass and the pass vote, drawn at play count ``plays``.
- ``HandPress``: the hand keyboard (pick a rank, clear, play), drawn at play count ``plays``;
  the cards picked so far travel in the data (``encode_selection``: each rank's code, and how
  many when more than one), so that picking cards needs no write to Redis.
- ``SettingsPress``: the /settings menu, with its target (the menu, one option, a preset, an
  option's value).
- ``LanguagePress``: a language for the group or for the person.
- ``QuickPress``: wait for a quick game, or stop waiting (it acts for whoever presses it).

A press drawn for an older state (another game id, another play count, a claim no longer
open) is recognised as stale by whoever handles it.

Wire layout: ``<op>:<chat>:<key>:<number>[:<selection>:<rank>]``; the key is the game id,
except for settings (an option's index, ``m`` for the menu, ``p`` for presets) and languages
(the language code). ``<chat>`` is the chat id, or for a game in a forum topic the chat id and
the topic in base 36, ``<sign><chat>.<topic>`` (``place_field``): shorter than in decimal, so
that a hand button of a topic's game still carries every selection.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from tgcheat.engine.cards import Rank
from tgcheat.table.computers import Level
from tgcheat.table.place import Place

MAX_CALLBACK_BYTES = 64


class Op(enum.StrEnum):
    """The first field of the data: which kind of button it is."""

    START = "s"
    LEAVE = "e"
    CANCEL = "x"
    NEXT_GAME = "g"
    PLAY_AGAIN = "w"
    CHALLENGE = "c"
    ACCEPT = "a"
    PASS = "q"
    VOTE_YES = "y"
    VOTE_NO = "n"
    PICK = "k"
    CLEAR = "r"
    PLAY = "p"
    SETTINGS_SHOW = "o"
    SETTINGS_SET = "v"
    LANGUAGE = "l"
    NOTIFY = "t"
    ADD_COMPUTER = "b"
    REMOVE_COMPUTER = "d"
    FORGET = "f"
    STORY = "h"
    GLOBAL_BOARD = "z"
    QUICK = "u"


TABLE_OPS = frozenset(
    {Op.START, Op.LEAVE, Op.CANCEL, Op.NEXT_GAME, Op.PLAY_AGAIN, Op.NOTIFY, Op.STORY}
)
CLAIM_OPS = frozenset({Op.CHALLENGE, Op.ACCEPT})
TURN_OPS = frozenset({Op.PASS, Op.VOTE_YES, Op.VOTE_NO})
HAND_OPS = frozenset({Op.PICK, Op.CLEAR, Op.PLAY})
SETTINGS_OPS = frozenset({Op.SETTINGS_SHOW, Op.SETTINGS_SET})
COMPUTER_OPS = frozenset({Op.ADD_COMPUTER, Op.REMOVE_COMPUTER})
#: The computer players' levels as a button's number.
COMPUTER_LEVELS = tuple(Level)


def _checked(data: str) -> str:
    if len(data.encode()) > MAX_CALLBACK_BYTES:
        raise ValueError(f"callback data too long: {data!r}")
    return data


class SelectionTooLong(ValueError):
    """More cards are picked than a hand button's data can carry (``MAX_CALLBACK_BYTES``)."""


# A selection is each picked rank's code (in rank order), followed by how many when more than
# one, as a letter: a digit would read as a rank ("2" to "9" are codes). So 35 cards of every
# rank take 28 characters at most, where one code per card took 35, which no longer fit in a
# button with the chat's and the game's ids. A code may repeat (buttons drawn before counts
# were written read "77K"): the counts add up.
_COUNT_LETTERS = "bcdefghi"  # 2 to 9
_MAX_WRITTEN_COUNT = len(_COUNT_LETTERS) + 1
_SELECTION = re.compile(
    "(?:[" + "".join(re.escape(rank.code) for rank in Rank) + "][" + _COUNT_LETTERS + "]?)*"
)


def encode_selection(picked: Mapping[Rank, int]) -> str:
    """The selection as a button carries it: "7cK" is three 7s and a king."""
    parts = []
    for rank in sorted(picked):
        count = picked[rank]
        while count > 0:
            # A count above 9 (more cards of a rank than two decks hold) repeats the code.
            step = min(count, _MAX_WRITTEN_COUNT)
            parts.append(rank.code + (_COUNT_LETTERS[step - 2] if step > 1 else ""))
            count -= step
    return "".join(parts)


def decode_selection(selection: str) -> Counter[Rank]:
    """The cards of a selection (``encode_selection``'s, or one code per card); ValueError
    when it is neither."""
    if not _SELECTION.fullmatch(selection):
        raise ValueError(f"not a selection: {selection!r}")
    picked: Counter[Rank] = Counter()
    rank: Rank | None = None
    for char in selection:
        if rank is not None and char in _COUNT_LETTERS:
            picked[rank] += _COUNT_LETTERS.index(char) + 1
        else:
            rank = Rank.from_code(char)
            picked[rank] += 1
    return picked


_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def _base36(number: int) -> str:
    digits = ""
    while True:
        number, digit = divmod(number, 36)
        digits = _BASE36[digit] + digits
        if number == 0:
            return digits


def place_field(chat_id: int, topic: int | None) -> str:
    """The chat field of a game's button: the chat id as ever, or with a topic
    "<sign><chat in base 36>.<topic in base 36>"."""
    if topic is None:
        return str(chat_id)
    return ("-" if chat_id < 0 else "") + _base36(abs(chat_id)) + "." + _base36(topic)


_TOPIC_FIELD = re.compile(r"(-?)([0-9a-z]{1,11})\.([0-9a-z]{1,7})")


def _parse_place_field(text: str) -> tuple[int, int | None]:
    if _CHAT_ID.fullmatch(text):
        return int(text), None
    match = _TOPIC_FIELD.fullmatch(text)
    if match is None:
        raise BadCallback("malformed chat")
    sign, chat, topic = match.groups()
    return (-1 if sign else 1) * int(chat, 36), int(topic, 36)


class _OfPlace:
    """A game's button: it names the game's place (``chat_id`` and ``topic``)."""

    __slots__ = ()
    chat_id: int
    topic: int | None

    @property
    def place(self) -> Place:
        return Place(self.chat_id, self.topic)

    @property
    def _chat(self) -> str:
        return place_field(self.chat_id, self.topic)


@dataclass(frozen=True, slots=True)
class TablePress(_OfPlace):
    op: Op
    chat_id: int
    game_id: str
    topic: int | None = None

    def encode(self) -> str:
        return _checked(f"{self.op}:{self._chat}:{self.game_id}:0")


@dataclass(frozen=True, slots=True)
class ComputerPress(_OfPlace):
    """A lobby button that seats a computer player of ``level`` (or removes the last one)."""

    op: Op
    chat_id: int
    game_id: str
    level: Level = Level.NORMAL
    topic: int | None = None

    def encode(self) -> str:
        number = COMPUTER_LEVELS.index(self.level)
        return _checked(f"{self.op}:{self._chat}:{self.game_id}:{number}")


@dataclass(frozen=True, slots=True)
class ClaimPress(_OfPlace):
    op: Op
    chat_id: int
    game_id: str
    #: The number of the claim answered (``Claim.number``).
    claim: int
    topic: int | None = None

    def encode(self) -> str:
        return _checked(f"{self.op}:{self._chat}:{self.game_id}:{self.claim}")


@dataclass(frozen=True, slots=True)
class TurnPress(_OfPlace):
    op: Op
    chat_id: int
    game_id: str
    #: The game's play count when the button was drawn.
    plays: int
    topic: int | None = None

    @property
    def yes(self) -> bool:
        return self.op is Op.VOTE_YES

    def encode(self) -> str:
        return _checked(f"{self.op}:{self._chat}:{self.game_id}:{self.plays}")


@dataclass(frozen=True, slots=True)
class HandPress(_OfPlace):
    op: Op
    chat_id: int
    game_id: str
    #: The game's play count when the keyboard was drawn.
    plays: int
    #: Cards chosen so far (``encode_selection``), e.g. "7bK" for two 7s and a king.
    selection: str = ""
    #: The rank a PICK adds, or the rank a PLAY claims.
    rank: Rank | None = None
    topic: int | None = None

    def _base(self) -> str:
        return f"{self.op}:{self._chat}:{self.game_id}:{self.plays}:{self.selection}:"

    def encode(self) -> str:
        return self._fitting(self._base() + (self.rank.code if self.rank is not None else ""))

    def encode_each(self, ranks: Iterable[Rank]) -> list[str]:
        """The data of this press with each of ``ranks`` (a keyboard's row of ranks): one
        encoding, the rank code appended to it."""
        base = self._fitting(self._base() + "x")[:-1]
        return [base + rank.code for rank in ranks]

    def selected(self) -> Counter[Rank]:
        return decode_selection(self.selection)

    def _fitting(self, data: str) -> str:
        if len(data.encode()) > MAX_CALLBACK_BYTES and self.selection:
            cards = sum(self.selected().values())
            raise SelectionTooLong(f"{cards} cards picked do not fit in a button: {data!r}")
        return _checked(data)


@dataclass(frozen=True, slots=True)
class SettingsMenu:
    """The list of every option and the presets."""


@dataclass(frozen=True, slots=True)
class OptionMenu:
    """One option's values; ``option`` indexes ``OPTION_NAMES``."""

    option: int


@dataclass(frozen=True, slots=True)
class PresetChoice:
    """Preset number ``preset`` of ``PRESETS`` is chosen."""

    preset: int


@dataclass(frozen=True, slots=True)
class ValueChoice:
    """Value number ``value`` of ``OPTION_VALUES`` is chosen for option number ``option``."""

    option: int
    value: int


SettingsTarget = SettingsMenu | OptionMenu | PresetChoice | ValueChoice


@dataclass(frozen=True, slots=True)
class SettingsPress:
    chat_id: int
    target: SettingsTarget

    @property
    def op(self) -> Op:
        shows = isinstance(self.target, SettingsMenu | OptionMenu)
        return Op.SETTINGS_SHOW if shows else Op.SETTINGS_SET

    def encode(self) -> str:
        match self.target:
            case SettingsMenu():
                key, number = "m", 0
            case OptionMenu(option):
                key, number = str(option), 0
            case PresetChoice(preset):
                key, number = "p", preset
            case ValueChoice(option, value):
                key, number = str(option), value
        return _checked(f"{self.op}:{self.chat_id}:{key}:{number}")


@dataclass(frozen=True, slots=True)
class LanguagePress:
    #: The group whose language is set (negative), or the person's own private chat.
    chat_id: int
    language: str

    @property
    def op(self) -> Op:
        return Op.LANGUAGE

    @property
    def for_group(self) -> bool:
        return self.chat_id < 0

    def encode(self) -> str:
        return _checked(f"{Op.LANGUAGE}:{self.chat_id}:{self.language}:0")


@dataclass(frozen=True, slots=True)
class ForgetPress:
    """/forgetme's confirmation: delete the statistics and settings of ``user_id`` (only they
    may: it is pressed in their private chat, and checked against the presser)."""

    user_id: int

    @property
    def op(self) -> Op:
        return Op.FORGET

    def encode(self) -> str:
        return _checked(f"{Op.FORGET}:{self.user_id}:me:0")


@dataclass(frozen=True, slots=True)
class BoardPress:
    """/profile's setting: ``user_id`` on the global boards (``hidden`` False) or off them
    (only they may: pressed in their private chat, checked against the presser)."""

    user_id: int
    hidden: bool

    @property
    def op(self) -> Op:
        return Op.GLOBAL_BOARD

    def encode(self) -> str:
        return _checked(f"{Op.GLOBAL_BOARD}:{self.user_id}:{'hide' if self.hidden else 'show'}:0")


@dataclass(frozen=True, slots=True)
class QuickPress:
    """A quick game (/quick): wait for one (``join``), or stop waiting. It names nobody: it
    acts for whoever presses it."""

    join: bool

    @property
    def op(self) -> Op:
        return Op.QUICK

    def encode(self) -> str:
        return _checked(f"{Op.QUICK}:0:{'join' if self.join else 'leave'}:0")


Press = (
    TablePress
    | ClaimPress
    | TurnPress
    | HandPress
    | SettingsPress
    | LanguagePress
    | ComputerPress
    | ForgetPress
    | BoardPress
    | QuickPress
)


class BadCallback(ValueError):
    """Data no button of ours carries: forged, truncated, or from another bot version."""


_KEY = re.compile(r"[A-Za-z0-9_]{1,12}")
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
    if len(parts) != (6 if op in HAND_OPS else 4):
        raise BadCallback("wrong number of fields")
    _, chat, key, number_text = parts[:4]
    if not (_KEY.fullmatch(key) and _NUMBER.fullmatch(number_text)):
        raise BadCallback("malformed field")
    chat_id, topic = _parse_place_field(chat)
    number = int(number_text)
    if op is Op.FORGET:
        if key != "me" or number != 0 or topic is not None:
            raise BadCallback("not a /forgetme confirmation")
        return ForgetPress(chat_id)
    if op is Op.QUICK:
        if key not in ("join", "leave") or number != 0 or chat_id != 0 or topic is not None:
            raise BadCallback("not a quick game's button")
        return QuickPress(key == "join")
    if op is Op.GLOBAL_BOARD:
        if key not in ("hide", "show") or number != 0 or topic is not None:
            raise BadCallback("not a board setting")
        return BoardPress(chat_id, key == "hide")
    if op in TABLE_OPS:
        return TablePress(op, chat_id, key, topic)
    if op in CLAIM_OPS:
        return ClaimPress(op, chat_id, key, number, topic)
    if op in TURN_OPS:
        return TurnPress(op, chat_id, key, number, topic)
    if op in HAND_OPS:
        press = _hand_press(op, chat_id, key, number, parts[4], parts[5])
        return dataclasses.replace(press, topic=topic)
    if op in COMPUTER_OPS:
        if number >= len(COMPUTER_LEVELS):
            raise BadCallback("no such level")
        return ComputerPress(op, chat_id, key, COMPUTER_LEVELS[number], topic)
    # Settings and languages are a group's own, never a topic's.
    if topic is not None:
        raise BadCallback("a topic where none belongs")
    if op in SETTINGS_OPS:
        return SettingsPress(chat_id, _settings_target(op, key, number))
    return LanguagePress(chat_id, key)


def _hand_press(
    op: Op, chat_id: int, game_id: str, plays: int, selection: str, rank_code: str
) -> HandPress:
    if not _SELECTION.fullmatch(selection) or len(rank_code) > 1:
        raise BadCallback("malformed selection")
    rank = None
    if rank_code:
        if rank_code not in _RANK_CODES:
            raise BadCallback("malformed rank")
        rank = Rank.from_code(rank_code)
    return HandPress(op, chat_id, game_id, plays, selection, rank)


def _settings_target(op: Op, key: str, number: int) -> SettingsTarget:
    if op is Op.SETTINGS_SHOW:
        if key == "m":
            return SettingsMenu()
        if key.isdigit():
            return OptionMenu(int(key))
    elif key == "p":
        return PresetChoice(number)
    elif key.isdigit():
        return ValueChoice(int(key), number)
    raise BadCallback("malformed settings target")
