"""A bare ``except Exception`` hides whatever a bug raises, so funes has one only where the
reason is written beside it (on its line or the line before); an ``except BaseException``
only to clean up and raise again. Read with ast from every module of the package."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import REPO

PACKAGE = REPO / "funes"


def broad_handlers(source: str) -> list[tuple[int, str, bool, bool]]:
    """(line, caught, reason written beside it, re-raises) of each ``except Exception`` or
    ``except BaseException`` of ``source``."""
    lines = source.splitlines()
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ExceptHandler) or node.type is None:
            continue
        names = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
        caught = [n.id for n in names if isinstance(n, ast.Name)]
        broad = [c for c in caught if c in ("Exception", "BaseException")]
        if not broad:
            continue
        line = lines[node.lineno - 1]
        before = lines[node.lineno - 2].strip() if node.lineno > 1 else ""
        reason = "#" in line.split(":", 1)[-1] or before.startswith("#")
        reraises = any(isinstance(s, ast.Raise) and s.exc is None for s in ast.walk(node))
        out.append((node.lineno, broad[0], reason, reraises))
    return out


def unexplained(path: Path) -> list[str]:
    where = path.relative_to(REPO)
    return [
        f"{where}:{line} except {caught} without a reason beside it"
        if caught == "Exception"
        else f"{where}:{line} except BaseException that does not raise again"
        for line, caught, reason, reraises in broad_handlers(path.read_text())
        if (caught == "Exception" and not reason) or (caught == "BaseException" and not reraises)
    ]


def test_every_broad_except_in_funes_says_why_or_raises_again() -> None:
    assert [u for p in sorted(PACKAGE.rglob("*.py")) for u in unexplained(p)] == []


def test_the_check_sees_a_bare_except_and_accepts_a_reason_or_a_raise() -> None:
    source = (
        "try:\n    f()\nexcept Exception:\n    pass\n"
        "try:\n    f()\nexcept Exception:  # the hook must not block the agent\n    pass\n"
        "try:\n    f()\n# logged, never raised\nexcept (OSError, Exception) as e:\n    pass\n"
        "try:\n    f()\nexcept BaseException:\n    cleanup()\n    raise\n"
        "try:\n    f()\nexcept BaseException:\n    pass\n"
        "try:\n    f()\nexcept ValueError:\n    pass\n"
    )
    assert broad_handlers(source) == [
        (3, "Exception", False, False),
        (7, "Exception", True, False),
        (12, "Exception", True, False),
        (16, "BaseException", False, True),
        (21, "BaseException", False, False),
    ]
