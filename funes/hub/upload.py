"""What a memory ships to a Hub dataset, and the check before any upload: `push` and
`curate`'s project stamp both upload a memory directory's shipped files as one commit."""

from __future__ import annotations

from pathlib import Path

from funes.hub import transport
from funes.hub.remote import remember_identity
from funes.hub.spec import MemorySpec

# What a remote memory is made of; everything else in a memory dir stays local.
SHIPPED = ("chunks.lance/", "lexical/")
NOT_SHIPPED = ("chunks.lance/_versions/latest_version_hint.json",)


def check_writable(spec: MemorySpec) -> None:
    """Fail before any work when the token is read-only (the commit's 403 says it too)."""
    me = transport.whoami()
    remember_identity(str(me.get("name", "")), [o.get("name", "") for o in me.get("orgs", [])])
    role = ((me.get("auth") or {}).get("accessToken") or {}).get("role")
    if role == "read":
        raise transport.ReadOnly(transport.read_only_message(spec))


def listing(root: Path) -> dict[str, tuple[int, int]]:
    """The shipped files under a memory directory: relative path → (inode, size)."""
    out = {}
    for p in root.rglob("*"):
        if p.is_file():
            rel = p.relative_to(root).as_posix()
            if rel.startswith(SHIPPED) and rel not in NOT_SHIPPED:
                st = p.stat()
                out[rel] = (st.st_ino, st.st_size)
    return out


def changes(before: dict[str, tuple[int, int]], root: Path) -> tuple[list[str], list[str]]:
    """Files new or rewritten since ``before`` (an inode change is a rewrite: every writer
    here replaces by rename), and lexical files that disappeared."""
    after = listing(root)
    adds = sorted(p for p, v in after.items() if before.get(p) != v)
    deletes = sorted(p for p in before if p not in after and p.startswith("lexical/"))
    return adds, deletes
