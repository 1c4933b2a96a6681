"""A user's JSON config that funes edits: read it safely, write it in its own layout, and
remember it as it was so `funes remove` restores the user's exact bytes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from funes.agents._context import ConfigError, Context
from funes.agents._files import prune_dirs, remove_file, write_if_changed


def load_json_object(path: Path) -> tuple[dict[str, Any] | None, bytes | None]:
    """(document, raw bytes); a missing or blank file is ``{}`` with raw None / the blank bytes.

    Raises ConfigError when the file is not a JSON object.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}, None
    if not raw.strip():
        return {}, raw
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ConfigError(f"{path} is not valid JSON ({e})") from None
    if not isinstance(doc, dict):
        raise ConfigError(f"{path} is not a JSON object")
    return doc, raw


def dump_like(doc: dict[str, Any], previous: bytes | None) -> bytes:
    """Serialise ``doc`` in the layout of the file it replaces (indent, final newline)."""
    indent: int | str | None = 2
    newline = True
    if previous and previous.strip():
        text = previous.decode("utf-8", "replace")
        newline = text.endswith("\n")
        lines = text.strip().splitlines()
        if len(lines) == 1:
            indent = None
        else:
            for line in lines[1:]:
                stripped = line.lstrip(" \t")
                if stripped and len(stripped) < len(line):
                    lead = line[: len(line) - len(stripped)]
                    indent = "\t" if lead.startswith("\t") else len(lead)
                    break
    body = json.dumps(doc, indent=indent, ensure_ascii=False)
    return (body + ("\n" if newline else "")).encode("utf-8")


def same(a: object, b: object) -> bool:
    """Equal as JSON, key order included."""
    return json.dumps(a, sort_keys=False) == json.dumps(b, sort_keys=False)


class Originals:
    """The user's files as they were before funes first edited them, under
    ``~/.funes/integrations/originals/`` — what lets `remove` restore them byte for byte."""

    ABSENT = b""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.dir = ctx.integrations / "originals"

    def _path(self, target: Path) -> Path:
        rel = self.ctx.show(target).removeprefix("~/").replace("/", "__")
        return self.dir / rel

    def save(self, target: Path, raw: bytes | None) -> None:
        p = self._path(target)
        if raw is None:
            write_if_changed(p.with_name(p.name + ".absent"), self.ABSENT)
            remove_file(p)
        else:
            write_if_changed(p, raw)
            remove_file(p.with_name(p.name + ".absent"))

    def load(self, target: Path) -> bytes | None:
        """The saved bytes, ``ABSENT`` if the file did not exist, None if nothing was saved."""
        p = self._path(target)
        if p.with_name(p.name + ".absent").exists():
            return self.ABSENT
        try:
            return p.read_bytes()
        except FileNotFoundError:
            return None

    def forget(self, target: Path) -> None:
        p = self._path(target)
        remove_file(p)
        remove_file(p.with_name(p.name + ".absent"))
        prune_dirs(self.dir, self.ctx.home)


def write_json_user_file(
    ctx: Context,
    path: Path,
    doc: dict[str, Any],
    raw: bytes | None,
    new: dict[str, Any],
    pristine: bool,
) -> bool:
    """Write ``new`` over a user's JSON file (``doc``/``raw`` as read), remembering the file as
    it was when it held nothing of funes' (``pristine``). True if written."""
    if same(new, doc) and raw is not None:
        return False
    if pristine:
        Originals(ctx).save(path, raw)
    return write_if_changed(path, dump_like(new, raw))


def restore_json_user_file(
    ctx: Context,
    path: Path,
    stripped: dict[str, Any],
    raw: bytes | None,
    container: str | tuple[str, ...],
    skeleton: dict[str, Any] | None = None,
) -> bool:
    """Write ``stripped`` (the file without funes' entries) back, as the user's original bytes
    when it equals them. ``container`` names the keys funes may have created (``hooks``,
    ``approvals``, ``mcpServers``): one left empty and absent from the original goes too, and
    so does a ``skeleton`` key (``{"version": 1}``, what funes writes into a file it creates)
    still holding funes' value. True if written."""
    originals = Originals(ctx)
    saved = originals.load(path)
    candidate = dict(stripped)
    original_doc: Any = None
    if saved is not None and saved != Originals.ABSENT:
        try:
            original_doc = json.loads(saved.decode("utf-8")) if saved.strip() else {}
        except (UnicodeDecodeError, json.JSONDecodeError):
            original_doc = None

    def lacks(key: str) -> bool:
        return saved == Originals.ABSENT or (
            isinstance(original_doc, dict) and key not in original_doc
        )

    for key in (container,) if isinstance(container, str) else container:
        if key in candidate and not candidate[key] and lacks(key):
            del candidate[key]
    for key, value in (skeleton or {}).items():
        if key in candidate and same(candidate[key], value) and lacks(key):
            del candidate[key]
    changed: bool
    if saved == Originals.ABSENT and not candidate:
        changed = remove_file(path)
    elif saved not in (None, Originals.ABSENT) and (
        same(candidate, original_doc) or (not saved.strip() and not candidate)
    ):
        changed = write_if_changed(path, saved)
    else:
        changed = write_if_changed(path, dump_like(candidate, raw))
    originals.forget(path)
    return changed
