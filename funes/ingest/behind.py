"""Vectors filled in behind an unattended index run: one detached, low-priority backfill per
memory.

An index sweep without a terminal (a cron job, a hook) stops at its time budget; the chunks it
stored are searchable by words, and their vectors are left to a backfill. :func:`start` starts
that backfill as a detached process under `nice` — unless one already runs for the memory
(:class:`funes.store.lock.BehindLock`) — and :func:`run` is what that process does: it embeds
without the writer lock and takes it only to store each batch of vectors
(:func:`funes.ingest.backfill.embed_unlocked`), so hooks and other writers get in between
commits; each run is logged to `$FUNES_HOME/logs/hooks.log`, beside the hook
runs (`<time> funes backfill -: start … | ok (…) | FAILED (…)`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from funes.errors import FunesError
from funes.ingest import ann
from funes.ingest.backfill import embed_unlocked, load_embed
from funes.memories import open_for_write
from funes.store import hookslog
from funes.store.lock import BehindLock, LockBusy, behind_pid

if TYPE_CHECKING:
    from funes.store.memory import Memory, MemoryWriter

NICE = 10
LOCK_FD_ENV = "FUNES_BACKFILL_LOCK_FD"  # the locked descriptor :func:`start` hands down
BUSY_GIVE_UP = 1800.0  # seconds of never getting the writer lock before giving up


def log(message: str) -> None:
    hookslog.append("backfill", message)


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


def run(memory: str | None = None) -> int:
    """The detached backfill of the local memory ``memory`` names: embed every chunk still
    without a vector, holding the writer lock only to store each batch
    (:func:`funes.ingest.backfill.embed_unlocked`), and log it. Returns the number embedded (0
    when another backfill already runs)."""
    mem = open_for_write(memory)
    lock = BehindLock(mem.path)
    fd = os.environ.pop(LOCK_FD_ENV, "")
    if not (fd.isdigit() and lock.handed_down(int(fd))) and not lock.try_acquire():
        return 0  # another one runs behind this memory: it does the work
    lock.write_pid(os.getpid())
    done = 0

    def progress(n: int) -> None:
        nonlocal done
        done += n

    try:
        waiting = mem.count_without_vectors()
        log(f"start embedding {waiting:,} chunks behind the index run in {mem.label}")
        embed = load_embed()  # before any writer lock: deriving the model takes a while
        _, waiting = embed_unlocked(
            mem, embed, lambda: _patient_writer(mem), on_progress=progress, finished=lock.release
        )
        log(f"ok (embedded={done} waiting={waiting})")
        if done:  # the vector index, built behind these vectors once it pays
            ann.maybe_start(mem, vectors=mem.count() - waiting)
    except Exception as e:  # logged, never raised: nobody is there to read it
        log(f"FAILED ({type(e).__name__}: {e}) after embedding {done:,}; "
            "`funes index --backfill` goes on from there")  # fmt: skip
    finally:
        lock.release()
    return done


@contextlib.contextmanager
def _patient_writer(mem: Memory) -> Iterator[MemoryWriter]:
    """The writer lock, waited for as long as :data:`BUSY_GIVE_UP` (a long index run you
    started may hold it): nobody is waiting on the backfill behind."""
    busy_since: float | None = None
    with contextlib.ExitStack() as stack:
        while True:
            try:
                w = stack.enter_context(mem.writer(interactive=False))
                break
            except LockBusy:
                now = time.monotonic()
                busy_since = busy_since or now
                if now - busy_since > BUSY_GIVE_UP:
                    raise FunesError(
                        f"the memory stayed busy for {BUSY_GIVE_UP / 60:.0f} min"
                    ) from None
                time.sleep(1.0)
        yield w
