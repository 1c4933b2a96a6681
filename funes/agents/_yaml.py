"""Line edits to a block-style YAML config that leave every byte outside funes' entries alone.

The reference round-trips Hermes' ``config.yaml`` through a YAML library and loses the user's
comments and layout. Here funes inserts and deletes whole lines instead: list items under
``hooks.<event>``, and the ``mcp_servers.funes`` entry. A key funes had to create carries the
comment ``# added by funes`` so `remove` deletes exactly what `add` wrote — add then remove gives
back the original bytes. The edited text is parsed again (PyYAML) and checked against the intent
before anything is written; a file this cannot edit safely (flow style where funes must insert,
not a mapping, not YAML) raises :class:`ConfigError` and stays untouched.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from funes.agents._common import ConfigError

MARK = "# added by funes"
WAS = " (was:"
NO_EOL = " (file had no final newline)"
_KEY = re.compile(
    r"""^(?P<ind> *)(?P<key>"[^"]*"|'[^']*'|[^\s#'"\-][^:#]*?|-[^\s:#][^:#]*?)\s*:(?P<rest>(?:\s.*)?)$"""
)
_EMPTY_VALUES = ("", "{}", "null", "~", "Null", "NULL")


def sq(value: str) -> str:
    """A single-quoted YAML scalar."""
    return "'" + value.replace("'", "''") + "'"


def _body(line: str) -> str:
    return line.rstrip("\r\n")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _content(line: str) -> bool:
    s = line.strip()
    return bool(s) and not s.startswith("#")


def _is_item(line: str) -> bool:
    s = line.lstrip(" ")
    return s.startswith("- ") or _body(s) == "-"


def _key(line: str) -> tuple[int, str, str] | None:
    m = _KEY.match(_body(line))
    if not m:
        return None
    key = m["key"].strip()
    if key[:1] in "\"'":
        key = key[1:-1]
    return len(m["ind"]), key, m["rest"]


def _value(rest: str) -> str:
    """The inline value after ``key:``, comment dropped."""
    rest = rest.strip()
    if rest.startswith("#"):
        return ""
    return re.sub(r"\s+#.*$", "", rest).strip()


class YamlText:
    def __init__(self, text: str) -> None:
        self.lines = text.splitlines(keepends=True)
        self.eol = "\r\n" if self.lines and self.lines[0].endswith("\r\n") else "\n"

    @property
    def text(self) -> str:
        return "".join(self.lines)

    # ------------------------------------------------------------------ navigation

    def block_end(self, start: int, parent: int, same_indent_items: bool = True) -> int:
        """One past the last content line of the value block under the key on line ``start``."""
        last = start
        for j in range(start + 1, len(self.lines)):
            line = self.lines[j]
            if not _content(line):
                continue
            ind = _indent(line)
            if ind > parent or (same_indent_items and ind == parent and _is_item(line)):
                last = j
            else:
                break
        return last + 1

    def find_key(self, name: str, lo: int, hi: int, indent: int) -> int | None:
        for i in range(lo, hi):
            k = _key(self.lines[i]) if _content(self.lines[i]) else None
            if k and k[0] == indent and k[1] == name:
                return i
        return None

    def child_indent(self, start: int, end: int) -> int | None:
        for j in range(start + 1, end):
            if _content(self.lines[j]):
                return _indent(self.lines[j])
        return None

    def items(self, start: int, end: int) -> list[tuple[int, int]]:
        """(first, end) line ranges of the sequence items in lines ``start+1 .. end``."""
        out: list[tuple[int, int]] = []
        item_indent = self.child_indent(start, end)
        if item_indent is None:
            return out
        for j in range(start + 1, end):
            line = self.lines[j]
            if _content(line) and _indent(line) == item_indent and _is_item(line):
                out.append((j, min(self.block_end(j, item_indent, False), end)))
        return out

    # ------------------------------------------------------------------ sections

    def section(self, name: str, create: bool) -> tuple[int, int, int] | None:
        """(key line, block end, child indent) of a top-level mapping key, created if asked."""
        at = self.find_key(name, 0, len(self.lines), 0)
        if at is None:
            if not create:
                return None
            mark = MARK
            if self.lines and not self.lines[-1].endswith("\n"):
                self.lines[-1] += self.eol
                mark += NO_EOL
            self.lines.append(f"{name}:  {mark}{self.eol}")
            return len(self.lines) - 1, len(self.lines), 2
        k = _key(self.lines[at])
        assert k is not None
        value = _value(k[2])
        end = self.block_end(at, 0, False)
        if value not in _EMPTY_VALUES:
            raise ConfigError(f"its {name}: value is written in flow style ({value})")
        if value and create:
            self.lines[at] = f"{name}:  {MARK}{WAS}{k[2]}){self.eol}"
        ci = self.child_indent(at, end)
        return at, end, ci if ci is not None else 2

    def ensure(self, name: str) -> tuple[int, int, int]:
        sec = self.section(name, True)
        assert sec is not None
        return sec

    def drop_section_if_empty(self, name: str) -> None:
        at = self.find_key(name, 0, len(self.lines), 0)
        if at is None:
            return
        end = self.block_end(at, 0, False)
        line = _body(self.lines[at])
        if self.child_indent(at, end) is not None or MARK not in line:
            return
        if WAS in line:
            was = line.split(WAS, 1)[1]
            self.lines[at] = f"{name}:{was[:-1]}{self.eol}"
        else:
            at_eof = end == len(self.lines)
            del self.lines[at:end]
            if NO_EOL in line and at_eof and self.lines:
                self.lines[-1] = _body(self.lines[-1])

    # ------------------------------------------------------------------ edits

    def strip_items(self, section: str, is_ours: Callable[[str], bool]) -> None:
        """Delete the items ``is_ours`` recognises from every list under ``section``, then the
        keys funes created that this left empty."""
        sec = self.section(section, False)
        if sec is None:
            return
        at, end, ci = sec
        keys = [
            i
            for i in range(at + 1, end)
            if _content(self.lines[i]) and _indent(self.lines[i]) == ci
        ]
        for k in reversed(keys):
            kend = self.block_end(k, ci)
            for first, iend in reversed(self.items(k, kend)):
                if is_ours("".join(self.lines[first:iend])):
                    del self.lines[first:iend]
            kend = self.block_end(k, ci)
            if MARK in self.lines[k] and self.child_indent(k, kend) is None:
                del self.lines[k:kend]
        self.drop_section_if_empty(section)

    def add_item(self, section: str, key: str, item: list[str]) -> None:
        """Append one list item (``item``: its lines, unindented, first starting ``- ``)."""
        at, end, ci = self.ensure(section)
        k = self.find_key(key, at + 1, end, ci)
        if k is None:
            pad = " " * ci
            new = [f"{pad}{key}:  {MARK}{self.eol}"]
            new += [f"{pad}  {line}{self.eol}" for line in item]
            self.lines[end:end] = new
            return
        kk = _key(self.lines[k])
        assert kk is not None
        if _value(kk[2]) not in ("", "null", "~"):
            raise ConfigError(f"its {section}.{key} value is written in flow style")
        kend = self.block_end(k, ci)
        ii = self.child_indent(k, kend)
        pad = " " * (ii if ii is not None else ci + 2)
        self.lines[kend:kend] = [f"{pad}{line}{self.eol}" for line in item]

    def strip_key(self, section: str, key: str) -> None:
        sec = self.section(section, False)
        if sec is None:
            return
        at, end, ci = sec
        k = self.find_key(key, at + 1, end, ci)
        if k is not None:
            del self.lines[k : self.block_end(k, ci)]
        self.drop_section_if_empty(section)

    def set_key(self, section: str, key: str, body: list[str]) -> None:
        """Replace (or add) ``section.key`` with ``body`` (its value lines, unindented)."""
        self.strip_key(section, key)
        _, end, ci = self.ensure(section)
        pad = " " * ci
        new = [f"{pad}{key}:{self.eol}"] + [f"{pad}  {line}{self.eol}" for line in body]
        self.lines[end:end] = new


# ---------------------------------------------------------------------------- checking


def load(text: str) -> dict[str, Any]:
    # lazy: yaml stays off fast commands' start-up
    import yaml

    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        where = getattr(e, "problem_mark", None)
        at = f" (line {where.line + 1})" if where is not None else ""
        raise ConfigError(f"it is not valid YAML{at}") from None
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise ConfigError("it is not a YAML mapping")
    return doc


def canonical(doc: object) -> str:
    return json.dumps(doc, sort_keys=True, default=str)
