"""Push receipts: which chunk ids this host has published to which remote.

`$FUNES_HOME/pushed/<sanitized-uri>`: sorted ids, one per line, written atomically (temp +
rename) under an exclusive lock on `pushed/.locks/<same-name>`. A receipt lets `funes push` say
"already up to date" without touching the remote's data, and `funes status` count this host's
unpushed sessions offline.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from funes.hub.spec import MemorySpec, sanitize
from funes.store.paths import funes_home


def receipt_path(spec: MemorySpec) -> Path:
    return funes_home() / "pushed" / sanitize(spec.uri)


def load(spec: MemorySpec) -> set[str] | None:
    """The ids recorded for ``spec``; None when this host never pushed there."""
    try:
        text = receipt_path(spec).read_text()
    except FileNotFoundError:
        return None
    return {line.strip() for line in text.splitlines() if line.strip()}


@contextlib.contextmanager
def _locked(spec: MemorySpec) -> Iterator[None]:
    p = receipt_path(spec)
    lock = p.parent / ".locks" / p.name
    # lazy: funes.store.private stays off fast commands' start-up
    from funes.store.private import private_dir

    private_dir(lock.parent)
    with open(lock, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def add(spec: MemorySpec, ids: Iterable[str]) -> None:
    """Record ``ids`` as present on the remote (merged with what is recorded)."""
    new = set(ids)
    with _locked(spec):
        have = load(spec) or set()
        if new <= have and receipt_path(spec).exists():
            return
        p = receipt_path(spec)
        tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
        with open(tmp, "w") as f:  # line by line: a million ids joined held ~75 MB more
            f.writelines(f"{i}\n" for i in sorted(have | new))
        os.replace(tmp, p)
