"""Project memories: a Hub memory that ships only the sessions you reviewed.

A remote whose Lance schema metadata carries ``project`` (``owner/repo``, the repo identity of
the sessions it collects) is a **project memory**; every other remote is personal and gets every
local session. For a project memory, ``funes push`` sends only the sessions you *included* in its
curation file ``$FUNES_HOME/curation/<sanitized-uri>``::

    include <session> <chunks>   # <YYYY-MM-DD> <first prompt>
    exclude <session>   # <YYYY-MM-DD> <first prompt>

``<chunks>`` is the local chunk count when the session was reviewed: a session that has grown
since is *stale* and goes back to review (its rows stay here until then). A line without a count
never goes stale. Setting a decision drops every line naming that session and appends the new
one; other lines are kept verbatim. Decisions are per host; an exclude cannot take back chunks
already pushed.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from funes.errors import FunesError
from funes.hub.spec import MemorySpec, State, sanitize
from funes.store.paths import funes_home

if TYPE_CHECKING:
    from funes.hub.transport import RemoteInfo
    from funes.store.memory import Memory

PROJECT_KEY = "project"
# A block that opens like this is scaffolding the agent injected, not something the user typed.
SCAFFOLDING = (
    "<",
    "#",
    "Base directory for this skill",
    "This session is being continued from a previous conversation",
)


def curation_path(spec: MemorySpec) -> Path:
    return funes_home() / "curation" / sanitize(spec.uri)


# ---------------------------------------------------------------------------- decisions


@dataclass
class Decision:
    state: str  # "include" | "exclude"
    chunks: int | None = None  # watermark (include only); None never goes stale


@dataclass
class Curation:
    decisions: dict[str, Decision] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _parse_line(line: str) -> tuple[str, Decision] | None:
    words = line.split("#", 1)[0].split()
    if len(words) < 2 or words[0] not in ("include", "exclude"):
        return None
    if words[0] == "include" and len(words) >= 3 and words[2].isdigit():
        return words[1], Decision("include", int(words[2]))
    return words[1], Decision(words[0])


def load(spec: MemorySpec) -> Curation:
    """The decisions of the curation file (the last line naming a session wins)."""
    out = Curation()
    try:
        text = curation_path(spec).read_text("utf-8")
    except FileNotFoundError:
        return out
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parsed = _parse_line(line)
        if parsed is None:
            out.notes.append(f"{curation_path(spec)}:{n}: not a decision, skipped")
            continue
        out.decisions[parsed[0]] = parsed[1]
    return out


def decision_line(session: str, state: str, chunks: int | None, comment: str) -> str:
    head = f"include {session} {chunks}" if state == "include" else f"exclude {session}"
    return f"{head}   # {comment}" if comment else head


def record(spec: MemorySpec, lines: dict[str, str]) -> None:
    """Write decisions (session → its new line): lines naming those sessions go, the new lines
    are appended, everything else is kept verbatim. Atomic."""
    path = curation_path(spec)
    try:
        old = path.read_text("utf-8").splitlines()
    except FileNotFoundError:
        old = []
    kept = [line for line in old if not ((p := _parse_line(line)) is not None and p[0] in lines)]
    text = "\n".join([*kept, *lines.values()]) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".funes-tmp")
    tmp.write_text(text, "utf-8")
    os.replace(tmp, path)


# ---------------------------------------------------------------------------- local sessions


@dataclass
class Session:
    sid: str
    ids: list[str] = field(default_factory=list)
    repo: str = ""
    workdir: str = ""
    first_ts: str = ""
    source_path: str = ""

    @property
    def subagent(self) -> bool:
        return self.sid.startswith("agent-") or "/subagents/" in self.source_path

    @property
    def date(self) -> str:
        return self.first_ts[:10]

    def belongs(self, project: str) -> bool:
        return project in self.repo.split()


def sessions(local: Memory) -> dict[str, Session]:
    t = local.rows(columns=("id", "session_id", "repo", "workdir", "ts", "source_path"))
    out: dict[str, Session] = {}
    cols = [t.column(c).to_pylist() for c in ("id", "session_id", "repo", "workdir", "ts",
                                              "source_path")]  # fmt: skip
    for cid, sid, repo, workdir, ts, src in zip(*cols, strict=True):
        s = out.get(sid)
        if s is None:
            s = out[sid] = Session(sid, repo=repo or "", workdir=workdir or "",
                                   source_path=src or "")  # fmt: skip
        s.ids.append(cid)
        if ts and (not s.first_ts or str(ts) < s.first_ts):
            s.first_ts = str(ts)
        if repo and not s.repo:
            s.repo = repo
    return out


def prompts(local: Memory, sids: Iterable[str]) -> dict[str, list[str]]:
    """Each session's user text prompts in order, scaffolding removed (the review preview)."""
    # lazy: numpy stays off fast commands' start-up
    from funes.store.memory import sql_in

    sids = list(sids)
    if not sids:
        return {}
    where = f"role = 'user' AND block_type = 'text' AND {sql_in('session_id', sids)}"
    rows = local.rows(where=where, columns=("session_id", "seq", "block_idx", "split_idx",
                                            "text")).to_pylist()  # fmt: skip
    rows.sort(key=lambda r: (r["seq"] or 0, r["block_idx"] or 0, r["split_idx"] or 0))
    out: dict[str, list[str]] = {}
    for r in rows:
        text = (r["text"] or "").strip()
        if not text or (r["split_idx"] or 0) > 0 or text.startswith(SCAFFOLDING):
            continue
        out.setdefault(r["session_id"], []).append(text)
    return out


def comment(session: Session, first_prompt: str | None) -> str:
    prompt = re.sub(r"\s+", " ", first_prompt or "").strip()
    return f"{session.date} {prompt}".strip()[:200]


# ---------------------------------------------------------------------------- partition


@dataclass
class Selection:
    """What a project memory takes from this host."""

    project: str
    ship: list[str] = field(default_factory=list)  # ids of included, current sessions
    stale: list[str] = field(default_factory=list)  # included, grown since review
    undecided: dict[str, list[str]] = field(default_factory=dict)  # project sessions → ids
    included: int = 0
    excluded: int = 0

    def pending(self, have: set[str] | None) -> list[str]:
        """Sessions awaiting review: stale includes, and undecided project sessions with a
        chunk ``have`` (the remote's ids) lacks."""
        have = have or set()
        return self.stale + [
            s for s, ids in self.undecided.items() if any(i not in have for i in ids)
        ]


def select(project: str, local: dict[str, Session], cur: Curation) -> Selection:
    sel = Selection(project)
    for sid, s in local.items():
        if s.subagent:
            continue
        d = cur.decisions.get(sid)
        if d is None:
            if s.belongs(project):
                sel.undecided[sid] = s.ids
        elif d.state == "exclude":
            sel.excluded += 1
        elif d.chunks is not None and len(s.ids) > d.chunks:
            sel.stale.append(sid)
        else:
            sel.included += 1
            sel.ship += s.ids
    return sel


def selection_for(spec: MemorySpec, project: str | None, local: Memory) -> Selection | None:
    """The push selection for a project memory (None: personal, push everything)."""
    if not project:
        return None
    return select(project, sessions(local), load(spec))


# ---------------------------------------------------------------------------- project stamp


def project_of_dir(path: Path) -> str | None:
    # lazy: lancedb stays off fast commands' start-up
    import lancedb

    try:
        table = lancedb.connect(str(path)).open_table("chunks")
    except (FileNotFoundError, ValueError):
        return None
    md = table.schema.metadata or {}
    return md.get(PROJECT_KEY.encode(), b"").decode() or None


def remote_project(info: RemoteInfo) -> str | None:
    """The ``project`` stamped in a remote's schema metadata (None: personal, or no index)."""
    if info.state is not State.READY:
        return None
    # lazy: funes.hub.remote stays off fast commands' start-up
    from funes.hub.remote import materialize

    return project_of_dir(materialize(info))


def stamp(spec: MemorySpec, info: RemoteInfo, project: str, model: str | None) -> str:
    """Make an empty (or missing) remote the project memory of ``project``: one commit of an
    empty dataset whose schema metadata carries ``project``. Returns the commit id."""
    # lazy: lancedb, numpy and the Hub modules stay off fast commands' start-up
    import lancedb

    from funes.hub import transport
    from funes.hub.remote import forget_head
    from funes.hub.upload import check_writable, listing
    from funes.store.memory import schema

    if info.state is State.READY:
        raise FunesError(
            f"{spec.uri} already holds a personal memory; funes does not turn it into a project "
            "memory — choose a new dataset for the project"
        )
    check_writable(spec)
    if info.state is State.MISSING:
        transport.create_repo(spec)
    sch = schema(model)
    sch = sch.with_metadata({**(sch.metadata or {}), PROJECT_KEY.encode(): project.encode()})
    with tempfile.TemporaryDirectory(prefix="funes-curate-") as tmp:
        work = Path(tmp) / "memory"
        work.mkdir()
        lancedb.connect(str(work)).create_table("chunks", schema=sch)
        files: list[tuple[str, bytes | Path]] = [
            (spec.path_in_repo(rel), work / rel) for rel in sorted(listing(work))
        ]
        oid = transport.commit(
            spec, files, [], f"funes curate: project memory of {project}", parent=info.sha
        )
    forget_head(spec)
    return oid


def did_you_mean(name: str, local: dict[str, Session]) -> list[str]:
    seen: set[str] = set()
    for s in local.values():
        for ident in s.repo.split():
            if ident.endswith("/" + name):
                seen.add(ident)
    return sorted(seen)


def resolve(prefix: str, local: dict[str, Session]) -> str:
    """A session id, or a prefix of exactly one local session id."""
    if prefix in local:
        return prefix
    hits = [sid for sid in local if sid.startswith(prefix)]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise FunesError(f"no local session starts with {prefix!r}")
    raise FunesError(f"{prefix!r} names {len(hits)} sessions ({', '.join(sorted(hits)[:4])}…)")
