"""Secrets: built-in detectors and redaction (here), the external scanner wrapper (`scanner`).

``find(text)`` lists the secrets in a text as :class:`Finding` spans; ``redact(text)`` replaces
each with ``[REDACTED:<detector>]``. Pure stdlib and cheap on clean text: the chunk stage runs
it on every block. The heavier, fail-closed scan used by the publish gate lives in
:mod:`funes.secrets.scanner` and is imported only where it is needed.
"""

from __future__ import annotations

from funes.secrets.detectors import DETECTORS, RULES_VERSION, Finding, find, redact

__all__ = ["DETECTORS", "RULES_VERSION", "Finding", "find", "redact"]
