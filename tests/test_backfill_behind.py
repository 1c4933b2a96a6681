"""An unattended sweep that stops at its budget leaves its vectors to one detached, niced
backfill behind it: every chunk ends up with a vector, a second trigger starts no second
backfill, `funes status` says one is running, and the hooks' log says what it did."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest
from conftest import run_cli
from test_index import write_claude

from funes.cli import index as index_cli
from funes.ingest import indexer


def status(mem: Path) -> dict[str, object]:
    r = run_cli("funes", "status", "--memory", mem, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.slow
def test_an_unattended_sweep_past_its_budget_fills_its_vectors_in_behind_it(
    private_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    src = write_claude(private_home, "sess-behind", 200)
    mem = tmp_path / "mem"
    # The parse passes fit the budget, the vectors never do: the clock jumps past the budget as
    # soon as the run starts embedding (the same in both runs below).
    real_clock = time.monotonic
    clock = [0.0]
    monkeypatch.setattr(indexer.time, "monotonic", lambda: clock[0])
    embed_behind = indexer.embed_behind

    def out_of_budget(*args: object) -> None:
        clock[0] += 1000
        embed_behind(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(indexer, "embed_behind", out_of_budget)

    assert index_cli.main(["--memory", str(mem)]) == 0  # stdin is no terminal under pytest
    first = capsys.readouterr()
    waiting = int(first.out.split("waiting=")[1].split()[0])
    assert waiting > 0
    said = [line for line in first.err.splitlines() if "backfill" in line]
    assert len(said) == 1, first.err
    m = re.search(r"a backfill started behind this run embeds them \(pid (\d+), niced", said[0])
    assert m, said[0]
    pid = int(m[1])

    # A second unattended run while it works finds it and starts no other.
    assert index_cli.main(["--memory", str(mem)]) == 0
    second = capsys.readouterr()
    st = status(mem)
    if st["without_vectors"]:  # the backfill has not finished yet
        assert f"a backfill already running behind this run embeds them (pid {pid}," in second.err
        assert st["backfill_pid"] == pid
        shown = run_cli("funes", "status", "--memory", mem).stdout.decode()
        assert f"a backfill is running (pid {pid}) and embeds them" in shown
        # A hook's run meanwhile leaves the embedding to it rather than racing it.
        assert index_cli.main([str(src), "--yes", "--memory", str(mem)]) == 0
        hook = capsys.readouterr()
        assert "embedded=0" in hook.out
        if "waiting=" in hook.out:
            assert f"a backfill already running behind this run embeds them (pid {pid}," in hook.err

    deadline = real_clock() + 300
    while real_clock() < deadline:
        st = status(mem)
        if st["backfill_pid"] is None:
            break
        time.sleep(0.5)
    assert st["backfill_pid"] is None, "the backfill behind did not finish in 300 s"
    assert st["without_vectors"] == 0 and st["chunks"] == waiting

    log = (Path(os.environ["FUNES_HOME"]) / "logs" / "hooks.log").read_text()
    starts = [line for line in log.splitlines() if " funes backfill -: start " in line]
    assert len(starts) == 1, log
    assert f"start embedding {waiting:,} chunks" in starts[0]
    assert f"funes backfill -: ok (embedded={waiting} waiting=0)" in log

    # With nothing left to embed, a later unattended run starts nothing.
    assert index_cli.main(["--memory", str(mem)]) == 0
    assert "backfill" not in capsys.readouterr().err
