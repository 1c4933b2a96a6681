"""Every porcelain verb's `--help` ends with an example a user can copy: a `funes VERB …` line
whose arguments the verb itself accepts."""

from __future__ import annotations

import importlib
import re
import shlex

import pytest
from conftest import run_cli

from funes.cli.main import SUMMARIES

PORCELAIN = sorted(v for v, s in SUMMARIES.items() if not s.startswith("plumbing:"))


def test_the_porcelain_list_is_the_dispatchers() -> None:
    assert {"index", "recall", "get", "status", "add", "push", "ask"} <= set(PORCELAIN)


@pytest.mark.parametrize("verb", PORCELAIN)
def test_help_shows_an_example_the_verb_accepts(verb: str, tmp_path: object) -> None:
    r = run_cli("funes", verb, "--help", env={"HOME": str(tmp_path), "FUNES_HOME": str(tmp_path)})
    r.check_returncode()
    out = r.stdout.decode()
    _, sep, tail = out.partition("\nexample")
    assert sep, f"`funes {verb} --help` shows no example:\n{out}"
    lines = re.findall(rf"^ +(?:\$ )?funes {verb}\b(.*)$", tail, re.M)
    assert lines, tail
    args = shlex.split(lines[0].split("  #", 1)[0])
    parser = importlib.import_module(f"funes.cli.{verb}").build_parser()
    parser.parse_args(args)  # exits 2 with a `funes:` line if the example were wrong


def _help(*argv: str) -> str:
    r = run_cli(argv[0], *argv[1:], "--help", env={"COLUMNS": "200"})
    r.check_returncode()
    out = r.stdout.decode()
    return " ".join(out.split())


@pytest.mark.parametrize("argv", [("funes", "recall"), ("funes-query",), ("funes", "sessions")])
def test_the_memory_option_says_a_hub_memory_and_several_are_taken(argv: tuple[str, ...]) -> None:
    """The README's `funes recall … --memory local,ana/funes-memory` is in each search verb's
    help, not only `a memory directory`."""
    text = _help(*argv)
    memory = text.split("--memory M ", 1)[1]
    assert "owner/name on the Hub" in memory.split(" --", 1)[0]
    assert "several" in memory.split(" --", 1)[0]


def test_parse_all_names_where_it_looks_for_every_agent_or_for_none() -> None:
    """`funes-parse --all` sweeps every registered agent: its help names all their locations
    or points to the list, never four of fourteen."""
    from funes.sources import registry

    text = _help("funes-parse")
    named = set(re.findall(r"~/[^\s,()]+", text))
    roots = {f"~/{r}" for src in registry() for r in src.roots}
    assert named in (set(), roots), named
    assert named or "docs/sources.md" in text


@pytest.mark.parametrize("verb", PORCELAIN)
def test_help_prose_fits_an_80_column_terminal(verb: str, tmp_path: object) -> None:
    """The description, usage and options wrap at the terminal's width, and so does the prose
    after an example; only the example's own indented lines (a command, sample output) may be
    longer, as they are copied whole."""
    env = {"HOME": str(tmp_path), "FUNES_HOME": str(tmp_path), "COLUMNS": "80"}
    r = run_cli("funes", verb, "--help", env=env)
    r.check_returncode()
    out = r.stdout.decode()
    head, _, tail = out.partition("\nexample")
    prose = head.splitlines() + [x for x in tail.splitlines() if not x.startswith(" ")]
    wide = [x for x in prose if len(x) > 80]
    assert not wide, f"`funes {verb} --help` at 80 columns:\n" + "\n".join(wide)
