"""One writer per memory: an advisory `flock` on `<memory>/store.lock`.

LanceDB `merge_insert` from two processes silently duplicates rows (measured), so
every write — appends, vector backfill, deletes, compaction, index builds — happens under this
lock. The lock lives inside the memory directory so two memories (`--memory A`, `--memory B`)
never block each other; the file is created if missing and never truncated or removed (removing
a lock file another process holds would let a third one in). Readers take no lock.

Non-interactive writers fail at once; interactive ones (stdin is a TTY) retry a few times with a
notice on stderr. The kernel drops the lock when the process dies, so `kill -9` never leaves a
stale lock behind.
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


def _stdin_is_tty() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (ValueError, OSError):
        return False
