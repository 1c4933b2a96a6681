"""A warm searcher (MCP, funes-query) keeps what it read of a memory across the table versions
that hooks' writes make every turn, reading only what each version added."""

from __future__ import annotations

from pathlib import Path

from test_ann_behind import rows

from funes.ranker import Sessions
from funes.retrieval import Searcher
from funes.store import open_memory
from funes.store.tokenize import query_tokens, tokenize


def full(mem_path: Path) -> Sessions:
    t = open_memory(mem_path).rows(None, ("session_id", "seq", "role", "block_type")).to_pydict()
    return Sessions.build(t["session_id"], t["seq"], t["role"], t["block_type"])


def mixed(start: int, n: int, seed: int) -> list:
    out = rows(start, n, seed)
    kinds = [("user", "text"), ("assistant", "thinking"), ("assistant", "text"),
             ("assistant", "tool_use"), ("user", "tool_result")]  # fmt: skip
    for c in out:
        c.role, c.block_type = kinds[int(c.id, 16) % len(kinds)]
    return out


def stored(path: Path) -> Path:
    """A memory at ``path`` holding rows 0-399 of :func:`mixed` (ten sessions of 40 rows)."""
    with open_memory(path, create=True).writer(interactive=False) as w:
        w.append(mixed(0, 400, seed=1))
    return path


def test_session_shapes_follow_appends_by_reading_only_new_fragments(tmp_path: Path) -> None:
    path = stored(tmp_path / "mem")
    searcher = Searcher(open_memory(path))
    known = [f"s{i}" for i in range(10)]  # the sessions of rows 0-399, 40 rows each
    first = searcher._sessions(known)
    assert first == full(path)
    read: list[object] = []
    rows_of = searcher.memory.rows

    def spy(where=None, columns=(), fragments=None):  # type: ignore[no-untyped-def]
        read.append(fragments)
        return rows_of(where, columns, fragments)

    searcher.memory.rows = spy  # type: ignore[method-assign]
    # A hook appends a new session: one new fragment is read.
    with open_memory(path).writer(interactive=False) as w:
        w.append(mixed(400, 30, seed=2))
    searcher.memory.reload()
    after = searcher._sessions(known)
    assert len(read) == 1 and read[0] is not None and after == first
    # The new session, asked for, is read through its filter.
    assert searcher._sessions([*known, "s10"]) == full(path) != first
    assert len(read) == 2 and read[1] is None
    # Rows removed: the shapes are read whole again, and hold nothing removed.
    gone = [c.id for c in mixed(400, 30, seed=2)]
    with open_memory(path).writer(interactive=False) as w:
        w.delete(gone)
    searcher.memory.reload()
    assert searcher._sessions(known) == full(path) == first
    assert read[-1] is None


def test_which_pool_rows_hold_each_question_term_is_read_from_the_postings(
    tmp_path: Path,
) -> None:
    path = tmp_path / "mem"
    mem = open_memory(path, create=True)
    with mem.writer(interactive=False) as w:  # several segments, one with deleted documents
        w.append(rows(0, 300, seed=1))
        w.append(rows(300, 40, seed=2))
        w.append(rows(340, 7, seed=3))
        w.delete([f"{i:016x}" for i in range(300, 320)])
    mem = open_memory(path)
    assert len(mem.lexical.segments) > 1
    searcher = Searcher(mem)
    pool = mem.fetch([f"{i:016x}" for i in range(0, 347, 3)], ["id", "text"])
    assert len(pool) < len(range(0, 347, 3))  # ids deleted are not fetched
    pool += [{"id": "not-stored", "text": "lock parser"}]
    for question in ("lock parser note12", "vector manifest item5 hook", "nothing known zzz"):
        terms, _, _, present = searcher._terms(question, pool)
        assert terms == query_tokens(question)
        for t in terms:
            want = {r["id"] for r in pool[:-1] if t in set(tokenize(r["text"]))}
            assert present[t] == want, t


def test_a_first_question_reads_lean_and_a_searcher_asked_again_keeps_what_it_reads(
    tmp_path: Path,
) -> None:
    from funes.retrieval import Query
    from funes.search import open_searcher

    path = stored(tmp_path / "mem")
    assert open_searcher(str(path), rerank=False).memory.lean  # what `funes recall` opens
    questions = ["lock parser note12", "item3 retry", "note399 about item11"]
    full_caches = Searcher(open_memory(path))
    want = [[h.row["id"] for h in full_caches.search(Query(q)).hits] for q in questions]
    assert all(want)
    lean = open_memory(path)
    lean.read_lean()
    searcher = Searcher(lean)
    got = [[h.row["id"] for h in searcher.search(Query(questions[0])).hits]]
    assert searcher.memory.lean  # one question: nothing kept for a second
    got += [[h.row["id"] for h in searcher.search(Query(q)).hits] for q in questions[1:]]
    assert not searcher.memory.lean  # asked again: Lance's caches kept from then on
    assert got == want
    # a reload (a hook's write, a reopen after optimize) keeps the reader's choice
    lean = open_memory(path)
    lean.read_lean()
    lean.reload()
    assert lean.lean


def test_a_memory_handed_anew_to_a_warm_searcher_reads_through_the_caches_before_it(
    tmp_path: Path,
) -> None:
    from funes.retrieval import Query

    path = stored(tmp_path / "mem")
    questions = ["lock parser note12", "item3 retry", "note399 about item11", "note7"]
    want = [[h.row["id"] for h in Searcher(open_memory(path)).search(Query(q)).hits]
            for q in questions]  # fmt: skip
    searcher = Searcher(open_memory(path))
    got, sessions = [], []
    for i, q in enumerate(questions):  # as the MCP server asks: the memory opened anew each time
        searcher.memory = open_memory(path)
        got.append([h.row["id"] for h in searcher.search(Query(q)).hits])
        sessions.append(searcher.memory.session)
        if i == 1:  # a hook appends: the next memory is a later version, same caches
            with open_memory(path).writer(interactive=False) as w:
                w.append(mixed(400, 30, seed=2))
            want[2:] = [[h.row["id"] for h in Searcher(open_memory(path)).search(Query(q)).hits]
                        for q in questions[2:]]  # fmt: skip
    assert got == want
    assert sessions[0] is None  # a first question keeps nothing for later
    assert sessions[1] is not None and all(s is sessions[1] for s in sessions[2:])
