"""The floor plan of docs/architecture.md, checked: each package of funes imports only what its
layer may. Imports are read with ast, so an import inside a function counts as much as one at
the top of a module, and so does one made only for type checking."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import REPO

PACKAGE = REPO / "funes"

# Layer → the layers it may import. `funes` (the version), `funes.errors` and `funes.plugins` (the
# entry-point reader) are open to all.
# Keep in step with the table in docs/architecture.md.
BASE = {"funes", "funes.errors", "funes.plugins"}
RECORDS = BASE | {"funes.records"}
FORMATS = RECORDS | {"funes.sources", "funes.chunking", "funes.secrets", "funes.models"}
STORE = FORMATS - {"funes.sources"} | {"funes.store"}
HUB = STORE | {"funes.sources", "funes.hub"}
ALLOWED: dict[str, set[str]] = {
    "funes": BASE,
    "funes.errors": BASE,
    "funes.plugins": BASE,
    "funes.records": RECORDS,
    "funes.sources": RECORDS | {"funes.sources"},
    "funes.chunking": RECORDS | {"funes.chunking"},
    "funes.secrets": RECORDS | {"funes.secrets"},
    "funes.models": RECORDS | {"funes.chunking", "funes.models"},
    "funes.ranker": RECORDS | {"funes.ranker"},
    "funes.store": STORE,
    "funes.hub": HUB,
    "funes.ingest": HUB | {"funes.memories", "funes.ingest"},
    "funes.memories": HUB | {"funes.memories"},
    # What a question is and what recall returns, as data; Filters reads sources and the store.
    "funes.results": STORE | {"funes.sources", "funes.results"},
    "funes.retrieval": STORE
    | {"funes.sources", "funes.memories", "funes.ranker", "funes.results", "funes.retrieval"},
    "funes.validate": RECORDS | {"funes.sources", "funes.retrieval", "funes.validate"},
    # Formats take data; they read the store only for the turns around a hit.
    "funes.render": HUB | {"funes.results", "funes.render"},
    "funes.agents": HUB | {"funes.memories", "funes.results", "funes.agents"},
}
# The two front ends may import every layer above; only the CLI may import the MCP server, and
# nothing imports the CLI.
FRONT = set(ALLOWED) | {"funes.ranker"}
ALLOWED["funes.mcp_server"] = FRONT | {"funes.mcp_server"}
ALLOWED["funes.cli"] = FRONT | {"funes.mcp_server", "funes.cli"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer(module: str) -> str:
    """`funes.store.memory` → `funes.store`; `funes.retrieval` → `funes.retrieval`."""
    return ".".join(module.split(".")[:2])


def imported(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every funes import in a file, wherever it stands."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    return imports_in(path.read_text(), package)


def imports_in(source: str, package: str) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            # `from funes import store` imports the package funes.store
            found += [(node.lineno, f"{module}.{a.name}") for a in node.names]
    return [(line, m) for line, m in found if m == "funes" or m.startswith("funes.")]


def target_layer(module: str) -> str:
    """The layer an imported name belongs to (`funes.__version__` is the package itself)."""
    parts = module.split(".")
    if len(parts) == 1:
        return "funes"
    top = PACKAGE / parts[1]
    return layer(module) if top.is_dir() or top.with_suffix(".py").exists() else "funes"


FILES = sorted(PACKAGE.rglob("*.py"))


def test_every_package_has_a_layer() -> None:
    assert {layer(module_name(p)) for p in FILES} <= set(ALLOWED)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_a_module_imports_only_what_its_layer_may(path: Path) -> None:
    own = layer(module_name(path))
    wrong = [
        f"{path.relative_to(REPO)}:{line} imports {m} ({own} may not import {target_layer(m)})"
        for line, m in imported(path)
        if target_layer(m) not in ALLOWED[own]
    ]
    assert wrong == []


def test_the_check_sees_imports_inside_functions_and_relative_ones() -> None:
    source = "def f():\n    from funes.cli import main\n    from ..hub import spec\n"
    found = imports_in(source, "funes.store")
    assert found == [(2, "funes.cli.main"), (3, "funes.hub.spec")]
    assert {target_layer(m) for _, m in found} == {"funes.cli", "funes.hub"}
    assert not {"funes.cli", "funes.hub"} & ALLOWED["funes.store"]
    assert target_layer("funes.__version__") == "funes"
