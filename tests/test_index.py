"""`funes index` end to end, run as a user would: incremental, idempotent, one writer,
crash-safe. Transcripts are generated here in Claude Code and Codex formats."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import BIN, model_cache_dir, run_cli


@pytest.fixture(autouse=True)
def model_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FUNES_CACHE_DIR", str(model_cache_dir(tmp_path_factory)))


def claude_records(sid: str, turns: int, start: int = 0) -> list[dict[str, Any]]:
    recs: list[dict[str, Any]] = []
    for t in range(start, turns):
        ts = f"2026-03-02T10:{t // 60 % 60:02d}:{t % 60:02d}.000Z"
        base = {"uuid": f"{sid}-u{t}", "parentUuid": f"{sid}-u{t - 1}" if t else None,
                "timestamp": ts, "cwd": "/home/ana/proj", "sessionId": sid}  # fmt: skip
        if t % 3 == 0:
            content: Any = f"question {t} in {sid}: why does parse_unit_{t} fail with E05{t:02d}?"
            recs.append({"type": "user", **base, "message": {"role": "user", "content": content}})
        elif t % 3 == 1:
            content = [
                {"type": "thinking", "thinking": f"look at src/store/lock_{t}.py first"},
                {"type": "text", "text": f"The MemoryWriter{t} holds the lock. " * 5},
                {"type": "tool_use", "id": f"toolu_{sid}_{t}", "name": "Read",
                 "input": {"file_path": f"/home/ana/proj/src/store/lock_{t}.py"}},
            ]  # fmt: skip
            recs.append(
                {"type": "assistant", **base, "message": {"role": "assistant", "content": content}}
            )
        else:
            content = [{"type": "tool_result", "tool_use_id": f"toolu_{sid}_{t - 1}",
                        "content": [{"type": "text", "text": f"def held_{t}():\n    pass\n" * 3}]}]  # fmt: skip
            recs.append({"type": "user", **base, "message": {"role": "user", "content": content}})
    return recs


def write_claude(home: Path, sid: str, turns: int, project: str = "-home-ana-proj") -> Path:
    path = home / ".claude" / "projects" / project / f"{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in claude_records(sid, turns)))
    return path


def write_codex(home: Path, sid: str, turns: int) -> Path:
    path = home / ".codex" / "sessions" / "2026" / "03" / "03" / f"rollout-2026-03-03-{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [{"timestamp": "2026-03-03T08:00:00.000Z", "type": "session_meta",
              "payload": {"id": sid, "cwd": "/srv/app"}}]  # fmt: skip
    for t in range(turns):
        ts = f"2026-03-03T08:{t // 60 % 60:02d}:{t % 60:02d}.000Z"
        if t % 2 == 0:
            p: dict[str, Any] = {"type": "message", "role": "user",
                                 "content": [{"type": "input_text", "text": f"add HealthCheck{t} route"}]}  # fmt: skip
        else:
            p = {"type": "function_call", "name": "exec_command",
                 "arguments": json.dumps({"cmd": f"pytest tests/test_health_{t}.py --no-header"}),
                 "call_id": f"call_{t}"}  # fmt: skip
        lines.append({"timestamp": ts, "type": "response_item", "payload": p})
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return path


def index(
    *args: str | Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    r = run_cli("funes", "index", "--no-embed", *args, env=env)
    return r


def stored_ids(memory: Path | None = None) -> list[str]:
    from funes.store.memory import open_memory

    mem = open_memory(memory)
    return sorted(str(i) for i in mem._scan(["id"]).column("id").to_pylist())


def summary(r: subprocess.CompletedProcess[bytes]) -> dict[str, str]:
    assert r.returncode == 0, r.stderr.decode()
    line = r.stdout.decode().strip().splitlines()[-1]
    return dict(kv.split("=") for kv in line.split()[1:])


@pytest.mark.slow
def test_indexing_a_session_twice_writes_nothing_the_second_time(private_home: Path) -> None:
    src = write_claude(private_home, "sess-a", 12)
    first = summary(index(src))
    assert int(first["chunks"]) > 0
    again = summary(index(src))
    assert again["chunks"] == "0" and again["skipped"] == "1"
    touched = summary(index(src, "--yes"))  # same file: still nothing new
    assert touched["chunks"] == "0"
    os.utime(src, (time.time() + 5, time.time() + 5))  # a new signature: re-read, ids dedupe
    assert summary(index(src))["chunks"] == "0"


@pytest.mark.slow
def test_grown_session_adds_only_its_new_turns(private_home: Path) -> None:
    src = write_claude(private_home, "sess-g", 6)
    summary(index(src))
    before = set(stored_ids())
    with open(src, "a") as f:
        f.write("".join(json.dumps(r) + "\n" for r in claude_records("sess-g", 9, start=6)))
    os.utime(src, (time.time() + 5, time.time() + 5))
    grown = summary(index(src))
    after = set(stored_ids())
    assert before < after and int(grown["chunks"]) == len(after - before)
    from funes.store.memory import open_memory

    rows = open_memory().fetch(sorted(after - before), ["seq"])
    assert {r["seq"] for r in rows} == {6, 7, 8}


@pytest.mark.slow
def test_deleting_the_memory_and_reindexing_rebuilds_the_same_ids(private_home: Path) -> None:
    import shutil

    write_claude(private_home, "sess-1", 9)
    write_codex(private_home, "cdx-1", 6)
    summary(index(private_home / ".claude", private_home / ".codex"))
    ids = stored_ids()
    shutil.rmtree(Path(os.environ["FUNES_HOME"]) / "memory")
    summary(index(private_home / ".claude", private_home / ".codex"))
    assert stored_ids() == ids


@pytest.mark.slow
def test_sweep_indexes_known_roots_tier_by_tier_and_is_incremental(private_home: Path) -> None:
    write_claude(private_home, "sess-s", 9)
    write_codex(private_home, "cdx-s", 6)
    first = summary(index())
    assert first["sessions"] == "2"  # 2 files, each read in 3 tier passes, counted once
    full = stored_ids()
    assert summary(index())["chunks"] == "0"
    from funes.store.memory import open_memory

    mem = open_memory()
    assert {r["block_type"] for r in mem.fetch(full, ["block_type"])} == {
        "text", "thinking", "tool_use", "tool_result",
    }  # fmt: skip
    assert mem.lexical_search("lock_4.py")  # path segment
    assert mem.lexical_search("parse_unit_3")  # snake_case identifier
    assert mem.lexical_search("HealthCheck2")  # CamelCase, codex
    assert mem.lexical_search("health")  # CamelCase part


def test_memory_flag_writes_elsewhere(private_home: Path, tmp_path: Path) -> None:
    src = write_claude(private_home, "sess-m", 6)
    summary(index(src, "--memory", tmp_path / "other"))
    assert stored_ids(tmp_path / "other")
    assert not (Path(os.environ["FUNES_HOME"]) / "memory" / "chunks.lance").exists()


def test_no_thinking_leaves_thinking_out(private_home: Path) -> None:
    src = write_claude(private_home, "sess-t", 6)
    summary(index(src, "--no-thinking"))
    from funes.store.memory import open_memory

    types = {r["block_type"] for r in open_memory().rows(columns=["block_type"]).to_pylist()}
    assert "thinking" not in types and "text" in types


def test_missing_path_is_one_clear_error(private_home: Path) -> None:
    r = index(private_home / "nope.jsonl")
    assert r.returncode == 2
    assert r.stderr.decode().startswith("funes: no such file or directory:")


def many_sessions(home: Path, n: int, turns: int = 30) -> Path:
    for i in range(n):
        write_claude(home, f"bulk-{i:04d}", turns)
    return home / ".claude"


@pytest.mark.slow
def test_two_index_runs_at_once_leave_no_duplicates_and_one_clear_message(
    private_home: Path,
) -> None:
    root = many_sessions(private_home, 150)
    env = {**os.environ}
    procs = [
        subprocess.Popen(
            [str(BIN / "funes"), "index", "--no-embed", str(root)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            env=env,
        )
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    codes = [p.returncode for p in procs]
    assert 0 in codes
    for code, (_, err) in zip(codes, outs, strict=True):
        if code != 0:
            assert code == 1
            assert err.decode() == (
                "funes: another funes memory operation is in progress; retry in a moment\n"
            )
    ids = stored_ids()
    assert len(ids) == len(set(ids))
    assert summary(index(root))["chunks"] == "0"


@pytest.mark.slow
def test_killed_run_then_rerun_gives_the_ids_of_an_uninterrupted_run(
    private_home: Path, tmp_path: Path
) -> None:
    root = many_sessions(private_home, 300)
    clean = tmp_path / "clean"
    summary(index(root, "--memory", clean))
    want = stored_ids(clean)
    crashed = tmp_path / "crashed"
    sizes = []
    for delay in (0.0, 0.4):
        p = subprocess.Popen(
            [str(BIN / "funes"), "index", "--no-embed", str(root), "--memory", str(crashed)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        # kill once a batch of rows is committed (a second table version: rows are committed
        # in batches of thousands, state after them), so the run is really cut mid-way
        versions = crashed / "chunks.lance" / "_versions"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (
            not versions.is_dir() or len(list(versions.glob("*.manifest"))) < 2
        ):
            time.sleep(0.01)
        time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        p.wait()
        partial = stored_ids(crashed)  # the killed memory opens
        assert len(partial) == len(set(partial))
        sizes.append(len(partial))
    assert 0 < sizes[0] < len(want)  # really killed mid-run
    summary(index(root, "--memory", crashed))
    got = stored_ids(crashed)
    assert got == want
    from funes.store.memory import open_memory

    mem = open_memory(crashed)
    assert mem.lexical.n_docs() == len(want)
    assert sorted(b.decode() for b in mem.lexical.ids()) == want


@pytest.mark.slow
def test_index_embeds_behind_and_backfill_completes(private_home: Path) -> None:
    src = write_claude(private_home, "sess-e", 3)
    r = index(src)
    assert summary(r)["waiting"] != "0"
    r = run_cli("funes", "index", "--backfill", "--json")
    assert r.returncode == 0, r.stderr.decode()
    out = json.loads(r.stdout)
    assert out["without_vectors"] == 0 and out["embedded"] > 0
    from funes.models import load_embedder
    from funes.store.memory import open_memory

    mem = open_memory()
    q = load_embedder().embed(["which file holds the MemoryWriter lock"])[0]
    assert mem.vector_search(q, 3)
