"""OpenClaw sessions: `${OPENCLAW_STATE_DIR:-~/.openclaw}/agents/<agentId>/sessions/<id>.jsonl`.

OpenClaw's agent runtime is pi's, and so is its transcript: the entries are read by the pi
source's parser (see ``funes.sources.pi``), stored under harness ``openclaw``.

Which files hold history:

- ``<sessionId>.jsonl``, the live transcript of a session;
- ``<sessionId>.jsonl.reset.<timestamp>``: when a session is reset (by the user, or by the
  gateway when it grows too long) its transcript is renamed to this archive and the session key
  gets a new session id. In real homes these archives hold most of the history, so they are
  read; each is a whole session with its own header id, which no live file repeats.

Not read: ``sessions.json`` (an index from session keys to ids, not a transcript);
``*.jsonl.deleted.<ts>`` (sessions the user deleted); ``*.bak`` backups and
``<id>.checkpoint.<uuid>.jsonl`` compaction checkpoints, copies of a transcript that is read
anyway; ``<id>.trajectory.jsonl`` (newer releases, with a ``<id>.trajectory-path.json``
pointer): the runtime's trace of each run of the session (``session.started``,
``context.compiled``, ``prompt.submitted``, ``model.completed``, ``trace.*``,
``session.ended`` events), whose prompts and replies the transcript beside it already holds.

Session id: the header's ``id`` (the uuid the transcript is named after).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from funes.sources import Source, env_path, pi


def claims(f: Path) -> bool:
    """A live transcript or a reset archive in an ``agents/<agentId>/sessions`` directory."""
    name = f.name
    parents = f.parents
    if ".checkpoint." in name or name.endswith(".trajectory.jsonl"):
        return False
    if len(parents) < 3 or f.parent.name != "sessions":
        return False
    if parents[2].name != "agents":
        return False
    return name.endswith(".jsonl") or ".jsonl.reset." in name


def locate(home: Path) -> list[Path]:
    state = env_path("OPENCLAW_STATE_DIR") or home / ".openclaw"
    return [state / "agents"]


SOURCE = Source(
    name="openclaw",
    harness="openclaw",
    roots=(".openclaw/agents",),
    patterns=(),
    claims=claims,
    parse_records=partial(pi.parse_pi_records, harness="openclaw"),
    locate=locate,
    sniff_order=60,  # never by sniffing: pi's sniff reads the same records
    not_content=pi.NOT_CONTENT,
)
