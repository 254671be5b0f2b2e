"""The callback-data codec: what a button carries comes back as it went, as its own type."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tgcheat.bot.callbacks import (
    MAX_CALLBACK_BYTES,
    BadCallback,
    ClaimPress,
    HandPress,
    LanguagePress,
    Op,
    OptionMenu,
    PresetChoice,
    Press,
    SelectionTooLong,
    SettingsMenu,
    SettingsPress,
    TablePress,
    TurnPress,
    ValueChoice,
    decode_selection,
    encode_selection,
    parse,
)
from tgcheat.engine.cards import Rank

ranks = st.sampled_from(list(Rank))
chat_ids = st.integers(-(10**13), 10**13)
game_ids = st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=8)
numbers = st.integers(0, 999_999)
selections = st.lists(ranks, max_size=8).map(lambda rs: "".join(r.code for r in sorted(rs)))
#: What a player may pick from two decks with jokers: up to 8 cards of a rank, 4 jokers.
picked = st.fixed_dictionaries(
    {}, optional={rank: st.integers(1, 4 if rank is Rank.JOKER else 8) for rank in Rank}
).map(Counter)


@given(
    op=st.sampled_from([Op.PICK, Op.PLAY]),
    chat_id=chat_ids,
    game_id=game_ids,
    plays=numbers,
    selection=selections,
    each=st.lists(ranks, min_size=1, max_size=14),
)
def test_a_row_of_ranks_is_encoded_as_each_press_alone(
    op: Op, chat_id: int, game_id: str, plays: int, selection: str, each: list[Rank]
) -> None:
    row = HandPress(op, chat_id, game_id, plays, selection).encode_each(each)
    alone = [HandPress(op, chat_id, game_id, plays, selection, rank).encode() for rank in each]
    assert row == alone
    for data, rank in zip(row, each, strict=True):
        assert len(data.encode()) <= MAX_CALLBACK_BYTES
        assert parse(data) == HandPress(op, chat_id, game_id, plays, selection, rank)


presses: st.SearchStrategy[Press] = st.one_of(
    st.builds(
        TablePress,
        st.sampled_from([Op.START, Op.LEAVE, Op.CANCEL, Op.NEXT_GAME]),
        chat_ids,
        game_ids,
    ),
    st.builds(ClaimPress, st.sampled_from([Op.CHALLENGE, Op.ACCEPT]), chat_ids, game_ids, numbers),
    st.builds(
        TurnPress, st.sampled_from([Op.PASS, Op.VOTE_YES, Op.VOTE_NO]), chat_ids, game_ids, numbers
    ),
    st.builds(
        HandPress,
        st.sampled_from([Op.PICK, Op.CLEAR, Op.PLAY]),
        chat_ids,
        game_ids,
        numbers,
        selections,
        st.none() | ranks,
    ),
    st.builds(
        SettingsPress,
        chat_ids,
        st.one_of(
            st.just(SettingsMenu()),
            st.builds(OptionMenu, st.integers(0, 99)),
            st.builds(PresetChoice, st.integers(0, 99)),
            st.builds(ValueChoice, st.integers(0, 99), st.integers(0, 99)),
        ),
    ),
    st.builds(LanguagePress, chat_ids, st.sampled_from(["en", "ru", "de", "pt_BR"])),
)


@given(presses)
def test_every_press_comes_back_as_the_same_type_and_fields(press: Press) -> None:
    data = press.encode()
    assert len(data.encode()) <= MAX_CALLBACK_BYTES
    assert parse(data) == press
    assert data.split(":")[0] == press.op


def test_buttons_drawn_before_typed_presses_still_parse() -> None:
    """The wire layout is unchanged: a keyboard already in a chat keeps working."""
    assert parse("c:-100123:abc123:7") == ClaimPress(Op.CHALLENGE, -100123, "abc123", 7)
    assert parse("q:-100123:abc123:4") == TurnPress(Op.PASS, -100123, "abc123", 4)
    assert parse("k:-100123:abc123:4:77:K") == HandPress(
        Op.PICK, -100123, "abc123", 4, "77", Rank.KING
    )
    assert parse("o:-100123:m:0") == SettingsPress(-100123, SettingsMenu())
    assert parse("o:-100123:3:0") == SettingsPress(-100123, OptionMenu(3))
    assert parse("v:-100123:p:1") == SettingsPress(-100123, PresetChoice(1))
    assert parse("v:-100123:3:2") == SettingsPress(-100123, ValueChoice(3, 2))
    assert parse("l:42:de:0") == LanguagePress(42, "de")


@pytest.mark.parametrize(
    "data",
    [
        "",
        "z:1:abc:0",
        "c:1:abc",
        "c:x:abc:0",
        "c:1:ab-c:0",
        "k:1:abc:0:7Q",
        "k:1:abc:0:!:K",
        "k:1:abc:0:7:KK",
        "k:1:abc:0:c7:K",
        "k:1:abc:0:7cc:K",
        "k:1:abc:0:7a:K",
        "k:1:abc:0:7j:K",
        "o:1:p:0",
        "v:1:m:0",
        "c:1:abc:" + "9" * 7,
        "c:1:" + "a" * 70 + ":0",
    ],
)
def test_data_no_button_carries_is_refused(data: str) -> None:
    with pytest.raises(BadCallback):
        parse(data)


@given(picked)
def test_a_selection_comes_back_as_the_cards_picked(cards: Counter[Rank]) -> None:
    assert decode_selection(encode_selection(cards)) == cards


def test_a_selection_writes_each_rank_once_with_its_count() -> None:
    assert encode_selection(Counter({Rank.SEVEN: 3, Rank.KING: 1, Rank.TEN: 2})) == "7cTbK"
    assert encode_selection(Counter()) == ""
    # One code per card, as buttons drawn before counts were written carry it, still reads.
    assert decode_selection("777K") == Counter({Rank.SEVEN: 3, Rank.KING: 1})
    assert decode_selection("7b7K") == Counter({Rank.SEVEN: 3, Rank.KING: 1})


@given(picked, st.sampled_from(list(Rank)))
def test_any_selection_fits_in_a_button_of_a_real_group(cards: Counter[Rank], rank: Rank) -> None:
    """A supergroup's id (-100 and ten digits), a game id, a play count up to 99,999: every
    hand button fits whatever is picked, as long as Telegram's ids do."""
    press = HandPress(Op.PLAY, -1009876543210, "abc123", 99_999, encode_selection(cards), rank)
    assert len(press.encode().encode()) <= MAX_CALLBACK_BYTES
    parsed = parse(press.encode())
    assert isinstance(parsed, HandPress) and parsed.selected() == cards


def test_a_selection_that_does_not_fit_is_said_so() -> None:
    everything = Counter({rank: 8 for rank in Rank})
    press = HandPress(
        Op.PICK, -9999999999999999, "abcdefghijkl", 999_999, encode_selection(everything)
    )
    with pytest.raises(SelectionTooLong):
        press.encode_each([Rank.ACE])
