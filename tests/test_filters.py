"""Recall's filters (`--role`, `--until`, several `--harness`, `claude_code` for `claude`) narrow
inside both legs' searches, so a narrow filter still returns every passage it lets through."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import jsonl, run_cli
from memory_builder import build, chunk

from funes import validate
from funes.errors import UsageError
from funes.retrieval import Filters


def hits(mem: Path, *args: str) -> list[dict[str, object]]:
    r = run_cli("funes", "recall", *args, "--json", "--memory", mem)
    assert r.returncode == 0, r.stderr
    return [h for h in jsonl(r.stdout) if h["kind"] == "hit"]


@pytest.fixture(scope="module")
def crowd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """3,000 assistant passages about the flaky deploy cache, in Claude Code sessions of
    January, and three user passages about it in pi sessions of March."""
    rows = [
        chunk(f"s{i // 30:03d}", i % 30, f"the deploy cache step flaked again, run {i}",
              ts=f"2026-01-{1 + i % 28:02d}T09:00:00.000Z")
        for i in range(3000)
    ]  # fmt: skip
    wanted = [
        "deploy cache: can we pin the runner image so the cache step stops flaking "
        + "and the nightly build goes green again " * 3,
        "why does the deploy cache miss after every merge, look at the key",
        "the deploy cache step flaked twice today; please check the lock",
    ]
    rows += [
        chunk(f"p{i}", 0, t, role="user", harness="pi", ts=f"2026-03-0{i + 1}T09:00:00.000Z")
        for i, t in enumerate(wanted)
    ]
    return build(tmp_path_factory.mktemp("crowd") / "memory", rows)


def test_a_narrow_filter_returns_every_match_among_thousands(crowd: Path) -> None:
    # Each leg's pool is 10: a filter applied after the legs would find none of the three.
    got = hits(crowd, "deploy cache step flaked", "--role", "user", "--harness", "pi",
               "--candidates", "10", "-k", "8")  # fmt: skip
    assert sorted(h["session_id"] for h in got) == ["p0", "p1", "p2"]
    unfiltered = hits(crowd, "deploy cache step flaked", "--candidates", "10", "-k", "8")
    assert len(unfiltered) == 8 and not {h["session_id"] for h in unfiltered} & {"p0", "p1", "p2"}


def test_role_user_returns_only_user_passages(crowd: Path) -> None:
    got = hits(crowd, "deploy cache", "--role", "user", "-k", "20")
    assert len(got) == 3 and {h["role"] for h in got} == {"user"}
    got = hits(crowd, "deploy cache", "--role", "assistant", "-k", "20")
    assert len(got) == 20 and {h["role"] for h in got} == {"assistant"}


def test_until_excludes_later_sessions(crowd: Path) -> None:
    got = hits(crowd, "deploy cache", "--until", "2026-02-01", "-k", "30")
    assert got and all(h["ts"] < "2026-02-01" for h in got)
    assert not {h["session_id"] for h in got} & {"p0", "p1", "p2"}
    # A bare date includes its whole day.
    got = hits(crowd, "deploy cache lock", "--role", "user", "--until", "2026-03-02")
    assert sorted(h["session_id"] for h in got) == ["p0", "p1"]


def test_several_harnesses_and_claude_code_as_claude(crowd: Path) -> None:
    both = hits(crowd, "deploy cache merge key", "--harness", "claude_code", "--harness", "pi",
                "-k", "40")  # fmt: skip
    assert {h["harness"] for h in both} == {"claude_code", "pi"}
    comma = hits(crowd, "deploy cache merge key", "--harness", "pi,claude", "-k", "40")
    assert [h["id"] for h in comma] == [h["id"] for h in both]
    only = hits(crowd, "deploy cache merge key", "--harness", "claude_code", "-k", "40")
    assert {h["harness"] for h in only} == {"claude_code"}


def test_query_lines_take_the_same_filters(crowd: Path) -> None:
    line = {"query": "deploy cache", "id": "q", "role": "user", "harness": ["pi", "codex"]}
    r = run_cli("funes-query", "--memory", crowd, input=json.dumps(line) + "\n")
    assert r.returncode == 0, r.stderr
    got = jsonl(r.stdout)
    assert len(got) == 3 and {(h["role"], h["harness"]) for h in got} == {("user", "pi")}


def test_filter_values_are_checked_and_explained() -> None:
    f = validate.filters({"harness": "claude_code, pi", "role": ["user", "assistant,user"]})
    assert f == Filters(harness="claude,pi", role="user,assistant")
    assert f.where() == "harness IN ('claude_code', 'pi') AND role IN ('user', 'assistant')"
    assert Filters(role="user").where() == "role = 'user'"
    with pytest.raises(UsageError, match=r"^--role must be turn roles such as user"):
        validate.filters({"role": "user; drop table"})
    with pytest.raises(UsageError, match=r"^'harness' must be an agent funes reads"):
        validate.filters({"harness": "claude,vim"}, style="mcp")
    r = run_cli("funes", "recall", "x", "--role", "us er")
    assert r.returncode == 2 and r.stderr.decode().startswith("funes: --role must be turn roles")
