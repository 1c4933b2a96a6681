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
    assert re.match(rf"\r?(\x1b\[K)?[{FRAMES}]", first), first[:80]
    steps = re.findall(rf"[{FRAMES}] ([^…\r\n]+)…", term)
    assert "opening the memory (2 files to look at)" in steps, steps
    assert any(s.startswith("loading the embedding model (") for s in steps), steps
    # Bars: funes' estimate only, never tqdm's `elapsed<remaining` or its rate.
    assert "files [" in term and "chunks [" in term
    assert not re.search(r"\d\d:\d\d<\d\d:\d\d|\d+\.\d+(?:it|pass|chunk)/s", term), term[-800:]
    # The budget's question (with its estimate) is taken off the screen once answered.
    asked = term.index("Finish it now? [Y/n]")
    assert "\x1b[1A\x1b[2K" in term[asked:]


def test_a_sweeps_bar_counts_the_files_of_each_read(private_home: Path) -> None:
    """A sweep reads the pending files three times (their text, then tool calls, then tool
    results). Its bar counted "passes" over all three at once — `text: 0/6 passes` for two
    sessions — a unit a new user cannot map to anything; it counts the files of each read."""
    write_claude(private_home, "sess-files", 9)
    write_codex(private_home, "cdx-files", 6)
    status, out, term = run_on_a_sized_terminal(["index", "--no-embed"], [], {})
    assert status == 0, term
    assert out.strip().startswith("indexed sessions=2 skipped=0 chunks="), out
    for read in ("text (1 of 3)", "tool calls (2 of 3)", "tool results (3 of 3)"):
        assert re.search(rf"{re.escape(read)}: [012]/2 files \[", term), (read, term[-600:])
    assert "pass" not in term, term[-600:]


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


def run_on_a_terminal(code: str, env: dict[str, str], type_in: bytes = b"") -> str:
    """Python ``code`` run with stdin, stdout and stderr on a new 100-column terminal, with
    ``type_in`` typed ahead; what the terminal showed."""
    p, master = start_on_a_terminal([sys.executable, "-c", code], env)
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    if type_in:
        os.write(master, type_in)
    term = read_terminal(master, timeout=60).decode("utf-8", "replace")
    os.close(master)
    assert p.wait(timeout=60) == 0, term
    return term


@pytest.mark.parametrize("plain", [{"NO_COLOR": "1"}, {"TERM": "dumb"}])
def test_no_escape_byte_reaches_a_terminal_under_no_color_or_a_dumb_terminal(
    tmp_path: Path, plain: dict[str, str]
) -> None:
    """Under NO_COLOR the spinner of recall and get wrote no escape byte, but index's step
    lines still cleared with erase-line (ESC [K), the budget's question was erased with cursor
    moves, and a dumb terminal (an editor's shell buffer) got colour: each shows as text there."""
    code = (
        "import time\n"
        "from funes.cli._tty import IndexProgress, confirm, spinner, tty_style\n"
        "p = IndexProgress()\n"
        "p.status('opening the memory (2 files to look at)')\n"
        "time.sleep(0.6)\n"
        "p.update('embedding', 128, 300, 128, force=True)\n"
        "p.clear()\n"
        "assert confirm('more to index (~3 min left, rough). Finish it now? [Y/n]', erase=True)\n"
        "with spinner('searching'):\n"
        "    time.sleep(0.6)\n"
        "print(tty_style().accent('a hit'))\n"
    )
    term = run_on_a_terminal(code, {"HOME": str(tmp_path), "COLUMNS": "", **plain}, b"y\n")
    assert "opening the memory (2 files to look at)…" in term, repr(term)
    assert "searching…" in term and "embedding: 128/300" in term and "a hit" in term, repr(term)
    assert "\x1b" not in term, repr(term)


@pytest.mark.parametrize("plain", [{"NO_COLOR": "1"}, {}])
def test_a_spinner_fits_the_terminal_again_after_it_narrows(
    tmp_path: Path, plain: dict[str, str]
) -> None:
    """The spinner padded each frame with spaces to the widest one drawn so far: on a terminal
    narrowed from 100 to 40 columns under it, every frame was cut to 39 columns and then padded
    back to 70, so each one wrapped and left a row behind. A frame now covers only what the
    one before left, never past the terminal's width — for recall's spinner and index's step
    lines alike."""
    code = (
        "import os, struct, sys, termios, fcntl, time\n"
        "from funes.cli._tty import IndexProgress, spinner\n"
        "def narrow():\n"
        "    time.sleep(0.7)\n"
        "    fcntl.ioctl(2, termios.TIOCSWINSZ, struct.pack('HHHH', 30, 40, 0, 0))\n"
        "    sys.stderr.write('\\r#NARROW#')\n"
        "    time.sleep(0.7)\n"
        f"label = '{'searching the memory for the passages that answer it, all of it'}'\n"
        "with spinner(label):\n"
        "    narrow()\n"
        "fcntl.ioctl(2, termios.TIOCSWINSZ, struct.pack('HHHH', 30, 100, 0, 0))\n"
        "sys.stderr.write('\\r#WIDE#')\n"
        "p = IndexProgress()\n"
        "p.status(label)\n"
        "narrow()\n"
        "p.clear()\n"
    )
    term = run_on_a_terminal(code, {"HOME": str(tmp_path), "COLUMNS": "", **plain})
    runs = re.split("#NARROW#|#WIDE#", term)
    assert len(runs) == 4, repr(term)
    for before, after in (runs[:2], runs[2:]):
        wide = [f for f in before.replace("\x1b[K", "").split("\r") if f[:1] in FRAMES]
        assert any(len(f) > 60 for f in wide), repr(before)  # drawn whole at 100 columns
        # (the first frame after the narrowing may have been measured before it)
        frames = after.replace("\x1b[K", "").split("\r")[2:]
        assert any(f[:1] in FRAMES for f in frames), repr(after)
        assert all(len(f) < 40 for f in frames), [f for f in frames if len(f) >= 40]
