"""The vector index built behind index runs: nobody has to run `funes optimize` for it.

At the end of an index run, and of a backfill behind one, :func:`maybe_start` asks the store
whether the memory's ANN index is due (:func:`funes.store.ann.due`: enough vectors for a first
one, or enough stored since the last build) and, if so, starts `funes optimize --behind` as a
detached, niced process — unless one already runs for the memory (it holds
:class:`funes.store.ann.AnnLock`). That process (:func:`run`) builds the index without the
writer lock, so hooks, index runs and recalls go on beside it, and logs to
`$FUNES_HOME/logs/hooks.log` (`<time> funes ann -: start … | ok (…) | FAILED (…)`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from funes.store import ann, hookslog

if TYPE_CHECKING:
    from funes.store.memory import Memory

NICE = 15  # below the backfill behind (10): vectors first, then their index


def log(message: str) -> None:
    hookslog.append("ann", message)


def command(memory: Path) -> list[str]:
    """`funes optimize --behind --memory MEMORY`, as this Python runs it."""
    return [sys.executable, "-m", "funes.cli.optimize", "--behind", "--memory", str(memory)]


def maybe_start(mem: Memory, vectors: int | None = None) -> int | None:
    """Start the detached build if the index is due and none runs; returns its pid, or None.
    Costs a look at the table's manifest (and a count of vectors unless ``vectors`` is
    given); never raises: an index run must not fail for its index."""
    try:
        mem.reload()
        if ann.due(ann.state(mem, vectors)) is None or ann.building(mem.path):
            return None
        nice = shutil.which("nice")
        argv = command(mem.path)
        p = subprocess.Popen(
            [nice, "-n", str(NICE), *argv] if nice else argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # out of the caller's process group: no hangup reaches it
        )
        return p.pid
    except Exception as e:  # the index run succeeded; its index waits for the next one
        log(f"not started for {mem.path} ({type(e).__name__}: {e})")
        return None


def run(memory: Path) -> str | None:
    """The detached build: :func:`funes.store.ann.build`, logged. Returns what it did."""
    t0 = time.monotonic()
    try:
        what = ann.build(memory, on_start=lambda what, n: log(
            f"start: {what} of the vector index over {n:,} vectors in {memory}"
        ))  # fmt: skip
    except Exception as e:  # logged, never raised: nobody is there to read it
        log(f"FAILED ({type(e).__name__}: {e}); the next index run tries again")
        return None
    if what is not None:
        log(f"ok ({what} in {time.monotonic() - t0:.1f} s, pid {os.getpid()})")
    return what
