"""The hooks `funes add` installs beyond Claude Code, Codex, pi and Hermes — Gemini CLI, Qwen
Code, Copilot CLI and Cursor (hooks in their JSON files), OpenCode (a plugin), OpenClaw (a
managed hook) and omp (pi's extension) — run as each agent runs them, with the payload its
documentation gives: the hook returns at once and silently, its detached worker indexes the
session's transcript (found from the payload, or where the agent keeps it when the payload
names none), and `funes doctor` reports the hook and its last run.

The agents are not installed here: their sessions are laid out by ``agent_homes`` from the
documented formats, and the JavaScript plugin and hook (OpenCode, OpenClaw) run under node."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import agent_homes
import pytest
from agent_homes import Laid
from conftest import BIN, run_cli, writer_held

FUNES = str(BIN / "funes")
NODE = shutil.which("node")


def add(agent: str) -> str:
    r = run_cli("funes", "add", agent, "--no-index")
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout.decode()


def run_shell(command: str, payload: dict[str, Any]) -> subprocess.CompletedProcess[bytes]:
    """The hook command as an agent runs it: through a shell, the payload on stdin."""
    return subprocess.run(
        ["bash", "-c", command], input=json.dumps(payload).encode(), capture_output=True,
        timeout=30, check=False,
    )  # fmt: skip


def run_node(module: Path, call: str, home: Path) -> subprocess.CompletedProcess[bytes]:
    """Import a plugin file (copied to .mjs: node 20 reads ES modules by extension) and run
    ``call`` on it, as OpenCode or OpenClaw would."""
    assert NODE is not None
    copy = home / "plugin-under-test.mjs"
    copy.write_bytes(module.read_bytes())
    script = f"const m = await import({json.dumps(copy.as_uri())}); {call}"
    return subprocess.run(
        [NODE, "--input-type=module", "-e", script], capture_output=True, timeout=30, check=False
    )


def hooks_log() -> str:
    try:
        return (Path(os.environ["FUNES_HOME"]) / "logs" / "hooks.log").read_text()
    except FileNotFoundError:
        return ""


def wait_for(needle: str, timeout: float = 120.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = hooks_log()
        if needle in text:
            return text
        time.sleep(0.2)
    raise AssertionError(f"{needle!r} never appeared in the hook log:\n{hooks_log()}")


def funes_hook(doc: dict[str, Any], event: str, script: str = "funes-index.sh") -> dict[str, Any]:
    """funes' hook (running ``script``) for ``event`` in a hooks document, grouped or flat."""
    for item in doc["hooks"][event]:
        for hook in item.get("hooks", [item]):
            if script in (hook.get("command") or hook.get("bash") or ""):
                return hook
    raise AssertionError(f"no funes hook running {script} on {event}: {doc['hooks'][event]}")


# ---------------------------------------------------------------------------- each agent
# Each runner installs nothing itself: it finds the hook `funes add` wrote, runs it as the
# agent does, and returns (the process, the event logged, the target the worker must index).


def gemini(home: Path, laid: Laid) -> tuple[Any, str, Path]:
    settings = json.loads((home / ".gemini/settings.json").read_text())
    hook = funes_hook(settings, "AfterAgent")
    assert (hook["type"], hook["timeout"]) == ("command", 15000)
    assert "SessionEnd" in settings["hooks"]
    payload = {
        "session_id": laid.session_id, "transcript_path": str(laid.where), "cwd": "/home/ana/tiles",
        "hook_event_name": "AfterAgent", "timestamp": "2026-05-03T08:00:09Z",
        "prompt": "why does the tile cache thrash?", "prompt_response": "FIFO", "stop_hook_active": False,
    }  # fmt: skip
    return (run_shell(hook["command"], payload), "AfterAgent", laid.where)


def qwen(home: Path, laid: Laid) -> tuple[Any, str, Path]:
    settings = json.loads((home / ".qwen/settings.json").read_text())
    hook = funes_hook(settings, "Stop")
    assert "SessionEnd" in settings["hooks"]
    payload = {
        "session_id": laid.session_id, "transcript_path": str(laid.where), "cwd": "/home/ana/tiles",
        "hook_event_name": "Stop", "stop_hook_active": False,
    }  # fmt: skip
    return (run_shell(hook["command"], payload), "Stop", laid.where)


def copilot(home: Path, laid: Laid) -> tuple[Any, str, Path]:
    doc = json.loads((home / ".copilot/hooks/funes.json").read_text())
    assert doc["version"] == 1 and "Stop" in doc["hooks"]
    hook = funes_hook(doc, "SessionEnd")
    # SessionEnd's payload names no transcript: the hook finds it under session-state/<id>/
    payload = {
        "hook_event_name": "SessionEnd", "session_id": laid.session_id,
        "timestamp": "2026-05-02T09:10:00.000Z", "cwd": "/home/ana/tiles", "reason": "user_exit",
    }  # fmt: skip
    return (run_shell(hook["bash"], payload), "SessionEnd", laid.where)


def cursor(home: Path, laid: Laid) -> tuple[Any, str, Path]:
    doc = json.loads((home / ".cursor/hooks.json").read_text())
    assert doc["version"] == 1
    hook = funes_hook(doc, "stop")
    # the CLI agent's stop payload: the chat's id, no transcript path
    payload = {
        "conversation_id": laid.session_id, "generation_id": "gen-1", "hook_event_name": "stop",
        "workspace_roots": ["/home/ana/tiles"], "status": "completed", "transcript_path": None,
    }  # fmt: skip
    return (run_shell(hook["command"], payload), "stop", laid.where)


def opencode(home: Path, laid: Laid) -> tuple[Any, str, Path]:
    plugin = home / ".config/opencode/plugins/funes.js"
    event = {"type": "session.idle", "properties": {"sessionID": laid.session_id}}
    call = (
        "const hooks = await m.FunesIndex({directory: '/home/ana/tiles'});"
        f"await hooks.event({{event: {json.dumps(event)}}});"
        "await hooks.event({event: {type: 'message.updated', properties: {}}});"
    )
    return (run_node(plugin, call, home), "session.idle", laid.where)


def openclaw(home: Path, laid: Laid) -> tuple[Any, str, Path]:
    hook = home / ".openclaw/hooks/funes"
    assert "message:sent" in (hook / "HOOK.md").read_text()
    event = {
        "type": "command", "action": "reset", "sessionKey": "agent:main:main", "messages": [],
        "context": {"previousSessionEntry": {"sessionId": laid.session_id, "sessionFile": str(laid.where)},
                    "workspaceDir": "/home/ana/gateway"},
    }  # fmt: skip
    call = f"await m.default({json.dumps(event)});"
    return (run_node(hook / "handler.ts", call, home), "command:reset", laid.where)


def omp(home: Path, laid: Laid) -> tuple[Any, str, Path]:
    ext = home / ".omp/agent/extensions/funes"
    assert (ext / "agent").read_text() == "omp\n"
    ts = (ext / "index.ts").read_text()
    assert 'const args = [INDEX_SCRIPT, AGENT, "--funes", FUNES_BIN];' in ts
    assert 'pi.on("agent_end"' in ts
    # what the extension runs on agent_end: the script beside it, the agent name and funes
    command = f'bash "{ext / "scripts/funes-index.sh"}" omp --funes "{(ext / "funes-bin").read_text().strip()}"'
    payload = {
        "session_id": laid.session_id, "transcript_path": str(laid.where),
        "cwd": "/home/ana/tiles", "hook_event_name": "agent_end",
    }  # fmt: skip
    return (run_shell(command, payload), "agent_end", laid.where)


RUNNERS: dict[str, tuple[Callable[[Path], Laid], Callable[[Path, Laid], tuple[Any, str, Path]]]] = {
    "gemini": (agent_homes.write_gemini, gemini),
    "qwen": (agent_homes.write_qwen, qwen),
    "copilot": (agent_homes.write_copilot, copilot),
    "cursor": (agent_homes.write_cursor_cli, cursor),
    "opencode": (agent_homes.write_opencode, opencode),
    "openclaw": (agent_homes.write_openclaw, openclaw),
    "omp": (agent_homes.write_omp, omp),
}  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("agent", sorted(RUNNERS))
def test_the_installed_hook_returns_at_once_and_indexes_the_session(
    agent: str, private_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write, run = RUNNERS[agent]
    if agent in ("opencode", "openclaw") and NODE is None:
        pytest.fail("node is needed to run the OpenCode plugin and the OpenClaw hook")
    laid = write(private_home)
    add(agent)
    # The hook returns while its worker cannot finish: the test holds the memory's writer lock,
    # so the worker's `funes index` finds it busy and retries until the lock is let go. A hook
    # that waited for the index would time out here.
    monkeypatch.setenv("FUNES_HOOK_RETRY_SECONDS", "1")
    monkeypatch.setenv("FUNES_HOOK_RETRIES", "600")
    sid = laid.session_id.replace("/", "_")
    with writer_held():
        proc, event, target = run(private_home, laid)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == b"" and proc.stderr == b""
        busy = wait_for(f"{agent} {event} {sid}: busy: another funes memory operation")
        assert f"{agent} {event} {sid}: ok" not in busy
    log = wait_for(f"{agent} {event} {sid}: ok")
    assert f"{agent} {event} {sid}: start {target}" in log
    from funes.store import open_memory

    assert open_memory().lexical_search(laid.phrase.split()[-1], k=5), (
        f"the {agent} hook ran but its session is not in the memory:\n{log}"
    )
    r = run_cli("funes", "doctor", "--json", agent)
    (row,) = json.loads(r.stdout)["agents"]
    assert row["hooks"], row
    assert row["last_outcome"].startswith("ok"), row
    assert row["script"] and row["script_current"], row
    assert row["funes_bin"] == FUNES and row["funes_bin_ok"], row
    if agent not in ("openclaw",):
        assert row["mcp"] is True, row


def test_a_cursor_chat_under_no_project_falls_back_to_its_sessions(private_home: Path) -> None:
    """No transcript in the payload and none found for the chat: the worker indexes Cursor's
    sessions instead, and says why."""
    fake = private_home / "fake-funes"
    fake.write_text('#!/bin/sh\necho "$*" >> "$HOME/ran"\necho indexed sessions=0\n')
    fake.chmod(0o755)
    r = run_cli("funes", "add", "cursor", "--no-index", env={"FUNES_BIN": str(fake)})
    assert r.returncode == 0, r.stderr.decode()
    hook = funes_hook(json.loads((private_home / ".cursor/hooks.json").read_text()), "stop")
    proc = run_shell(
        hook["command"], {"conversation_id": "no-such-chat", "hook_event_name": "stop"}
    )
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""
    log = wait_for("cursor stop no-such-chat: ok")
    assert "no transcript_path in the payload; indexing cursor's sessions instead" in log
    assert (private_home / "ran").read_text() == "index --harness cursor --yes\n"


def test_without_the_file_both_scripts_source_the_hook_does_nothing_and_doctor_says_so(
    private_home: Path,
) -> None:
    add("gemini")
    common = private_home / ".funes/integrations/gemini/funes-hook-common.sh"
    assert common.exists()
    common.unlink()
    hook = funes_hook(
        json.loads((private_home / ".gemini/settings.json").read_text()), "AfterAgent"
    )
    proc = run_shell(hook["command"], {"session_id": "s-1", "hook_event_name": "AfterAgent"})
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    time.sleep(1.0)  # a worker, had one started, logs within it
    assert hooks_log() == ""
    (row,) = json.loads(run_cli("funes", "doctor", "--json", "gemini").stdout)["agents"]
    assert any("funes-hook-common.sh, which the hook scripts source, is missing" in n
               for n in row["notes"]), row["notes"]  # fmt: skip
    add("gemini")  # puts it back
    (row,) = json.loads(run_cli("funes", "doctor", "--json", "gemini").stdout)["agents"]
    assert common.exists() and row["script_current"] and not row["notes"], row


@pytest.mark.parametrize(
    ("agent", "settings", "says"),
    [
        ("gemini", {"hooksConfig": {"enabled": False}}, "hooksConfig.enabled = false"),
        ("gemini", {"tools": {"enableHooks": False}}, "tools.enableHooks = false"),
        ("gemini", {"hooks": {"enabled": False}}, "hooks.enabled = false"),
        ("gemini", {"hooksConfig": {"disabled": ["funes-index"]}}, "`/hooks enable funes-index`"),
        (
            "gemini",
            {"hooks": {"disabled": ["other", "funes-index"]}},
            "hook funes-index is disabled",
        ),
        ("qwen", {"disableAllHooks": True}, "disableAllHooks = true"),
    ],
)
def test_doctor_says_when_the_agent_has_hooks_switched_off(
    agent: str, settings: dict[str, Any], says: str, private_home: Path
) -> None:
    cfg = private_home / f".{agent}/settings.json"
    cfg.parent.mkdir(parents=True)
    cfg.write_text(json.dumps(settings))
    add(agent)
    r = run_cli("funes", "doctor", agent)
    assert says in r.stdout.decode()
    assert run_cli("funes", "remove", agent).returncode == 0
    assert json.loads(cfg.read_text()) == settings


@pytest.mark.parametrize("agent", ["cline", "roo", "kilo"])
def test_an_agent_without_hooks_says_how_its_sessions_get_indexed(
    agent: str, private_home: Path
) -> None:
    out = add(agent)
    lines = [ln for ln in out.splitlines() if "next `funes index`" in ln]
    assert len(lines) == 1 and "*/15 * * * *" in lines[0] and " index -q" in lines[0]
    r = run_cli("funes", "doctor", "--json", agent)
    (row,) = json.loads(r.stdout)["agents"]
    assert row["hooks"] == [] and row["mcp"] is True
    assert "no hook" in " ".join(row["notes"])


# ---------------------------------------------------------------------------- push
# With a Hub memory bound, each agent publishes it as it runs its hooks: at its session end, or
# (no such event) after the index run. funes is a fake here that records what it is asked.
HUB = "hf://datasets/u/x"
FAKE_FUNES = """#!/bin/sh
echo "$*" >> "$HOME/ran"
case $1 in
push) echo "$2: pushed 3 chunks (commit abc)" ;;
*) echo "indexed sessions=1" ;;
esac
"""


def session_end(agent: str, home: Path) -> tuple[Any, str]:
    """Run what the agent runs when a session ends (or a turn does, for an agent that
    publishes after its index run); returns the process and the event logged."""
    if agent in ("gemini", "qwen", "copilot"):
        where = {"gemini": ".gemini/settings.json", "qwen": ".qwen/settings.json",
                 "copilot": ".copilot/hooks/funes.json"}[agent]  # fmt: skip
        hook = funes_hook(json.loads((home / where).read_text()), "SessionEnd", "funes-push.sh")
        payload = {"session_id": "s-1", "hook_event_name": "SessionEnd", "reason": "exit"}
        return run_shell(hook.get("command") or hook["bash"], payload), "SessionEnd"
    if agent == "cursor":
        hook = funes_hook(json.loads((home / ".cursor/hooks.json").read_text()), "stop")
        return run_shell(
            hook["command"], {"conversation_id": "c-1", "hook_event_name": "stop"}
        ), "stop"
    if agent == "opencode":
        call = (
            "const hooks = await m.FunesIndex({directory: '/home/ana/tiles'});"
            "await hooks.event({event: {type: 'session.idle', properties: {sessionID: 's-1'}}});"
        )
        return run_node(home / ".config/opencode/plugins/funes.js", call, home), "session.idle"
    assert agent == "openclaw"
    event = {"type": "session", "action": "end", "sessionKey": "agent:main:main",
             "context": {"sessionId": "s-1"}}  # fmt: skip
    call = f"await m.default({json.dumps(event)});"
    return run_node(home / ".openclaw/hooks/funes/handler.ts", call, home), "session:end"


@pytest.mark.parametrize("agent", ["gemini", "qwen", "copilot", "cursor", "opencode", "openclaw"])
def test_a_bound_hub_memory_is_pushed_when_the_session_ends_or_after_the_index_run(
    agent: str, private_home: Path
) -> None:
    if agent in ("opencode", "openclaw") and NODE is None:
        pytest.fail("node is needed to run the OpenCode plugin and the OpenClaw hook")
    fake = private_home / "fake-funes"
    fake.write_text(FAKE_FUNES)
    fake.chmod(0o755)
    r = run_cli("funes", "add", agent, "--memory", HUB, "--no-index", env={"FUNES_BIN": str(fake)})
    assert r.returncode == 0, r.stderr.decode()
    proc, event = session_end(agent, private_home)
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b"", proc.stderr
    log = wait_for(f"{agent} {event} -: push: ok ({HUB}: pushed 3 chunks (commit abc))")
    ran = (private_home / "ran").read_text().splitlines()
    assert f"push {HUB} --yes" in ran
    if agent in ("cursor", "opencode"):  # after the index run, which wrote the local memory
        (index,) = [x for x in ran if x.startswith("index ")]
        assert "--memory" not in index and ran.index(index) < ran.index(f"push {HUB} --yes")
        assert f"{agent} {event} c-1: ok" in log or f"{agent} {event} s-1: ok" in log
    r = run_cli("funes", "doctor", "--json", agent)
    (row,) = json.loads(r.stdout)["agents"]
    assert row["last_push_outcome"] == f"ok ({HUB}: pushed 3 chunks (commit abc))", row


def test_a_push_after_the_index_run_waits_its_minutes(private_home: Path) -> None:
    """Cursor has no session end: its index hook publishes after the run, at most once in
    $FUNES_PUSH_MINUTES, not one Hub commit per turn."""
    fake = private_home / "fake-funes"
    fake.write_text(FAKE_FUNES)
    fake.chmod(0o755)
    r = run_cli(
        "funes", "add", "cursor", "--memory", HUB, "--no-index", env={"FUNES_BIN": str(fake)}
    )
    assert r.returncode == 0, r.stderr.decode()
    proc, _ = session_end("cursor", private_home)
    assert proc.returncode == 0
    wait_for("cursor stop -: push: ok")
    proc, _ = session_end("cursor", private_home)
    assert proc.returncode == 0
    deadline = time.monotonic() + 120
    while hooks_log().count("cursor stop c-1: ok") < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert hooks_log().count("cursor stop c-1: ok") == 2, hooks_log()
    time.sleep(1.0)  # a push the second run would start comes within it
    ran = (private_home / "ran").read_text().splitlines()
    assert ran.count(f"push {HUB} --yes") == 1, ran
