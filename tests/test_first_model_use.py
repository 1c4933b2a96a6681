"""The first use of the embedding model derives its fast int8 graph (seconds of silence
otherwise): on a terminal one line says so while it happens, and only that first time."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import BIN, read_terminal, start_on_a_terminal
from test_index import write_claude

SAID = "funes: deriving the fast embedding model once"


@pytest.mark.slow
def test_the_first_model_use_on_a_terminal_says_it_derives_the_fast_model(
    private_home: Path, tmp_path: Path
) -> None:
    src = write_claude(private_home, "sess-first", 3)
    env = {"FUNES_CACHE_DIR": str(tmp_path / "fresh-cache")}  # no derived graph yet
    seen = []
    for mem in ("m1", "m2"):
        p, master = start_on_a_terminal(
            [str(BIN / "funes"), "index", str(src), "--memory", str(tmp_path / mem)],
            env, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        seen.append(read_terminal(master, timeout=300).decode("utf-8", "replace"))
        assert p.wait(timeout=300) == 0, seen[-1]
    assert seen[0].count(SAID) == 1, seen[0]
    assert "indexed sessions=1" in seen[0] and "waiting=" not in seen[0]
    assert SAID not in seen[1] and "indexed sessions=1" in seen[1]  # cached: nothing to say
