"""On a terminal, `funes index` shows what it does from its first second (a line naming the
step — starting, finding the sessions, opening the memory, loading the model — before any bar),
and one time estimate at a time: its bars carry funes' own `~N left`, not tqdm's, and the
budget's question, once answered, leaves the screen to the bar."""

from __future__ import annotations

import fcntl
import os
import re
import struct
import sys
import termios
from pathlib import Path

import pytest
from conftest import answer_on_a_terminal, read_terminal, start_on_a_terminal
from test_index import write_claude, write_codex

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def run_on_a_sized_terminal(
    args: list[str], answers: list[bytes], env: dict[str, str], timeout: float = 300
) -> tuple[int, str, str]:
    """On a 100×30 terminal: a new one has no size, and a bar of no width draws nothing."""
    return answer_on_a_terminal(args, answers, env, timeout, size=(30, 100))


@pytest.mark.slow
def test_a_terminal_index_shows_its_steps_at_once_and_one_estimate(private_home: Path) -> None:
    write_claude(private_home, "sess-bar", 40)
    write_codex(private_home, "cdx-bar", 30)
    # a model cache of its own, as on a first run: a model the suite's earlier tests derived
    # loads before the spinner draws its step
    env = {"FUNES_INDEX_BUDGET": "0", "FUNES_CACHE_DIR": str(private_home / "model-cache")}
    status, out, term = run_on_a_sized_terminal(["index"], [b"y"], env)
    assert status == 0, term
    assert out.strip().startswith("indexed sessions=2 skipped=0 chunks=")
    # The first thing on the terminal is a step line, not a bar minutes later.
    first = term.lstrip("\n")
    assert first.startswith("\r\x1b[K") or first[:1] in FRAMES, first[:80]
    steps = re.findall(rf"[{FRAMES}] ([^…\r\n]+)…", term)
    assert "opening the memory (2 files to look at)" in steps, steps
    assert any(s.startswith("loading the embedding model (") for s in steps), steps
    # Bars: funes' estimate only, never tqdm's `elapsed<remaining` or its rate.
    assert "passes [" in term and "chunks [" in term
    assert not re.search(r"\d\d:\d\d<\d\d:\d\d|\d+\.\d+(?:it|pass|chunk)/s", term), term[-800:]
    # The budget's question (with its estimate) is taken off the screen once answered.
    asked = term.index("Finish it now? [Y/n]")
    assert "\x1b[1A\x1b[2K" in term[asked:]


def test_a_terminal_that_reports_no_size_still_shows_the_bar(tmp_path: Path) -> None:
    """A new pty reports 0×0 (as some `docker exec -t` and CI wrappers do): tqdm's own sizing
    read 0 rows as no room for a bar, so the step lines showed but the bars never did."""
    code = (
        "from funes.cli._tty import IndexProgress\n"
        "p = IndexProgress()\n"
        "p.update('embedding', 128, 300, 128, force=True)\n"
        "p.clear()\n"
    )
    env = {"HOME": str(tmp_path), "COLUMNS": ""}
    p, master = start_on_a_terminal([sys.executable, "-c", code], env)
    term = read_terminal(master, timeout=60).decode("utf-8", "replace")
    os.close(master)
    assert p.wait(timeout=60) == 0
    assert "embedding: 128/300 chunks [" in term, repr(term)


def test_a_step_line_longer_than_a_narrow_terminal_is_cut_to_fit(tmp_path: Path) -> None:
    """On a 40-column terminal a step line of 51 characters wrapped, so each frame's `\\r`
    went back to the start of its second row and every frame left a row behind: the line
    is cut to the terminal's width (with `…`), for index's steps and every other spinner."""
    code = (
        "import time\n"
        "from funes.cli._tty import IndexProgress, spinner\n"
        "p = IndexProgress()\n"
        "p.status('loading the embedding model (2,140 chunks to embed)')\n"
        "time.sleep(0.8)\n"
        "p.clear()\n"
        "with spinner('searching the memory for the passages that answer it'):\n"
        "    time.sleep(0.8)\n"
    )
    env = {"HOME": str(tmp_path), "COLUMNS": ""}
    p, master = start_on_a_terminal([sys.executable, "-c", code], env)
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 20, 40, 0, 0))
    term = read_terminal(master, timeout=60).decode("utf-8", "replace")
    os.close(master)
    assert p.wait(timeout=60) == 0
    frames = [f.replace("\x1b[K", "") for f in term.split("\r")]
    shown = [f for f in frames if f and f[0] in FRAMES]
    assert any("loading the embedding" in f for f in shown), repr(term)
    assert any("searching the memory" in f for f in shown), repr(term)
    assert all(len(f) < 40 for f in frames), [f for f in frames if len(f) >= 40]
    assert all(f.endswith("…") for f in shown), shown
