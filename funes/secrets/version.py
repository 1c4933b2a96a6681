"""``RULES_VERSION``: which detector rules redacted a text.

A fingerprint of the source of the built-in detectors (the rules, the provider table, the
wallet checks). A memory's redaction stamp records it, and a stamp with another fingerprint
vouches for nothing (see :mod:`funes.store.redaction`). It is read from the files rather than
from the built rules so that checking a stamp costs a file read, not compiling the rules.
Any change to those files — even one that changes no rule — makes old stamps stale, which
costs some serve-time masking until the next `funes scrub`, never a missed secret.
"""

from __future__ import annotations

import hashlib
from importlib import resources

_SOURCES = ("detectors.py", "providers.py", "crypto.py")


def _fingerprint() -> str:
    h = hashlib.sha256()
    root = resources.files("funes.secrets")
    for name in _SOURCES:
        h.update(name.encode() + b"\0" + root.joinpath(name).read_bytes() + b"\0")
    return h.hexdigest()[:16]


RULES_VERSION = _fingerprint()
