"""Vectors filled in behind an unattended index run: one detached, low-priority backfill per
memory.

An index sweep without a terminal (a cron job, a hook) stops at its time budget; the chunks it
stored are searchable by words, and their vectors are left to a backfill. :func:`start` starts
that backfill as a detached process under `nice` — unless one already runs for the memory
(:class:`funes.store.lock.BehindLock`) — and :func:`run` is what that process does: it embeds
a few batches at a time under the writer lock and lets go of the lock between them, so hooks
and other writers get in; each run is logged to `$FUNES_HOME/logs/hooks.log`, beside the hook
runs (`<time> funes backfill -: start … | ok (…) | FAILED (…)`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from funes.errors import FunesError
from funes.ingest.backfill import load_embed
from funes.store.lock import BehindLock, LockBusy, behind_pid
from funes.store.paths import funes_home
from funes.store.private import private_dir
from funes.store.state import mark_all_embedded

if TYPE_CHECKING:
    from funes.store.memory import Memory

NICE = 10
SLICE_SECONDS = 5.0  # embed this long (at least one batch) before letting go of the writer lock
LOCK_FD_ENV = "FUNES_BACKFILL_LOCK_FD"  # the locked descriptor :func:`start` hands down
GAP_SECONDS = 0.5  # then leave the lock free this long for a waiting writer
BUSY_GIVE_UP = 1800.0  # seconds of never getting the writer lock before giving up


def log_path() -> Path:
    """Where the hooks log, and so where a backfill behind logs."""
    return funes_home() / "logs" / "hooks.log"


def log(message: str) -> None:
    """One hooks.log line: `<ISO time> funes backfill -: <message>`."""
    path = log_path()
    try:
        private_dir(path.parent)
        stamp = datetime.now().astimezone().strftime("%Y-%m-%dT%H:%M:%S%z")
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"{stamp} funes backfill -: {message}\n")
    except OSError:
        pass  # a log that cannot be written never stops the backfill


def start(memory: Path, command: Sequence[str]) -> tuple[int, bool]:
    """Start ``command`` (a `funes index --backfill --behind` run for ``memory``) detached and
    niced, unless a backfill already runs behind for it. Returns (pid, started): the new
    process, or the one already running (its pid 0 when it has not been written yet)."""
    lock = BehindLock(memory)
    if not lock.try_acquire():
        return behind_pid(memory) or 0, False
    assert lock.fd is not None
    try:
        nice = shutil.which("nice")
        argv = [nice, "-n", str(NICE), *command] if nice else list(command)
        p = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # out of the caller's process group: no hangup reaches it
            pass_fds=(lock.fd,),
            env={**os.environ, LOCK_FD_ENV: str(lock.fd)},
        )
        lock.write_pid(p.pid)  # `nice` execs the command: the same pid
    except OSError:
        lock.release()
        raise
    lock.let_go()  # the lock now lives in the child's copy of the descriptor
    return p.pid, True


def run(open_with: Callable[[], Memory]) -> int:
    """The detached backfill: embed every chunk still without a vector, a slice at a time, and
    log it. Returns the number embedded (0 when another backfill already runs)."""
    mem = open_with()
    lock = BehindLock(mem.path)
    fd = os.environ.pop(LOCK_FD_ENV, "")
    if not (fd.isdigit() and lock.handed_down(int(fd))) and not lock.try_acquire():
        return 0  # another one runs behind this memory: it does the work
    lock.write_pid(os.getpid())
    done = 0
    try:
        waiting = mem.count_without_vectors()
        log(f"start embedding {waiting:,} chunks behind the index run in {mem.label}")
        embed = load_embed()  # before the writer lock: deriving the model takes a while
        busy_since: float | None = None
        while True:
            try:
                with mem.writer(interactive=False) as w:
                    busy_since = None
                    n = w.backfill(embed, deadline=time.monotonic() + SLICE_SECONDS)
                    waiting = mem.count_without_vectors()
                    if not waiting:
                        mark_all_embedded(mem.path)
            except LockBusy:
                now = time.monotonic()
                busy_since = busy_since or now
                if now - busy_since > BUSY_GIVE_UP:
                    raise FunesError(
                        f"the memory stayed busy for {BUSY_GIVE_UP / 60:.0f} min"
                    ) from None
                time.sleep(1.0)
                continue
            done += n
            if not waiting or not n:
                break
            time.sleep(GAP_SECONDS)
        log(f"ok (embedded={done} waiting={waiting})")
    except Exception as e:  # logged, never raised: nobody is there to read it
        log(f"FAILED ({type(e).__name__}: {e}) after embedding {done:,}; "
            "`funes index --backfill` goes on from there")  # fmt: skip
    finally:
        lock.release()
    return done
