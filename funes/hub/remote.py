"""Reading a remote memory: its files at the head commit of `main`, in the HF hub cache.

Caching choice (stated in docs/hub.md): the head commit a memory was last read at is kept in
``$FUNES_HOME/hub/<sanitized-uri>.json`` with the time it was resolved. Within
``FUNES_HUB_TTL`` seconds (default 60) of that, a read opens the cached snapshot of that commit
and makes **no HTTP request**. After it, one request (repo info at `main`, with file metadata)
resolves the head; if it is unchanged nothing else is fetched, otherwise only the files the cache
lacks are downloaded — memory files are immutable once written, so a blob cached for an older
commit is linked, not fetched again. When the Hub is unreachable, the last cached commit is read
(with a note saying so); without one, :func:`locate` says so and ``funes.memories`` reads the
local memory instead.

Only what a reader needs is fetched: the data and deletion files, the index files, the newest
table manifest and the lexical index — not Lance's transaction log or older manifests.
"""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from funes.errors import FunesError
from funes.hub.spec import MemorySpec, State, sanitize, state_message
from funes.store.paths import funes_home
from funes.store.private import private_dir

if TYPE_CHECKING:
    from funes.hub.transport import RemoteInfo

DEFAULT_TTL = 60.0


def ttl() -> float:
    try:
        return float(os.environ.get("FUNES_HUB_TTL", DEFAULT_TTL))
    except ValueError:
        return DEFAULT_TTL


def hub_home() -> Path:
    return funes_home() / "hub"


def private_roots() -> list[Path]:
    """Where funes keeps private files: `$FUNES_HOME` and the HF cache folder of each remote
    memory it has read (named in the state files under :func:`hub_home`)."""
    # lazy: funes.hub.transport stays off fast commands' start-up
    from funes.hub.transport import cache_repo_dir

    out = [funes_home()]
    try:
        states = sorted(hub_home().glob("*.json"))
    except OSError:
        states = []
    for p in states:
        try:
            repo = json.loads(p.read_text()).get("repo_id")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(repo, str) and repo:
            out.append(cache_repo_dir(repo))
    return out


def _state_path(spec: MemorySpec) -> Path:
    return hub_home() / f"{sanitize(spec.uri)}.json"


def load_state(spec: MemorySpec) -> dict[str, Any]:
    try:
        doc = json.loads(_state_path(spec).read_text())
        return doc if isinstance(doc, dict) else {}
    except (OSError, ValueError):
        return {}


def save_state(spec: MemorySpec, doc: dict[str, Any]) -> None:
    p = _state_path(spec)
    private_dir(p.parent)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    os.replace(tmp, p)


def forget_head(spec: MemorySpec) -> None:
    """Make the next read resolve the head again (after a push moved it)."""
    doc = load_state(spec)
    if doc:
        doc["checked"] = 0
        save_state(spec, doc)


def manifest_version(name: str) -> int:
    """A Lance manifest file name → its version (V2 names count down from 2^64 − 1)."""
    n = int(name.split(".", 1)[0])
    return (2**64 - 1) - n if n >= 2**63 else n


def read_files(info: RemoteInfo) -> dict[str, tuple[str, int]]:
    """The repo files a reader needs (repo paths → etag, size)."""
    rel = info.memory_files()
    versions = [
        p for p in rel if p.startswith("chunks.lance/_versions/") and p.endswith(".manifest")
    ]
    latest = max(versions, key=lambda p: manifest_version(p.rsplit("/", 1)[1]), default=None)
    keep = {}
    for p, v in rel.items():
        if (
            p.startswith(
                ("chunks.lance/data/", "chunks.lance/_deletions/", "chunks.lance/_indices/")
            )
            or p.startswith("lexical/")
            or p == latest
        ):
            keep[p] = v
    return {info.spec.path_in_repo(p): v for p, v in keep.items()}


def _complete(spec: MemorySpec, doc: dict[str, Any]) -> Path | None:
    # lazy: funes.hub.transport stays off fast commands' start-up
    from funes.hub.transport import snapshot_dir

    commit, files = doc.get("commit"), doc.get("files")
    if not commit or not isinstance(files, list):
        return None
    snap = snapshot_dir(spec.repo_id or "", commit)
    if all((snap / f).exists() for f in files):
        return snap
    return None


def materialize(info: RemoteInfo) -> Path:
    """The memory files of ``info``'s head commit in the HF cache; returns the memory dir."""
    # lazy: funes.hub.transport stays off fast commands' start-up
    from funes.hub.transport import download

    spec = info.spec
    assert info.sha is not None
    files = read_files(info)
    snap = download(spec, info.sha, files)
    save_state(spec, {"commit": info.sha, "checked": time.time(), "files": sorted(files),
                      "last_modified": info.last_modified,
                      "repo_id": spec.repo_id})  # fmt: skip
    return snap / spec.prefix if spec.prefix else snap


def locate(spec: MemorySpec) -> tuple[Path | None, str, State]:
    """Where to read ``spec`` from: (memory dir or None for "use the local memory", a note,
    the state). Raises FunesError for Missing / Unauthorized / Empty."""
    doc = load_state(spec)
    cached = _complete(spec, doc)
    if cached is not None and time.time() - float(doc.get("checked", 0)) < ttl():
        return _under(spec, cached), "", State.READY
    # lazy: funes.hub.transport stays off fast commands' start-up
    from funes.hub.transport import probe

    info = probe(spec)
    if info.state is State.OFFLINE:
        if cached is not None:
            when = datetime.fromtimestamp(float(doc.get("checked", 0)), UTC)
            return (
                _under(spec, cached),
                f"remote {spec.label} unreachable — recalling from its cached copy "
                f"(commit {doc['commit'][:8]}, checked {when:%Y-%m-%d %H:%M} UTC)\n",
                State.OFFLINE,
            )
        return None, state_message(spec, State.OFFLINE) + "\n", State.OFFLINE
    if info.state is not State.READY:
        raise FunesError(state_message(spec, info.state, info.detail))
    if cached is not None and doc.get("commit") == info.sha:
        doc["checked"] = time.time()
        save_state(spec, doc)
        return _under(spec, cached), "", State.READY
    return materialize(info), "", State.READY


def _under(spec: MemorySpec, snap: Path) -> Path:
    return snap / spec.prefix if spec.prefix else snap


# ---------------------------------------------------------------------------- identity


def _identity_path() -> Path:
    return hub_home() / "identity.json"


def remember_identity(name: str, orgs: list[str]) -> None:
    p = _identity_path()
    private_dir(p.parent)
    p.write_text(json.dumps({"name": name, "orgs": orgs}) + "\n")


def is_own(spec: MemorySpec) -> bool:
    """A remote is the user's own when its owner is the Hub user funes last pushed as.

    Org memories are shared with others, so their passages are not the user's own words.
    Unknown identity → not own (its passages get fenced)."""
    try:
        doc = json.loads(_identity_path().read_text())
    except (OSError, ValueError):
        return False
    return bool(spec.owner) and spec.owner == doc.get("name")
