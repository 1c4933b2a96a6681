"""Secrets end to end: redaction at `funes index`, and `funes scrub` of a memory built without
it. The transcript is seeded with a fake value of every type bench/secret_detection.py makes,
in prose, JSON-escaped tool input, tool output and across the 1,200-character split; "gone"
means gone from every byte under the memory directory, not just from query results."""

from __future__ import annotations

import hashlib
import json
import random
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import jsonl, load_bench_secrets, run_cli, write_jsonl

SCRUB_BUSY = "funes: another funes memory operation is in progress; retry once it finishes\n"


bench = load_bench_secrets()
# The end-to-end tests embed every block, so they carry the detectors of the original set and
# one in six of the provider table (tests/test_secrets_providers.py checks every row, and
# tests/test_hostile_secrets.py indexes every kind lexically).
KINDS = (*bench.KINDS[:25], *bench.KINDS[25::6])
SID = "5eed5eed-0000-4000-8000-000000000001"
CLEAN_TURNS = 8


def seeded_session(root: Path, seed: int = 2026) -> tuple[Path, dict[str, str]]:
    """A Claude Code session carrying one fake value of every detected type in every context;
    returns its path and {value: detector}."""
    rng = random.Random(seed)
    values: dict[str, str] = {}
    recs: list[dict[str, Any]] = []
    parent: str | None = None

    def add(role: str, content: Any) -> None:
        nonlocal parent
        n = len(recs)
        uuid = f"{SID[:8]}-turn-{n:04d}"
        recs.append(
            {
                "type": role,
                "uuid": uuid,
                "parentUuid": parent,
                "timestamp": f"2026-11-{1 + n // 1440 % 28:02d}T{n // 60 % 24:02d}:{n % 60:02d}:00.000Z",
                "cwd": "/home/ana/proj",
                "sessionId": SID,
                "message": {"role": role, "content": content},
            }
        )
        parent = uuid

    for t in range(CLEAN_TURNS):
        add("user", f"why does the scheduler skip job {t} when the queue drains before midnight?")
        add(
            "assistant",
            [{"type": "text", "text": f"Job {t} is skipped because the cron guard compares "
              "local time with the UTC deadline; the fix normalises both to UTC first."}],
        )  # fmt: skip
    for kind in KINDS:
        value = kind.make(rng)
        values[value] = kind.detector
        ctx = dict(bench._contexts(kind, value, rng))
        add("user", ctx["prose"])
        tid = f"toolu_{kind.detector}"
        shell = ctx["shell"]
        add(
            "assistant",
            [
                {"type": "text", "text": "Writing the environment file, then deploying."},
                # tool input is stored as compact JSON: newlines and quotes come out escaped
                {"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": shell}},
            ],
        )
        results = [c for name, c in ctx.items() if name not in ("prose", "shell")]
        add(
            "user",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": tid,
                    "content": [{"type": "text", "text": r}],
                }
                for r in results
            ],
        )
    path = write_jsonl(root / ".claude" / "projects" / "-home-ana-proj" / f"{SID}.jsonl", recs)
    return path, values


def leaks(data: bytes, values: dict[str, str]) -> list[str]:
    """The detectors whose seeded value (or its JSON-escaped form, or a PEM body line) is in
    ``data`` — never the values themselves, so a failure message leaks nothing."""
    out = []
    for value, detector in values.items():
        for frag in bench.fragments(value):
            forms = {frag.encode(), json.dumps(frag)[1:-1].encode()}
            if any(f in data for f in forms):
                out.append(detector)
                break
    return out


def dir_leaks(root: Path, values: dict[str, str]) -> dict[str, list[str]]:
    """{file under root: detectors leaked in its bytes}, for every file that leaks."""
    found = {}
    for f in sorted(root.rglob("*")):
        if f.is_file():
            hit = leaks(f.read_bytes(), values)
            if hit:
                found[str(f.relative_to(root))] = hit
    return found


def dir_digest(root: Path) -> dict[str, str]:
    return {
        str(f.relative_to(root)): hashlib.sha256(f.read_bytes()).hexdigest()
        for f in sorted(root.rglob("*"))
        if f.is_file()
    }


RECALL_QUERIES = (
    "deploy logs config rotate demo ticket",
    "export npm run deploy staging",
    "cat env NODE_ENV production EOF",
    "PATH HOME LANG TERM xterm PWD",
    "services api environment region eu-west-1",
    "env LOG_LEVEL debug",
    "curl api example",
    "build-log build finished",
    "tls verify true headers Accept",
)


def served(mem: Path) -> bytes:
    """What `funes recall` (agent format), `funes-query` (hit records, the same search for many
    queries) and `funes get` print for the seeded session."""
    out = []
    r = run_cli("funes", "recall", RECALL_QUERIES[0], "-k", "40", "--neighbors", "2",
                "--memory", mem)  # fmt: skip
    assert r.returncode == 0, r.stderr
    out.append(r.stdout)
    batch = "".join(
        json.dumps({"query": q, "k": 40, "candidates": 40, "neighbors": 2}) + "\n"
        for q in RECALL_QUERIES
    )
    r = run_cli("funes-query", "--memory", mem, input=batch)
    assert r.returncode == 0, r.stderr
    assert len(jsonl(r.stdout)) > 100
    out.append(r.stdout)
    turn = f"{SID[:8]}-turn-{CLEAN_TURNS * 2:04d}"
    for fmt in ("agent", "human"):
        r = run_cli("funes", "get", SID, turn, "--window", "500", "--format", fmt, "--memory", mem)
        assert r.returncode == 0, r.stderr
        out.append(r.stdout)
    return b"\n".join(out)


def build_unredacted(home: Path, mem: Path) -> dict[str, str]:
    """parse | chunk --no-redact | write, then embed: a memory holding every seeded value."""
    path, values = seeded_session(home)
    parsed = run_cli("funes-parse", path)
    chunks = run_cli("funes-chunk", "--no-redact", input=parsed.stdout)
    assert chunks.returncode == 0, chunks.stderr
    w = run_cli("funes-write", "--memory", mem, input=chunks.stdout)
    assert w.returncode == 0, w.stderr
    b = run_cli("funes", "index", "--backfill", "--memory", mem)
    assert b.returncode == 0, b.stderr
    return values


def table(mem: Path) -> dict[str, tuple[str, tuple[float, ...] | None]]:
    from funes.store import open_memory

    rows = open_memory(mem).rows(columns=("id", "text", "vector")).to_pylist()
    return {r["id"]: (r["text"], None if r["vector"] is None else tuple(r["vector"])) for r in rows}


def scrub(mem: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    return run_cli("funes", "scrub", "--json", *args, "--memory", mem, env=env)


# ---------------------------------------------------------------------------- index


@pytest.mark.slow
def test_index_stores_and_serves_no_seeded_secret(private_home: Path, tmp_path: Path) -> None:
    path, values = seeded_session(private_home)
    assert len(set(values.values())) == len(KINDS)
    mem = tmp_path / "mem"
    r = run_cli("funes", "index", path, "--yes", "--memory", mem)
    assert r.returncode == 0, r.stderr
    from funes.store import open_memory

    texts = open_memory(mem).rows(columns=("text", "split_idx")).to_pylist()
    assert any(t["split_idx"] for t in texts), "the straddling lines were split"
    stored = "\n".join(t["text"] for t in texts)
    assert not leaks(stored.encode(), values)
    assert {f"[REDACTED:{d}]" in stored for d in values.values()} == {True}
    assert dir_leaks(mem, values) == {}
    out = served(mem)
    assert b"[REDACTED:" in out
    assert not leaks(out, values)
    assert json.loads((mem / "redaction.json").read_text())["ingest"]["detectors"] == "builtin"


# ---------------------------------------------------------------------------- scrub


@pytest.fixture(scope="module")
def unredacted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str], dict]:
    """One unredacted, embedded memory (built once; tests copy it before changing it)."""
    home = tmp_path_factory.mktemp("seeded-home")
    mem = tmp_path_factory.mktemp("seeded") / "mem"
    values = build_unredacted(home, mem)
    return mem, values, table(mem)


def copy_memory(src: Path, dst: Path) -> Path:
    import shutil

    shutil.copytree(src, dst)
    return dst


@pytest.mark.slow
@pytest.mark.needs_scanner
def test_scrub_removes_every_seeded_value_from_the_memory_directory(
    unredacted: tuple[Path, dict[str, str], dict], tmp_path: Path
) -> None:
    src, values, before = unredacted
    mem = copy_memory(src, tmp_path / "mem")
    stored = "\n".join(t for t, _ in before.values())
    assert len(leaks(stored.encode(), values)) == len(values), "the memory holds every value"
    assert not (mem / "redaction.json").exists()

    r = scrub(mem)
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["scanner"] not in ("", "builtin-only")
    assert rep["changed"] and rep["redacted_blocks"] > 0
    # every seeded type is named in the counts (by detector, never by value)
    named = set(rep["redacted"]) | set(rep["dropped"])
    assert set(values.values()) <= named
    assert not leaks(r.stdout + r.stderr, values)

    assert dir_leaks(mem, values) == {}
    lance = mem / "chunks.lance"
    # Lance compresses text, so bytes alone prove little: also prove that every file left is
    # live — one version, no deletion masks, each data file named by that version's manifest,
    # each lexical segment named by the lexical manifest — so what is on disk is exactly the
    # (checked) rows of the table.
    manifests = list((lance / "_versions").glob("*.manifest"))
    assert len(manifests) == 1, "old versions removed"
    assert not [f for f in (lance / "_deletions").rglob("*") if f.is_file()]
    live = manifests[0].read_bytes()
    assert all(f.name.encode() in live for f in (lance / "data").iterdir())
    segments = {
        s["name"] for s in json.loads((mem / "lexical" / "manifest.json").read_text())["segments"]
    }
    assert {d.name for d in (mem / "lexical").iterdir() if d.is_dir()} == segments

    after = table(mem)
    filler = set(session_ids(mem, lambda r: int(r["turn_uuid"][-4:]) < CLEAN_TURNS * 2))
    assert len(filler) == CLEAN_TURNS * 2
    for i in filler:
        assert after[i] == before[i], "rows of clean blocks keep their text and vectors"
    kept = {i for i in after if i in before and after[i][0] == before[i][0]}
    assert all(after[i][1] == before[i][1] for i in kept)
    rewritten = set(after) - kept
    assert rewritten and all(after[i][1] is not None for i in rewritten), "re-embedded"
    stamp = json.loads((mem / "redaction.json").read_text())["scrub"]
    assert stamp["scanner"] == rep["scanner"]

    # idempotent: nothing left to do, the table as it was
    again = json.loads(scrub(mem).stdout)
    assert not again["changed"] and again["rows_written"] == 0 and again["rows_removed"] == 0
    assert table(mem) == after
    assert not leaks(served(mem), values)


def session_ids(mem: Path, keep: Any) -> list[str]:
    from funes.store import open_memory

    rows = open_memory(mem).rows(columns=("id", "turn_uuid")).to_pylist()
    return [r["id"] for r in rows if keep(r)]


@pytest.mark.needs_scanner
def test_scrub_dry_run_reports_and_changes_nothing(
    unredacted: tuple[Path, dict[str, str], dict], tmp_path: Path
) -> None:
    src, values, _ = unredacted
    mem = copy_memory(src, tmp_path / "mem")
    digest = dir_digest(mem)
    r = run_cli("funes", "scrub", "--dry-run", "--memory", mem)
    assert r.returncode == 0, r.stderr
    assert dir_digest(mem) == digest
    text = r.stdout.decode()
    assert re.search(r"would redact (1 secret|\d+ secrets) in (1 block|\d+ blocks): ", text), text
    assert not leaks(r.stdout, values)
    rep = json.loads(scrub(mem, "--dry-run").stdout)
    assert rep["dry_run"] and rep["changed"] and rep["rows_written"] == 0
    assert dir_digest(mem) == digest


@pytest.mark.slow  # 10+ s of CPU: .ci/run runs it, bin/test does not
@pytest.mark.needs_scanner
def test_scrub_prints_no_library_warning_when_it_runs_the_scanner(
    unredacted: tuple[Path, dict[str, str], dict], tmp_path: Path
) -> None:
    """Starting the scanner forks (it must die with funes); lance warned "lance is not
    fork-safe" on stderr at every scrub, though the child only execs the scanner."""
    mem = copy_memory(unredacted[0], tmp_path / "mem")
    r = run_cli("funes", "scrub", "--dry-run", "--memory", mem)
    assert r.returncode == 0, r.stderr
    assert r.stderr.decode() == ""
    # a scrub that rewrites forks after lancedb's runtime has run, which warns in other words
    r = run_cli("funes", "scrub", "--memory", mem)
    assert r.returncode == 0, r.stderr
    assert "fork" not in r.stderr.decode() and "Warning" not in r.stderr.decode(), r.stderr


@pytest.mark.needs_scanner
def test_scrub_with_the_lock_held_says_so_in_one_line(
    unredacted: tuple[Path, dict[str, str], dict], tmp_path: Path
) -> None:
    from funes.store.lock import WriterLock

    mem = copy_memory(unredacted[0], tmp_path / "mem")
    digest = dir_digest(mem)
    with WriterLock(mem):
        r = run_cli("funes", "scrub", "--memory", mem)
    assert r.returncode == 1
    assert r.stderr.decode() == SCRUB_BUSY
    assert dir_digest(mem) == digest


def test_scrub_without_a_scanner_refuses_unless_builtin_only(
    unredacted: tuple[Path, dict[str, str], dict], tmp_path: Path
) -> None:
    src, values, _ = unredacted
    mem = copy_memory(src, tmp_path / "mem")
    digest = dir_digest(mem)
    none = {"FUNES_SCANNER": "trufflehog", "FUNES_TRUFFLEHOG": "", "PATH": "/nonexistent"}
    r = scrub(mem, env=none)
    assert r.returncode == 1
    err = r.stderr.decode()
    assert err.startswith("funes: no trufflehog secret scanner found") and "--builtin-only" in err
    assert err.count("\n") == 1
    assert dir_digest(mem) == digest

    r = run_cli("funes", "scrub", "--builtin-only", "--memory", mem, env=none)
    assert r.returncode == 0, r.stderr
    assert "built-in detectors only" in r.stdout.decode()
    assert dir_leaks(mem, values) == {}
    assert json.loads((mem / "redaction.json").read_text())["scrub"]["scanner"] == "builtin-only"


def test_scrub_of_a_missing_or_empty_memory(tmp_path: Path) -> None:
    r = run_cli("funes", "scrub", "--builtin-only", "--memory", tmp_path / "none")
    assert r.returncode == 1 and r.stderr.decode().startswith("funes: nothing to scrub")
    from funes.store import open_memory

    open_memory(tmp_path / "empty", create=True)
    r = run_cli("funes", "scrub", "--builtin-only", "--memory", tmp_path / "empty")
    assert r.returncode == 0, r.stderr
    assert "memory is empty" in r.stdout.decode()


def test_resplit_reproduces_fresh_chunking() -> None:
    from funes.chunking import chunk_turn
    from funes.ingest.scrub import resplit
    from funes.records import Block, Turn
    from funes.secrets import redact

    text = ("word " * 300) + "GITHUB_TOKEN=ghp_" + "a1B2c3D4e5" * 3 + "x1y2z3 " + ("tail " * 200)
    turn = Turn(harness="claude_code", session_id="s", turn_uuid="t", parent_uuid=None, seq=3,
                ts="2026-11-30T00:00:00Z", role="user", workdir="w", repo="", source_path="p",
                blocks=[Block("text", "hi"), Block("tool_result", text, "Bash")])  # fmt: skip
    fresh = list(chunk_turn(turn, redact=redact))
    raw = [c for c in chunk_turn(turn) if c.block_idx == 1]
    template = {**raw[0].to_dict()}
    from funes.chunking import reassemble

    redone = resplit(template, redact(reassemble(c.text for c in raw)))
    want = [c for c in fresh if c.block_idx == 1]
    assert [(c.id, c.text, c.split_idx) for c in redone] == [
        (c.id, c.text, c.split_idx) for c in want
    ]


def test_written_unredacted_rows_remove_the_redaction_stamp(
    private_home: Path, tmp_path: Path
) -> None:
    mem = tmp_path / "mem"
    path, _ = seeded_session(private_home)
    assert run_cli("funes", "index", path, "--yes", "--no-embed", "--memory", mem).returncode == 0
    assert (mem / "redaction.json").exists()
    chunk = {"kind": "chunk", "v": 1, "id": "f" * 16, "text": "late row", "session_id": "x",
             "turn_uuid": "y", "parent_uuid": None, "seq": 0, "ts": "", "role": "user",
             "block_type": "text", "block_idx": 0, "split_idx": 0, "tool_name": None,
             "harness": "h", "workdir": "", "repo": "", "source_path": ""}  # fmt: skip
    r = run_cli("funes-write", "--memory", mem, input=json.dumps(chunk) + "\n")
    assert jsonl(r.stdout)[0]["written"] == 1
    assert not (mem / "redaction.json").exists()
    # an index run into a memory with rows it did not redact does not vouch for them
    assert run_cli("funes", "index", path, "--yes", "--no-embed", "--memory", mem).returncode == 0
    assert not (mem / "redaction.json").exists()


def test_index_redaction_cannot_be_switched_off_by_an_import_failure() -> None:
    from funes.ingest.indexer import redactor
    from funes.secrets import redact

    assert redactor() is redact


@pytest.mark.needs_scanner
def test_blocks_the_scanner_cannot_locate_or_clear_are_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import numpy as np

    from funes.ingest.scrub import scrub as scrub_memory
    from funes.records import Chunk
    from funes.secrets import scanner
    from funes.store import open_memory

    def chunk(turn: str, text: str, split_idx: int = 0) -> Chunk:
        from funes.chunking import chunk_id

        return Chunk(id=chunk_id("s", turn, 0, split_idx), text=text, session_id="s",
                     turn_uuid=turn, parent_uuid=None, seq=int(turn[1:]), ts="", role="user",
                     block_type="text", block_idx=0, split_idx=split_idx, tool_name=None,
                     harness="h", workdir="", repo="", source_path="",
                     vector=[0.5] * 384)  # fmt: skip

    def fake_scan(texts: dict[str, str], **_: Any) -> list[scanner.ScanFinding]:
        out = []
        for key, text in texts.items():
            if "opaque-blob" in text:  # a decoded secret: the scanner cannot say where
                out.append(scanner.ScanFinding(key, "Decoded", None))
            for word in ("zzsecretzz", "REDACTED:Sticky"):
                i = text.find(word)
                if i >= 0:
                    det = "Fake" if word == "zzsecretzz" else "Sticky"
                    out.append(scanner.ScanFinding(key, det, (i, i + len(word))))
            if "residue" in text and "REDACTED:Sticky" not in text:
                i = text.find("residue")
                out.append(scanner.ScanFinding(key, "Sticky", (i, i + 7)))
        return out

    monkeypatch.setattr(scanner, "scan_texts", fake_scan)
    mem = open_memory(tmp_path / "m", create=True)
    with mem.writer() as w:
        w.append([chunk("t1", "plain words"), chunk("t2", "see opaque-blob here"),
                  chunk("t3", "residue left"), chunk("t4", "the zzsecretzz value")])  # fmt: skip
    rep = scrub_memory(str(tmp_path / "m"), embed=lambda ts: np.ones((len(ts), 384), np.float32))
    assert (rep.blocks, rep.redacted_blocks, rep.dropped_blocks) == (4, 1, 2)
    assert rep.redacted == {"Fake": 1} and rep.dropped == {"Decoded": 1, "Sticky": 1}
    rows = {r["turn_uuid"]: r for r in open_memory(tmp_path / "m").rows().to_pylist()}
    assert set(rows) == {"t1", "t4"}
    assert rows["t4"]["text"] == "the [REDACTED:Fake] value"
    assert rows["t1"]["text"] == "plain words"


# ---------------------------------------------------------------------------- killed scrub


def _children(pid: int) -> set[int]:
    """Live descendants of ``pid`` (from /proc)."""
    parent: dict[int, int] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            parent[int(d.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    out, todo = set(), [pid]
    while todo:
        p = todo.pop()
        kids = {c for c, pp in parent.items() if pp == p}
        out |= kids
        todo.extend(kids)
    return out


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")  # a zombie has exited: only its exit status is left


def _wait(cond: Any, timeout: float = 60.0) -> bool:
    import time

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.002)
    return False


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")
@pytest.mark.parametrize("point", ["scan-dir-made", "scanner-running", "rewriting"])
def test_kill_9_during_scrub_leaves_no_plaintext_outside_the_memory_and_next_run_sweeps_it(
    unredacted: tuple[Path, dict[str, str], dict], tmp_path: Path, point: str
) -> None:
    import os
    import signal
    import subprocess

    from funes.secrets.scanner import available_scanner

    assert available_scanner() is not None, "the dev install ships a scanner ([scan] extra)"
    src, values, _ = unredacted
    mem = copy_memory(src, tmp_path / "mem")
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    env = {**os.environ, "TMPDIR": str(tmpdir)}
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "funes"), "scrub", "--json", "--memory", str(mem)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    scans = lambda: sorted(mem.glob(".scan-*"))  # noqa: E731
    seen: set[int] = set()
    try:
        assert _wait(lambda: bool(scans())), "scrub made its scan directory in the memory"
        first = scans()[0]
        assert first.stat().st_mode & 0o777 == 0o700
        if point != "scan-dir-made":
            assert _wait(lambda: bool(_children(proc.pid))), "the scanner started"
            seen = _children(proc.pid)
        if point == "rewriting":  # the scan is over; the redacted blocks are being rewritten
            assert _wait(lambda: not scans()), "the scan finished and removed its files"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # the scanner dies with its parent, and nothing was written outside the memory
    assert _wait(lambda: not any(_running(p) for p in seen), 10)
    assert list(tmpdir.iterdir()) == []
    # the next run sweeps what the killed one left in the memory, then scrubs it clean
    r = scrub(mem)
    assert r.returncode == 0, r.stderr
    assert scans() == []
    assert dir_leaks(mem, values) == {}


def test_sigterm_during_a_scan_removes_the_scan_files_before_dying(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import textwrap

    mem = tmp_path / "mem"
    mem.mkdir()
    # a scanner that sleeps: the scan is still running when SIGTERM arrives
    slow = tmp_path / "gitleaks"
    slow.write_text("#!/bin/sh\nsleep 60\n")
    slow.chmod(0o755)
    code = textwrap.dedent(f"""
        from pathlib import Path
        from funes.secrets.scanner import scan_texts
        scan_texts({{"a": "some text"}}, prefer="gitleaks", workdir=Path({str(mem)!r}))
    """)
    env = {**os.environ, "FUNES_GITLEAKS": str(slow)}
    proc = subprocess.Popen([sys.executable, "-c", code], env=env)
    try:
        assert _wait(lambda: bool(_children(proc.pid)) and bool(list(mem.glob(".scan-*"))))
        kids = _children(proc.pid)
        os.kill(proc.pid, signal.SIGTERM)
        assert proc.wait(10) == -signal.SIGTERM
    finally:
        if proc.poll() is None:
            proc.kill()
    assert list(mem.iterdir()) == []
    assert _wait(lambda: not any(_running(p) for p in kids), 10)


def test_lexical_terms_of_unredacted_rows_hold_no_secret(
    private_home: Path, tmp_path: Path
) -> None:
    # `funes-chunk --no-redact | funes-write` stores the text as given, but the lexical index
    # hashes terms of the redacted text: nobody can confirm a guessed secret from it.
    import numpy as np

    from funes.store.lexical import LexicalIndex, term_hash
    from funes.store.tokenize import tokenize

    mem = tmp_path / "mem"
    path, values = seeded_session(private_home)
    chunks = run_cli("funes-chunk", "--no-redact", input=run_cli("funes-parse", path).stdout)
    assert run_cli("funes-write", "--memory", mem, input=chunks.stdout).returncode == 0
    terms = np.concatenate(
        [np.asarray(s.terms) for s in LexicalIndex.open(mem / "lexical").segments]
    )
    assert len(terms) > 100
    leaked = []
    for value, detector in values.items():
        for frag in bench.fragments(value):
            toks = [t for t in tokenize(frag) if len(t) >= 12]
            if any(np.isin(np.uint64(term_hash(t)), terms) for t in toks):
                leaked.append(detector)
    assert leaked == []
    # and the words around them are searchable as usual
    assert np.isin(np.uint64(term_hash("rotate")), terms)
