"""Line-level JSONL reading shared by every JSONL format: bad lines counted, never fatal; and
opening a file only when it is a regular one (a FIFO would block its reader)."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from funes.errors import FunesError
from funes.records import NumberTooLong, TooDeep, check_value, load_json
from funes.sources.facets import display_path

if TYPE_CHECKING:
    from funes.sources.base import FileStats


def irregular(p: Path) -> str | None:
    """Why ``p`` (followed through symlinks) is no file to read — a named pipe, a socket, a
    device — or None (a regular file, a directory, or nothing there: those are told apart
    elsewhere). Opening a FIFO for reading blocks until a writer comes, so a reader must ask
    this before it opens, or sniffs, a file it found."""
    try:
        mode = os.stat(p).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "not a regular file: a named pipe"
    if stat.S_ISSOCK(mode):
        return "not a regular file: a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "not a regular file: a device"
    return "not a regular file"


def open_regular(path: Path) -> IO[bytes]:
    """``path`` opened for binary reading, refused (FunesError, before anything blocks) when it
    is not a regular file: the check is made on the opened descriptor, so a file swapped for a
    FIFO after it was listed cannot hang the run (and the writer lock it holds)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            why = irregular(path) or "not a regular file"
            raise FunesError(f"{display_path(path)}: cannot read ({why})")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def iter_json_lines(fp: IO[bytes], stats: FileStats) -> Iterator[dict[str, Any]]:
    """JSON objects of a JSONL stream; bad lines are counted in ``stats`` by reason, never fatal.

    Reasons: ``not_utf8``, ``malformed_json``, ``truncated`` (an unterminated last line that
    does not parse — a write caught mid-way), ``not_object``, ``too_deep`` (nested deeper than
    ``records.MAX_DEPTH`` levels), ``number_too_long`` (an integer of more than 4,300 digits).

    Lines read despite a defect are counted in ``stats.repaired``:

    - ``lone_surrogate``: a JSON-escaped lone UTF-16 surrogate (an emoji cut in half) was read
      as U+FFFD;
    - ``byte_order_mark``: the file starts with a UTF-8 byte-order mark (an editor on Windows
      saved it), which is not JSON; the first line is read without it;
    - ``concatenated_records``: a line holding several complete records back to back (a writer
      that appended to a file whose last line had lost its newline — seen in real pi sessions);
      each record is read.

    ``stats.lines`` is the number of the line a record came from while it is being consumed.
    """
    for lineno, raw in enumerate(fp, 1):
        stats.lines = lineno
        line = raw.strip()
        if lineno == 1 and line.startswith(BOM):
            line = line[len(BOM) :].strip()
            stats.repair(lineno, "byte_order_mark")
        if not line:
            continue
        bad = "malformed_json" if raw.endswith(b"\n") else "truncated"
        # A line can be tens of megabytes: hold no copy of it while the record is consumed.
        del raw
        try:
            rec, fixed = load_json(line)
        except UnicodeDecodeError:
            stats.skip(lineno, "not_utf8")
            continue
        except TooDeep:
            stats.skip(lineno, "too_deep")
            continue
        except NumberTooLong:
            stats.skip(lineno, "number_too_long")
            continue
        except json.JSONDecodeError as e:
            yield from _glued(line, e, bad, lineno, stats)
            continue
        del line
        if not isinstance(rec, dict):
            stats.skip(lineno, "not_object")
            continue
        if fixed:
            stats.repair(lineno, "lone_surrogate")
        stats.records_kept += 1
        yield rec


def _glued(
    line: bytes, e: json.JSONDecodeError, bad: str, lineno: int, stats: FileStats
) -> Iterator[dict[str, Any]]:
    """The records of a line that does not parse: several complete ones back to back
    (``concatenated_records``), each read; any other line is skipped as ``bad``."""
    glued = _concatenated(line.decode("utf-8")) if e.msg == "Extra data" else []
    if not glued:
        stats.skip(lineno, bad)
        return
    try:
        glued, fixed = check_value(glued, line)
    except TooDeep:
        stats.skip(lineno, "too_deep")
        return
    stats.repair(lineno, "concatenated_records")
    if fixed:
        stats.repair(lineno, "lone_surrogate")
    for part in glued:
        if part is None:  # a tail that does not parse: counted like any bad line
            stats.skip(lineno, bad)
        elif not isinstance(part, dict):
            stats.skip(lineno, "not_object")
        else:
            stats.records_kept += 1
            yield part


_DECODER = json.JSONDecoder()
BOM = "\ufeff".encode()


def _concatenated(text: str) -> list[Any]:
    """The JSON values of a line holding several back to back; [] if the first one is bad.

    A tail that does not parse (or nests past the recursion limit) ends the list as ``None``.
    """
    out: list[Any] = []
    pos, end = 0, len(text)
    while pos < end:
        try:
            value, pos = _DECODER.raw_decode(text, pos)
        except (ValueError, RecursionError):  # invalid JSON, or a number too long to convert
            if not out:
                return []
            out.append(None)
            break
        out.append(value)
        while pos < end and text[pos] in " \t\r":
            pos += 1
    return out if len(out) > 1 else []


def read_json_document(path: Path, stats: FileStats) -> Any:
    """The value of a whole-file JSON document (formats that rewrite one file on every change:
    Gemini CLI's older sessions, Cline's tasks, …). A file that does not parse is one error
    naming it (FunesError): the run goes on, and reads it again once it changes."""
    with open_regular(path) as fp:  # never blocks on a FIFO
        data = fp.read()
    name = display_path(path)
    if not data.strip():
        raise FunesError(f"{name}: empty file, no turns")
    try:
        value, fixed = load_json(data.removeprefix(BOM))
    except UnicodeDecodeError:
        raise FunesError(f"{name}: not UTF-8 text") from None
    except TooDeep:
        raise FunesError(f"{name}: JSON nested too deep to read") from None
    except NumberTooLong:
        raise FunesError(f"{name}: holds a number too long to read (over 4,300 digits)") from None
    except json.JSONDecodeError as e:
        raise FunesError(
            f"{name}: not valid JSON ({e.msg}, line {e.lineno}); a file caught mid-write is "
            "read again once it changes"
        ) from None
    if fixed:
        stats.repair(0, "lone_surrogate")
    return value
