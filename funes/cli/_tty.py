"""What the commands show a person at a terminal, and nothing when nobody is watching.

- :func:`spinner` — a line on stderr while a call that may take more than 0.3 s runs;
- :func:`progress` — one progress bar (tqdm) for index, funes-embed, scrub and optimize;
- :func:`confirm` — the one yes/no question, with its default;
- :func:`tty_style` — the width and colour of human output, or None when output is piped;
- :class:`Line` — one line redrawn in place, frame by frame (every spinner's).

Each is silent (and asks nothing) unless the stream it writes to is a terminal, so a hook, a
pipe or a test sees exactly what it saw before; and none writes an escape byte (colour,
erase-line, cursor moves) under NO_COLOR or TERM=dumb (:func:`plain`).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from funes.cli._args import term_cols

SPINNER_DELAY = 0.3  # seconds before the spinner shows: a fast answer never flickers
_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream is not None and stream.isatty())
    except (ValueError, OSError):  # closed or detached
        return False


def plain() -> bool:
    """Whether the terminal is to get no escape sequence — no colour, no erase-line, no cursor
    move: ``NO_COLOR`` set (https://no-color.org), or ``TERM=dumb`` (an editor's shell buffer,
    which would show each one as text)."""
    return bool(os.environ.get("NO_COLOR")) or os.environ.get("TERM") == "dumb"


class Line:
    """One line of the terminal ``out`` redrawn in place, a frame at a time: each frame goes
    back to the line's start (``\\r``) and covers what the one before left.

    A frame is cut to the terminal's width as it is at that frame: a line that wraps leaves a
    row behind at each redraw, as ``\\r`` goes back to the start of its last row only. It covers
    the frame before with erase-line, or under :func:`plain` with spaces — as many as that
    frame had, never past the terminal's width: a frame drawn before the terminal narrowed
    must not make the next one wrap."""

    def __init__(self, out: Any) -> None:
        self.out = out
        self.plain = plain()
        self.shown = -1  # the columns the last frame drawn took; -1 before the first

    def draw(self, text: str) -> None:
        cols = term_cols(self.out)
        line = _cut(text, cols)
        if self.plain:
            self.out.write("\r" + line.ljust(min(self.shown, cols - 1)))
        else:
            self.out.write("\r\x1b[K" + line)
        self.out.flush()
        self.shown = len(line)

    def erase(self) -> None:
        """Take the last frame off the line (nothing when none was drawn)."""
        if self.shown < 0:
            return
        if self.plain:
            self.out.write("\r" + " " * min(self.shown, term_cols(self.out) - 1) + "\r")
        else:
            self.out.write("\r\x1b[K")
        self.out.flush()
        self.shown = -1


def _spin(out: Any, label: str, stop: threading.Event) -> None:
    """``⠋ label…`` on ``out`` from :data:`SPINNER_DELAY` on until ``stop`` is set, then
    nothing: a step that ends at once never flickers."""
    if stop.wait(SPINNER_DELAY):
        return
    line = Line(out)
    i = 0
    while not stop.is_set():
        line.draw(f"{_FRAMES[i % len(_FRAMES)]} {label}…")
        i += 1
        stop.wait(0.1)
    line.erase()


@contextlib.contextmanager
def spinner(label: str, stream: IO[str] | None = None) -> Iterator[None]:
    """Show ``⠋ label…`` on stderr after :data:`SPINNER_DELAY` until the block ends."""
    out = stream if stream is not None else sys.stderr
    if not _isatty(out):
        yield
        return
    done = threading.Event()
    t = threading.Thread(target=_spin, args=(out, label, done), name="funes-spinner", daemon=True)
    t.start()
    try:
        yield
    finally:
        done.set()
        t.join()


def _cut(line: str, cols: int) -> str:
    """``line`` cut (ending in `…`) to ``cols`` columns less one (see :class:`Line`)."""
    return line if len(line) < cols else line[: max(cols - 2, 1)] + "…"


def progress(
    total: int | None,
    desc: str,
    unit: str = "chunk",
    stream: Any = None,
    bar_format: str | None = None,
) -> Any:
    """A tqdm bar on stderr when it is a terminal; a bar that draws nothing otherwise.

    Use it as tqdm: ``bar.update(n)``, ``bar.set_description(…)``, ``bar.close()``.
    """
    # lazy: tqdm stays off fast commands' start-up
    from tqdm import tqdm

    out = stream if stream is not None else sys.stderr
    # A terminal that reports no size (a new pty, some `docker exec -t` and CI wrappers) gets
    # no bar at all from tqdm's own sizing (0 rows reads as no room for one): give it ours.
    cols, rows = _size(out)
    sized = cols > 0 and rows > 0
    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        unit_scale=False,
        file=out,
        disable=not _isatty(out),
        leave=False,
        dynamic_ncols=sized,
        ncols=None if sized else term_width(out),
        nrows=None if sized else 24,
        mininterval=0.2,
        bar_format=bar_format,
    )


def _size(stream: Any) -> tuple[int, int]:
    """The (columns, rows) of the terminal ``stream`` writes to; 0 where it reports none."""
    try:
        size = os.get_terminal_size(stream.fileno())
    except (AttributeError, ValueError, OSError):
        return 0, 0
    return size.columns, size.lines


def confirm(question: str, default: bool | None = None, erase: bool = False) -> bool:
    """Ask a yes/no ``question`` on stderr and read the answer from stdin.

    The default is ``default``, else what the question ends with (``[Y/n]`` yes, ``[y/N]``
    no), else yes; the ``[Y/n]`` marker is added when the question has none. An empty answer
    takes the default; ``y``/``yes`` is yes, anything else no. Without a terminal on stdin,
    or at end of input (Ctrl-D), the answer is no: nothing is ever agreed to unattended.
    ``erase`` takes the question off the screen once answered.
    """
    q = question.rstrip()
    if default is None:
        default = not q.endswith("[y/N]")
    if not q.endswith(("[Y/n]", "[y/N]")):
        q += " [Y/n]" if default else " [y/N]"
    if not _isatty(sys.stdin):
        return False
    sys.stderr.write(q + " ")
    sys.stderr.flush()
    line = sys.stdin.readline()
    if not line:
        sys.stderr.write("\n")
        return False
    answer = line.strip().lower()
    if erase and _isatty(sys.stderr) and not plain():
        # The question and the echoed answer leave the screen: the bar that follows carries the
        # run's one time estimate, not a second one above it. (Under NO_COLOR or TERM=dumb they
        # stay: going back up a row takes an escape.)
        rows = -(-(len(q) + 1 + len(line.rstrip("\n"))) // max(term_cols(sys.stderr), 1))
        sys.stderr.write("\x1b[1A\x1b[2K" * max(rows, 1) + "\r")
        sys.stderr.flush()
    return default if not answer else answer in ("y", "yes")


@dataclass(frozen=True)
class Style:
    """How to draw human output: the terminal's width and whether to use colour."""

    width: int
    color: bool

    def paint(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color and text else text

    def bold(self, text: str) -> str:
        return self.paint(text, "1")

    def dim(self, text: str) -> str:
        return self.paint(text, "2")

    def accent(self, text: str) -> str:
        return self.paint(text, "36")

    def warn(self, text: str) -> str:
        return self.paint(text, "33")


def tty_style(out: Any = None) -> Style | None:
    """A Style when a person reads ``out`` (stdin and ``out`` are terminals), else None.

    Width: the terminal's (``$COLUMNS`` wins), clamped to 40–120. Colour unless :func:`plain`.
    """
    out = out if out is not None else sys.stdout
    if not (_isatty(sys.stdin) and _isatty(out)):
        return None
    return Style(width=term_width(), color=not plain())


def term_width(stream: Any = None) -> int:
    """:func:`~funes.cli._args.term_cols`, clamped to 40–120: the width human output is laid
    out to."""
    return max(40, min(120, term_cols(stream)))


class IndexProgress:
    """`funes index`'s progress (funes.ingest.report.Progress) on a terminal, from the first
    second: a spinner line naming the step while there is nothing to count yet (finding the
    sessions, opening the memory, loading the model), then a bar per phase. The bar carries the
    run's one time estimate — average time per file read (or chunk) so far × what is left, the
    sweep's later reads included, as the prompts compute theirs — and not tqdm's own. A sweep's
    bar counts the files of one read (`text (1 of 3): 8/13 files`), as a user counts them."""

    FORMAT = "{desc}: {n_fmt}/{total_fmt} {unit} [{elapsed}{postfix}]"

    def __init__(self, stream: Any = None) -> None:
        self._out = stream if stream is not None else sys.stderr
        self._tty = _isatty(self._out)
        self._bar: Any = None
        self._phase = ""
        self._since = (0.0, 0)  # when the bar started, and its count then
        self._stop: threading.Event | None = None
        self._spinner: threading.Thread | None = None

    def status(self, text: str) -> None:
        if not self._tty:
            return
        self.clear()
        self._stop = threading.Event()
        self._spinner = threading.Thread(
            target=_spin, args=(self._out, text, self._stop), name="funes-index-status", daemon=True
        )
        self._spinner.start()

    def _end_status(self) -> None:
        if self._stop is not None and self._spinner is not None:
            self._stop.set()
            self._spinner.join()
        self._stop = self._spinner = None

    def update(
        self,
        phase: str,
        done: int,
        total: int,
        chunks: int,
        force: bool = False,
        unit: str = "",
        after: int = 0,
    ) -> None:
        if not self._tty:
            return
        self._end_status()
        if self._bar is None or phase != self._phase:
            self.clear()
            self._phase = phase
            self._since = (time.monotonic(), done)
            unit = unit or ("chunks" if phase == "embedding" else "files")
            self._bar = progress(total, phase, unit=unit, bar_format=self.FORMAT)
        self._bar.total = total
        self._bar.n = done
        parts = [] if phase == "embedding" else [f"{chunks:,} chunks"]
        t0, n0 = self._since
        if done > n0 and total - done + after > 0:
            # lazy: funes.ingest.report stays off fast commands' start-up
            from funes.ingest.report import fmt_eta

            rate = (time.monotonic() - t0) / (done - n0)
            parts.append(f"~{fmt_eta(rate * (total - done + after))} left")
        self._bar.set_postfix_str(", ".join(parts), refresh=False)
        self._bar.refresh() if force else self._bar.update(0)

    def clear(self) -> None:
        self._end_status()
        if self._bar is not None:
            self._bar.close()
            self._bar = None


@contextlib.contextmanager
def steps(total: int, desc: str) -> Iterator[Any]:
    """A bar over named phases: call the yielded ``step(label)`` as each phase starts."""
    bar = progress(total, desc, unit="step")
    started = [0]

    def step(label: str) -> None:
        if started[0] and bar.n < total:  # the previous phase is done
            bar.update(1)
        started[0] += 1
        bar.set_description_str(f"{desc}: {label}")

    try:
        yield step
    finally:
        bar.close()
