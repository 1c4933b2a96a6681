"""Recall, get and status end to end: evidence with provenance, and an honest miss."""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import pytest
from conftest import REPO, jsonl, run_cli, write_jsonl

from funes.render.formats import WEAK_LINE, get_agent, recall_agent
from funes.render.turns import group_turns
from funes.retrieval import Filters, Hit, Query, Result, parse_when, recency_weight, rrf

SAMPLES = REPO / "contrib" / "samples"


def claude(uuid: str, ts: str, text: str, role: str = "assistant") -> dict[str, object]:
    return {
        "type": role,
        "uuid": uuid,
        "parentUuid": None,
        "timestamp": ts,
        "cwd": "/home/ana/app",
        "message": {"role": role, "content": [{"type": "text", "text": text}]},
    }


@pytest.fixture(scope="module")
def sample_memory(samples_memory: Path) -> Path:
    """The bundled samples indexed once (conftest), shared by this module's tests."""
    return samples_memory


def recall(mem: Path, *args: str | Path) -> str:
    r = run_cli("funes", "recall", *args, "--memory", mem)
    assert r.returncode == 0, r.stderr
    return r.stdout.decode()


def test_recall_finds_the_answer_and_its_get_line_runs(sample_memory: Path) -> None:
    out = recall(sample_memory, "why were the zoom 14 tiles empty?", "-k", "3")
    assert not out.startswith("weak evidence")
    blocks = out.split("---\n")
    answer = next(b for b in blocks if "LineTo" in b and "count=0" in b)
    header, get_line = answer.splitlines()[:2]
    assert header.startswith(
        "[2026-10-14T09:03:05.000Z] claude_code -home-ana-src-tiler/5f0c2d1e text  score="
    )
    assert get_line.startswith("  → get 5f0c2d1e-8a7b-4c3d-9e2f-1a2b3c4d5e6f c-11 --memory ")
    argv = shlex.split(get_line.split("→ ", 1)[1])
    got = run_cli("funes", *argv, "--window", "1")
    assert got.returncode == 0, got.stderr
    text = got.stdout.decode()
    turns = [line for line in text.splitlines() if line.startswith("[2026-")]
    assert turns == [
        "[2026-10-14T09:02:19.000Z] tool seq9 turn=c-10",
        "[2026-10-14T09:03:05.000Z] assistant seq10 turn=c-11",
        "[2026-10-14T09:03:40.000Z] meta seq11 turn=c-12",
    ]
    assert "ParseError: LineTo with count=0 at offset 412" in text  # the neighbour turn


def test_recall_json_gives_hit_records_with_provenance(sample_memory: Path) -> None:
    hits = jsonl(run_cli("funes", "recall", "migration lock timeout invoices", "--json",
                         "--memory", sample_memory).stdout)  # fmt: skip
    assert hits and {h["kind"] for h in hits} == {"hit"}
    top = hits[0]
    assert top["harness"] == "codex" and top["workdir"] == "-srv-ledger"
    assert top["rank"] == 1 and top["verdict"] in ("strong", "weak")
    assert {"lexical_rank", "vector_rank", "recency"} <= set(top["scores"])
    assert "vector" not in top
    assert all(n["seq"] != top["seq"] for n in top["neighbors"])


def test_filters_prefilter_both_legs(sample_memory: Path) -> None:
    base = ["funes", "recall", "cache", "--json", "-k", "5", "--memory", sample_memory]
    codex = jsonl(run_cli(*base, "--harness", "codex").stdout)
    assert len(codex) == 5 and {h["harness"] for h in codex} == {"codex"}
    results = jsonl(run_cli(*base, "--type", "tool_result").stdout)
    assert len(results) == 5 and {h["block_type"] for h in results} == {"tool_result"}
    one = jsonl(run_cli(*base, "--session", "agent-a3f9").stdout)
    assert len(one) == 4 and {h["session_id"] for h in one} == {"agent-a3f9"}


def test_since_and_until_use_turn_timestamps(sample_memory: Path) -> None:
    base = ["funes", "recall", "what failed", "--json", "-k", "50", "--memory", sample_memory]
    late = jsonl(run_cli(*base, "--since", "2026-11-01").stdout)
    assert late and {h["harness"] for h in late} == {"codex"}
    early = jsonl(run_cli(*base, "--until", "2026-10-14").stdout)
    assert early and {h["harness"] for h in early} == {"claude_code"}
    bad = run_cli(*base, "--since", "last tuesday")
    assert bad.returncode == 2 and bad.stderr.decode().startswith(
        "funes: --since must be a date (2026-03-01"
    )


def test_absent_topic_gets_the_weak_evidence_line(sample_memory: Path) -> None:
    out = recall(sample_memory, "why did we pick DuckDB over SQLite for the analytics store?")
    assert out.startswith(WEAK_LINE + "\n")
    strong = recall(sample_memory, "byte-budgeted LRU TILER_CACHE_BYTES crawlers ARC")
    assert not strong.startswith(WEAK_LINE)
    assert "LRU" in strong.split("---")[0]


@pytest.mark.slow
def test_newer_of_two_equal_passages_ranks_first_but_old_exact_answers_survive(
    tmp_path: Path,
) -> None:
    text = "We pinned grpcio to 1.62 because 1.63 segfaults on Alpine musl builds."
    root = tmp_path / "t"
    write_jsonl(root / "old.jsonl", [claude("o1", "2024-11-01T10:00:00.000Z", text)])
    write_jsonl(root / "new.jsonl", [claude("n1", "2026-11-20T10:00:00.000Z", text)])
    write_jsonl(root / "fresh.jsonl", [claude("f1", "2026-11-29T10:00:00.000Z",
                "Dependency upgrades this week went fine; nothing notable about the build.")])  # fmt: skip
    write_jsonl(root / "exact.jsonl", [claude("e1", "2024-10-01T10:00:00.000Z",
                "The Postgres replica lag alert fires because WAL shipping runs every 15 minutes.")])  # fmt: skip
    mem = tmp_path / "memory"
    assert run_cli("funes", "index", root, "--yes", "--memory", mem).returncode == 0
    hits = jsonl(
        run_cli(
            "funes", "recall", "why is grpcio pinned to 1.62?", "--json", "--memory", mem
        ).stdout
    )
    # the same text twice collapses into one hit: the newer place first, the older listed
    assert hits[0]["session_id"] == "new"
    assert [d["session_id"] for d in hits[0]["duplicates"]] == ["old"]
    hits = jsonl(
        run_cli(
            "funes", "recall", "why does the replica lag alert fire?", "--json", "--memory", mem
        ).stdout
    )
    assert hits[0]["session_id"] == "exact"


def test_recall_without_an_index_says_what_to_do(tmp_path: Path) -> None:
    r = run_cli("funes", "recall", "anything", "--memory", tmp_path / "nothing")
    assert r.returncode == 1
    err = r.stderr.decode()
    assert err.startswith("funes: ") and "funes index" in err and err.count("\n") == 1


def test_get_of_an_unknown_turn_is_one_clear_line(sample_memory: Path) -> None:
    r = run_cli(
        "funes", "get", "5f0c2d1e-8a7b-4c3d-9e2f-1a2b3c4d5e6f", "nope", "--memory", sample_memory
    )
    assert r.returncode == 1 and r.stdout == b""
    assert r.stderr.decode().startswith("funes: turn nope not found in session 5f0c2d1e")
    # and the way on: the command that lists the session's turns, which runs as printed
    line = r.stderr.decode().rstrip("\n")
    assert line.count("\n") == 0 and line.endswith("` reads its turns from the first")
    cmd = line.rsplit("`", 2)[-2].split()
    assert cmd[:2] == ["funes", "get"]
    shown = run_cli(*cmd)
    assert shown.returncode == 0 and "turn=c-1\n" in shown.stdout.decode()


def test_status_reports_counts_agents_and_models(sample_memory: Path) -> None:
    r = run_cli("funes", "status", "--memory", sample_memory)
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    assert f"memory: {sample_memory}\n" in out
    assert "chunks: 28\nsessions: 3\n" in out
    assert (
        "  claude_code: 2 sessions, 17 chunks\n" in out and "  codex: 1 session, 11 chunks\n" in out
    )
    assert "embedding model: sentence-transformers/all-MiniLM-L6-v2" in out
    assert "reranking: off" in out
    doc = json.loads(run_cli("funes", "status", "--json", "--memory", sample_memory).stdout)
    assert doc["without_vectors"] == 0 and doc["chunks"] == 28


def test_query_answers_jsonl_lines_from_one_process(sample_memory: Path) -> None:
    lines = "\n".join([
        json.dumps({"query": "empty tiles zoom 14", "id": "a", "k": 2}),
        "not json",
        json.dumps({"query": "lock timeout", "id": 7, "k": 1, "harness": "codex"}),
        json.dumps({"query": "quantum chromodynamics lattice", "id": "z", "k": 1, "session": "nope"}),
    ]) + "\n"  # fmt: skip
    r = run_cli("funes-query", "--memory", sample_memory, input=lines)
    assert r.returncode == 1 and b"<stdin>:2: invalid JSON" in r.stderr
    recs = jsonl(r.stdout)
    assert [(x["kind"], x.get("query_id")) for x in recs] == [
        ("hit", "a"),
        ("hit", "a"),
        ("hit", 7),
        ("miss", "z"),
    ]
    assert recs[2]["harness"] == "codex"


# ---------------------------------------------------------------- units of the pipeline


def _row(**kw: object) -> dict[str, object]:
    row = {"id": "x", "text": "passage", "session_id": "0123456789abcdef", "turn_uuid": "u-9", "seq": 4,
           "ts": "2026-06-19T01:29:59.000Z", "role": "assistant", "block_type": "text",
           "harness": "claude_code", "workdir": "-home-u-funes"}  # fmt: skip
    row.update(kw)
    return row


def test_agent_format_matches_the_reference_byte_for_byte() -> None:
    hit = Hit(
        1, 0.5784, _row(), {}, [{"seq": 5, "role": "user", "block_type": "text", "text": "thanks"}]
    )
    res = Result(Query("q"), [hit], "strong", "/home/u/.funes/memory")
    assert recall_agent(res) == (
        "[2026-06-19T01:29:59.000Z] claude_code -home-u-funes/01234567 text  score=0.578\n"
        "  → get 0123456789abcdef u-9 --memory /home/u/.funes/memory\n"
        "passage\n"
        "  ~ [user text seq5] thanks\n"
        "---\n"
    )
    assert recall_agent(Result(Query("q"), [], "weak", "m")) == (
        "no results — nothing in m matches the question; `funes status` says what it holds\n"
    )
    since = Query("q", filters=Filters(since="30d", harness="codex", block_type="text"))
    assert recall_agent(Result(since, [], "weak", "m")) == (
        "no results — nothing in m matches the filters (--type text, --harness codex, "
        "--since 30d); widen or drop them, or see what the memory holds with `funes status`\n"
    )
    weak = recall_agent(Result(Query("q"), [hit], "weak", "m"))
    assert weak.startswith(WEAK_LINE + "\n[2026-06-19T01:29:59.000Z]")


def test_get_agent_format_stitches_splits_and_joins_blocks() -> None:
    rows = [
        {"seq": 2, "turn_uuid": "t2", "ts": "T2", "role": "assistant", "block_idx": 1, "split_idx": 0,
         "block_type": "text", "text": "second block"},
        {"seq": 2, "turn_uuid": "t2", "ts": "T2", "role": "assistant", "block_idx": 0, "split_idx": 1,
         "block_type": "text", "text": "over the lazy dog"},
        {"seq": 2, "turn_uuid": "t2", "ts": "T2", "role": "assistant", "block_idx": 0, "split_idx": 0,
         "block_type": "text", "text": "the quick fox jumps over the"},
    ]  # fmt: skip
    assert get_agent(group_turns(rows)) == (
        "[T2] assistant seq2 turn=t2\nthe quick fox jumps over the lazy dog\n\nsecond block\n---\n"
    )


def test_rrf_is_deterministic_on_ties() -> None:
    assert rrf([["b", "a"], ["a", "b"]]) == ["a", "b"]
    assert rrf([["c"], ["d"]]) == ["c", "d"]


def test_recency_is_gentle_and_unknown_times_are_neutral() -> None:
    from datetime import UTC, datetime

    now = datetime(2026, 11, 30, tzinfo=UTC)
    assert recency_weight("2026-11-30T00:00:00Z", now, 90) == 1.0
    assert 0.9 <= recency_weight("2020-01-01T00:00:00Z", now, 90) < 0.91
    assert recency_weight("", now, 90) == recency_weight("1700000000000", now, 90) == 1.0
    assert recency_weight("2020-01-01T00:00:00Z", now, 0) == 1.0


def test_time_bounds_accept_dates_and_relative_spans() -> None:
    from datetime import UTC, datetime

    now = datetime(2026, 11, 30, 12, tzinfo=UTC)
    assert parse_when("7d", now) == "2026-11-23T12:00:00.000Z"
    assert parse_when("2026-03-01", now, end=True) == "2026-03-02T00:00:00.000Z"
    assert Filters(harness="claude").where(now) == "harness = 'claude_code'"


def test_a_damaged_memory_is_one_line_not_a_traceback(sample_memory: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(sample_memory, broken)
    for f in (broken / "chunks.lance" / "data").iterdir():
        f.unlink()
    r = run_cli("funes", "recall", "tile cache", "--memory", broken)
    err = r.stderr.decode()
    assert r.returncode == 1 and "Traceback" not in err and err.count("\n") == 1
    assert err.startswith("funes: ") and "damaged or missing" in err


def test_a_hit_carries_a_few_neighbour_lines_not_a_whole_busy_turn(tmp_path: Path) -> None:
    root = tmp_path / ".claude" / "projects" / "-home-ana-app"
    ts = "2026-10-20T10:00:00.000Z"
    calls = [
        {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": f"ls dir{i}"}}
        for i in range(12)
    ]
    recs = [
        claude("u1", ts, "why does the importer drop rows with a trailing tab?", "user"),
        claude("a1", ts, "The importer drops rows with a trailing tab because the CSV "
               "dialect strips the last empty field; keeping empty fields fixed it."),
        {**claude("a2", ts, ""), "message": {"role": "assistant", "content": calls}},
        {**claude("r1", ts, "", "user"), "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t0", "content": "row " * 12000}]}},
    ]  # fmt: skip
    for i, r in enumerate(recs):
        r["parentUuid"] = recs[i - 1]["uuid"] if i else None
        r["sessionId"] = "busy"
    write_jsonl(root / "busy.jsonl", recs)
    mem = tmp_path / "memory"
    assert run_cli("funes", "index", root, "--yes", "--memory", mem).returncode == 0
    hits = jsonl(
        run_cli(
            "funes-query",
            "importer drops rows with a trailing tab",
            "--memory",
            mem,
            "-k",
            "1",
            "--neighbors",
            "2",
        ).stdout
    )
    assert "trailing tab" in hits[0]["text"]
    after = [n for n in hits[0]["neighbors"] if n["seq"] > hits[0]["seq"]]
    assert 1 <= len(after) <= 6  # 12 tool calls and a 48 KB output split in chunks follow
    assert all(len(n["text"]) <= 160 for n in hits[0]["neighbors"])
