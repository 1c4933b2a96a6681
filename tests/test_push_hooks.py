"""Hook-driven push: `funes add AGENT --memory OWNER/NAME` wires `funes-push.sh` to the session
boundaries; the script returns at once and logs `push: ok | WARN | FAILED` from a detached
worker; `funes doctor` reports the last push."""

from __future__ import annotations

import json
import os
import subprocess
import time
from importlib import resources
from pathlib import Path

import pytest
from conftest import BIN, REPO
from test_agents import AGENTS, FUNES, fakes, funes, seed, snapshot

from funes.agents import get

__all__ = ["fakes"]

SCRIPT = REPO / "hooks" / "funes-push.sh"


def _texts(home: Path) -> str:
    """Every file funes may wire a push in, but the scripts that can run one (pi's extension,
    the index hook, which pushes when told to with --push, and what it sources)."""
    return "\n".join(
        p.read_text(errors="replace")
        for p in home.rglob("*")
        if p.is_file()
        and p.name not in ("index.ts", "funes-index.sh", "funes-hook-common.sh")
        and p.stat().st_size < 10**6
    )


# The agents whose push hooks are checked file by file below (every agent: further down).
PUSHING = ["claude", "codex", "hermes", "pi"]


@pytest.mark.parametrize("agent", PUSHING)
def test_bound_memory_adds_push_hooks_and_remove_restores_bytes(
    agent: str, private_home: Path, fakes: Path
) -> None:
    seed(private_home)
    before = snapshot(private_home)
    added = funes("add", agent, "--memory", "ana/kb", "--no-index", state=fakes)
    assert added.returncode == 0, added.stderr
    text = _texts(private_home)
    assert ("funes-push.sh" in text and '"ana/kb"' in text) or "ana/kb" in text
    if agent == "claude":
        doc = json.loads(
            (private_home / ".funes/integrations/claude-plugin/funes/hooks/hooks.json").read_text()
        )
        pushes = {e for e, gs in doc["hooks"].items() if "funes-push.sh" in json.dumps(gs)}
        assert pushes == {"SessionStart", "SessionEnd"}
        index = doc["hooks"]["Stop"][0]["hooks"][0]["command"]
        assert "--memory" not in index  # the index hook writes the local memory
        assert (
            private_home / ".funes/integrations/claude-plugin/funes/scripts/funes-push.sh"
        ).exists()
    elif agent == "codex":
        doc = json.loads((private_home / ".codex/hooks.json").read_text())
        starts = doc["hooks"]["SessionStart"]
        assert starts[0]["hooks"][0]["command"] == "date"  # the user's group first
        cmd = starts[-1]["hooks"][0]["command"]
        assert "funes-push.sh" in cmd and '--memory "ana/kb"' in cmd
        assert os.access(private_home / ".codex/hooks/funes-push.sh", os.X_OK)
    elif agent == "hermes":
        cfg = (private_home / ".hermes/config.yaml").read_text()
        assert "on_session_start" in cfg and cfg.count("funes-push.sh") == 2
        allow = json.loads((private_home / ".hermes/shell-hooks-allowlist.json").read_text())
        events = {a["event"] for a in allow["approvals"] if "funes-push.sh" in a["command"]}
        assert events == {"on_session_start", "on_session_finalize"}
    else:
        root = private_home / ".funes/integrations/pi"
        assert (root / "push-memory").read_text() == "ana/kb\n"
        assert (root / "scripts/funes-push.sh").exists()
    doctor = funes("doctor", agent, state=fakes)
    assert "push hooks:" in doctor.stdout, doctor.stdout
    # Re-adding without the memory takes the push hooks away again.
    again = funes("add", agent, "--no-index", state=fakes)
    assert again.returncode == 0, again.stderr
    assert "funes-push" not in _texts(private_home)
    removed = funes("remove", agent, state=fakes)
    assert removed.returncode == 0, removed.stderr
    assert snapshot(private_home) == before


HUB = "hf://datasets/u/x"


@pytest.mark.parametrize("agent", AGENTS)
def test_every_agent_publishes_a_bound_hub_memory_or_says_how(
    agent: str, private_home: Path, fakes: Path
) -> None:
    """A hooked agent gets a push (at its session end, else after the index run) that doctor
    lists, its script beside the index hook's; an agent without hooks prints the one line that
    schedules the index and the push. `funes remove` puts every byte back."""
    seed(private_home)
    before = snapshot(private_home)
    added = funes("add", agent, "--memory", HUB, "--no-index", state=fakes)
    assert added.returncode == 0, added.stderr
    doctor = funes("doctor", "--json", agent, state=fakes)
    (row,) = json.loads(doctor.stdout)["agents"]
    if get(agent).hooked:
        assert row["push_hooks"], (row, added.stdout)
        assert not [n for n in row["notes"] if "push" in n], row["notes"]
        pushes = [p for p in private_home.rglob("funes-push.sh") if os.access(p, os.X_OK)]
        assert len(pushes) == 1, pushes
        assert (pushes[0].parent / "funes-index.sh").exists()
        assert HUB in _texts(private_home)
        assert f"push of {HUB}" in added.stdout or agent in PUSHING, added.stdout
        text = funes("doctor", agent, state=fakes).stdout
        assert f"push hooks: {', '.join(row['push_hooks'])}" in text
    else:
        assert row["push_hooks"] == []
        lines = [ln for ln in added.stdout.splitlines() if "push" in ln]
        assert len(lines) == 1 and "*/15 * * * *" in lines[0], added.stdout
        assert lines[0].endswith(f" index -q && {FUNES} push {HUB} --yes`")
        assert not list(private_home.rglob("funes-push.sh"))
    removed = funes("remove", agent, state=fakes)
    assert removed.returncode == 0, removed.stderr
    assert snapshot(private_home) == before


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_add_remove_with_memory_is_byte_identical(
    agent: str, private_home: Path, fakes: Path
) -> None:
    seed(private_home)
    before = snapshot(private_home)
    assert funes("add", agent, "--memory", "ana/kb", "--no-index", state=fakes).returncode == 0
    assert funes("add", agent, "--memory", "ana/kb", "--no-index", state=fakes).returncode == 0
    assert funes("remove", agent, state=fakes).returncode == 0
    assert snapshot(private_home) == before


@pytest.mark.parametrize("agent", AGENTS)
def test_add_without_memory_installs_no_push_hook(
    agent: str, private_home: Path, fakes: Path
) -> None:
    assert funes("add", agent, "--no-index", state=fakes).returncode == 0
    assert "funes-push" not in _texts(private_home)
    assert not list(private_home.rglob("funes-push.sh"))


def _fake_funes(tmp: Path, rc: int, out: str, gate: Path | None = None) -> Path:
    """A funes that records its argv and answers ``out`` with exit ``rc`` — after ``gate``
    exists, when one is named (at most 60 s)."""
    exe = tmp / f"fake-funes-{rc}"
    wait = (
        f'i=0; while [ ! -e "{gate}" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\n'
        if gate
        else ""
    )
    exe.write_text(
        f"#!/bin/sh\necho \"$@\" >> {tmp}/argv\n{wait}printf '%s\\n' {json.dumps(out)}\nexit {rc}\n"
    )
    exe.chmod(0o755)
    return exe


def _run_hook(tmp: Path, exe: Path, fh: Path, agent: str = "claude") -> None:
    """The push hook as an agent runs it; a hook that waited for the push would time out."""
    p = subprocess.run(
        ["bash", str(SCRIPT), agent, "--funes", str(exe), "--memory", "ana/kb"],
        input=b'{"session_id":"s1","hook_event_name":"SessionEnd"}',
        capture_output=True,
        env={**os.environ, "FUNES_HOME": str(fh)},
        timeout=30,
        check=False,
    )
    assert p.returncode == 0 and p.stdout == b"" and p.stderr == b""


def _wait_for(log: Path, n: int) -> list[str]:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        lines = (
            [x for x in log.read_text().splitlines() if " push: " in x and " push: start" not in x]
            if log.exists()
            else []
        )
        if len(lines) >= n:
            return lines
        time.sleep(0.05)
    raise AssertionError(log.read_text() if log.exists() else "no log")


def test_push_script_detaches_and_logs_each_outcome(tmp_path: Path, private_home: Path) -> None:
    fh = tmp_path / "fh"
    log = fh / "logs" / "hooks.log"
    gate = tmp_path / "release"
    ok = _fake_funes(tmp_path, 0, "hf://datasets/ana/kb: pushed 3 chunks (commit abc)", gate)
    _run_hook(tmp_path, ok, fh)  # returns while its worker's push is held back
    deadline = time.monotonic() + 60
    while not (tmp_path / "argv").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert " push: ok" not in log.read_text()
    gate.touch()
    lines = _wait_for(log, 1)
    assert (
        " claude SessionEnd -: push: ok (hf://datasets/ana/kb: pushed 3 chunks (commit abc))"
        in lines[-1]
    )
    assert (tmp_path / "argv").read_text().split("\n")[0] == "push ana/kb --yes"

    held = _fake_funes(
        tmp_path,
        2,
        "funes: hf://datasets/ana/kb: nothing published — held back 2 rows with secrets (github-pat×2)",
    )
    _run_hook(tmp_path, held, fh)
    lines = _wait_for(log, 2)
    assert "push: WARN — secrets held back; hf://datasets/ana/kb: nothing published" in lines[-1]

    bad = _fake_funes(tmp_path, 1, "funes: hf://datasets/ana/kb is unreachable")
    _run_hook(tmp_path, bad, fh)
    lines = _wait_for(log, 3)
    assert lines[-1].endswith("push: FAILED (exit 1)")
    assert "    funes: hf://datasets/ana/kb is unreachable" in log.read_text()

    doc = subprocess.run(
        [str(BIN / "funes"), "doctor", "claude", "--json"],
        capture_output=True, text=True, env={**os.environ, "FUNES_HOME": str(fh), "PATH": "/usr/bin:/bin"},
        timeout=60, check=False,
    )  # fmt: skip
    assert doc.returncode == 0, doc.stderr
    rep = json.loads(doc.stdout)["agents"][0]
    assert rep["last_push_outcome"] == "FAILED (exit 1)"
    assert rep["push_hooks"] == []


def test_push_script_without_memory_logs_skip(tmp_path: Path) -> None:
    fh = tmp_path / "fh"
    p = subprocess.run(
        ["bash", str(SCRIPT), "codex"], input=b"{}", capture_output=True,
        env={**os.environ, "FUNES_HOME": str(fh)}, timeout=30, check=False,
    )  # fmt: skip
    assert p.returncode == 0
    lines = _wait_for(fh / "logs" / "hooks.log", 1)
    assert "codex - -: push: skipped (no memory bound to this hook)" in lines[-1]


def test_shipped_push_script_is_the_canonical_one() -> None:
    shipped = resources.files("funes.agents").joinpath("hooks/funes-push.sh").read_bytes()
    assert shipped == SCRIPT.read_bytes()
    assert os.access(SCRIPT, os.X_OK)
    common = resources.files("funes.agents").joinpath("hooks/funes-hook-common.sh").read_bytes()
    assert common == (REPO / "hooks" / "funes-hook-common.sh").read_bytes()


def test_the_push_worker_runs_at_low_priority(tmp_path: Path, private_home: Path) -> None:
    """A push rebuilds and scans blocks for a while; the agent keeps the CPU meanwhile."""
    fh = tmp_path / "fh"
    record = tmp_path / "priority"
    exe = tmp_path / "fake-funes"
    exe.write_text(
        f"#!/bin/sh\nps -o ni= -p $$ | tr -d ' ' > {record}.tmp\n"
        f"(ionice -p $$ 2>/dev/null || echo none) >> {record}.tmp\nmv {record}.tmp {record}\n"
        "echo 'hf://datasets/ana/kb: up to date'\n"
    )
    exe.chmod(0o755)
    own = os.getpriority(os.PRIO_PROCESS, 0)
    _run_hook(tmp_path, exe, fh)
    _wait_for(fh / "logs" / "hooks.log", 1)
    niceness, io_class = record.read_text().splitlines()
    assert int(niceness) >= min(own + 10, 19)
    if io_class != "none":
        assert io_class.startswith("idle")
