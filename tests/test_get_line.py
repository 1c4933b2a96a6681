"""One builder of the `get` a hit or a range points at (funes.results.get_args): every format
that prints a `→ get` or `funes get` line prints what it builds, and `ask`'s citation check
reads the session back out of each of them."""

from __future__ import annotations

import shlex
from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st

from funes.agents.ask import citations
from funes.render.formats import recall_agent, recall_human
from funes.render.sessions import range_agent, sketch_text
from funes.results import Hit, Query, Result, get_args, get_command
from funes.store.sessions import TurnRange
from funes.store.sketch import Sketch

# Session and turn ids as the sources write them (UUIDs, rollout names, `s1-t3`, `c-11`, …:
# the citation check strips markdown's `_`, `.`, `:` off a token's ends, and ids end in a
# letter or digit), and memory labels as `--memory` takes them.
IDS = st.from_regex(r"[A-Za-z0-9](?:[A-Za-z0-9._:@+-]{0,38}[A-Za-z0-9])?", fullmatch=True)
MEMORIES = st.one_of(
    st.just("team/kb"),
    st.from_regex(r"hf://datasets/[a-z][a-z0-9-]{0,12}/[a-z][a-z0-9_.-]{0,12}", fullmatch=True),
    st.from_regex(r"/tmp/[a-z]{1,8}( [a-z]{1,8})?/mem", fullmatch=True),  # a space: quoted
)
PLAIN = SimpleNamespace(width=200, warn=str, bold=str, accent=str, dim=str)


def _row(session: str, turn: str) -> dict[str, object]:
    return {"id": "c1", "ts": "2026-11-01T10:00:02.000Z", "harness": "claude_code",
            "workdir": "-home-ana-app", "session_id": session, "turn_uuid": turn, "seq": 3,
            "role": "assistant", "block_type": "text", "text": "the retry budget is 3"}  # fmt: skip


@given(session=IDS, turn=IDS, other=IDS, memory=MEMORIES)
def test_recall_formats_and_records_print_the_builders_get_line(
    session: str, turn: str, other: str, memory: str
) -> None:
    dup = {"session_id": other, "turn_uuid": turn, "seq": 1, "ts": "2026-11-01T10:00:00.000Z"}
    hit = Hit(1, 0.5, _row(session, turn), {}, memory=memory, duplicates=[dup])
    result = Result(Query("retry budget"), [hit], "strong", memory)
    args = get_args(session, turn, memory=memory)
    assert args.split()[:2] == [shlex.quote(session), shlex.quote(turn)]
    assert shlex.split(args)[-2:] == ["--memory", memory]

    agent = recall_agent(result)
    assert f"  → get {args}\n" in agent
    human = recall_human(result, PLAIN)
    assert f"   funes get {args}\n" in human
    (rec,) = result.records()
    assert rec.duplicates[0]["get"] == get_command(other, turn, memory) == f"funes get {get_args(other, turn, memory=memory)}"  # fmt: skip
    for text in (agent, human, rec.duplicates[0]["get"]):
        assert citations(text, [session, other])[0] in (session, other)  # never the turn id


@given(session=IDS, memory=st.one_of(st.none(), MEMORIES), start=st.integers(0, 500))
def test_a_capped_range_and_an_unsketched_session_point_at_the_builders_get(
    session: str, memory: str | None, start: int
) -> None:
    tr = TurnRange(session, "m", [], start, start + 20, 4, 9, start + 5)
    rest = get_args(session, seq_from=start + 5, seq_to=start + 20, memory=memory)
    out = range_agent(tr, memory_arg=memory)
    assert out.endswith(f"→ get {rest}\n")
    assert citations(out.splitlines()[-1], [session]) == [session]

    sk = Sketch(session, "m", [], 0, 3, None, None, 400)
    assert f"`funes get {get_args(session, seq_from=0)}` reads it" in sketch_text(sk)
