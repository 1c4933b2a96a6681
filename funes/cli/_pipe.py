"""What every plumbing command shares: reading JSONL records, reporting bad lines, exiting.

Contract (docs/records.md): a line that is not valid JSON, or misses a required field, is reported
on stderr with its line number and skipped; exit 0 when everything was processed, 1 when any
line was skipped; ``--strict`` makes the first bad line fatal.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import IO, Any

from funes.errors import FunesError, UsageError, no_space
from funes.records import Record, RecordError, loads
from funes.store.private import private_umask

MAX_REPORTED = 10  # per-line complaints before we only count
BOM = "\ufeff".encode()


class BadLines:
    """Counts skipped input lines and reports the first few on stderr."""

    def __init__(self, prog: str, strict: bool = False) -> None:
        self.prog = prog
        self.strict = strict
        self.count = 0

    def skip(self, where: str, lineno: int, why: str) -> None:
        self.count += 1
        if self.strict:
            raise FunesError(f"{where}:{lineno}: {why} (--strict)")
        if self.count <= MAX_REPORTED:
            warn(self.prog, f"{where}:{lineno}: {why} — skipped")
        elif self.count == MAX_REPORTED + 1:
            warn(self.prog, "more bad lines follow; only counting them from here")

    def summary(self) -> None:
        if self.count:
            s = "" if self.count == 1 else "s"
            warn(self.prog, f"{self.count} bad line{s} skipped")


RawRecord = tuple[bytes, Record | dict[str, Any]]


def read_records(stream: IO[bytes], bad: BadLines, where: str = "<stdin>") -> Iterator[RawRecord]:
    """Yield (raw line, record) for each usable line; raw keeps the original bytes."""
    for _, raw, rec in read_numbered(stream, bad, where):
        yield raw, rec


def read_numbered(
    stream: IO[bytes], bad: BadLines, where: str = "<stdin>"
) -> Iterator[tuple[int, bytes, Record | dict[str, Any]]]:
    """Yield (line number, raw line, record) for each usable line, for a command that reports
    a line it cannot use for its own reasons (``bad.skip(where, lineno, why)``)."""
    for lineno, raw in enumerate(stream, 1):
        if lineno == 1 and raw.startswith(BOM):  # a byte-order mark is not JSON: read past it
            raw = raw[len(BOM) :]
        if not raw.strip():
            continue
        try:
            rec = loads(raw)
        except RecordError as e:
            bad.skip(where, lineno, str(e))
            continue
        yield lineno, raw, rec


# A stage reads and writes its pipes in big pieces: with the 64 KiB a pipe holds by default and
# the 8 KiB Python reads at a time, a reader slower than its writer wakes it (and is preempted by
# it) for every few KiB — on eval-dev's `funes-parse | funes-chunk`, ~1,800 context switches
# instead of ~150, and 2-3 % more CPU.
PIPE_BYTES = 1 << 20


def open_inputs(stack: ExitStack, files: list[str]) -> list[tuple[IO[bytes], str]]:
    """The named files (``-`` or none: stdin) opened for reading, with their display names."""
    inputs: list[tuple[IO[bytes], str]] = []
    for f in files or ["-"]:
        if f == "-":
            inputs.append((_stdin(stack), "<stdin>"))
            continue
        try:
            inputs.append((stack.enter_context(open(f, "rb")), f))  # noqa: SIM115
        except OSError as e:
            raise UsageError(f"cannot read {f}: {e.strerror}") from None
    return inputs


def _stdin(stack: ExitStack) -> IO[bytes]:
    """Standard input, read PIPE_BYTES at a time when it is the process's own (a caller that
    swapped ``sys.stdin`` for a stream of its own reads that); file descriptor 0 stays open."""
    stdin = sys.stdin
    if stdin is sys.__stdin__ and stdin is not None:
        try:
            fd = stdin.fileno()
            return stack.enter_context(open(fd, "rb", buffering=PIPE_BYTES, closefd=False))
        except (OSError, ValueError):  # closed, or no file descriptor behind it
            pass
    return sys.stdin.buffer


def widen_pipe(stream: IO[Any]) -> None:
    """Let the pipe behind ``stream`` (standard output, usually) hold PIPE_BYTES (Linux; where
    the system refuses or has no such call, or ``stream`` is no pipe, nothing changes)."""
    try:
        import fcntl  # lazy: not on every system (Windows)

        fd = stream.fileno()
        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (ImportError, AttributeError, OSError, ValueError):
        pass


def warn(prog: str, msg: str) -> None:
    print(f"{prog}: {msg}", file=sys.stderr)


# What to do about a file funes could not use, after the reason.
_NEXT = {
    errno.EROFS: " — this command writes there: make it writable, or point FUNES_HOME (or "
    "--memory) at a directory you can write",
    errno.EACCES: " — check its owner and permissions (and its folders')",
    errno.EPERM: " — check its owner and permissions (and its folders')",
}


def run(main: Callable[[], int], prog: str = "funes") -> int:
    """Run a command body: user errors become one stderr line, a closed pipe is quiet.

    Everything the command creates is private to the user (funes.store.private)."""
    private_umask()
    try:
        return main()
    except FunesError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`| head`); say nothing, like other unix filters.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except OSError:
            pass
        return 141
    except Exception as e:  # never a traceback for the user; FUNES_DEBUG=1 shows it
        if os.environ.get("FUNES_DEBUG"):
            raise
        if no_space(e):  # outside a memory's writer (which says what it kept)
            print(f"{prog}: no space left on the disk — free some space and run it again",
                  file=sys.stderr)  # fmt: skip
            return 1
        if isinstance(e, OSError) and e.filename:
            # A file funes could not use: name it and say why (permission denied, symlink loop).
            # lazy: funes.sources stays off fast commands' start-up
            from funes.sources import display_path, os_reason

            name = display_path(os.fsdecode(e.filename))
            print(f"{prog}: {name}: {os_reason(e)}{_NEXT.get(e.errno or 0, '')}", file=sys.stderr)
            return 1
        first = (str(e).strip().splitlines() or [""])[0][:300]
        print(
            f"{prog}: unexpected {type(e).__name__}: {first} — if a memory is involved its "
            "files may be damaged or missing; FUNES_DEBUG=1 shows the traceback",
            file=sys.stderr,
        )
        return 1
