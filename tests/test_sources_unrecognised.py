"""A JSON-lines file in no agent's format, named by path, is said to be one — never indexed as
0 sessions in silence — while a real Claude Code file that holds no turns (a summary-only
session, the catch-all's own format) stays quiet, as in every sweep."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from conftest import run_cli, write_jsonl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from funes import sources
from funes.sources.routing import parse

# Records no source's sniffer can take for its own: every key is foreign to every format.
_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda kids: (
        st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=5), kids, max_size=3)
    ),
    max_leaves=8,
)
foreign = st.dictionaries(st.text(min_size=1, max_size=8).map(lambda k: "zz_" + k), _values,
                          max_size=4)  # fmt: skip


def _stats(records: list[Any], name: str = "export.jsonl") -> sources.FileStats:
    with tempfile.TemporaryDirectory() as d:
        path = write_jsonl(Path(d) / name, records)
        seen: list[sources.FileStats] = []
        assert list(parse([path], on_file=seen.append)) == []
        return seen[0]


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(foreign, min_size=1, max_size=5))
def test_a_file_no_format_recognises_is_said_to_be_one(records: list[dict[str, Any]]) -> None:
    st_ = _stats(records)
    why = sources.no_turns(st_)
    assert st_.unrecognised and why is not None
    assert "no agent's format matched its first record" in why
    assert f"no turns came of its {len(records)} records" in why


def test_a_claude_file_with_no_turns_is_recognised_and_quiet() -> None:
    st_ = _stats([{"type": "summary", "summary": "Tile cache work", "leafUuid": "u-9"}])
    assert not st_.unrecognised


def test_index_and_parse_name_the_unrecognised_file(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "export.jsonl", [{"foo": 1}, {"bar": [1, 2]}])
    r = run_cli("funes-parse", path)
    assert r.returncode == 0
    assert f"funes-parse: {path}: read as a claude_code transcript (no agent's format matched" in (
        r.stderr.decode()
    )
    assert "no turns came of its 2 records (untyped 2)" in r.stderr.decode()
    r = run_cli("funes", "index", path, "--no-embed", "--memory", tmp_path / "m")
    assert r.returncode == 0, r.stderr
    assert f"funes: {path}: read as a claude_code transcript (no agent's format matched" in (
        r.stderr.decode()
    )
    assert r.stderr.decode().rstrip().endswith("— nothing indexed from it")
    assert json.loads(run_cli("funes", "status", "--memory", tmp_path / "m", "--json").stdout or
                      b"{}").get("chunks", 0) == 0  # fmt: skip
