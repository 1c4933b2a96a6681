"""An agent arrives as a plug-in: one module registered under the `funes.agents` entry points,
and `funes --help`, `add`, `remove`, `doctor` and the index hook all know it."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from conftest import BIN

from funes import plugins

PLUGIN = """
from funes.agents._common import install_script, remove_script
from funes.agents._registry import Agent


def script(ctx):
    return ctx.home / ".aider" / "hooks" / "funes-index.sh"


def add(ctx, res):
    wrote = install_script(script(ctx))
    res.did(f"hook script {ctx.show(script(ctx))}" + ("" if wrote else ", unchanged"), wrote)


def remove(ctx, res):
    if remove_script(script(ctx)):
        res.did(f"deleted {ctx.show(script(ctx))}")


def status(ctx):
    there = script(ctx).exists()
    return {
        "hooks": ["on_turn"] if there else [],
        "hooks_file": str(script(ctx)),
        "script": str(script(ctx)) if there else None,
        "script_current": there,
        "commands": [],
        "mcp": None,
        "note": "a plug-in agent",
    }


AGENT = Agent("aider", add, remove, status, hook_transcript='"$HOME/.aider/history.jsonl"')
"""


@pytest.fixture
def plugin(tmp_path: Path) -> dict[str, str]:
    """The environment of a funes with the `aider` agent plug-in installed."""
    site = tmp_path / "site"
    (site / "aider_funes-0.1.dist-info").mkdir(parents=True)
    (site / "aider_funes-0.1.dist-info" / "entry_points.txt").write_text(
        "[funes.agents]\naider = aider_funes:AGENT\n"
    )
    (site / "aider_funes.py").write_text(PLUGIN)
    return {**os.environ, "PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"}


def with_aider() -> list[str]:
    """The registered agents' names with the test plug-in's, as funes lists them."""
    return sorted([*plugins.names(plugins.AGENTS), "aider"])


def funes(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "funes"), *args],
        capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=120,
        check=False,
    )  # fmt: skip


def test_a_registered_agent_is_listed_wired_checked_and_unwired(
    plugin: dict[str, str], private_home: Path
) -> None:
    def shown(*args: str) -> str:  # help text with its line wrapping undone
        return " ".join(funes(plugin, *args).stdout.split())

    names = with_aider()
    assert f"wire an agent ({', '.join(names)}) to funes" in shown("--help")
    assert f"AGENT one of: {', '.join(names)}" in shown("add", "--help")
    assert f"any of {', '.join(names)}" in shown("doctor", "--help")

    added = funes(plugin, "add", "aider", "--no-index")
    assert added.returncode == 0, added.stderr
    assert added.stdout.startswith(
        "funes add aider:\n  hook script ~/.aider/hooks/funes-index.sh\n"
    )
    script = (private_home / ".aider/hooks/funes-index.sh").read_text()
    assert '\taider) db="$HOME/.aider/history.jsonl" ;;\n' in script
    assert 'hermes) db="${HERMES_HOME:-$HOME/.hermes}/state.db" ;;' in script

    doctor = funes(plugin, "doctor", "aider")
    assert doctor.returncode == 0, doctor.stderr
    assert doctor.stdout.startswith("aider\n  hooks: installed (on_turn) in ")
    assert "  note: a plug-in agent\n" in doctor.stdout
    assert doctor.stdout.count("\n  hooks: ") == 1  # only the agent asked for
    everyone = funes(plugin, "doctor").stdout
    heads = [ln for ln in everyone.splitlines() if ln and not ln[0].isspace()]
    assert heads[0] == "aider"  # the one wired; the others on one line, in order
    assert heads[1] == "not wired: " + ", ".join(n for n in names if n != "aider") + (
        " — `funes add AGENT` wires one, `funes doctor AGENT` shows one in full"
    )

    removed = funes(plugin, "remove", "aider")
    assert removed.returncode == 0, removed.stderr
    assert "deleted ~/.aider/hooks/funes-index.sh" in removed.stdout
    assert not (private_home / ".aider/hooks").exists() or not any(
        (private_home / ".aider/hooks").iterdir()
    )  # the script and what it sources


def test_the_hook_indexes_a_registered_agents_transcript_when_the_payload_names_none(
    plugin: dict[str, str], private_home: Path
) -> None:
    assert funes(plugin, "add", "aider", "--no-index").returncode == 0
    history = private_home / ".aider/history.jsonl"
    history.write_text("")
    fake = private_home / "fake-funes"
    fake.write_text('#!/bin/sh\necho "$*" >> "$HOME/ran"\n')
    fake.chmod(0o755)
    hook = private_home / ".aider/hooks/funes-index.sh"
    subprocess.run(
        ["bash", str(hook), "aider", "--funes", str(fake)],
        input=b'{"hook_event_name": "on_turn", "session_id": "a1"}',
        env={**os.environ, "FUNES_HOOK_SETTLE": "0"}, timeout=30, check=True,
    )  # fmt: skip
    ran = private_home / "ran"
    deadline = time.monotonic() + 60
    while not ran.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert ran.read_text() == f"index {history} --yes\n"


def test_unknown_agents_are_refused_with_the_registered_names(plugin: dict[str, str]) -> None:
    r = funes(plugin, "doctor", "nope")
    assert r.returncode == 2
    assert f"unknown agent 'nope' (choose from {', '.join(with_aider())})" in r.stderr


@pytest.mark.parametrize("group", ["funes.agents", "funes.sources", "console_scripts"])
def test_entry_points_are_read_as_importlib_metadata_reads_them(group: str) -> None:
    from importlib.metadata import entry_points

    from funes import plugins

    expected: dict[str, str] = {}
    for ep in entry_points(group=group):
        expected.setdefault(ep.name, ep.value)
    assert plugins.entry_points(group) == expected


def test_an_install_whose_metadata_predates_the_agents_group_reads_the_checkout(
    tmp_path: Path, private_home: Path
) -> None:
    stale = tmp_path / "stale" / "funes-0.1.0.dist-info"
    stale.mkdir(parents=True)
    (stale / "entry_points.txt").write_text(
        "[funes.sources]\nclaude = funes.sources.claude:SOURCE\n"
    )
    env = {**os.environ, "PYTHONPATH": str(stale.parent), "PATH": "/usr/bin:/bin"}
    listed = ", ".join(plugins.names(plugins.AGENTS))  # the checkout's pyproject.toml lists them
    assert f"wire an agent ({listed}) to funes" in " ".join(funes(env, "--help").stdout.split())
    r = funes(env, "doctor", "codex")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("codex\n  hooks: not installed\n")
