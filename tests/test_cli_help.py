"""Every porcelain verb's `--help` ends with an example a user can copy: a `funes VERB …` line
whose arguments the verb itself accepts."""

from __future__ import annotations

import importlib
import os
import re
import shlex
import subprocess

import pytest
from conftest import BIN

from funes.cli.main import SUMMARIES

PORCELAIN = sorted(v for v, s in SUMMARIES.items() if not s.startswith("plumbing:"))


def test_the_porcelain_list_is_the_dispatchers() -> None:
    assert {"index", "recall", "get", "status", "add", "push", "ask"} <= set(PORCELAIN)


@pytest.mark.parametrize("verb", PORCELAIN)
def test_help_shows_an_example_the_verb_accepts(verb: str, tmp_path: object) -> None:
    out = subprocess.run(
        [str(BIN / "funes"), verb, "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "HOME": str(tmp_path), "FUNES_HOME": str(tmp_path)},
        timeout=60,
        check=True,
    ).stdout
    _, sep, tail = out.partition("\nexample")
    assert sep, f"`funes {verb} --help` shows no example:\n{out}"
    lines = re.findall(rf"^ +(?:\$ )?funes {verb}\b(.*)$", tail, re.M)
    assert lines, tail
    args = shlex.split(lines[0].split("  #", 1)[0])
    parser = importlib.import_module(f"funes.cli.{verb}").build_parser()
    parser.parse_args(args)  # exits 2 with a `funes:` line if the example were wrong
