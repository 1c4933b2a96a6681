"""Where a segment holds each asked chunk id: the first lookup (one pass over the segment's
ids, what a cold recall makes) and every later one (a binary search in the ids sorted once)
give the same documents — the first of an id held twice, none for a deleted or absent one."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from funes.store.lexical import Segment

IDS = st.text(alphabet="0123456789abcdef-", min_size=1, max_size=20)


def truth(seg: Segment, held: list[str], a: str) -> int:
    """Where ``a`` sits in ``seg`` by a plain search of ``held``: its first row, -1 if absent
    or deleted."""
    first = held.index(a) if a in held else -1
    if first >= 0 and seg.deleted is not None and seg.deleted[first]:
        return -1
    return first


@settings(max_examples=80, deadline=None)
@given(
    st.lists(IDS, min_size=1, max_size=40),
    st.lists(st.booleans(), max_size=40),
    st.lists(IDS, max_size=15),
    st.lists(st.integers(0, 39), max_size=15),
)
def test_the_first_lookup_and_the_later_ones_find_the_same_documents(
    held: list[str], deleted: list[bool], absent: list[str], picks: list[int]
) -> None:
    seg = Segment.build(held, [["w"] for _ in held])
    if deleted:
        seg.deleted = np.array((deleted * len(held))[: len(held)], dtype=bool)
    asked = [held[i % len(held)] for i in picks] + absent
    q = np.array([a.encode() for a in asked]) if asked else np.array([], dtype="S1")

    want = [truth(seg, held, a) for a in asked]
    assert seg.locate(q).tolist() == want  # the first call: one pass
    assert seg.by_id is None
    assert seg.locate(q).tolist() == want  # then the sorted ids
    assert (seg.by_id is not None) == bool(asked)
    assert seg.locate(q[::-1]).tolist() == want[::-1]


# chunk ids as funes makes them: 16 hex digits, compared by their first 8 bytes first; many
# here share those 8 bytes, so the whole id decides
HEX16 = st.tuples(st.sampled_from(["0123abcd", "0123abce", "ffff0000"]),
                  st.text(alphabet="0123456789abcdef", min_size=8, max_size=8)).map("".join)  # fmt: skip


@settings(max_examples=80, deadline=None)
@given(
    st.lists(HEX16, min_size=1, max_size=60),
    st.lists(st.booleans(), max_size=60),
    st.lists(HEX16, max_size=15),
    st.lists(st.integers(0, 59), max_size=15),
    st.integers(1, 7),
)
def test_ids_of_whole_words_are_found_by_their_first_word_and_then_whole(
    held: list[str], deleted: list[bool], absent: list[str], picks: list[int], block: int
) -> None:
    import funes.store.lexical as lexical

    seg = Segment.build(held, [["w"] for _ in held])
    assert seg.ids.dtype.itemsize == 16
    if deleted:
        seg.deleted = np.array((deleted * len(held))[: len(held)], dtype=bool)
    asked = [held[i % len(held)] for i in picks] + absent + ["0123abcd"]  # a shorter id
    q = np.array([a.encode() for a in asked])

    want = [truth(seg, held, a) for a in asked]
    old = lexical.MATCH_BLOCK
    lexical.MATCH_BLOCK = block  # several blocks, whatever the segment's size
    try:
        assert seg.locate(q).tolist() == want
    finally:
        lexical.MATCH_BLOCK = old
    assert seg.locate(q).tolist() == want
