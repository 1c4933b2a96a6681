"""`funes curate` and project memories against the loopback Hub: only included sessions are
pushed, excluded ones never, new (and grown) sessions come back as pending review."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hubserver.helpers import Machine, hub, remote_table, turn
from hubserver.server import HubServer

__all__ = ["hub"]  # the fixture


def session(name: str, marker: str, repo: str = "ana/app") -> list[dict[str, Any]]:
    return [
        turn(name, 0, f"why is the {marker} cache slow?", role="user", repo=repo),
        turn(name, 1, f"{marker}: we chose the simpler approach", repo=repo),
        turn(name, 2, f"{marker}: the follow-up fix", repo=repo),
    ]


@pytest.mark.needs_scanner
def test_project_memory_ships_only_included_sessions(hub: HubServer, tmp_path: Path) -> None:
    ana = Machine(tmp_path / "ana", hub)
    ana.index(session("s1-aaaa", "quokka") + session("s2-bbbb", "wombat"))
    ana.index(session("s9-other", "numbat", repo="ana/elsewhere"))
    hub.create_repo("ana/proj", private=True)

    r = ana.funes("curate", "ana/proj")
    assert r.returncode == 2 and "not a project memory" in r.stderr
    r = ana.funes("curate", "ana/proj", "app")
    assert r.returncode == 2 and "did you mean ana/app" in r.stderr
    r = ana.funes("curate", "ana/proj", "ana/app")
    assert r.returncode == 1 and "--yes" in r.stderr
    assert not any(p.startswith("chunks.lance") for p in hub.files("ana/proj"))

    # Stamping: one commit of an empty dataset carrying `project`; then the pending list.
    r = ana.funes("curate", "ana/proj", "ana/app", "--yes")
    assert r.returncode == 0, r.stderr
    assert "now the project memory of ana/app" in r.stdout
    assert "s1-aaaa" in r.stdout and "s2-bbbb" in r.stdout and "s9-other" not in r.stdout
    assert "chunks=3" in r.stdout and "why is the quokka cache slow?" in r.stdout
    assert "2 sessions of ana/app pending review; skipped 1 of other repos" in r.stdout
    assert "funes curate: project memory of ana/app" in hub.repo("ana/proj").commits[-1].title

    r = ana.funes("curate", "ana/proj", "ana/other")
    assert r.returncode == 1 and "not ana/other" in r.stderr  # no renaming
    r = ana.funes("curate", "ana/proj", "--include", "s")
    assert r.returncode == 1 and "names 3 sessions" in r.stderr

    r = ana.funes("curate", "ana/proj", "--include", "s1", "--exclude", "s2-bbbb")
    assert r.returncode == 0, r.stderr
    assert "project memory of ana/app — recorded 1 include, 1 exclude" in r.stdout
    cur = (tmp_path / "ana" / "funes" / "curation" / "hf___datasets_ana_proj").read_text()
    lines = cur.splitlines()
    assert lines[0].startswith("include s1-aaaa 3   # 2026-11-10 why is the quokka cache slow?")
    assert lines[1].startswith("exclude s2-bbbb   # 2026-11-10 why is the wombat")
    # A new decision for a session replaces its line; others are kept verbatim.
    (tmp_path / "ana" / "funes" / "curation" / "hf___datasets_ana_proj").write_text(
        cur + "# my own note\n"
    )
    r = ana.funes("curate", "ana/proj", "--exclude", "s2-bbbb")
    assert r.returncode == 0, r.stderr
    cur = (tmp_path / "ana" / "funes" / "curation" / "hf___datasets_ana_proj").read_text()
    assert cur.count("s2-bbbb") == 1 and "# my own note" in cur and "include s1-aaaa 3" in cur

    r = ana.funes("push", "ana/proj", "--yes")
    assert r.returncode == 0, r.stderr
    assert "pushed 3 chunks" in r.stdout, r.stdout
    t = remote_table(hub, "ana/proj")
    assert set(t.column("session_id").to_pylist()) == {"s1-aaaa"}
    assert (t.schema.metadata or {}).get(b"project") == b"ana/app"
    r = ana.funes("push", "ana/proj")
    assert r.returncode == 0 and "already up to date" in r.stdout
    assert "pending review" not in r.stdout

    # A new session of the project is pending review, never pushed on its own.
    ana.index(session("s3-cccc", "kinkajou"))
    st = ana.funes("status", "ana/proj")
    assert st.returncode == 0, st.stderr
    assert "pending review: 1 session — run `funes curate hf://datasets/ana/proj`" in st.stdout
    assert "project: ana/app" in st.stdout
    assert "local push: up to date" in st.stdout
    r = ana.funes("push", "ana/proj")
    assert r.returncode == 0, r.stderr
    assert "already up to date" in r.stdout
    assert "1 session on this machine pending review" in r.stdout
    r = ana.funes("curate", "ana/proj")
    assert r.returncode == 0 and "s3-cccc" in r.stdout and "s2-bbbb" not in r.stdout

    # An included session that grew goes back to review; its new rows stay here.
    ana.index([turn("s1-aaaa", 3, "quokka: one more thing", repo="ana/app")])
    st = ana.funes("status", "ana/proj")
    assert "pending review: 2 sessions" in st.stdout
    r = ana.funes("push", "ana/proj")
    assert r.returncode == 0 and "already up to date" in r.stdout
    r = ana.funes("curate", "ana/proj", "--include", "s1-aaaa", "s3")
    assert r.returncode == 0 and "recorded 2 include, 0 exclude" in r.stdout
    r = ana.funes("push", "ana/proj")
    assert r.returncode == 0 and "pushed 4 chunks" in r.stdout, r.stdout + r.stderr
    t = remote_table(hub, "ana/proj")
    assert set(t.column("session_id").to_pylist()) == {"s1-aaaa", "s3-cccc"}
    assert len(t) == 7


@pytest.mark.needs_scanner
def test_personal_memory_is_untouched_by_curation(hub: HubServer, tmp_path: Path) -> None:
    ana = Machine(tmp_path / "ana", hub)
    ana.index(session("s1-aaaa", "quokka") + session("s2-bbbb", "wombat"))
    r = ana.funes("push", "ana/kb", "--create")
    assert r.returncode == 0 and "pushed 6 chunks" in r.stdout, r.stdout + r.stderr
    r = ana.funes("curate", "ana/kb", "ana/app", "--yes")
    assert r.returncode == 1 and "personal memory" in r.stderr
    st = ana.funes("status", "ana/kb")
    assert "pending review" not in st.stdout and "project:" not in st.stdout
