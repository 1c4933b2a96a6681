"""The floor plan of docs/architecture.md, checked: the test reads the table of layers in the doc
and holds every module of funes to it, so the doc and the imports cannot drift apart. Imports
are read with ast, so an import inside a function counts as much as one at the top of a module,
and so does one made only for type checking, or a module loaded by name
(``importlib.import_module("funes.…")``). Inside a folder, modules may not import each other in
a circle."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import REPO

PACKAGE = REPO / "funes"
DOC = REPO / "docs" / "architecture.md"
FILES = sorted(PACKAGE.rglob("*.py"))

# ---------------------------------------------------------------------------- the doc's table


@dataclass
class Floors:
    """What docs/architecture.md says: the layers from the bottom up, what each may import
    (its row, with what "everything below" brings), and what each row names itself."""

    open_to_all: set[str]
    order: list[str]  # the table's rows, bottom first
    allowed: dict[str, set[str]]
    named: dict[str, set[str]]  # the layers a row names in so many words
    problems: list[str]  # the table contradicting itself


def layer_of_cell(cell: str) -> str:
    """`funes/store/` → funes.store; `funes/records.py` → funes.records."""
    path = cell.strip().strip("`").rstrip("/")
    return path.removesuffix(".py").replace("/", ".")


def floors(doc: str) -> Floors:
    section = doc.split("## Layers", 1)[1].split("\n## ", 1)[0]
    opens = next(s for s in re.split(r"(?<=\.)\s", section) if "open to all" in s)
    open_to_all = set(re.findall(r"`(funes[\w.]*)`", opens))
    rows = [
        [c.strip() for c in line.strip().strip("|").split("|")]
        for line in section.splitlines()
        if line.startswith("| `funes")
    ]
    f = Floors(open_to_all, [], {}, {}, [])
    for first, _owns, may in rows:
        layer = layer_of_cell(first)
        own = {layer} | open_to_all
        text = may.strip()
        if text == "—":
            f.allowed[layer], f.named[layer] = own, set()
        elif text.startswith("everything"):
            but = {layer_of_cell(n) for n in re.findall(r"`([^`]+)`", text.partition(" but ")[2])}
            f.allowed[layer] = own | (set(f.order) | {layer}) - but
            f.named[layer] = set()
        else:
            words = re.sub(r"\band everything below( it)?|\band below", ",", text)
            names = [w.strip().strip("`") for w in words.split(",") if w.strip()]
            named = {n if n.startswith("funes.") else f"funes.{n}" for n in names}
            for n in sorted(named - set(f.order)):
                f.problems.append(f"the row of {layer} names {n}, which is not a row below it")
            f.allowed[layer] = own | named
            if "below" in text:
                for n in named & set(f.order):
                    f.allowed[layer] |= f.allowed[n]
            f.named[layer] = named
        f.order.append(layer)
    for name in open_to_all:
        f.allowed.setdefault(name, set(open_to_all))
    return f


FLOORS = floors(DOC.read_text())

# ---------------------------------------------------------------------------- the code's imports


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer(module: str) -> str:
    """`funes.store.memory` → `funes.store`; `funes.retrieval` → `funes.retrieval`."""
    return ".".join(module.split(".")[:2])


def imported(path: Path, runtime_only: bool = False) -> list[tuple[int, str]]:
    """(line, module) of every funes import in a file, wherever it stands."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    return imports_in(path.read_text(), package, runtime_only, module=name)


def _type_checking_only(tree: ast.AST) -> set[int]:
    """The ids of import nodes under ``if TYPE_CHECKING:`` (no dependency when the code runs)."""
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            ids |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return ids


LOADERS = {"import_module", "__import__"}
# The entry-point reader loads what installed packages register; those modules are checked
# where they live, not as imports of funes.plugins.
LOADS_BY_ENTRY_POINT = {"funes.plugins"}
# What a module loaded by a name the check cannot read counts as: no layer may import it.
UNREADABLE = "funes.<a module loaded by a name the check cannot read>"


def imports_in(
    source: str, package: str, runtime_only: bool = False, module: str = ""
) -> list[tuple[int, str]]:
    tree = ast.parse(source)
    skip = _type_checking_only(tree) if runtime_only else set()
    found: list[tuple[int, str]] = []
    dynamic: list[int] = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module_ = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module_ = node.module or ""
            # `from funes import store` imports the package funes.store
            found += [(node.lineno, f"{module_}.{a.name}") for a in node.names]
        elif isinstance(node, ast.Call) and node.args and _callee(node.func) in LOADERS:
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                found.append((node.lineno, arg.value))
            elif (
                isinstance(arg, ast.JoinedStr)
                and arg.values
                and isinstance(head := arg.values[0], ast.Constant)
                and isinstance(head.value, str)
                and "." in head.value
            ):  # f"funes.cli.{verb}": somewhere in funes.cli
                found.append((node.lineno, head.value.rpartition(".")[0]))
            else:
                dynamic.append(node.lineno)
    if dynamic and module not in LOADS_BY_ENTRY_POINT:
        # A module loaded by a computed name: the module must name what it may load in strings
        # (a table such as funes.models' _LAZY); each one named counts as imported.
        names = [
            (n.lineno, n.value)
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant)
            and isinstance(n.value, str)
            and re.fullmatch(r"funes(\.\w+)+", n.value)
        ]
        found += names or [(line, UNREADABLE) for line in dynamic]
    return [(line, m) for line, m in found if m == "funes" or m.startswith("funes.")]


def _callee(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def target_layer(module: str) -> str:
    """The layer an imported name belongs to (`funes.__version__` is the package itself)."""
    parts = module.split(".")
    if module == UNREADABLE:
        return UNREADABLE
    if len(parts) == 1:
        return "funes"
    top = PACKAGE / parts[1]
    return layer(module) if top.is_dir() or top.with_suffix(".py").exists() else "funes"


def wrong_imports(path: Path, floors: Floors) -> list[str]:
    own = layer(module_name(path))
    return [
        f"{path.relative_to(REPO)}:{line} imports {m} ({own} may not import {target_layer(m)})"
        for line, m in imported(path)
        if target_layer(m) not in floors.allowed.get(own, set())
    ]


def unused_names(floors: Floors) -> list[str]:
    """Rows naming a layer that no module of theirs imports: the doc promises a dependency
    the code does not have."""
    uses: dict[str, set[str]] = {}
    for path in FILES:
        uses.setdefault(layer(module_name(path)), set()).update(
            target_layer(m) for _, m in imported(path)
        )
    return [
        f"docs/architecture.md: the row of {lay} names {n}, which no module of {lay} imports"
        for lay, named in floors.named.items()
        for n in sorted(named - uses.get(lay, set()))
    ]


# ---------------------------------------------------------------------------- the checks


def test_the_doc_table_is_read_whole() -> None:
    assert FLOORS.open_to_all == {"funes", "funes.errors", "funes.plugins"}
    assert FLOORS.order[0] == "funes.records" and FLOORS.order[-1] == "funes.cli"
    assert FLOORS.problems == []
    # what the prose around the table says, held against the table
    assert "funes.cli" not in set().union(*(FLOORS.allowed[x] for x in FLOORS.order[:-1]))
    assert [x for x in FLOORS.order if "funes.mcp_server" in FLOORS.allowed[x]] == [
        "funes.mcp_server",
        "funes.cli",
    ]


def test_every_package_has_a_layer() -> None:
    assert {layer(module_name(p)) for p in FILES} <= set(FLOORS.allowed)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_a_module_imports_only_what_its_layer_may(path: Path) -> None:
    assert wrong_imports(path, FLOORS) == []


def test_every_layer_a_row_names_is_imported_by_that_layer() -> None:
    assert unused_names(FLOORS) == []


def test_the_check_sees_imports_inside_functions_and_relative_ones() -> None:
    source = "def f():\n    from funes.cli import main\n    from ..hub import spec\n"
    found = imports_in(source, "funes.store")
    assert found == [(2, "funes.cli.main"), (3, "funes.hub.spec")]
    assert {target_layer(m) for _, m in found} == {"funes.cli", "funes.hub"}
    assert not {"funes.cli", "funes.hub"} & FLOORS.allowed["funes.store"]
    assert target_layer("funes.__version__") == "funes"


def test_the_check_sees_modules_loaded_by_name() -> None:
    source = (
        "import importlib\n"
        "from importlib import import_module\n"
        "def f(verb, name):\n"
        "    importlib.import_module('funes.cli.main')\n"
        "    import_module(f'funes.hub.{verb}')\n"
        "    __import__('funes.ingest')\n"
    )
    found = imports_in(source, "funes.store")
    assert found == [(4, "funes.cli.main"), (5, "funes.hub"), (6, "funes.ingest")]
    # a computed name counts as every funes module the file names in a string…
    table = "MODS = {'a': 'funes.ingest.scrub'}\ndef f(n):\n    return __import__(MODS[n])\n"
    assert imports_in(table, "funes.store") == [(1, "funes.ingest.scrub")]
    # …and is a violation when the file names none
    blind = "import importlib\ndef f(n):\n    return importlib.import_module(n)\n"
    assert imports_in(blind, "funes.store") == [(3, UNREADABLE)]
    assert not any(UNREADABLE in allowed for allowed in FLOORS.allowed.values())
    # but the entry-point reader loads what the installed packages registered
    assert imports_in(blind, "funes", module="funes.plugins") == []


def test_a_planted_disagreement_between_the_doc_and_the_imports_fails(tmp_path: Path) -> None:
    """Copies of the doc with one row changed: the checks above fail on each."""
    doc = DOC.read_text()
    store = next(line for line in doc.splitlines() if line.startswith("| `funes/store/`"))
    # 1. the doc takes away an import the code makes
    no_models = doc.replace(
        store,
        store.replace("| records, chunking, secrets, models |", "| records, chunking, secrets |"),
    )
    assert no_models != doc
    (tmp_path / "architecture.md").write_text(no_models)
    planted = floors((tmp_path / "architecture.md").read_text())
    wrong = [
        w
        for p in FILES
        if layer(module_name(p)) == "funes.store"
        for w in wrong_imports(p, planted)
    ]
    assert wrong and all("funes.store may not import funes.models" in w for w in wrong)
    # 2. the doc names a dependency the code does not have
    ranker = next(line for line in doc.splitlines() if line.startswith("| `funes/ranker.py`"))
    extra = doc.replace(ranker, ranker.replace("| — |", "| records, chunking |"))
    assert unused_names(floors(extra)) == [
        "docs/architecture.md: the row of funes.ranker names funes.chunking, which no module "
        "of funes.ranker imports",
        "docs/architecture.md: the row of funes.ranker names funes.records, which no module "
        "of funes.ranker imports",
    ]
    # 3. a row names a layer above it (the table is read bottom-up)
    up = doc.replace(ranker, ranker.replace("| — |", "| retrieval |"))
    assert floors(up).problems == [
        "the row of funes.ranker names funes.retrieval, which is not a row below it"
    ]


# ---------------------------------------------------------------------------- circles


def circles(edges: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


MODULES = {module_name(p): p for p in FILES}


def resolve(m: str) -> str | None:
    """The module of this tree an imported name lives in (`funes.store.counts.read` →
    `funes.store.counts`)."""
    while m and m not in MODULES:
        m = m.rpartition(".")[0]
    return m or None


def runtime_edges(sources: dict[str, str]) -> dict[str, set[str]]:
    """module → the modules of its own folder it imports when it runs (at the top or inside a
    function; an import made only for type checking is no dependency)."""
    edges: dict[str, set[str]] = {}
    for name, source in sources.items():
        is_package = MODULES[name].name == "__init__.py"
        package = name if is_package else name.rpartition(".")[0]
        folder = (PACKAGE / layer(name).removeprefix("funes.")).is_dir()
        for _, m in imports_in(source, package, runtime_only=True, module=name):
            target = resolve(m)
            if folder and target and target != name and layer(target) == layer(name):
                edges.setdefault(name, set()).add(target)
    return edges


# Circles the code has today, each closed by an import inside a function or a late import; a
# change that breaks one takes it off this list, and nothing may join it.
KNOWN_CIRCLES = [
    # memory's reader searches through the ANN index and its writer (writer, maintenance) builds
    # it; ann.build, run behind the writers, opens a memory from inside a function.
    {"funes.store.memory", "funes.store.writer", "funes.store.maintenance", "funes.store.ann"},
]


def test_no_circle_inside_a_folder_but_the_known_ones() -> None:
    found = circles(runtime_edges({n: p.read_text() for n, p in MODULES.items()}))
    assert sorted(map(sorted, found)) == sorted(map(sorted, KNOWN_CIRCLES))


def test_a_planted_circle_inside_a_folder_is_caught() -> None:
    sources = {n: p.read_text() for n, p in MODULES.items()}
    sources["funes.hub.spec"] += "\ndef _late():\n    from funes.hub import push\n"
    found = circles(runtime_edges(sources))
    assert any({"funes.hub.spec", "funes.hub.push"} <= c for c in found)
    # one made only for type checking is no circle
    sources["funes.hub.spec"] = MODULES["funes.hub.spec"].read_text() + (
        "\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from funes.hub.push import Confirm\n"
    )
    assert sorted(map(sorted, circles(runtime_edges(sources)))) == sorted(
        map(sorted, KNOWN_CIRCLES)
    )
