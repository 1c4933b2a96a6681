"""`funes doctor`: hooks and MCP per agent, the hook's last run, pending work."""

from __future__ import annotations

import json
import os
from pathlib import Path

from test_agents import fakes, funes

_ = fakes  # a fixture, used by name


def test_doctor_reports_hooks_mcp_and_last_hook_run(private_home: Path, fakes: Path) -> None:
    assert funes("add", "codex", state=fakes).returncode == 0
    log = Path(os.environ["FUNES_HOME"]) / "logs" / "hooks.log"
    log.parent.mkdir(parents=True)
    log.write_text(
        "2026-11-30T09:00:00+0000 codex Stop s1: start /x.jsonl\n"
        "2026-11-30T09:00:03+0000 codex Stop s1: FAILED (exit 1)\n"
        "    funes: another funes memory operation is in progress; retry in a moment\n"
        "2026-11-30T09:05:00+0000 codex Stop s1: start /x.jsonl\n"
        "2026-11-30T09:05:04+0000 codex Stop s1: ok (indexed sessions=1 skipped=0 chunks=2)\n"
    )
    out = funes("doctor", state=fakes)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    codex = text.split("codex\n", 1)[1].split("\nhermes\n", 1)[0]
    assert "hooks: installed (Stop) in ~/.codex/hooks.json" in codex
    assert "mcp: registered" in codex
    assert "last hook run: 2026-11-30T09:05:04+0000" in codex
    assert "ok (indexed sessions=1 skipped=0 chunks=2)" in codex
    # The agents funes is not wired to share one line; named, one is shown in full.
    (idle,) = [ln for ln in text.splitlines() if ln.startswith("not wired: ")]
    assert idle.startswith("not wired: claude, cline, copilot, cursor, gemini, hermes, ")
    assert "codex" not in idle and text.count("  hooks: ") == 1
    assert "`funes add AGENT` wires one, `funes doctor AGENT` shows one in full" in idle
    claude = funes("doctor", "claude", state=fakes).stdout
    assert claude.startswith("claude\n  hooks: not installed\n  mcp: not registered\n")
    assert "last hook run: never" in claude and "not wired" not in claude
    assert "memory: none yet" in text

    rep = json.loads(funes("doctor", "codex", "--json", state=fakes).stdout)
    (agent,) = rep["agents"]
    assert agent["agent"] == "codex" and agent["hooks"] == ["Stop"] and agent["mcp"] is True
    assert agent["last_outcome"].startswith("ok") and agent["funes_bin_ok"] is True


def test_doctor_says_unknown_without_the_cli_and_flags_a_stale_script(
    private_home: Path,
    fakes: Path,
) -> None:
    assert funes("add", "codex", state=fakes).returncode == 0
    script = private_home / ".codex/hooks/funes-index.sh"
    script.write_text("#!/bin/sh\n# an old version\n")
    rep = json.loads(funes("doctor", "codex", "--json", state=None).stdout)
    (agent,) = rep["agents"]
    assert agent["mcp"] is None
    assert any("out of date" in n for n in agent["notes"])
    out = funes("doctor", "codex", state=None).stdout
    assert "mcp: unknown (codex is not on PATH)" in out
    assert "last hook run: never" in out


def test_doctor_rejects_unknown_agents(private_home: Path) -> None:
    out = funes("doctor", "vim")
    assert out.returncode == 2 and "unknown agent 'vim'" in out.stderr


# The index hook as funes wrote it before funes-hook-common.sh existed: self-contained, so it
# keeps working after an upgrade until `funes add` rewrites it.
OLD_SELF_CONTAINED_HOOK = """#!/usr/bin/env bash
# funes-index.sh AGENT [--funes PATH] [--memory M] — the per-turn index hook.
set -u
umask 077
log() { printf '%s %s\\n' "$(date +%Y-%m-%dT%H:%M:%S%z)" "$*" >>"$FUNES_HOME/logs/hooks.log"; }
if [ "${1:-}" != "--worker" ]; then
\tsetsid bash "$0" --worker "$@" </dev/null >/dev/null 2>&1 &
\texit 0
fi
"""


def test_doctor_tells_an_old_self_contained_hook_from_one_missing_its_common_file(
    private_home: Path, fakes: Path
) -> None:
    assert funes("add", "codex", state=fakes).returncode == 0
    hooks = private_home / ".codex/hooks"
    # After `git pull && bin/install`: the old script is still there, the common file never was.
    (hooks / "funes-hook-common.sh").unlink()
    (hooks / "funes-index.sh").write_text(OLD_SELF_CONTAINED_HOOK)
    (agent,) = json.loads(funes("doctor", "codex", "--json", state=fakes).stdout)["agents"]
    assert agent["notes"] == ["hook script is out of date: rerun `funes add codex` to update"]
    assert "does nothing" not in funes("doctor", "codex", state=fakes).stdout

    # The current script sources the common file: without it, the hook really is broken.
    assert funes("add", "codex", state=fakes).returncode == 0
    (hooks / "funes-hook-common.sh").unlink()
    (agent,) = json.loads(funes("doctor", "codex", "--json", state=fakes).stdout)["agents"]
    (note,) = agent["notes"]
    assert "funes-hook-common.sh" in note and "does nothing without it" in note
    assert "rerun `funes add codex`" in note
