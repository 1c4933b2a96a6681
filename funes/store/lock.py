"""One writer per memory: an advisory `flock` on `<memory>/store.lock`.

LanceDB `merge_insert` from two processes silently duplicates rows (measured), so
every write — appends, vector backfill, deletes, compaction, index builds — happens under this
lock. The lock lives inside the memory directory so two memories (`--memory A`, `--memory B`)
never block each other; the file is created if missing and never truncated or removed (removing
a lock file another process holds would let a third one in). Readers take no lock.

Non-interactive writers fail at once; interactive ones (stdin is a TTY) retry a few times with a
notice on stderr. The kernel drops the lock when the process dies, so `kill -9` never leaves a
stale lock behind.

A vector backfill (`funes index --backfill`, or the one behind an index run) holds
:class:`BehindLock` (`<memory>/backfill.lock`, its pid in `backfill.pid`) for its whole life and
the writer lock only while it stores a batch of vectors (it embeds without it); while one runs,
any other writer waits for the gap between two commits (up to :data:`YIELD_WAIT` seconds)
instead of failing, so hooks and sweeps keep working while it fills vectors in.
"""

from __future__ import annotations

import fcntl
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from funes.errors import FunesError
from funes.store.private import private_dir

LOCK_NAME = "store.lock"
RETRIES = 3
RETRY_SECONDS = 5.0
BEHIND_LOCK = "backfill.lock"
BEHIND_PID = "backfill.pid"
YIELD_WAIT = 60.0  # a writer waits this long for a gap between a running backfill's batches
_POLL = 0.1

BUSY = "another funes memory operation is in progress; retry in a moment"


class LockBusy(FunesError):
    """Another process holds the memory's writer lock."""


class WriterLock:
    """An exclusive, non-blocking `flock`; use as a context manager or acquire/release."""

    def __init__(self, memory: Path) -> None:
        self.path = memory / LOCK_NAME
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def try_acquire(self) -> bool:
        if self._fd is not None:
            return True
        private_dir(self.path.parent)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def acquire(
        self,
        interactive: bool | None = None,
        retries: int = RETRIES,
        wait: float = RETRY_SECONDS,
        notice: Callable[[str], None] | None = None,
    ) -> WriterLock:
        """Take the lock or raise :class:`LockBusy`.

        ``interactive`` (default: stdin is a TTY) retries ``retries`` times, ``wait`` seconds
        apart, telling the user on stderr; otherwise the first failure is final.
        """
        if self.try_acquire():
            return self
        if behind_pid(self.path.parent) is not None:
            # A backfill behind lets go between batches: wait for the gap (counted in sleeps,
            # not clock reads, so a test's frozen clock cannot make it spin).
            for _ in range(int(YIELD_WAIT / _POLL)):
                time.sleep(_POLL)
                if self.try_acquire():
                    return self
        if interactive is None:
            interactive = _stdin_is_tty()
        if interactive:
            say = notice or (lambda m: print(f"funes: {m}", file=sys.stderr))
            for i in range(1, retries + 1):
                say(
                    "another funes memory operation is in progress; "
                    f"retrying in {wait:g}s… ({i}/{retries})"
                )
                time.sleep(wait)
                if self.try_acquire():
                    return self
        raise LockBusy(BUSY)

    def release(self) -> None:
        if self._fd is not None:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            finally:
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> WriterLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


class BehindLock:
    """Held for the whole life of a vector backfill running behind an index run, so that only
    one runs per memory; its pid is in `backfill.pid` while the lock is held.

    The process that starts the backfill takes the lock first and hands its descriptor down
    (:meth:`handed_down`): an `flock` belongs to the open file, so the lock is held from before
    the backfill starts to its end, and a second start in between finds it taken."""

    def __init__(self, memory: Path) -> None:
        self.path = memory / BEHIND_LOCK
        self.pid_file = memory / BEHIND_PID
        self.fd: int | None = None

    def try_acquire(self, tries: int = 10) -> bool:
        """Take the lock; a few short retries ride out a `funes status` probing it."""
        private_dir(self.path.parent)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        for i in range(tries):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if i + 1 < tries:
                    time.sleep(_POLL)
                continue
            self.fd = fd
            return True
        os.close(fd)
        return False

    def handed_down(self, fd: int) -> bool:
        """Adopt the locked descriptor the starting process passed down (flock on a file this
        process already holds succeeds at once); False when ``fd`` is not that lock."""
        try:
            if os.path.samestat(os.fstat(fd), os.stat(self.path)):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                os.set_inheritable(fd, False)
                self.fd = fd
                return True
        except OSError:
            pass
        return False

    def write_pid(self, pid: int) -> None:
        tmp = self.pid_file.with_name(f".{BEHIND_PID}.{os.getpid()}")
        tmp.write_text(f"{pid}\n")
        os.replace(tmp, self.pid_file)

    def let_go(self) -> None:
        """Close this process's descriptor, leaving the lock to the process it was handed to."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def release(self) -> None:
        if self.fd is not None:
            try:
                self.pid_file.unlink(missing_ok=True)
                fcntl.flock(self.fd, fcntl.LOCK_UN)
            finally:
                os.close(self.fd)
                self.fd = None


def behind_pid(memory: Path) -> int | None:
    """The pid of the backfill running behind an index run on ``memory``, or None. Probes the
    lock with a shared, non-blocking `flock` (dropped at once): a stale pid file left by a
    killed backfill names no running one."""
    path = memory / BEHIND_LOCK
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        held = True
    else:
        held = False
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
    if not held:
        return None
    try:
        return int((memory / BEHIND_PID).read_text().strip())
    except (OSError, ValueError):
        return 0  # running, its pid not yet written


def _stdin_is_tty() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (ValueError, OSError):
        return False
