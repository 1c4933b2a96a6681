"""What gets a vector, and in what order: backfills embed text first, then tool calls, then tool
results; `funes index --embed-tool-results head` gives only the first piece of each tool result
a vector — the rest is stored, found by words, and never counted as waiting — and `all` takes
that back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import run_cli

from funes.ingest.backfill import embed_unlocked, load_embed
from funes.store.embedding import tool_results
from funes.store.memory import EMBED_ORDER, open_memory

SID = "sess-tools"
TAIL_WORD = "zorblattquux"  # only in the long tool result's last lines


def transcript(home: Path, turns: int = 4) -> Path:
    """A Claude Code session: per round a question, an answer with a tool call, a long tool
    result (many pieces) and a short one; plus a truncated last line (skipped and counted)."""
    recs: list[dict[str, Any]] = []
    n = 0

    def rec(kind: str, content: Any) -> None:
        nonlocal n
        recs.append({
            "type": kind, "uuid": f"u{n}", "parentUuid": f"u{n - 1}" if n else None,
            "sessionId": SID, "timestamp": f"2026-03-02T10:00:{n:02d}.000Z",
            "cwd": "/home/ana/proj", "message": {"role": kind, "content": content},
        })  # fmt: skip
        n += 1

    for r in range(turns):
        rec("user", f"round {r}: why does the importer stall on shard {r}?")
        rec("assistant", [
            {"type": "text", "text": f"Looking at the importer log for shard {r}."},
            {"type": "tool_use", "id": f"t{r}", "name": "Bash",
             "input": {"command": f"tail -n 400 logs/import-{r}.log"}},
        ])  # fmt: skip
        log = "".join(
            f"{i:05d} INFO shard {r} batch {i} committed rows={i * 7}\n" for i in range(180)
        )
        if r == 0:
            log += f"ERROR {TAIL_WORD} checksum mismatch in shard 0\n"
        rec("user", [{"type": "tool_result", "tool_use_id": f"t{r}", "content": log}])
        rec("user", [{"type": "tool_result", "tool_use_id": f"t{r}", "content": f"ok {r}"}])
    path = home / ".claude" / "projects" / "-home-ana-proj" / f"{SID}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(x) for x in recs] + ['{"type": "user", "uuid": "cut']  # truncated
    path.write_text("\n".join(lines) + "\n")
    return path


def rows(mem: Path) -> list[dict[str, Any]]:
    t = open_memory(mem)._scan(["id", "text", "block_type", "split_idx", "vector"])
    return list(t.to_pylist())


def status(mem: Path) -> dict[str, Any]:
    r = run_cli("funes", "status", "--json", "--memory", mem)
    assert r.returncode == 0, r.stderr.decode()
    return dict(json.loads(r.stdout))


@pytest.mark.slow
def test_head_leaves_long_tool_results_to_words_and_nothing_waits(
    private_home: Path, tmp_path: Path
) -> None:
    mem = tmp_path / "mem"
    src = transcript(private_home)
    r = run_cli("funes", "index", src, "--embed-tool-results", "head", "--memory", mem)
    assert r.returncode == 0, r.stderr.decode()
    line = r.stdout.decode().strip().splitlines()[-1]
    assert "waiting=" not in line and "lines_skipped=1" in line, line
    assert tool_results(mem) == "head"

    stored = rows(mem)
    tails = [x for x in stored if x["block_type"] == "tool_result" and x["split_idx"] >= 1]
    assert len(tails) >= 4  # every long result was split, and every piece is stored
    assert all(x["vector"] is None for x in tails)
    others = [x for x in stored if x not in tails]
    assert others and all(x["vector"] is not None for x in others)  # heads and text embedded
    assert any(x["block_type"] == "tool_result" and x["split_idx"] == 0 for x in others)

    # Found by words, though it has no vector.
    found = run_cli("funes", "recall", TAIL_WORD, "checksum", "--json", "--memory", mem)
    assert found.returncode == 0, found.stderr.decode()
    assert TAIL_WORD in found.stdout.decode()

    # Not waiting: status, a backfill and a second index run all say nothing is left.
    st = status(mem)
    assert st["without_vectors"] == 0 and st["tool_results"] == "head"
    assert open_memory(mem).counts().without_vectors == 0  # what `funes doctor` reports
    shown = run_cli("funes", "status", "--memory", mem).stdout.decode()
    assert "awaiting vectors" not in shown
    assert "tool results: only each one's first piece gets a vector, by choice" in shown
    back = run_cli("funes", "index", "--backfill", "--memory", mem)
    assert back.returncode == 0, back.stderr.decode()
    assert "embedded=" not in back.stdout.decode() or "embedded=0" in back.stdout.decode()
    again = run_cli("funes", "index", src, "--memory", mem)  # the setting is remembered
    assert again.returncode == 0 and "waiting=" not in again.stdout.decode()
    assert all(x["vector"] is None for x in rows(mem) if x["id"] in {t["id"] for t in tails})

    # `all` takes it back: the same pieces wait at once (status counts them), and are embedded.
    r = run_cli("funes", "index", "--backfill", "--embed-tool-results", "all", "--memory", mem)
    assert r.returncode == 0, r.stderr.decode()
    assert f"embedded={len(tails)}" in r.stdout.decode(), r.stdout.decode()
    assert all(x["vector"] is not None for x in rows(mem))
    assert status(mem)["without_vectors"] == 0 and tool_results(mem) == "all"


@pytest.mark.slow
def test_switching_back_to_all_counts_the_pieces_as_waiting_at_once(
    private_home: Path, tmp_path: Path
) -> None:
    mem = tmp_path / "mem"
    src = transcript(private_home, turns=2)
    r = run_cli("funes", "index", src, "--no-embed", "--embed-tool-results", "head",
                "--memory", mem)  # fmt: skip
    assert r.returncode == 0, r.stderr.decode()
    stored = rows(mem)
    tails = sum(1 for x in stored if x["block_type"] == "tool_result" and x["split_idx"] >= 1)
    assert tails and status(mem)["without_vectors"] == len(stored) - tails
    r = run_cli("funes", "index", src, "--no-embed", "--embed-tool-results", "all",
                "--memory", mem)  # fmt: skip
    assert r.returncode == 0, r.stderr.decode()
    st = status(mem)
    assert st["without_vectors"] == len(stored) and st["tool_results"] == "all"


def test_a_bad_setting_is_refused_by_name(private_home: Path, tmp_path: Path) -> None:
    r = run_cli("funes", "index", "--embed-tool-results", "some", "--memory", tmp_path / "m")
    assert r.returncode == 2
    err = r.stderr.decode()
    assert "--embed-tool-results" in err and "head" in err
    assert not (tmp_path / "m" / "embedding.json").exists()


@pytest.mark.slow
@pytest.mark.parametrize("setting", ["all", "head"])
def test_backfill_embeds_text_then_tool_calls_then_tool_results(
    private_home: Path, tmp_path: Path, setting: str
) -> None:
    mem = tmp_path / "mem"
    src = transcript(private_home, turns=3)
    r = run_cli("funes", "index", src, "--no-embed", "--embed-tool-results", setting,
                "--memory", mem)  # fmt: skip
    assert r.returncode == 0, r.stderr.decode()
    kinds = {x["text"]: x["block_type"] for x in rows(mem)}
    # Stored turn by turn: the tiers are interleaved in the table.
    assert [EMBED_ORDER[k] for k in kinds.values()] != sorted(
        EMBED_ORDER[k] for k in kinds.values()
    )

    embed = load_embed()
    seen: list[str] = []

    def recording(texts: list[str]) -> np.ndarray:
        seen.extend(texts)
        return embed(texts)

    m = open_memory(mem)
    done, left = embed_unlocked(m, recording, lambda: m.writer(interactive=False), batch=3)
    assert left == 0 and done == len(seen) > 0
    ranks = [EMBED_ORDER[kinds[t]] for t in seen]
    assert ranks == sorted(ranks), [kinds[t] for t in seen]
    assert set(ranks) == {0, 1, 2}
    tails = {t for t, k in kinds.items() if k == "tool_result"} - set(seen)
    assert bool(tails) == (setting == "head")
