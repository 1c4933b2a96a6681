"""Read-only SQLite for the sources that read an agent's live database (OpenCode, Cursor).

The agent's database is never created, never written and never left with new files beside it:

- a missing path is refused before SQLite sees it (a writable open would create it);
- a database is opened ``mode=ro``; one in WAL mode whose ``-wal`` / ``-shm`` files are absent
  (no writer has it open) is opened ``immutable=1`` instead, because even a read-only reader
  creates those two files otherwise;
- ``immutable=True`` (a large database the agent rewrites under us, Cursor's ``state.vscdb``)
  always opens it immutable: no locks, no side files; a page changed mid-read shows up as an
  error on this run, and the next run reads it again.

Any failure to open is one FunesError naming the file: locked, damaged, not a database.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from urllib.parse import quote

from funes.errors import FunesError
from funes.sources.facets import display_path

_WAL = 2  # the file-format version bytes (18, 19) of a database in WAL mode


def _in_wal_mode_without_side_files(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            head = f.read(20)
    except OSError:
        return False
    if len(head) < 20 or head[18] != _WAL:
        return False
    side = [path.with_name(path.name + s) for s in ("-wal", "-shm")]
    return not all(p.exists() for p in side)


def connect_readonly(path: Path, what: str, immutable: bool = False) -> sqlite3.Connection:
    """A read-only connection to an existing SQLite database (see the module docstring)."""
    name = display_path(path)
    if not path.is_file():
        raise FunesError(f"{name}: no such file (not created)")
    flags = "immutable=1" if immutable or _in_wal_mode_without_side_files(path) else "mode=ro"
    uri = f"file:{quote(str(path.resolve()))}?{flags}"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=2, check_same_thread=False)
        # Text that is not valid UTF-8 is read with U+FFFD, not fatal to the database.
        conn.text_factory = lambda b: b.decode("utf-8", "replace")
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
    except sqlite3.Error as e:
        raise FunesError(f"{name}: cannot open the {what} read-only ({e})") from None
    return conn


def columns(conn: sqlite3.Connection, table: str) -> set[str]:
    """The column names of ``table`` (empty when there is no such table)."""
    return {r[0] for r in conn.execute("SELECT name FROM pragma_table_info(?)", (table,))}
