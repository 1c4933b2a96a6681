"""Every agent format beyond the first four, end to end as a user meets it: sessions laid out
where each agent keeps them are found by a bare `funes index`, and `funes recall` returns a
passage of each with the agent's own session id in its `→ get` line.

One test over all formats (one index run, one model load per recall), to spare the CPU.
"""

from __future__ import annotations

from pathlib import Path

import agent_homes
import pytest
from conftest import run_cli


@pytest.mark.slow
def test_bare_index_finds_every_agent_and_recall_names_its_session(private_home: Path) -> None:
    laid = [write(private_home) for write in agent_homes.ALL]
    r = run_cli("funes", "index", "--no-embed", "--json")
    assert r.returncode == 0, r.stderr.decode()
    missing = []
    for one in laid:
        got = run_cli("funes", "recall", one.phrase, "-k", "3", "--harness", one.harness)
        out = got.stdout.decode()
        if got.returncode != 0 or one.phrase not in out or f"→ get {one.session_id} " not in out:
            missing.append(f"{one.harness}: {out[:300]!r} {got.stderr.decode()[:300]!r}")
    assert not missing, "\n".join(missing)
