"""Secrets: built-in detectors and redaction (here), the external scanner wrapper (`scanner`).

``find(text)`` lists the secrets in a text as :class:`Finding` spans; ``redact(text)`` replaces
each with ``[REDACTED:<detector>]``. Regexes and one C matcher for their words, cheap on clean
text: the chunk stage runs it on every block. The heavier, fail-closed scan used by the publish gate lives in
:mod:`funes.secrets.scanner` and is imported only where it is needed.

The detectors are loaded on first use: a command that only needs to know which rules a memory
was redacted with (``RULES_VERSION``) does not pay for building them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from funes.secrets.version import RULES_VERSION

if TYPE_CHECKING:
    from funes.secrets.detectors import DETECTORS, Finding, find, redact

__all__ = ["DETECTORS", "RULES_VERSION", "Finding", "find", "redact"]


def __getattr__(name: str) -> Any:
    if name in ("DETECTORS", "Finding", "find", "redact"):
        # lazy: compiling the detectors' patterns stays off fast commands' start-up
        from funes.secrets import detectors

        return getattr(detectors, name)
    raise AttributeError(f"module 'funes.secrets' has no attribute {name!r}")
