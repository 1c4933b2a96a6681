"""The writer's set of stored ids (funes.store.idset): the answers of a Python set, in 8 bytes
an id for funes's own 16-hex-digit ids."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from funes.chunking import chunk_id
from funes.store import idset
from funes.store.idset import IdSet

HEX = "0123456789abcdef"
ids = st.one_of(
    st.text(HEX, min_size=16, max_size=16),  # funes's own ids
    st.text(HEX.upper(), min_size=16, max_size=16),  # look alike, but distinct ids
    st.text(HEX, min_size=15, max_size=17),
    st.text(min_size=0, max_size=20),  # hand-made ids: anything
    st.sampled_from(
        ["0x00000000000000", "+123456789abcdef", "0000_0000_0000_0", " 123456789abcdef"]
    ),
)
ops = st.lists(st.tuples(st.sampled_from(["add", "discard", "update", "difference_update"]),
                         st.lists(ids, max_size=4)), max_size=40)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(start=st.lists(st.lists(ids, max_size=8), max_size=4), ops=ops, probes=st.lists(ids))
def test_answers_like_a_set(start: list[list[str]], ops: list[tuple[str, list[str]]],
                            probes: list[str]) -> None:  # fmt: skip
    old = idset.FOLD
    idset.FOLD = 3  # fold often: the sorted array and the additions both answer
    try:
        got, want = IdSet(start), {i for batch in start for i in batch}
        for op, args in ops:
            if op in ("add", "discard"):
                for i in args:
                    getattr(got, op)(i)
                    getattr(want, op)(i)
            else:
                getattr(got, op)(args)
                getattr(want, op)(args)
            for i in [*args, *probes]:
                assert (i in got) == (i in want), i
        assert len(got) == len(want)
        assert set(got) == want
    finally:
        idset.FOLD = old


def test_funes_chunk_ids_take_eight_bytes_each() -> None:
    many = [chunk_id("s", f"t{i}", 0, 0) for i in range(10_000)]
    s = IdSet([many[:5000], many[5000:]])
    assert s._sorted.nbytes == 8 * 10_000 and not s._other
    assert all(i in s for i in many[::97]) and chunk_id("s", "t-new", 0, 0) not in s
