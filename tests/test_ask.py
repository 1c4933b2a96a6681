"""`funes ask AGENT …` for every agent the registry says can answer: preflight, grounding prompt,
the exact child argv (never the prompt), the answer from the right stream event, failures
replayed, weak evidence refused, invented citations flagged. The agents are fake scripts
(tests/fixtures/ask/fake_agent.py) that record their argv and stdin and replay a stream in each
agent's documented format; the memory, models and recall are real."""

from __future__ import annotations

import fcntl
import json
import os
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import BIN, REPO, jsonl, read_terminal, run_cli, start_on_a_terminal

from funes.agents.ask import (
    INSTRUCTION,
    answer_from,
    child_argv,
    citations,
    claude_event,
    codex_event,
    unrecalled_citations,
)
from funes.agents.ask import (
    agents as askable,
)

SAMPLES = REPO / "contrib" / "samples"
FIXTURES = REPO / "tests" / "fixtures" / "ask"
QUESTION = "why were the zoom 14 tiles empty?"
ABSENT = "why did we pick DuckDB over SQLite for the analytics store?"
TILER_SESSION = "5f0c2d1e-8a7b-4c3d-9e2f-1a2b3c4d5e6f"


@pytest.fixture(scope="module")
def memory(samples_memory: Path) -> Path:
    """The bundled Claude Code and Codex samples, indexed (and embedded) once per session."""
    return samples_memory


ANSWER = (
    "The zoom 14 tiles were empty because the vector-tile parser hit a LineTo command with "
    "count=0 and gave up on the whole layer; the fix was to skip zero-length commands instead "
    f"of failing.\n\nSessions: {TILER_SESSION}"
)


def lines(*events: dict[str, Any]) -> str:
    return "".join(json.dumps(e) + "\n" for e in events)


# Each new agent's stream as its documentation gives it, answering ANSWER (the fixtures hold
# the longer, recorded-shape streams of claude and codex).
HEAD, TAIL = ANSWER[:60], ANSWER[60:]
STREAMS = {
    # Gemini CLI --output-format stream-json: the answer in assistant deltas
    "gemini": lines(
        {"type": "init", "timestamp": "2026-11-30T10:00:00Z", "session_id": "g-1", "model": "gemini-2.5-pro"},
        {"type": "message", "role": "user", "content": "(the prompt)"},
        {"type": "message", "role": "assistant", "content": HEAD, "delta": True},
        {"type": "message", "role": "assistant", "content": TAIL, "delta": True},
        {"type": "result", "status": "success", "stats": {"total_tokens": 912}},
    ),
    # Qwen Code --output-format stream-json: Claude Code's shape
    "qwen": lines(
        {"type": "system", "subtype": "session_start", "session_id": "q-1", "model": "qwen3-coder-plus"},
        {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": ANSWER}]}},
        {"type": "result", "subtype": "success", "is_error": False, "result": ANSWER},
    ),
    # Copilot CLI --output-format json: session events; a tool-request-only message first
    "copilot": lines(
        {"type": "assistant.turn_start", "data": {"turnId": "0"}},
        {"type": "assistant.message", "data": {"content": "", "toolRequests": [{"name": "view"}]}},
        {"type": "tool.execution_start", "data": {"toolName": "view"}},
        {"type": "assistant.message", "data": {"content": ANSWER, "toolRequests": []}},
        {"type": "session.shutdown", "data": {}},
    ),
    # cursor-agent -p --output-format stream-json
    "cursor": lines(
        {"type": "system", "subtype": "init", "session_id": "c-1", "model": "composer"},
        {"type": "tool_call", "subtype": "started", "call_id": "t1", "tool_call": {}},
        {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": ANSWER}]}},
        {"type": "result", "subtype": "success", "is_error": False, "result": ANSWER, "duration_ms": 900},
    ),
    # opencode run --format json: the last text part
    "opencode": lines(
        {"type": "step_start", "sessionID": "ses_1", "part": {"type": "step-start"}},
        {"type": "text", "sessionID": "ses_1", "part": {"type": "text", "text": "Let me look."}},
        {"type": "tool_use", "sessionID": "ses_1", "part": {"type": "tool", "tool": "read"}},
        {"type": "text", "sessionID": "ses_1", "part": {"type": "text", "text": ANSWER}},
        {"type": "step_finish", "sessionID": "ses_1", "part": {"type": "step-finish", "reason": "stop"}},
    ),
}  # fmt: skip


class Agents:
    """A bin dir holding a fake CLI for every agent `funes ask` can ask; PATH is that dir alone."""

    def __init__(self, root: Path) -> None:
        self.bin = root / "bin"
        self.bin.mkdir(parents=True)
        script = f"#!{sys.executable}\n" + (FIXTURES / "fake_agent.py").read_text()
        for agent in askable():
            name = child_argv(agent)[0]
            exe = self.bin / name
            exe.write_text(script)
            exe.chmod(0o755)
            fixture = FIXTURES / f"{name}-stream.jsonl"
            self.replay(name, fixture.read_text() if fixture.exists() else STREAMS[agent])

    def replay(self, name: str, stream: str, stderr: str = "", exit: int = 0) -> None:
        (self.bin / f"{name}.stream.jsonl").write_text(stream)
        if stderr:
            (self.bin / f"{name}.stderr").write_text(stderr)
        if exit:
            (self.bin / f"{name}.exit").write_text(str(exit))

    def calls(self, name: str) -> list[list[str]]:
        return self._log(name, "argv")

    def prompts(self, name: str) -> list[str]:
        """What each call of the agent read on its stdin."""
        return self._log(name, "stdin")

    def cmdlines(self, name: str) -> list[str]:
        """Each call's /proc/self/cmdline, as any local user could read it."""
        return self._log(name, "cmdline")

    def _log(self, name: str, what: str) -> list[Any]:
        log = self.bin / f"{name}.{what}.jsonl"
        return [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []

    def ask(self, *args: str | Path) -> tuple[int, str, str]:
        r = run_cli("funes", "ask", *args, env={"PATH": str(self.bin)})
        return r.returncode, r.stdout.decode(), r.stderr.decode()


@pytest.fixture
def agents(tmp_path: Path) -> Agents:
    return Agents(tmp_path)


def test_ask_claude_runs_the_exact_argv_on_a_grounded_prompt_and_prints_the_answer(
    agents: Agents, memory: Path
) -> None:
    code, out, err = agents.ask("claude", *QUESTION.split(), "--memory", memory)
    assert code == 0, err
    assert out == (
        "The zoom 14 tiles were empty because the vector-tile parser hit a LineTo command with "
        "count=0 and gave up on the whole layer; the fix was to skip zero-length commands "
        f"instead of failing.\n\nSessions: {TILER_SESSION}\n"
    )
    assert err == ""
    [argv] = agents.calls("claude")
    [prompt] = agents.prompts("claude")
    assert argv == [
        "-p", "--strict-mcp-config", "--mcp-config", '{"mcpServers":{}}',
        "--output-format", "stream-json", "--verbose",
    ]  # fmt: skip
    head, passages = prompt.split("\n\n== RECALLED PASSAGES ==\n")
    assert head == f"{INSTRUCTION}\n\nQuestion: {QUESTION}"
    # The passages are what recall returns with ask's fixed parameters, in the agent format:
    # every hit's text and its session id (in its `→ get` line) are in the prompt.
    hits = jsonl(run_cli("funes", "recall", QUESTION, "--json", "-k", "8", "--candidates", "30",
                         "--neighbors", "1", "--half-life", "30", "--memory", memory).stdout)  # fmt: skip
    assert len(hits) == 8
    for h in hits:
        assert h["text"] in passages
        assert f"→ get {h['session_id']} {h['turn_uuid']} --memory {memory}" in passages
    assert "LineTo" in passages and passages.count("---\n") == 8


def test_ask_codex_runs_exec_json_and_takes_the_last_agent_message(
    agents: Agents, memory: Path
) -> None:
    code, out, err = agents.ask("codex", QUESTION, "--memory", memory)
    assert code == 0, err
    assert out.startswith("The zoom 14 tiles were empty because") and out.endswith(
        f"Sessions: {TILER_SESSION}\n"
    )
    [argv] = agents.calls("codex")
    [prompt] = agents.prompts("codex")
    assert argv == ["exec", "--json", "--skip-git-repo-check", "-c", "mcp_servers={}", "-"]
    assert prompt.startswith(INSTRUCTION) and f"Question: {QUESTION}\n" in prompt
    assert f"→ get {TILER_SESSION} " in prompt


def test_the_registry_says_which_agents_answer() -> None:
    assert askable() == ["claude", "codex", "copilot", "cursor", "gemini", "opencode", "qwen"]
    r = run_cli("funes", "ask", "--help")
    assert "claude, codex, copilot, cursor, gemini, opencode, qwen" in r.stdout.decode()


@pytest.mark.parametrize(
    ("agent", "argv"),
    [
        ("gemini", ["gemini", "--output-format", "stream-json",
                    "--allowed-mcp-server-names", "funes-ask-allows-no-mcp-server"]),
        ("qwen", ["qwen", "--output-format", "stream-json",
                  "--allowed-mcp-server-names", "funes-ask-allows-no-mcp-server"]),
        ("copilot", ["copilot", "--output-format", "json", "--disable-builtin-mcps",
                     "--disable-mcp-server", "funes", "--no-custom-instructions", "--no-ask-user",
                     "--no-color"]),
        ("cursor", ["cursor-agent", "-p", "--output-format", "stream-json"]),
        ("opencode", ["opencode", "run", "--format", "json"]),
    ],
)  # fmt: skip
def test_each_new_agent_gets_the_prompt_on_stdin_and_its_answer_is_printed(
    agent: str, argv: list[str], agents: Agents, memory: Path
) -> None:
    code, out, err = agents.ask(agent, *QUESTION.split(), "--memory", memory)
    assert code == 0, err
    assert out == ANSWER + "\n" and err == ""
    cli = argv[0]
    assert agents.calls(cli) == [argv[1:]]
    [prompt] = agents.prompts(cli)
    assert prompt.startswith(INSTRUCTION) and f"Question: {QUESTION}\n" in prompt
    assert f"→ get {TILER_SESSION} " in prompt
    # the prompt is on stdin only: not in the command line any local user can read
    [cmdline] = agents.cmdlines(cli)
    assert QUESTION not in cmdline and "RECALLED PASSAGES" not in cmdline


def test_a_missing_agent_is_named_with_the_other_as_the_way_out(
    agents: Agents, memory: Path
) -> None:
    (agents.bin / "claude").unlink()
    code, out, err = agents.ask("claude", QUESTION, "--memory", memory)
    assert (code, out) == (1, "")
    assert err == "funes: `claude` isn't on PATH — install it, or try `funes ask codex …`\n"
    (agents.bin / "codex").unlink()
    code, _, err = agents.ask("codex", QUESTION, "--memory", memory)
    # claude is gone too: the way out is the first agent still on PATH
    assert err == "funes: `codex` isn't on PATH — install it, or try `funes ask copilot …`\n"
    (agents.bin / "codex").write_text("#!/bin/sh\necho 'codex: broken install' >&2\nexit 3\n")
    (agents.bin / "codex").chmod(0o755)
    code, _, err = agents.ask("codex", QUESTION, "--memory", memory)
    assert code == 1 and err == (
        "funes: `codex --version` failed (exit 3) — check its install, or try `funes ask copilot …`\n"
    )
    assert agents.calls("codex") == []
    code, _, err = agents.ask("hermes", QUESTION, "--memory", memory)
    names = ", ".join(f"`{a}`" for a in askable())
    assert code == 2 and err == f"funes: cannot ask 'hermes' — funes asks {names}\n"
    code, _, err = agents.ask("cladue", QUESTION, "--memory", memory)
    assert code == 2 and err == (
        f"funes: cannot ask 'cladue' — funes asks {names} (did you mean `funes ask claude …`?)\n"
    )


@pytest.mark.parametrize(
    ("agent", "stderr", "exit"),
    [
        ("claude", "Invalid API key · Please run /login\n", 1),
        ("codex", "ERROR: unexpected status 401 Unauthorized\n", 1),
    ],
)
def test_a_failing_agent_has_its_output_replayed_and_exit_1(
    agents: Agents, memory: Path, agent: str, stderr: str, exit: int
) -> None:
    stream = (FIXTURES / f"{agent}-failed.jsonl").read_text()
    agents.replay(agent, stream, stderr=stderr, exit=exit)
    code, out, err = agents.ask(agent, QUESTION, "--memory", memory)
    assert (code, out) == (1, "")
    assert err == stream + stderr + f"funes: `{agent}` failed (exit 1); its output is above\n"


def test_an_agent_that_exits_0_without_an_answer_fails_too(agents: Agents, memory: Path) -> None:
    stream = (FIXTURES / "claude-failed.jsonl").read_text()  # is_error: true, exit 0
    agents.replay("claude", stream)
    code, out, err = agents.ask("claude", QUESTION, "--memory", memory)
    assert (code, out) == (1, "")
    assert err == stream + "funes: `claude` ended without an answer; its output is above\n"


@pytest.mark.parametrize("stream", ["", '{"type":"system","subtype":"init"}'])
def test_an_agent_that_prints_no_answer_is_said_so_on_a_line_of_its_own(
    agents: Agents, memory: Path, stream: str
) -> None:
    """Nothing printed: nothing is said to be "above"; a last event without a newline does
    not swallow funes' line."""
    agents.replay("gemini", stream)
    code, out, err = agents.ask("gemini", QUESTION, "--memory", memory)
    assert (code, out) == (1, "")
    if not stream:
        assert err == "funes: `gemini` ended without an answer and printed nothing\n"
    else:
        assert err == stream + "\nfunes: `gemini` ended without an answer; its output is above\n"


def test_weak_evidence_spends_no_agent_call_unless_anyway(agents: Agents, memory: Path) -> None:
    code, out, err = agents.ask("claude", ABSENT, "--memory", memory)
    assert (code, out) == (1, "")
    assert err.startswith(f"funes: weak evidence — nothing in {memory} closely matches")
    assert "claude was not asked" in err and "--anyway" in err
    assert len(err.splitlines()) == 1
    assert agents.calls("claude") == []
    code, out, err = agents.ask("claude", ABSENT, "--memory", memory, "--anyway")
    assert code == 0 and out.startswith("The zoom 14 tiles")
    [prompt] = agents.prompts("claude")
    assert (
        "== RECALLED PASSAGES ==\nweak evidence: nothing in this memory closely matches" in prompt
    )


def test_a_session_the_answer_invents_is_flagged(agents: Agents, memory: Path) -> None:
    invented = "7e57c0de-0000-4bad-8bad-000000000000"
    stream = (FIXTURES / "codex-stream.jsonl").read_text()
    stream = stream.replace(f"Sessions: {TILER_SESSION}", f"Sessions: {TILER_SESSION}, {invented}")
    agents.replay("codex", stream)
    code, out, err = agents.ask("codex", QUESTION, "--memory", memory)
    assert code == 0 and out.endswith(f"Sessions: {TILER_SESSION}, {invented}\n")
    assert err == (
        f"funes: the answer cites session {invented}, which is not among the recalled "
        "passages — that part is not grounded in your memory\n"
    )


def test_nothing_recalled_or_no_memory_is_an_error_before_any_agent_call(
    agents: Agents, tmp_path: Path
) -> None:
    code, _, err = agents.ask("claude", QUESTION)  # the default memory: never indexed
    assert code == 1 and err.startswith("funes: no index yet — run `funes add <agent>`")
    empty = tmp_path / "empty"
    assert run_cli("funes-write", "--memory", empty, input=b"").returncode == 0
    code, _, err = agents.ask("claude", QUESTION, "--memory", empty)
    assert code == 1
    assert err == (
        "funes: nothing recalled for that question — no passages to ground an answer in\n"
    )
    assert agents.calls("claude") == []


# ---------------------------------------------------------------------------- stream parsing


def test_stream_events_drive_the_spinner_and_carry_the_answer() -> None:
    claude = (FIXTURES / "claude-stream.jsonl").read_text().splitlines()
    acts = [claude_event(json.loads(x)).activity for x in claude]
    assert acts == [None, "thinking…", "writing the answer…", None]
    assert answer_from("claude", claude).startswith("The zoom 14 tiles")  # type: ignore[union-attr]
    tool = {"type": "assistant", "message": {"content": [{"type": "tool_use", "name": "Grep"}]}}
    assert claude_event(tool).activity == "Grep…"
    assert (
        answer_from("claude", (FIXTURES / "claude-failed.jsonl").read_text().splitlines()) is None
    )
    codex = (FIXTURES / "codex-stream.jsonl").read_text().splitlines()
    acts = [codex_event(json.loads(x)).activity for x in codex]
    assert acts == [None, "thinking…", "thinking…", "writing the answer…", None]
    cmd = {"type": "item.started", "item": {"type": "command_execution", "command": "rg -n x"}}
    assert codex_event(cmd).activity == "running rg…"
    two = [json.dumps({"type": "item.completed", "item": {"type": "agent_message", "text": t}})
           for t in ("first", "last")]  # fmt: skip
    assert answer_from("codex", [*two, "not json"]) == "last"


def test_citations_are_read_from_the_sessions_line_get_lines_and_uuids() -> None:
    recalled = [TILER_SESSION, "tr-ocelot"]
    answer = (
        "The cache is keyed by commit (see → get tr-ocelot tr-ocelot-1).\n"
        "Sessions: 5f0c2d1e (the tiler one), tr-ocelot, made-up-7"
    )
    assert citations(answer, recalled) == ["5f0c2d1e", "tr-ocelot", "made-up-7"]
    assert unrecalled_citations(answer, recalled) == ["made-up-7"]
    assert unrecalled_citations("Sessions: none.", recalled) == []
    assert unrecalled_citations("We get errors when the cache is cold.", recalled) == []
    assert unrecalled_citations(f"As {TILER_SESSION} shows.", recalled) == []
    codex_rollout = "rollout-2026-11-02T16-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
    assert (
        unrecalled_citations("Sessions: 0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", [codex_rollout])
        == []
    )


def test_the_prompt_goes_on_stdin_and_no_passage_reaches_the_agents_command_line(
    agents: Agents, memory: Path
) -> None:
    """Any local user reads /proc/PID/cmdline: the recalled passages (and the question) must
    not be there. The fake reads its stdin to the end while `funes ask`'s own stdin stays
    open, so the prompt is followed by end of file."""
    hits = jsonl(run_cli("funes", "recall", QUESTION, "--json", "-k", "8", "--candidates", "30",
                         "--neighbors", "1", "--half-life", "30", "--memory", memory).stdout)  # fmt: skip
    for agent in askable():
        proc = subprocess.Popen(
            [str(BIN / "funes"), "ask", agent, QUESTION, "--memory", str(memory)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env={**os.environ, "PATH": str(agents.bin)},
        )  # fmt: skip
        try:
            assert proc.wait(timeout=120) == 0
            assert proc.stdout is not None and proc.stdout.read().startswith(b"The zoom 14")
        finally:
            proc.kill()
            assert proc.stdin is not None
            proc.stdin.close()
        [prompt] = agents.prompts(child_argv(agent)[0])
        [cmdline] = agents.cmdlines(child_argv(agent)[0])
        assert prompt.startswith(INSTRUCTION)
        assert INSTRUCTION[:40] not in cmdline and QUESTION not in cmdline
        for h in hits:
            assert h["text"] in prompt
            for piece in h["text"].split("\n"):
                assert piece.strip() == "" or piece not in cmdline


def test_an_answer_quoting_a_get_line_cites_only_its_session() -> None:
    turn = "0b7c1d2e-aaaa-4bbb-8ccc-123456789abc"  # Claude Code turn ids are UUIDs too
    answer = (
        f"It is in → get {TILER_SESSION} {turn} --memory /home/ana/m, and in\n"
        f"`funes get {TILER_SESSION} {turn}`.\nSessions: {TILER_SESSION}"
    )
    assert citations(answer, [TILER_SESSION]) == [TILER_SESSION]
    assert unrecalled_citations(answer, [TILER_SESSION]) == []
    other = "7e57c0de-0000-4bad-8bad-000000000000"
    assert unrecalled_citations(f"{answer}, {other}", [TILER_SESSION]) == [other]


def test_passages_that_would_overflow_an_argument_drop_far_neighbours_first() -> None:
    from funes.agents.ask import PROMPT_BYTES
    from funes.cli.ask import _passages
    from funes.retrieval import Hit, Query, Result

    def neighbour(seq: int) -> dict:
        return {"seq": seq, "role": "tool", "block_type": "tool_result", "text": f"{seq} " * 60}

    hits = []
    for i in range(8):
        row = {"id": f"c{i}", "ts": "2026-11-01T10:00:00.000Z", "harness": "claude_code",
               "workdir": "-w", "session_id": f"s{i}", "turn_uuid": f"t{i}", "seq": 500,
               "block_type": "text", "text": f"passage {i} " + "x" * 1100}  # fmt: skip
        near = [neighbour(s) for s in range(400, 601) if s != 500]
        hits.append(Hit(i + 1, 0.5, row, {}, neighbors=near))
    text = _passages(Result(Query("q"), hits, "strong", "m"))
    assert len(text.encode()) <= PROMPT_BYTES
    for i in range(8):
        assert f"passage {i} " + "x" * 1100 in text  # every passage whole
    assert "[tool tool_result seq499] 499" in text and "[tool tool_result seq501] 501" in text
    assert "seq400]" not in text  # the farthest went first


def test_an_unreachable_hub_memory_is_an_error_not_a_cached_copy(
    agents: Agents, tmp_path: Path
) -> None:
    from hubserver.helpers import Machine, turn
    from hubserver.server import HubServer

    hub = HubServer().start()
    hub.add_user("ana", "hf_ana_write")
    try:
        pub = Machine(tmp_path / "pub", hub)
        pub.index([turn("s1", 0, "The bandicoot importer drops rows whose timestamp has no zone.")])
        assert pub.funes("push", "ana/kb", "--create", "--yes").returncode == 0
        reader = Machine(tmp_path / "reader", hub)
        path = {"PATH": str(agents.bin)}
        r = reader.funes("ask", "claude", "why does the bandicoot importer drop rows?",
                         "--memory", "ana/kb", "--anyway", env=path)  # fmt: skip
        assert r.returncode == 0, r.stderr
        [prompt] = agents.prompts("claude")
        assert "drops rows whose timestamp has no zone" in prompt
        assert "--memory hf://datasets/ana/kb" in prompt
    finally:
        hub.stop()
    # Recall would now read the cached copy (with a note); ask refuses.
    r = reader.funes("ask", "claude", "why does the bandicoot importer drop rows?",
                     "--memory", "ana/kb", "--anyway", env={**path, "FUNES_HUB_TTL": "0"})  # fmt: skip
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == (
        "funes: hf://datasets/ana/kb is unreachable right now — try again once you're back online\n"
    )
    assert len(agents.calls("claude")) == 1


def test_on_a_terminal_a_spinner_follows_the_agents_stream(agents: Agents, memory: Path) -> None:
    (agents.bin / "claude.delay").write_text("0.4")
    proc, master = start_on_a_terminal(
        [str(BIN / "funes"), "ask", "claude", QUESTION, "--memory", str(memory)],
        {"PATH": str(agents.bin), **COLOUR}, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
    )  # fmt: skip
    seen = read_terminal(master)
    os.close(master)
    assert proc.wait(timeout=120) == 0
    assert proc.stdout is not None and proc.stdout.read().startswith(b"The zoom 14 tiles")
    shown = seen.decode()
    for label in ("recalling…", "asking claude…", "thinking…", "writing the answer…"):
        assert label in shown
    assert shown.index("thinking…") < shown.index("writing the answer…")
    assert shown.endswith("\r\x1b[K")  # the line is erased before the answer is printed


COLOUR = {"TERM": "xterm-256color", "NO_COLOR": ""}  # a terminal that takes escapes
FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


@pytest.mark.parametrize("plain", [{"NO_COLOR": "1"}, {"TERM": "dumb"}])
def test_no_escape_byte_reaches_a_plain_terminal(
    agents: Agents, memory: Path, plain: dict[str, str]
) -> None:
    """Under NO_COLOR or TERM=dumb (an editor's shell buffer shows an escape as text) neither
    the spinner nor the answer writes one: TERM=dumb still got the answer's dimmed rule."""
    (agents.bin / "claude.delay").write_text("0.4")
    proc, master = start_on_a_terminal(
        [str(BIN / "funes"), "ask", "claude", QUESTION, "--memory", str(memory)],
        {"PATH": str(agents.bin), **COLOUR, **plain}, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    shown = read_terminal(master).decode()
    os.close(master)
    assert proc.wait(timeout=120) == 0
    assert "thinking…" in shown and "The zoom 14 tiles" in shown, repr(shown)
    assert "\x1b" not in shown, repr(shown)


@pytest.mark.parametrize("plain", [{"NO_COLOR": "1"}, {}])
def test_the_spinner_fits_a_terminal_narrowed_under_it(
    agents: Agents, memory: Path, plain: dict[str, str]
) -> None:
    """ask's spinner cut its frames to 19 columns at least and padded each to the one before:
    on a terminal narrowed to 16 columns while the agent worked, every frame wrapped and left a
    row behind. Each frame now fits the terminal as it is at that frame."""
    (agents.bin / "claude.delay").write_text("0.8")
    proc, master = start_on_a_terminal(
        [str(BIN / "funes"), "ask", "claude", QUESTION, "--memory", str(memory)],
        {"PATH": str(agents.bin), **COLOUR, **plain}, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
    )  # fmt: skip
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    before = b""
    deadline = time.monotonic() + 120
    while "asking claude…".encode() not in before and time.monotonic() < deadline:
        if select.select([master], [], [], 1)[0]:
            before += os.read(master, 65536)
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 16, 0, 0))
    after = read_terminal(master).decode("utf-8", "replace")
    os.close(master)
    assert proc.wait(timeout=120) == 0
    # (the first frame after the narrowing may have been measured before it)
    frames = after.replace("\x1b[K", "").split("\r")[2:]
    assert any(f[:1] in FRAMES for f in frames), repr(after)
    assert all(len(f) < 16 for f in frames), [f for f in frames if len(f) >= 16]
