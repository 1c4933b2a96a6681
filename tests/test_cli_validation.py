"""Bad arguments, as a user types them: one `funes:` line saying what is accepted, exit 2,
and the same answer from `funes recall`, `funes-query` (arguments and stdin lines) and MCP."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import jsonl, run_cli

from funes import validate
from funes.errors import UsageError


def one_line(r: subprocess.CompletedProcess[bytes]) -> str:
    """The single stderr line of a usage error (asserting there is exactly one, and exit 2)."""
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode == 2, (r.returncode, err)
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("funes: "), err
    assert "unexpected" not in err and "damaged" not in err and "Traceback" not in err
    assert r.stdout == b""
    return lines[0]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["-k", "1e12"], "funes: -k must be a whole number from 1 to 1000 (got '1e12')"),
        (["-k", "0"], "funes: -k must be a whole number from 1 to 1000 (got '0')"),
        (["--candidates", "lots"], "funes: --candidates must be a whole number from 1 to 1000"),
        (["--half-life", "nan"], "funes: --half-life must be a number from 0 to 36500"),
        (["--since", "99999y"], "funes: --since must be a date (2026-03-01) or an age within"),
        (["--since", "9" * 5000 + "d"], "funes: --since must be a date (2026-03-01) or an age"),
        (["--until", "1e20"], "funes: --until must be a date (2026-03-01, 2026-03-01T10:00)"),
        (
            ["--type", "code"],
            "funes: --type must be one of text, thinking, tool_use, tool_result (got 'code')",
        ),
        (
            ["--harness", "parquet"],
            f"funes: --harness must be an agent funes reads: {', '.join(validate.agent_names())} "
            "(got 'parquet')",
        ),
        (["--top", "3"], "funes: unrecognized arguments: --top 3 (did you mean -k?)"),
        (["--harness", "claud"], "funes: --harness must be an agent funes reads: "),
    ],
)
def test_recall_and_query_refuse_a_bad_value_in_one_line(args: list[str], expected: str) -> None:
    # No memory exists here: every value is checked before anything is opened.
    for cmd in (["funes", "recall", "tiles"], ["funes-query", "tiles"]):
        line = one_line(run_cli(*cmd, *args))
        assert line.startswith(expected), line


@pytest.mark.parametrize(
    ("typed", "meant"),
    [("claud", "claude"), ("cladue", "claude"), ("claude_cod", "claude"), ("codx", "codex"),
     ("hermess", "hermes"), ("open-code", "opencode"), ("gemnii", "gemini")],
)  # fmt: skip
def test_a_misspelt_harness_names_the_agent_meant(typed: str, meant: str) -> None:
    for cmd in (["funes", "recall", "tiles"], ["funes-query", "tiles"]):
        line = one_line(run_cli(*cmd, "--harness", typed))
        assert line.endswith(f"(got {typed!r} — did you mean {meant}?)"), line
    with pytest.raises(UsageError, match=rf"did you mean {meant}\?\)$"):
        validate.harness(typed, style="mcp")


def test_a_valid_harness_spelling_is_accepted_in_all_its_forms() -> None:
    assert validate.harness("claude_code") == "claude"
    assert validate.harness(" Codex ") == "codex"
    with pytest.raises(UsageError, match=r"^'harness' must be an agent funes reads: claude"):
        validate.harness("vim", style="mcp")


def test_get_window_and_non_utf8_arguments_are_one_line(tmp_path: Path) -> None:
    line = one_line(run_cli("funes", "get", "s", "t", "--window", "1e20"))
    assert line == "funes: --window must be a whole number from 0 to 1000 (got '1e20')"
    # A byte that is not UTF-8, as a shell passes it: never the internal SQL filter.
    bad = os.fsdecode(b"ses\xffsion")
    for argv in (
        ["recall", "tiles", "--session", bad],
        ["get", bad, "t"],
        ["recall", os.fsdecode(b"caf\xe9")],
    ):
        r = run_cli("funes", *argv)
        line = one_line(r)
        assert "is not valid UTF-8" in line and "session_id =" not in line, line


def test_a_bad_query_line_is_reported_and_the_stream_goes_on(samples_memory: Path) -> None:
    lines = "\n".join(
        [
            '{"query": "tile cache", "id": 1, "k": 1}',
            '{"query": "tile cache", "id": 2, "k": 1e12}',
            '{"query": "tile cache", "id": 3, "since": "99999y"}',
            '{"query": "tile cache", "id": 4, "type": "code"}',
            '{"query": "tile cache", "id": 5, "session": "\\udcff"}',
            "not json",
            '{"query": "tile cache", "id": 6, "k": 1}',
        ]
    )
    r = run_cli("funes-query", "--memory", samples_memory, input=lines)
    assert r.returncode == 1
    answered = {h["query_id"] for h in jsonl(r.stdout)}
    assert answered == {1, 6}
    err = r.stderr.decode().splitlines()
    assert err == [
        "funes-query: <stdin>:2: 'k' must be a whole number from 1 to 1000 (got 1e+12) — skipped",
        "funes-query: <stdin>:3: 'since' must be a date (2026-03-01) or an age within 2,000 "
        "years such as 7d, 12h, 2w, 6m, 5y (got '99999y') — skipped",
        "funes-query: <stdin>:4: 'block_type' must be one of text, thinking, tool_use, "
        "tool_result (got 'code') — skipped",
        "funes-query: <stdin>:5: 'session' is not valid UTF-8 — skipped",
        "funes-query: <stdin>:6: invalid JSON — skipped",
        "funes-query: 5 bad lines skipped",
    ]


def test_unknown_verbs_get_a_suggestion_only_when_one_is_close() -> None:
    r = run_cli("funes", "reacll", "x")
    assert r.stderr.decode().strip().endswith("Did you mean `funes recall`?")
    r = run_cli("funes", "update")
    assert r.returncode == 2
    assert r.stderr.decode().strip() == "funes: 'update' is not a funes verb. See `funes --help`."


def test_a_verbs_bad_positional_is_named_as_its_help_names_it() -> None:
    """Never argparse's internal name (`argument action: …`): the ACTION the usage shows."""
    line = one_line(run_cli("funes", "models", "bogus"))
    assert line.startswith("funes: argument ACTION: invalid choice: 'bogus'"), line
    line = one_line(run_cli("funes", "add", "vim"))
    assert line.startswith("funes: argument AGENT: invalid choice: 'vim'"), line


@pytest.mark.parametrize(
    ("argv", "meant"),
    [(["add", "claud"], "claude"), (["remove", "cdex"], "codex"), (["doctor", "hermse"], "hermes"),
     (["models", "fecth"], "fetch"), (["get", "s", "t", "--format", "agnet"], "agent")],
)  # fmt: skip
def test_a_misspelt_choice_names_the_one_meant(argv: list[str], meant: str) -> None:
    line = one_line(run_cli("funes", *argv))
    assert f"{argv[-1]!r} (choose from " in line and f"(did you mean {meant}?)" in line, line
