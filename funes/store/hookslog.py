"""The hook log's file, ``$FUNES_HOME/logs/hooks.log``, and the one line a detached worker
(a backfill or an ANN build behind an index run) appends to it. The hook scripts write the
agents' lines; `funes.agents.hooklog` reads them all back for `funes doctor`."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from funes.store.paths import funes_home
from funes.store.private import private_dir


def hooks_log() -> Path:
    return funes_home() / "logs" / "hooks.log"


def append(worker: str, message: str) -> None:
    """One line, `<ISO time> funes <worker> -: <message>`, in one write. A log that cannot be
    written never stops the work it reports on."""
    path = hooks_log()
    try:
        private_dir(path.parent)
        stamp = datetime.now().astimezone().strftime("%Y-%m-%dT%H:%M:%S%z")
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"{stamp} funes {worker} -: {message}\n")
    except OSError:
        pass
