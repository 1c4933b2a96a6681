"""Roo Code tasks: ``<host>/User/globalStorage/rooveterinaryinc.roo-cline/tasks/<taskId>/
api_conversation_history.json``, for each VS Code host on Linux and macOS.

Roo Code is a fork of Cline and keeps the same whole-file task history, read by Cline's parser
(see ``funes.sources.cline``: turn ids by content, stable across rewrites) under harness
``roo``; the task's workdir is in ``history_item.json`` beside it (``workspace``).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from funes.sources import Source
from funes.sources.cline import EXTENSIONS, claims_for, parse_task, task_dirs


def locate(home: Path) -> list[Path]:
    return task_dirs(home, EXTENSIONS["roo"])


SOURCE = Source(
    name="roo",
    harness="roo",
    roots=(
        ".config/Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks",
        "Library/Application Support/Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks",
    ),
    aliases=("roo-code", "roo_code", "roo-cline"),
    patterns=(),
    claims=claims_for("roo"),
    parse_path=partial(parse_task, harness="roo"),
    locate=locate,
)
