"""Text made safe to print: :func:`neutralise` for passages, :func:`one_line` for metadata.

The one place every human and agent output goes through, kept apart from the recall and get
formats (:mod:`funes.render.formats`) so that `funes status`, which prints only metadata,
starts without what those formats import (the store's redaction and table modules, the
untrusted-text rules, the result records).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

# Where a reader may break a line besides `\n` (str.splitlines' breaks): in a passage each
# becomes `\n`, so what an agent reads as a line is a line funes escaped as one.
_BREAKS = frozenset("\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


def neutralise(text: str) -> str:
    """``text`` safe to print to a terminal or hand to an agent: every control and format
    character — C0 and C1 controls but newline and tab, ESC, DEL, bidi overrides and isolates,
    zero-width and joiner characters, the BOM, tags: every character of categories Cc, Cf, Cs
    and Cn — becomes U+FFFD, and every other line break (``\\r\\n``, a lone ``\\r``, U+2028, …)
    ``\\n``. Spaces of other widths, private-use characters and all visible text are kept.
    The one function every human and agent output goes through (metadata: :func:`one_line`)."""
    if text.isascii() and not _ASCII_UNSAFE.search(text):  # the common case, at C speed
        return text
    if text.replace("\n", "").replace("\t", "").isprintable():
        return text
    text = text.replace("\r\n", "\n")
    # One decision per distinct character, then one C-speed translate: a long passage with a
    # single odd character costs its set() and not a Python step per character (get of a
    # 20k-chunk memory spent 0.06 s of CPU in a per-character loop).
    table = {ord(c): _replacement(c) for c in set(text) if not (c.isprintable() or c in "\n\t")}
    return text.translate(table)


def _replacement(c: str) -> str:
    """What :func:`neutralise` prints for a character that is not printable."""
    if c in _BREAKS:
        return "\n"
    if unicodedata.category(c) in ("Zs", "Co"):
        return c
    return "\ufffd"


_ASCII_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def one_line(value: Any) -> str:
    """A metadata field as one line of printable text: whitespace of any kind (a newline, a
    line or paragraph separator, a tab) becomes a space, any other unprintable character
    (control, format, unassigned) U+FFFD."""
    s = "" if value is None else str(value)
    if s.isprintable():
        return s
    return "".join(c if c.isprintable() else " " if c.isspace() else "\ufffd" for c in s)
