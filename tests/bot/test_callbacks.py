"""The callback-data codec: what a button carries comes back as it went."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tgcheat.bot.callbacks import MAX_CALLBACK_BYTES, Op, Press, parse
from tgcheat.engine.cards import Rank

ranks = st.sampled_from(list(Rank))


@given(
    op=st.sampled_from([Op.PICK, Op.PLAY]),
    chat_id=st.integers(-(10**13), 10**13),
    game_id=st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=8),
    number=st.integers(0, 999_999),
    selection=st.lists(ranks, max_size=8).map(lambda rs: "".join(r.code for r in sorted(rs))),
    each=st.lists(ranks, min_size=1, max_size=14),
)
def test_a_row_of_ranks_is_encoded_as_each_press_alone(
    op: Op, chat_id: int, game_id: str, number: int, selection: str, each: list[Rank]
) -> None:
    row = Press(op, chat_id, game_id, number, selection).encode_each(each)
    alone = [Press(op, chat_id, game_id, number, selection, rank).encode() for rank in each]
    assert row == alone
    for data, rank in zip(row, each, strict=True):
        assert len(data.encode()) <= MAX_CALLBACK_BYTES
        assert parse(data) == Press(op, chat_id, game_id, number, selection, rank)
