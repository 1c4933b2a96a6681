"""Answers cached per memory version, read without opening the memory.

A reader's answer that depends only on what the table holds (and how it is served) is the same
until the table changes; a new table version is a new manifest under
``<memory>/chunks.lance/_versions``, and a scan or scrub changes the redaction stamp. Both are
read here with a directory listing and one small file — no Lance, no numpy — so a repeated call
(`funes sketch` of the same session) answers in the time of Python's start-up.

Entries live under ``$FUNES_HOME/cache/<kind>/``, private to the user like everything else.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import funes
from funes.store.paths import TABLE, funes_home
from funes.store.private import private_dir

STAMP = "redaction.json"  # funes.store.redaction.STAMP (that module imports the detectors)


def key(memory: Path, kind: str, args: list[Any]) -> str | None:
    """The cache key of ``kind`` called with ``args`` on the memory directory ``memory`` at its
    current version; None when the memory has no table to read."""
    versions = memory / f"{TABLE}.lance" / "_versions"
    try:
        manifests = sorted(n for n in os.listdir(versions) if n.endswith(".manifest"))
    except OSError:
        return None
    if not manifests:
        return None
    try:
        stamp = (memory / STAMP).read_bytes()
    except OSError:
        stamp = b""
    h = hashlib.sha256()
    h.update(json.dumps([funes.__version__, kind, str(memory), args, manifests]).encode())
    h.update(stamp)
    return h.hexdigest()


def get(kind: str, k: str | None) -> str | None:
    if k is None:
        return None
    try:
        # bytes, not text mode: a passage's \r\n must come back as it was stored
        return (funes_home() / "cache" / kind / f"{k}.txt").read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def put(kind: str, k: str | None, text: str) -> None:
    """Best-effort: an answer that cannot be cached is still given."""
    if k is None:
        return
    try:
        d = private_dir(funes_home() / "cache" / kind)
        tmp = d / f".{k}.{os.getpid()}.tmp"
        tmp.write_bytes(text.encode("utf-8"))
        tmp.replace(d / f"{k}.txt")
    except (OSError, UnicodeEncodeError):
        pass
