"""Memory specs: what `--memory`, the MCP `memory` argument and hooks name.

    local | (blank)              the default local memory ($FUNES_HOME/memory)
    ./dir, /abs/dir, ~/dir       a local memory directory
    owner/name[/prefix]          a Hub dataset (unless a local path of that name exists)
    hf://datasets/owner/name[/prefix]

We differ from the reference implementation in one place: a relative path that exists locally is read as that
directory, not as a Hub repo (`--memory team/kb` after `cd` into a checkout that holds it).
Several memories are named with commas: `local,owner/team`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from funes.errors import FunesError, UsageError
from funes.store.paths import memory_dir

_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]*"
_SHORT = re.compile(rf"^({_NAME})/({_NAME})((?:/[A-Za-z0-9._-]+)*)/?$")
_URI = re.compile(rf"^hf://datasets/({_NAME})/({_NAME})((?:/[A-Za-z0-9._-]+)*)/?$")


class State(Enum):
    """What a memory is right now."""

    READY = "ready"  # holds an index we can read
    EMPTY = "empty"  # exists (dir or repo) but holds no index yet
    MISSING = "missing"  # no such repo (or not visible to this token)
    UNAUTHORIZED = "unauthorized"  # no token, a rejected one, or one without access (401/403)
    OFFLINE = "offline"  # the Hub cannot be reached


@dataclass(frozen=True)
class MemorySpec:
    """One memory: a local directory, or a Hub dataset (+ optional prefix inside it)."""

    path: Path | None = None  # local
    repo_id: str | None = None  # remote: owner/name
    prefix: str = ""  # remote: folder inside the repo ("" = root)

    @property
    def remote(self) -> bool:
        return self.repo_id is not None

    @property
    def uri(self) -> str:
        if self.repo_id is None:
            return str(self.path)
        return f"hf://datasets/{self.repo_id}" + (f"/{self.prefix}" if self.prefix else "")

    @property
    def short(self) -> str:
        """`owner/name[/prefix]` — how a person names a remote (`--memory owner/name`)."""
        if self.repo_id is None:
            return str(self.path)
        return self.repo_id + (f"/{self.prefix}" if self.prefix else "")

    @property
    def owner(self) -> str | None:
        return self.repo_id.split("/", 1)[0] if self.repo_id else None

    @property
    def label(self) -> str:
        """How output names the memory, accepted back by ``--memory`` (reference: the URI)."""
        return self.uri

    def path_in_repo(self, rel: str) -> str:
        return f"{self.prefix}/{rel}" if self.prefix else rel


def parse(spec: str | os.PathLike[str] | None) -> MemorySpec:
    """One spec → a MemorySpec (no I/O beyond an existence check of a relative path)."""
    if isinstance(spec, os.PathLike):
        return MemorySpec(path=memory_dir(spec))
    s = (spec or "").strip()
    if s in ("", "local"):
        return MemorySpec(path=memory_dir(None))
    if s.startswith("hf://"):
        m = _URI.match(s)
        if not m:
            raise UsageError(
                f"cannot read the memory {s!r} — a Hub memory is hf://datasets/OWNER/NAME[/PREFIX]"
            )
        return MemorySpec(repo_id=f"{m[1]}/{m[2]}", prefix=m[3].strip("/"))
    if s.startswith(("/", ".", "~")) or os.path.exists(os.path.expanduser(s)):
        return MemorySpec(path=memory_dir(s))
    m = _SHORT.match(s)
    if m and ".." not in s:
        return MemorySpec(repo_id=f"{m[1]}/{m[2]}", prefix=m[3].strip("/"))
    return MemorySpec(path=memory_dir(s))


def parse_many(spec: str | os.PathLike[str] | None) -> list[MemorySpec]:
    """`a,b,c` → one spec each (duplicates dropped, order kept). A path with a comma that
    exists locally is one memory."""
    if spec is None or isinstance(spec, os.PathLike):
        return [parse(spec)]
    s = spec.strip()
    if "," not in s or os.path.exists(os.path.expanduser(s)):
        return [parse(s)]
    out: list[MemorySpec] = []
    for part in s.split(","):
        if part.strip():
            m = parse(part)
            if m not in out:
                out.append(m)
    return out or [parse(None)]


def parse_one(spec: str | os.PathLike[str] | None) -> MemorySpec:
    """The one memory a command that reads one is given; a list of several is an error."""
    specs = parse_many(spec)
    if len(specs) > 1:
        raise FunesError(f"{spec!r} names several memories; this command reads one")
    return specs[0]


def is_remote(spec: str | os.PathLike[str] | None) -> bool:
    return any(m.remote for m in parse_many(spec))


def sanitize(uri: str) -> str:
    """A file name for a URI: every char not ASCII-alphanumeric, `-` or `.` → `_`."""
    return re.sub(r"[^A-Za-z0-9.-]", "_", uri)


TOKEN_REJECTED = "token rejected"  # the detail of an UNAUTHORIZED state the token caused

# One line per state, for errors and notes (the reference implementation's wording where it
# has one).


def state_message(spec: MemorySpec, state: State, detail: str = "") -> str:
    if state is State.OFFLINE:
        return f"remote {spec.label} unreachable — recalling from your local memory"
    if state is State.MISSING:
        return (
            f"{spec.uri} not found on the Hub (or not visible to your token) — check the name, "
            f"or publish your memory there with `funes push {spec.short} --create`"
        )
    if state is State.UNAUTHORIZED:
        if detail == TOKEN_REJECTED:
            return (
                f"{spec.uri}: the Hub rejected your token — set HF_TOKEN (or run "
                "`hf auth login`) with a valid one"
            )
        if detail:  # 403: the dataset is there, this token may not read it
            return (
                f"{spec.uri} exists, but your token has no access to it ({detail}) — ask its "
                "owner for access, or use a token that has it"
            )
        # 401 to a caller without a token: the Hub answers a missing dataset and a private one
        # alike, so say both rather than call a typo private.
        return (
            f"{spec.uri} not found on the Hub, or private — without a token the Hub does not "
            "say which: check the name, or set HF_TOKEN (or run `hf auth login`) with a token "
            "that can read it"
        )
    if state is State.EMPTY:
        return (
            f"{spec.uri} exists on the Hub but holds no index yet — "
            f"publish one with `funes push {spec.short}`"
        )
    return f"{spec.label}: ready"
