"""Private by default: what funes writes is readable by the user alone.

A memory holds the user's conversations, tool output and (before a scrub) whatever secrets
they pasted, so `$FUNES_HOME`, every memory, the logs, the push receipts and the cached copies
of remote memories are created 0700 (directories) and 0600 (files), whatever the umask the
process was started with. Every funes command sets a private umask before it does anything
(:func:`private_umask`); the hook scripts do the same in shell. Files made before that (by an
older funes, or copied in by hand) are found by :func:`too_open`, which `funes doctor` reports
and :func:`make_private` fixes.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

PRIVATE_UMASK = 0o077
OPEN_BITS = 0o077  # any group or other permission


def private_umask() -> int:
    """Add group and other to the process umask (a stricter umask stays); returns the old."""
    old = os.umask(PRIVATE_UMASK)
    os.umask(old | PRIVATE_UMASK)
    return old


def private_dir(path: Path) -> Path:
    """Create ``path`` (and missing parents) 0700; an existing directory is left as it is."""
    missing = []
    p = path
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        try:
            d.mkdir(mode=0o700)
        except FileExistsError:
            continue
        os.chmod(d, 0o700)  # mkdir's mode is filtered by the umask; chmod is not
    return path


def too_open(paths: Iterable[Path]) -> list[Path]:
    """Every directory and file under ``paths`` that group or others may read, write or enter.
    Symbolic links are not followed (their own mode means nothing)."""
    found = []
    for root in paths:
        try:
            st = root.lstat()
        except OSError:
            continue
        if stat.S_ISLNK(st.st_mode):
            continue
        if st.st_mode & OPEN_BITS:
            found.append(root)
        if not stat.S_ISDIR(st.st_mode):
            continue
        for dirpath, dirnames, filenames in os.walk(root, onerror=lambda e: None):
            for name in [*dirnames, *filenames]:
                p = Path(dirpath, name)
                try:
                    m = p.lstat().st_mode
                except OSError:
                    continue
                if not stat.S_ISLNK(m) and m & OPEN_BITS:
                    found.append(p)
    return found


def make_private(paths: Iterable[Path]) -> list[tuple[Path, str]]:
    """Remove group and other permissions from ``paths``; returns those that failed, why."""
    failed = []
    for p in paths:
        try:
            os.chmod(p, p.lstat().st_mode & 0o7700, follow_symlinks=False)
        except NotImplementedError:
            os.chmod(p, p.lstat().st_mode & 0o7700)
        except OSError as e:
            failed.append((p, e.strerror or str(e)))
    return failed
