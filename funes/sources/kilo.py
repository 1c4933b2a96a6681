"""Kilo Code: the OpenCode-based Kilo (CLI and, since its 2026 rebuild, the VS Code extension)
and the older extension's whole-file task histories.

Two layouts, both read under harness ``kilo``:

- **Kilo** (current): an OpenCode fork that keeps OpenCode's records in its own data directory,
  ``${XDG_DATA_HOME:-~/.local/share}/kilo`` (Linux and macOS alike): the SQLite database
  ``kilo.db`` (``kilo-<channel>.db`` for a preview channel; ``$KILO_DB`` names another, absolute
  or relative to that directory), and before the database (up to v1.0.25) the JSON files under
  ``storage/{session,message,part}/``. Read by OpenCode's reader (see ``funes.sources.opencode``:
  read-only, one session at a time, never created or written). Session id: Kilo's ``ses_…``.
- **Kilo Code (legacy)**: ``<host>/User/globalStorage/kilocode.kilo-code/tasks/<taskId>/
  api_conversation_history.json`` for each VS Code host on Linux and macOS, Cline's task format
  by way of Roo Code (see ``funes.sources.cline``: turn ids by content, stable across
  rewrites). The extension stopped writing these when it moved onto Kilo's database (public
  beta March 2026); homes keep the older tasks.

A plain ``opencode.db`` is OpenCode's, wherever it is: Kilo renamed its data directory too.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from funes.records import Turn
from funes.sources import FileStats, Source, env_path
from funes.sources.cline import EXTENSIONS, HISTORY, claims_for, parse_task, task_dirs
from funes.sources.opencode import NOT_CONTENT, reader, storage_session_of

_legacy = claims_for("kilo")
_database = reader("kilo")


def data_dir(home: Path) -> Path:
    return (env_path("XDG_DATA_HOME") or home / ".local/share") / "kilo"


def locate(home: Path) -> list[Path]:
    data = data_dir(home)
    out = [*task_dirs(home, EXTENSIONS["kilo"])]
    named = os.environ.get("KILO_DB", "").strip()
    if named and named != ":memory:":
        db = Path(os.path.expanduser(named))
        out.append(db if db.is_absolute() else data / db)
    out.append(data / "kilo.db")
    out += sorted(data.glob("kilo-*.db"))
    out.append(data / "storage" / "session")
    return out


def claims(f: Path) -> bool:
    """A legacy task history, Kilo's database (``kilo.db`` anywhere, a channel's
    ``kilo-<channel>.db`` in a ``kilo`` directory), or a session file of Kilo's JSON storage."""
    if f.name == HISTORY:
        return _legacy(f)
    if f.name == "kilo.db" or (
        f.suffix == ".db" and f.name.startswith("kilo-") and f.parent.name == "kilo"
    ):
        return True
    return storage_session_of(f) == "kilo"


def parse_path(path: Path, stats: FileStats) -> Iterator[Turn]:
    if path.name == HISTORY:
        return parse_task(path, stats, SOURCE.harness)
    return _database(path, stats)


SOURCE = Source(
    name="kilo",
    harness="kilo",
    roots=(
        ".local/share/kilo/kilo.db",
        ".local/share/kilo/storage/session",
        ".config/Code/User/globalStorage/kilocode.kilo-code/tasks",
        "Library/Application Support/Code/User/globalStorage/kilocode.kilo-code/tasks",
    ),
    aliases=("kilo-code", "kilo_code", "kilocode"),
    patterns=(),
    claims=claims,
    parse_path=parse_path,
    locate=locate,
    not_content=NOT_CONTENT,
)
