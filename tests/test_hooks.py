"""The per-turn index hook (hooks/funes-index.sh): returns at once, silently, and indexes the
transcript in a detached worker that logs to $FUNES_HOME/logs/hooks.log."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from conftest import BIN, REPO, write_jsonl, writer_held

HOOK = REPO / "hooks" / "funes-index.sh"
FUNES = str(BIN / "funes")
WORD = "zebrafishquokka"  # a token nothing else in the memory contains


def claude_transcript(home: Path, sid: str = "5f0c1e2d") -> Path:
    return write_jsonl(
        home / ".claude/projects/-home-ana-proj" / f"{sid}.jsonl",
        [
            {
                "type": "user",
                "uuid": "u-1",
                "parentUuid": None,
                "timestamp": "2026-11-30T10:00:00.000Z",
                "cwd": "/home/ana/proj",
                "sessionId": sid,
                "message": {"role": "user", "content": f"why does the {WORD} cache expire?"},
            },
            {
                "type": "assistant",
                "uuid": "u-2",
                "parentUuid": "u-1",
                "timestamp": "2026-11-30T10:00:04.000Z",
                "cwd": "/home/ana/proj",
                "sessionId": sid,
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": "Because its TTL is 300 s."}],
                },
            },
        ],
    )


def stop_payload(transcript: Path, sid: str = "5f0c1e2d") -> bytes:
    return json.dumps(
        {
            "session_id": sid,
            "transcript_path": str(transcript),
            "cwd": "/home/ana/proj",
            "hook_event_name": "Stop",
            "stop_hook_active": False,
        }
    ).encode()


def run_hook(
    payload: bytes, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["bash", str(HOOK), *args],
        input=payload,
        capture_output=True,
        env={**os.environ, **(env or {})},
        timeout=30,
        check=False,
    )


def log_file() -> Path:
    return Path(os.environ["FUNES_HOME"]) / "logs" / "hooks.log"


def wait_for(pred: str, timeout: float = 90.0) -> str:
    """Poll the hook log until a line contains ``pred``; returns the log."""
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        try:
            text = log_file().read_text()
        except FileNotFoundError:
            text = ""
        if pred in text:
            return text
        time.sleep(0.2)
    raise AssertionError(f"{pred!r} never appeared in the hook log:\n{text}")


def test_stop_payload_returns_at_once_and_the_worker_indexes_the_turn(
    private_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hook returns while its worker cannot finish — the test holds the memory's writer
    lock, so the worker's `funes index` finds it busy and retries — and once the lock is let go
    the worker indexes the turn. A hook that waited for the index would time out here."""
    monkeypatch.setenv("FUNES_HOOK_RETRY_SECONDS", "1")
    monkeypatch.setenv("FUNES_HOOK_RETRIES", "600")
    transcript = claude_transcript(private_home)
    with writer_held():
        proc = run_hook(stop_payload(transcript), "claude", "--funes", FUNES)
        assert proc.returncode == 0
        assert proc.stdout == b"" and proc.stderr == b""
        text = wait_for("claude Stop 5f0c1e2d: busy: another funes memory operation")
        assert "claude Stop 5f0c1e2d: ok" not in text
    text = wait_for("claude Stop 5f0c1e2d: ok")
    assert f"claude Stop 5f0c1e2d: start {transcript}" in text
    from funes.store import open_memory

    hits = open_memory().lexical_search(WORD, k=5)
    assert hits, "the worker ran but the turn is not in the memory"
    # TODO(recall): once `funes recall` lands, also assert `funes recall WORD` finds the turn.


# The hook's return time is measured in bench/recall.py (`hook_return`, aim < 100 ms), not here.


@pytest.mark.parametrize("garbage", [b"", b"not json at all\n", b"\x00\xff\xfe garbage", b"[1, 2]"])
def test_garbage_on_stdin_exits_0_and_logs_the_problem(garbage: bytes, private_home: Path) -> None:
    fake = private_home / "fake-funes"
    fake.write_text('#!/bin/sh\necho "ran: $*" >> "$HOME/ran"\necho indexed sessions=0\n')
    fake.chmod(0o755)
    proc = run_hook(garbage, "claude", "--funes", str(fake))
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""
    text = wait_for("ok (indexed sessions=0)")
    assert "payload is not a JSON object; indexing claude's sessions instead" in text
    assert "start --harness claude" in text
    assert (private_home / "ran").read_text() == "ran: index --harness claude --yes\n"


def test_escaped_json_strings_are_decoded(private_home: Path) -> None:
    fake = private_home / "fake-funes"
    fake.write_text('#!/bin/sh\nprintf "%s\\n" "$2" >> "$HOME/ran"\n')
    fake.chmod(0o755)
    odd = private_home / 'dir "q" \\ é ünï'
    odd.mkdir()
    transcript = odd / "s.jsonl"
    transcript.write_text("")
    payload = json.dumps(  # ensure_ascii: é arrives as \u00e9, as Python emitters send it
        {"hook_event_name": "Stop", "session_id": "s/1 2", "transcript_path": str(transcript)}
    ).encode()
    proc = run_hook(b"  \n" + payload + b"\n", "codex", "--funes", str(fake))
    assert proc.returncode == 0
    text = wait_for("codex Stop s_1_2: ok")
    assert (private_home / "ran").read_text() == f"{transcript}\n"
    assert "start " + str(transcript) in text


def test_missing_transcript_falls_back_to_the_agent_root_and_memory_is_passed(
    private_home: Path,
) -> None:
    fake = private_home / "fake-funes"
    fake.write_text('#!/bin/sh\necho "$*" >> "$HOME/ran"\n')
    fake.chmod(0o755)
    payload = json.dumps(
        {"hook_event_name": "Stop", "session_id": "x", "transcript_path": "/nope.jsonl"}
    )
    run_hook(payload.encode(), "codex", "--funes", str(fake), "--memory", "/m/one")
    text = wait_for("codex Stop x: ok")
    assert "transcript_path /nope.jsonl does not exist; indexing codex's sessions instead" in text
    assert (private_home / "ran").read_text() == "index --harness codex --yes --memory /m/one\n"


def test_hermes_payload_indexes_its_state_db(private_home: Path) -> None:
    fake = private_home / "fake-funes"
    fake.write_text('#!/bin/sh\necho "$*" >> "$HOME/ran"\n')
    fake.chmod(0o755)
    db = private_home / ".hermes/state.db"
    db.parent.mkdir()
    db.write_bytes(b"")
    payload = {"hook_event_name": "post_llm_call", "session_id": "h1", "cwd": "/w", "extra": {}}
    run_hook(json.dumps(payload).encode(), "hermes", "--funes", str(fake))
    wait_for("hermes post_llm_call h1: ok")
    assert (private_home / "ran").read_text() == f"index {db} --yes\n"


def test_failure_is_logged_with_exit_code_and_output_never_surfaced(private_home: Path) -> None:
    fake = private_home / "fake-funes"
    fake.write_text(
        "#!/bin/sh\necho 'funes: another funes memory operation is in progress; retry in a moment' >&2\nexit 1\n"
    )
    fake.chmod(0o755)
    transcript = claude_transcript(private_home)
    proc = run_hook(
        stop_payload(transcript), "claude", "--funes", str(fake), env={"FUNES_HOOK_RETRIES": "0"}
    )
    assert proc.returncode == 0 and proc.stdout == b""
    text = wait_for("FAILED (exit 1)")
    assert "    funes: another funes memory operation is in progress" in text


def test_busy_lock_is_retried_by_one_waiter(private_home: Path) -> None:
    fake = private_home / "fake-funes"
    # Busy the first time, free after.
    fake.write_text(
        '#!/bin/sh\nif [ ! -e "$HOME/once" ]; then : > "$HOME/once"; '
        "echo 'funes: another funes memory operation is in progress; retry in a moment' >&2; exit 1; fi\n"
        "echo indexed sessions=1\n"
    )
    fake.chmod(0o755)
    transcript = claude_transcript(private_home)
    run_hook(
        stop_payload(transcript),
        "claude",
        "--funes",
        str(fake),
        env={"FUNES_HOOK_RETRY_SECONDS": "1"},
    )
    text = wait_for("ok (indexed sessions=1)")
    assert "busy: another funes memory operation is in progress; retrying in 1s (1/3)" in text
    assert not list(log_file().parent.glob(".waiting.*"))


def test_funes_not_found_is_logged(private_home: Path) -> None:
    transcript = claude_transcript(private_home)
    run_hook(
        stop_payload(transcript),
        "claude",
        "--funes",
        "/nonexistent/funes",
        env={"PATH": "/usr/bin:/bin", "HOME": str(private_home)},
    )
    wait_for("ABORT: funes not found")


def test_log_rotates_past_1mb(private_home: Path) -> None:
    fake = private_home / "fake-funes"
    fake.write_text("#!/bin/sh\necho indexed sessions=0\n")
    fake.chmod(0o755)
    log_file().parent.mkdir(parents=True)
    log_file().write_text("x" * 1_100_000 + "\n")
    run_hook(b"{}", "claude", "--funes", str(fake))
    wait_for("ok (indexed sessions=0)")
    assert (log_file().parent / "hooks.log.1").stat().st_size > 1_000_000
    assert log_file().stat().st_size < 10_000


def test_no_temp_files_are_left_behind(private_home: Path, tmp_path: Path) -> None:
    fake = private_home / "fake-funes"
    fake.write_text("#!/bin/sh\necho indexed sessions=0\n")
    fake.chmod(0o755)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    run_hook(b'{"session_id":"t"}', "pi", "--funes", str(fake), env={"TMPDIR": str(tmp)})
    wait_for("pi - t: ok")
    time.sleep(0.3)
    assert list(tmp.iterdir()) == []


def test_a_burst_of_hooks_costs_one_indexing_process_at_a_time(private_home: Path) -> None:
    """Twenty hooks at once, for two sessions: each returns at once, the indexing runs never
    overlap, there are at most a few of them, and both transcripts are indexed."""
    fake = private_home / "fake-funes"
    fake.write_text(
        "#!/bin/sh\n"
        '[ -e "$HOME/running" ] && echo OVERLAP >> "$HOME/ran"\n'
        ': > "$HOME/running"\n'
        'echo "run: $*" >> "$HOME/ran"\n'
        # each run waits for the test to let it finish (at most 60 s)
        'i=0; while [ ! -e "$HOME/release" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\n'
        'rm -f "$HOME/running"\n'
        "echo indexed sessions=1\n"
    )
    fake.chmod(0o755)
    a = claude_transcript(private_home, "aaaa1111")
    b = claude_transcript(private_home, "bbbb2222")
    for i in range(20):
        t = a if i % 2 else b
        proc = run_hook(stop_payload(t, t.stem), "claude", "--funes", str(fake))
        assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""
    # All twenty returned while the first indexing run is still held back.
    wait_for(": start ")
    assert ": ok" not in log_file().read_text()
    (private_home / "release").touch()
    queue = next(log_file().parent.glob(".queue.*"))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (
        any(queue.iterdir()) or (private_home / "running").exists()
    ):
        time.sleep(0.3)
    time.sleep(1.5)  # a worker between its last look and its exit
    runs = (private_home / "ran").read_text().splitlines()
    assert "OVERLAP" not in runs
    assert 1 <= len(runs) <= 3, runs
    indexed = " ".join(runs)
    assert str(a) in indexed and str(b) in indexed
    log = log_file().read_text()
    for sid in (a.stem, b.stem):  # each session's hook is logged as run, under its own name
        assert f"claude Stop {sid}: ok (indexed sessions=1)" in log
    assert log.count(": ok (indexed sessions=1)") <= 2 * len(runs)


def test_a_codex_hook_picked_up_by_a_running_claude_worker_is_logged_as_codexs(
    private_home: Path,
) -> None:
    """A Codex turn ends while a Claude hook's worker indexes: the Claude worker indexes the
    Codex transcript too, and the log (so `funes doctor`) says Codex's hook ran, and how."""
    from funes.agents import hooklog

    fake = private_home / "fake-funes"
    fake.write_text('#!/bin/sh\necho "run: $*" >> "$HOME/ran"\nsleep 2\necho indexed sessions=1\n')
    fake.chmod(0o755)
    a = claude_transcript(private_home, "aaaa1111")
    rollout = write_jsonl(private_home / ".codex/sessions/2026/11/30/rollout-x.jsonl", [{"x": 1}])
    proc = run_hook(stop_payload(a, "aaaa1111"), "claude", "--funes", str(fake))
    assert proc.returncode == 0
    wait_for("claude Stop aaaa1111: start")
    codex = json.dumps({"session_id": "0199c0de", "transcript_path": str(rollout),
                        "hook_event_name": "Stop"}).encode()  # fmt: skip
    proc = run_hook(codex, "codex", "--funes", str(fake))
    assert proc.returncode == 0
    log = wait_for("codex Stop 0199c0de: ok (indexed sessions=1)")
    assert f"codex Stop 0199c0de: start {rollout}" in log
    assert "claude Stop 0199c0de" not in log
    start, end = hooklog.last_run("codex", hooklog.read())
    assert start is not None and end is not None and end.outcome == "ok"


def test_two_hooks_for_one_transcript_racing_are_each_logged_under_their_own_name(
    private_home: Path,
) -> None:
    """Two hook runs for the same transcript land in the queue while a worker indexes another:
    the next run indexes the transcript once, never beside another run, and logs both hooks,
    each under its own agent, event and session."""
    from funes.agents import hooklog

    fake = private_home / "fake-funes"
    fake.write_text(
        "#!/bin/sh\n"
        '[ -e "$HOME/running" ] && echo OVERLAP >> "$HOME/ran"\n'
        ': > "$HOME/running"\n'
        'echo "run: $*" >> "$HOME/ran"\n'
        "sleep 2\n"
        'rm -f "$HOME/running"\n'
        "echo indexed sessions=1\n"
    )
    fake.chmod(0o755)
    first = claude_transcript(private_home, "aaaa1111")
    shared = claude_transcript(private_home, "cccc3333")
    proc = run_hook(stop_payload(first, "aaaa1111"), "claude", "--funes", str(fake))
    assert proc.returncode == 0
    wait_for("claude Stop aaaa1111: start")
    racing = []
    for agent, sid, event in (("claude", "cccc3333", "Stop"), ("codex", "0199beef", "Stop"),
                              ("claude", "cccc3333", "SessionEnd")):  # fmt: skip
        payload = json.dumps({"session_id": sid, "transcript_path": str(shared),
                              "hook_event_name": event}).encode()  # fmt: skip
        racing.append(
            subprocess.Popen(
                ["bash", str(HOOK), agent, "--funes", str(fake)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        )
        racing[-1].stdin.write(payload)  # type: ignore[union-attr]
        racing[-1].stdin.close()  # type: ignore[union-attr]
    for p in racing:
        assert p.wait(timeout=30) == 0
    log = wait_for("codex Stop 0199beef: ok (indexed sessions=1)")
    log = wait_for("claude Stop cccc3333: ok (indexed sessions=1)")
    log = wait_for("claude SessionEnd cccc3333: ok (indexed sessions=1)")
    assert f"codex Stop 0199beef: start {shared}" in log
    runs = (private_home / "ran").read_text().splitlines()
    assert "OVERLAP" not in runs
    with_shared = [r for r in runs if str(shared) in r]
    assert len(with_shared) == 1 and with_shared[0].count(str(shared)) == 1, runs
    start, end = hooklog.last_run("codex", hooklog.read())
    assert start is not None and end is not None and end.outcome == "ok"


def test_a_harness_sweep_queued_by_one_agent_is_logged_as_that_agents(
    private_home: Path,
) -> None:
    """A Codex hook without a transcript path queues a sweep of Codex's root; a Claude worker
    that runs it logs it under Codex's name, not its own."""
    fake = private_home / "fake-funes"
    fake.write_text('#!/bin/sh\necho "run: $*" >> "$HOME/ran"\nsleep 2\necho indexed sessions=1\n')
    fake.chmod(0o755)
    a = claude_transcript(private_home, "aaaa1111")
    proc = run_hook(stop_payload(a, "aaaa1111"), "claude", "--funes", str(fake))
    assert proc.returncode == 0
    wait_for("claude Stop aaaa1111: start")
    codex = json.dumps({"session_id": "0199f00d", "hook_event_name": "Stop"}).encode()
    proc = run_hook(codex, "codex", "--funes", str(fake))
    assert proc.returncode == 0
    log = wait_for("codex Stop 0199f00d: ok (indexed sessions=1)")
    assert "codex Stop 0199f00d: start --harness codex" in log
    assert "claude Stop aaaa1111: start --harness codex" not in log


def _niceness_recorder(home: Path) -> tuple[Path, Path]:
    """A funes that writes the niceness and I/O class it runs with, then succeeds."""
    record = home / "priority"
    fake = home / "fake-funes"
    fake.write_text(
        "#!/bin/sh\n"
        f"ps -o ni= -p $$ | tr -d ' ' > {record}.tmp\n"
        f"(ionice -p $$ 2>/dev/null || echo none) >> {record}.tmp\n"
        f"mv {record}.tmp {record}\n"
        "echo 'indexed sessions=1 skipped=0 chunks=1'\n"
    )
    fake.chmod(0o755)
    return fake, record


def _wait_file(path: Path, timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    return path.read_text()


def test_the_worker_indexes_at_low_priority(private_home: Path) -> None:
    """A long embed in the worker must not take the CPU from the agent it serves."""
    fake, record = _niceness_recorder(private_home)
    own = os.getpriority(os.PRIO_PROCESS, 0)
    proc = run_hook(stop_payload(claude_transcript(private_home)), "claude", "--funes", str(fake))
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""
    niceness, io_class = _wait_file(record).splitlines()
    assert int(niceness) >= min(own + 10, 19)
    if io_class != "none":  # ionice is there: the worker reads and writes in idle time only
        assert io_class.startswith("idle")
    wait_for("claude Stop 5f0c1e2d: ok")


def test_the_worker_starts_when_nice_and_ionice_are_missing(
    private_home: Path, tmp_path: Path
) -> None:
    """Where neither tool exists the hook indexes all the same (at the agent's priority)."""
    fake, record = _niceness_recorder(private_home)
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in (
        "bash",
        "setsid",
        "mkdir",
        "cksum",
        "cut",
        "date",
        "sed",
        "awk",
        "head",
        "cat",
        "mv",
        "rm",
        "mktemp",
        "grep",
        "printf",
        "tr",
        "wc",
        "ps",
        "sleep",
        "find",
        "sh",
        "uname",
        "ls",
        "touch",
        "tail",
        "sort",
        "basename",
        "dirname",
        "env",
    ):
        found = subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True, text=True)
        if found.stdout.strip().startswith("/"):
            (bare / tool).symlink_to(found.stdout.strip())
    proc = run_hook(
        stop_payload(claude_transcript(private_home)),
        "claude",
        "--funes",
        str(fake),
        env={"PATH": str(bare)},
    )
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""
    niceness, io_class = _wait_file(record).splitlines()
    assert int(niceness) == os.getpriority(os.PRIO_PROCESS, 0) and io_class == "none"
    wait_for("claude Stop 5f0c1e2d: ok")
