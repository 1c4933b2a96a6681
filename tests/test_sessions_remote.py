"""The session verbs on a remote memory: a Hub dataset (the loopback Hub of tests/hubserver)
read from its cached copy on a machine that never indexed it, someone else's words fenced."""

from __future__ import annotations

from pathlib import Path

from hubserver.helpers import Machine, hub, turn
from hubserver.server import HubServer

__all__ = ["hub"]


def test_sessions_scan_and_get_read_a_hub_memory(hub: HubServer, tmp_path: Path) -> None:
    pub = Machine(tmp_path / "pub", hub)
    pub.index(
        [
            turn("s1", 0, "why does the bandicoot importer drop rows?", role="user"),
            turn("s1", 1, "The bandicoot importer drops rows whose timestamp has no zone."),
            turn("s1", 2, "Fixed: the bandicoot importer assumes UTC now."),
        ]
    )
    r = pub.funes("push", "ana/kb", "--create", "--yes")
    assert r.returncode == 0, r.stderr
    reader = Machine(tmp_path / "bob", hub, user="reader")  # someone else reading ana's memory
    r = reader.funes("sessions", "--memory", "ana/kb")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    head = next(ln for ln in lines if ln.startswith("["))
    assert head.endswith(" 3 turns s1")
    assert "<<<untrusted passage from ana/kb" in r.stdout
    assert "  > why does the bandicoot importer drop rows?" in lines
    assert lines[-1] == "sessions 1–1 of 1"

    r = reader.funes("scan", "bandicoot importer", "s1", "--memory", "ana/kb")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == '3 occurrences of "bandicoot importer"'
    assert r.stdout.count("<<<untrusted passage from ana/kb") == 3

    r = reader.funes("get", "s1", "--from", "1", "--to", "2", "--memory", "ana/kb")
    assert r.returncode == 0, r.stderr
    assert "seq1 turn=" in r.stdout and "seq2 turn=" in r.stdout and "seq0 turn=" not in r.stdout
    assert "assumes UTC now" in r.stdout
