"""`funes push` against the loopback Hub: append-only commits, only new chunks, races, access
control, the wrong-memory guard and the dataset card."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hubserver.helpers import Machine, commit_files, hub, remote_table, turn
from hubserver.server import HubServer

__all__ = ["hub"]  # the fixture


def session(name: str, marker: str, turns: int = 2) -> list[dict]:
    return [
        turn(name, i, f"{marker} turn {i}: we chose the {marker} approach because it is simpler")
        for i in range(turns)
    ]


@pytest.mark.needs_scanner
def test_first_push_creates_a_private_repo_and_a_second_push_sends_only_the_new_turn(
    hub: HubServer, tmp_path: Path
) -> None:
    ana = Machine(tmp_path / "ana", hub)
    ana.index(session("s1", "quokka", 3))
    r = ana.funes("push", "ana/kb")
    assert r.returncode == 1 and "--create" in r.stderr  # consent first
    assert ("dataset", "ana/kb") not in hub.repos
    r = ana.funes("push", "ana/kb", "--create")
    assert r.returncode == 0, r.stderr
    assert "pushed 3 chunks" in r.stdout and "dataset card created" in r.stdout
    repo = hub.repo("ana/kb")
    assert repo.private
    files = hub.files("ana/kb")
    assert any(p.startswith("chunks.lance/data/") for p in files)
    assert "lexical/manifest.json" in files and "README.md" in files
    assert not any(p.endswith(("store.lock", "state.json")) for p in files)
    first_bytes = hub.uploaded_bytes()

    r = ana.funes("push", "ana/kb")
    assert r.returncode == 0 and "already up to date" in r.stdout
    assert len(repo.commits) == 2

    ana.index([turn("s1", 3, "quokka turn 3: the follow-up fix")])
    hub.clear_log()
    r = ana.funes("push", "ana/kb")
    assert r.returncode == 0, r.stderr
    assert "pushed 1 chunks" in r.stdout and "dataset card refreshed" in r.stdout
    changed = commit_files(hub, "ana/kb", -1)
    assert len([p for p in changed if p.startswith("chunks.lance/data/")]) == 1
    assert hub.uploaded_bytes() < first_bytes
    t = remote_table(hub, "ana/kb")
    ids = t.column("id").to_pylist()
    assert len(ids) == 4 == len(set(ids))
    assert "| Chunks | 4 |" in hub.files("ana/kb")["README.md"].decode()


@pytest.mark.needs_scanner
def test_two_racing_pushes_both_land_once(hub: HubServer, tmp_path: Path) -> None:
    hub.create_repo("team/kb", private=True)
    a, b = Machine(tmp_path / "a", hub), Machine(tmp_path / "b", hub, user="ana")
    a.index(session("sa", "wombat"))
    b.index(session("sb", "platypus", 3))
    hub.commit_barrier = 2  # both commits are built on the same head; one must retry
    procs = [m.popen("push", "team/kb", "--yes") for m in (a, b)]
    outs = [p.communicate(timeout=180) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1] for o in outs]
    assert any(r.status == 412 for r in hub.requests())
    t = remote_table(hub, "team/kb")
    ids = t.column("id").to_pylist()
    assert len(ids) == 5 == len(set(ids))
    assert set(t.column("session_id").to_pylist()) == {"sa", "sb"}
    # The lexical index that travelled covers both contributions, each once.
    manifest = json.loads(hub.files("team/kb")["lexical/manifest.json"])
    assert sum(s["docs"] for s in manifest["segments"]) == 5


def test_read_only_token_cannot_push_and_says_so(hub: HubServer, tmp_path: Path) -> None:
    hub.create_repo("ana/kb", private=True)
    reader = Machine(tmp_path / "r", hub, user="reader")
    reader.index(session("s1", "numbat"))
    r = reader.funes("push", "ana/kb", "--yes")
    assert r.returncode == 1
    assert "read-only for your token" in r.stderr
    assert len(hub.repo("ana/kb").commits) == 1


def test_push_without_a_token_is_refused(hub: HubServer, tmp_path: Path) -> None:
    m = Machine(tmp_path / "n", hub, user=None)
    m.index(session("s1", "numbat"))
    r = m.funes("push", "ana/kb", "--create")
    assert r.returncode == 1 and "no HF token" in r.stderr


@pytest.mark.needs_scanner
def test_wrong_memory_guard_asks_before_publishing_an_unrelated_memory(
    hub: HubServer, tmp_path: Path
) -> None:
    ana = Machine(tmp_path / "ana", hub)
    ana.index(session("s1", "quokka"))
    assert ana.funes("push", "ana/kb", "--create").returncode == 0
    other = Machine(tmp_path / "other", hub)
    other.index(session("s9", "echidna"))
    r = other.funes("push", "ana/kb")
    assert r.returncode == 1 and "push aborted" in r.stderr and "--yes" in r.stderr
    assert len(hub.repo("ana/kb").commits) == 2
    r = other.funes("push", "ana/kb", "--yes")
    assert r.returncode == 0 and "pushed 2 chunks" in r.stdout


@pytest.mark.needs_scanner
def test_hand_written_card_is_left_alone(hub: HubServer, tmp_path: Path) -> None:
    repo = hub.create_repo("ana/kb", private=False)
    repo.commits[-1].files["README.md"] = b"# my notes\n"
    ana = Machine(tmp_path / "ana", hub)
    ana.index(session("s1", "quokka"))
    r = ana.funes("push", "ana/kb", "--yes")
    assert r.returncode == 0 and "dataset card" not in r.stdout
    assert hub.files("ana/kb")["README.md"] == b"# my notes\n"
    assert not hub.repo("ana/kb").private  # an existing repo keeps its visibility


@pytest.mark.needs_scanner
def test_prefixed_memory_never_touches_the_card(hub: HubServer, tmp_path: Path) -> None:
    hub.create_repo("ana/kb")
    ana = Machine(tmp_path / "ana", hub)
    ana.index(session("s1", "quokka"))
    r = ana.funes("push", "hf://datasets/ana/kb/mem/a", "--yes")
    assert r.returncode == 0, r.stderr
    files = hub.files("ana/kb")
    assert "README.md" not in files
    assert any(p.startswith("mem/a/chunks.lance/data/") for p in files)
    assert len(remote_table(hub, "ana/kb", "mem/a")) == 2
