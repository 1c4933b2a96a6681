"""Entry points of the installed distributions, read from their ``entry_points.txt`` files:
the agents (``funes.agents``), transcript formats (``funes.sources``) and rerankers
(``funes.rerankers``) that packages register.

`funes --help` names the registered agents; importing ``importlib.metadata`` to read them costs
about 30 ms of CPU, as much as the rest of the command, so this module reads the files itself
with ``os`` alone. It finds what ``importlib.metadata.entry_points(group=…)`` finds in
directories: every ``*.dist-info`` and ``*.egg-info`` directory on ``sys.path``, the first
distribution of a name winning, ``[group]`` sections of ``name = module:attr`` lines.

An editable install made before a group was added to ``pyproject.toml`` has metadata without
it (until it is reinstalled), and a checkout run without installing has none: when funes' own
distribution does not declare the group, the checkout's ``pyproject.toml`` is read instead.
"""

from __future__ import annotations

import importlib
import os
import sys
from functools import cache
from typing import Any

AGENTS = "funes.agents"
SOURCES = "funes.sources"
_OWN = "funes"


def names(group: str) -> list[str]:
    """The entry-point names of ``group``, sorted: the order funes lists what they register."""
    return sorted(entry_points(group))


@cache
def entry_points(group: str) -> dict[str, str]:
    """Name → ``module:attr`` of every entry point in ``group``; the first distribution on
    ``sys.path`` that declares a name wins."""
    found: dict[str, str] = {}
    seen: set[str] = set()
    own_declares = False
    for entry in sys.path:
        folder = entry or "."
        try:
            children = sorted(os.listdir(folder))
        except OSError:  # a zip file, or a path that is gone
            continue
        for child in children:
            stem, dot, suffix = child.rpartition(".")
            if not dot or suffix.lower() not in ("dist-info", "egg-info"):
                continue
            dist = _normalize(stem.partition("-")[0])
            if dist in seen:
                continue
            seen.add(dist)
            declared = _section(os.path.join(folder, child, "entry_points.txt"), group)
            if declared is None:
                continue
            own_declares = own_declares or dist == _OWN
            for name, value in declared.items():
                found.setdefault(name, value)
    if not own_declares:
        for name, value in _from_checkout(group).items():
            found.setdefault(name, value)
    return found


def load(value: str) -> Any:
    """The object an entry point names: ``package.module:attr.attr`` (or a whole module)."""
    module, _, attrs = value.partition(":")
    obj: Any = importlib.import_module(module.strip())
    for attr in filter(None, attrs.strip().split(".")):
        obj = getattr(obj, attr)
    return obj


def _normalize(name: str) -> str:
    out = name.lower()
    for sep in "-.":
        out = out.replace(sep, "_")
    return out


def _section(path: str, group: str) -> dict[str, str] | None:
    """``group``'s ``name = value`` lines in one ``entry_points.txt``; None without the file
    or the section."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    out: dict[str, str] | None = None
    current = None
    for raw in lines:
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1].strip()
            if current == group and out is None:
                out = {}
            continue
        if current == group and out is not None and "=" in line:
            name, _, value = line.partition("=")
            out.setdefault(name.strip(), value.strip())
    return out


def _from_checkout(group: str) -> dict[str, str]:
    """``group`` as the source checkout funes runs from declares it in ``pyproject.toml``."""
    import tomllib  # lazy: read only by an install whose metadata lacks the group

    checkout = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        with open(os.path.join(checkout, "pyproject.toml"), "rb") as f:
            project = tomllib.load(f).get("project")
    except (OSError, ValueError):
        return {}
    if not isinstance(project, dict) or project.get("name") != _OWN:
        return {}
    groups = project.get("entry-points")
    declared = groups.get(group) if isinstance(groups, dict) else None
    return {str(k): str(v) for k, v in declared.items()} if isinstance(declared, dict) else {}
