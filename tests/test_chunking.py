"""Chunking: elision, rendering, splitting, ids, tiers, stitching."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from funes.chunking import (
    MAX_CHARS,
    OVERLAP,
    TIERS,
    chunk_id,
    chunk_turn,
    elide_data_uris,
    reassemble,
    render,
    split,
    stitch,
)
from funes.cli.chunk import chunk_lines
from funes.records import Block, Turn, dumps


def turn(*blocks: Block, session: str = "s1", uuid: str = "t1") -> Turn:
    return Turn("claude_code", session, uuid, None, 3, "2026-01-01T00:00:00Z", "assistant",
                "-w", "", "/x.jsonl", list(blocks))  # fmt: skip


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("see data:image/png;base64,iVBORw0KGgo= end", "see data:image/png;base64,[elided] end"),
        ("data:;base64,QUJD", "data:;base64,[elided]"),
        (
            '{"url":"data:application/pdf;base64,JVBERi0x"}',
            '{"url":"data:application/pdf;base64,[elided]"}',
        ),
        (
            "a data:x/y;base64,AA and data:x/z;base64,BB",
            "a data:x/y;base64,[elided] and data:x/z;base64,[elided]",
        ),
        (";base64,AAAA", ";base64,AAAA"),
        ("Content-Transfer-Encoding;base64,AAAA", "Content-Transfer-Encoding;base64,AAAA"),
        ("data: image/png;base64,AAAA", "data: image/png;base64,AAAA"),
        ("metadata:image/png;base64,AAAA", "metadata:image/png;base64,AAAA"),
        ("data:image/png;base64,", "data:image/png;base64,"),
    ],
)
def test_data_uri_elision(text: str, want: str) -> None:
    assert elide_data_uris(text) == want


def test_render_labels_tool_blocks() -> None:
    assert render(Block("tool_use", "{}", None)) == "[tool_use None] {}"
    assert render(Block("tool_use", '{"a":1}', "Read")) == '[tool_use Read] {"a":1}'
    assert render(Block("tool_result", " out \n", "Bash")) == "[tool_result Bash]  out"
    assert render(Block("tool_result", "out", None)) == "[tool_result] out"
    assert render(Block("thinking", "  hmm  ")) == "  hmm  "


def test_short_text_is_one_trimmed_piece() -> None:
    assert split("  hello  ") == ["hello"]
    assert split(" \n ") == []
    assert split("x" * MAX_CHARS) == ["x" * MAX_CHARS]


def test_long_text_splits_at_newlines_with_overlap() -> None:
    lines = [f"line {i:04d} " + "word " * 10 for i in range(200)]
    text = "\n".join(lines)
    pieces = split(text)
    assert len(pieces) > 1
    assert all(len(p) <= MAX_CHARS for p in pieces)
    # every piece but the last ends at a line end (the break char itself is excluded)
    for p in pieces[:-1]:
        assert p.endswith("word"), p[-20:]
    assert reassemble(pieces) == text.strip()


def test_unbroken_text_splits_hard_with_exact_overlap() -> None:
    text = "".join(chr(0x4E00 + i % 500) for i in range(3000))  # no spaces, no newlines
    pieces = split(text)
    assert [len(p) for p in pieces] == [1200, 1200, 900]
    assert pieces[0][-OVERLAP:] == pieces[1][:OVERLAP]
    assert reassemble(pieces) == text


def test_word_stream_reassembles_to_the_trimmed_original() -> None:
    text = "  " + " ".join(f"tok{i}" for i in range(2000)) + "  "
    pieces = split(text)
    assert len(pieces) >= 8
    assert reassemble(pieces) == text.strip()


def test_stitch_drops_the_longest_overlap() -> None:
    assert stitch("abcdef", "defgh") == "abcdefgh"
    assert stitch("abc", "xyz") == "abcxyz"
    assert stitch("aaaa", "aaab") == "aaaab"


def test_ids_are_sha1_of_coordinates() -> None:
    want = hashlib.sha1(b"s1:t1:2:0").hexdigest()[:16]
    assert chunk_id("s1", "t1", 2, 0) == want
    chunks = list(chunk_turn(turn(Block("text", "a"), Block("text", "b"), Block("text", "c"))))
    assert chunks[2].id == want and chunks[2].block_idx == 2


def test_only_the_first_piece_of_a_tool_block_carries_the_label() -> None:
    long = " ".join(["payload"] * 600)
    chunks = list(chunk_turn(turn(Block("tool_result", long, "Bash", "t"))))
    assert len(chunks) > 1
    assert chunks[0].text.startswith("[tool_result Bash] payload")
    assert not any(c.text.startswith("[tool_result") for c in chunks[1:])
    assert [c.split_idx for c in chunks] == list(range(len(chunks)))
    assert {c.tool_name for c in chunks} == {"Bash"}


def test_tiers_and_no_thinking_never_renumber_blocks() -> None:
    t = turn(
        Block("thinking", "think"),
        Block("tool_use", "{}", "Read", "x"),
        Block("text", "say"),
        Block("tool_result", "out", "Read", "x"),
        Block("future_type", "unknown types are text tier"),
    )
    everything = {c.block_idx: c.id for c in chunk_turn(t)}
    text_only = list(chunk_turn(t, tiers=["text"]))
    assert [(c.block_idx, c.block_type) for c in text_only] == [
        (0, "thinking"),
        (2, "text"),
        (4, "future_type"),
    ]
    no_thinking = list(chunk_turn(t, tiers=["text", "tool_result"], thinking=False))
    assert [c.block_idx for c in no_thinking] == [2, 3, 4]
    for c in text_only + no_thinking:
        assert everything[c.block_idx] == c.id


def test_chunks_copy_turn_facets_and_extras() -> None:
    t = turn(Block("text", "hello", extra={"lang": "en"}))
    t.extra = {"source_tool": "mine"}
    (c,) = chunk_turn(t)
    assert (c.session_id, c.turn_uuid, c.seq, c.role, c.harness, c.workdir) == (
        "s1", "t1", 3, "assistant", "claude_code", "-w",
    )  # fmt: skip
    assert c.extra == {"source_tool": "mine", "lang": "en"}


def test_elision_happens_before_splitting() -> None:
    payload = "A" * 50_000
    (c,) = chunk_turn(turn(Block("text", f"screenshot: data:image/png;base64,{payload} done")))
    assert c.text == "screenshot: data:image/png;base64,[elided] done"


# --- funes-chunk's line writer ------------------------------------------------------------

_TEXT = st.text(st.characters(codec="utf-8"), max_size=40) | st.sampled_from(
    ["", "a\u2028b\u2029c\x85", 'é"\\\n', "\ud7ff\U0001f600", "x" * 3000]
)
# Keys the line has already (left out of the extras written), keys it has not (written after
# the known fields, vector and model included: they are left out of a line when unset).
_KEYS = st.sampled_from(["text", "kind", "v", "id", "vector", "model", "lang", "é", ""]) | st.text(
    max_size=6
)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=6,
)  # fmt: skip
_BLOCK = st.builds(
    Block,
    type=st.sampled_from(["text", "thinking", "tool_use", "tool_result", "image"]),
    text=_TEXT,
    tool_name=st.none() | _TEXT,
    tool_use_id=st.none() | _TEXT,
    extra=st.dictionaries(_KEYS, _JSON, max_size=3),
)
_TURN = st.builds(
    Turn,
    harness=_TEXT, session_id=_TEXT, turn_uuid=_TEXT, parent_uuid=st.none() | _TEXT,
    # a turn built in a process (not read from a line) may hold other types than declared
    seq=st.integers(-5, 10**12) | st.booleans(), ts=_TEXT | st.none() | st.floats(0, 1e10),
    role=_TEXT, workdir=_TEXT, repo=_TEXT,
    source_path=_TEXT, blocks=st.lists(_BLOCK, max_size=4),
    extra=st.dictionaries(_KEYS, _JSON, max_size=3),
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(t=_TURN, tiers=st.sampled_from([TIERS, ("text",), ("tool_use", "tool_result")]),
       thinking=st.booleans(), redacting=st.booleans())  # fmt: skip
def test_chunk_lines_are_the_bytes_dumps_writes(
    t: Turn, tiers: tuple[str, ...], thinking: bool, redacting: bool
) -> None:
    """funes-chunk writes each chunk line from parts it encodes once per turn and block; the
    bytes are those of `dumps(chunk)` for any turn: unusual text, extras named like a field,
    line-break characters that must be escaped."""
    redact = (lambda s: s.replace("a", "[REDACTED:x]")) if redacting else None
    want = [dumps(c) + "\n" for c in chunk_turn(t, tiers, thinking, redact)]
    assert list(chunk_lines(t, tiers, thinking, redact)) == want
    assert all("\u2028" not in line and line.count("\n") == 1 for line in want)
