"""What a person at a terminal sees: recall drawn for reading (wrapped, coloured unless
NO_COLOR, `funes get` lines that run as printed), while piped output stays the agent format."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from conftest import BIN, read_terminal, run_cli, start_on_a_terminal

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def on_a_terminal(args: list[str], env: dict[str, str], timeout: float = 120) -> str:
    """`funes ARGS` with stdin, stdout and stderr on a pseudo-terminal; all it wrote."""
    p, master = start_on_a_terminal([str(BIN / "funes"), *args], env)
    seen = read_terminal(master, timeout)
    p.wait(timeout=timeout)
    os.close(master)
    return seen.decode("utf-8", "replace").replace("\r\n", "\n")


def test_recall_on_a_terminal_is_wrapped_coloured_and_its_get_line_runs(
    samples_memory: Path, private_home: Path
) -> None:
    home = Path(os.environ["FUNES_HOME"])
    shutil.copytree(samples_memory, home / "memory")  # the default memory
    env = {"COLUMNS": "60"}
    shown = on_a_terminal(["recall", "why a byte budget for the tile cache", "-k", "2"], env)
    assert "\x1b[1m1. " in shown  # a bold, numbered header
    plain = ANSI.sub("", shown)
    # Everything wraps to the terminal but the `funes get` command, which must run as printed.
    long = [ln for ln in plain.splitlines() if len(ln) > 60 and not ln.startswith("   funes get")]
    assert not long, plain
    gets = re.findall(r"^   funes get (\S+) (\S+)$", plain, re.MULTILINE)
    assert len(gets) == 2 and "--memory" not in plain  # the default memory goes unsaid
    r = run_cli("funes", "get", *gets[0])
    assert r.returncode == 0 and f"turn={gets[0][1]}" in r.stdout.decode()

    no_color = on_a_terminal(["recall", "tile cache", "-k", "1"], {**env, "NO_COLOR": "1"})
    assert "\x1b[" not in no_color and "1. " in no_color


def test_piped_recall_is_the_agent_format_with_the_memory_named(samples_memory: Path) -> None:
    r = run_cli("funes", "recall", "tile cache", "-k", "1", "--memory", samples_memory)
    out = r.stdout.decode()
    assert "\x1b[" not in out
    assert re.match(
        r"^\[\S+\] \S+ \S+/\S{1,8} \S+  score=\d\.\d{3}\n  → get \S+ \S+ --memory ", out
    )
    assert out.endswith("---\n")
