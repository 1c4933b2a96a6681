"""Kilo Code tasks: ``<host>/User/globalStorage/kilocode.kilo-code/tasks/<taskId>/
api_conversation_history.json``, for each VS Code host on Linux and macOS.

Kilo Code is a fork of Cline (by way of Roo Code) and keeps the same whole-file task history,
read by Cline's parser (see ``funes.sources.cline``: turn ids by content, stable across
rewrites) under harness ``kilo``.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from funes.sources import Source
from funes.sources.cline import EXTENSIONS, claims_for, parse_task, task_dirs


def locate(home: Path) -> list[Path]:
    return task_dirs(home, EXTENSIONS["kilo"])


SOURCE = Source(
    name="kilo",
    harness="kilo",
    roots=(
        ".config/Code/User/globalStorage/kilocode.kilo-code/tasks",
        "Library/Application Support/Code/User/globalStorage/kilocode.kilo-code/tasks",
    ),
    aliases=("kilo-code", "kilo_code", "kilocode"),
    patterns=(),
    claims=claims_for("kilo"),
    parse_path=partial(parse_task, harness="kilo"),
    locate=locate,
)
