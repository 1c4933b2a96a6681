"""The `funes` dispatcher: built-in verbs, git-style fallback, help and suggestions."""

from __future__ import annotations

import os
from pathlib import Path

from conftest import REPO, run_cli

import funes


def test_help_lists_the_verbs_that_exist() -> None:
    r = run_cli("funes", "--help")
    assert r.returncode == 0
    out = r.stdout.decode()
    assert out.startswith("usage: funes")
    assert "  parse" in out and "  chunk" in out


def test_version() -> None:
    r = run_cli("funes", "--version")
    assert r.stdout.decode().strip() == f"funes {funes.__version__}"


def test_verbs_run_the_plumbing_in_process() -> None:
    samples = REPO / "contrib" / "samples"
    assert run_cli("funes", "parse", samples).stdout == run_cli("funes-parse", samples).stdout


def test_help_verb_shows_a_verbs_own_help() -> None:
    r = run_cli("funes", "help", "chunk")
    assert r.returncode == 0 and b"--no-thinking" in r.stdout


def test_a_mistyped_verb_gets_a_suggestion() -> None:
    r = run_cli("funes", "prase")
    assert r.returncode == 2
    assert (
        r.stderr.decode().strip()
        == "funes: 'prase' is not a funes verb. Did you mean `funes parse`?"
    )


def test_an_unknown_verb_runs_funes_dash_verb_from_path(tmp_path: Path) -> None:
    tool = tmp_path / "funes-hello"
    tool.write_text('#!/bin/sh\necho "hello from plugin: $*"\n')
    tool.chmod(0o755)
    env = {"PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}"}
    r = run_cli("funes", "hello", "a", "b", env=env)
    assert r.returncode == 0 and r.stdout == b"hello from plugin: a b\n"


def test_help_imports_nothing_heavy() -> None:
    code = (
        "import sys; from funes.cli.main import main; main(['--help']); "
        "heavy = {'lancedb', 'onnxruntime', 'numpy', 'pyarrow', 'tokenizers', 'bm25s'} & set(sys.modules); "
        "print('HEAVY', sorted(heavy))"
    )
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "HEAVY []" in r.stdout
