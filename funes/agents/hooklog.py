"""The hook log, ``$FUNES_HOME/logs/hooks.log``: what the detached index workers did.

Lines are ``<ISO time> <agent> <event> <session>: <message>``, where the message starts with
``start``, ``ok``, ``FAILED (exit N)``, ``busy``, ``ABORT`` or a note; indented lines that follow a
FAILED line are the tail of funes' output. The hook script rotates the file past 1 MB into
``hooks.log.1``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from funes.store import hookslog

_LINE = re.compile(r"^(?P<ts>\S+) (?P<agent>\S+) (?P<event>\S+) (?P<session>\S+): (?P<msg>.*)$")
ENDINGS = ("ok", "FAILED", "ABORT")


def log_path() -> Path:
    return hookslog.hooks_log()


@dataclass
class Entry:
    ts: str
    agent: str
    event: str
    session: str
    message: str
    detail: list[str]

    @property
    def when(self) -> datetime | None:
        try:
            return datetime.fromisoformat(self.ts)
        except ValueError:
            return None

    @property
    def outcome(self) -> str:
        return self.message.split(" ", 1)[0].rstrip(":")


def read(path: Path | None = None) -> list[Entry]:
    """Entries of the rotated file then the current one, oldest first."""
    path = path or log_path()
    out: list[Entry] = []
    for p in (path.with_name(path.name + ".1"), path):
        try:
            text = p.read_text("utf-8", errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith("    ") and out:
                out[-1].detail.append(line[4:])
                continue
            m = _LINE.match(line)
            if m:
                out.append(Entry(m["ts"], m["agent"], m["event"], m["session"], m["msg"], []))
    return out


def last_run(agent: str, entries: list[Entry]) -> tuple[Entry | None, Entry | None]:
    """(last start, last ending — ok, FAILED or ABORT) of ``agent``'s hook."""
    start = end = None
    for e in entries:
        if e.agent != agent:
            continue
        if e.outcome == "start":
            start = e
        elif e.outcome in ENDINGS:
            end = e
    return start, end


PUSH_ENDINGS = ("ok", "WARN", "FAILED", "ABORT", "skipped")


def last_push(agent: str, entries: list[Entry]) -> Entry | None:
    """The last ending of ``agent``'s push hook (``push: ok | WARN — secrets held back … |
    FAILED (exit N) | ABORT … | skipped …``)."""
    last = None
    for e in entries:
        if e.agent == agent and e.message.startswith("push: "):
            word = e.message[len("push: ") :].split(" ", 1)[0]
            if word in PUSH_ENDINGS:
                last = e
    return last
