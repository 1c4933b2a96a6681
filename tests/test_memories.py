"""Memory specs → memories: one resolver opens local, remote and several memories, each with
the origin (and so the trust) it was read from; opening a local directory never asks the Hub."""

from __future__ import annotations

from pathlib import Path

import pytest

from funes import memories
from funes.errors import FunesError
from funes.hub.spec import MemorySpec, State
from funes.store.memory import MemoryMissing, open_memory
from funes.store.paths import default_memory_dir


def test_a_local_directory_is_the_users_own_words(tmp_path: Path) -> None:
    open_memory(tmp_path / "m", create=True)
    mem = memories.open_one(str(tmp_path / "m"))
    assert not mem.origin.remote
    assert mem.trusted and mem.note == ""
    assert mem.label == str(tmp_path / "m")


def test_several_memories_are_refused_where_one_is_read(tmp_path: Path) -> None:
    with pytest.raises(FunesError, match="names several memories; this command reads one"):
        memories.open_one(f"{tmp_path / 'a'},{tmp_path / 'b'}")


def test_several_memories_open_in_the_order_named(tmp_path: Path) -> None:
    for name in ("a", "b"):
        open_memory(tmp_path / name, create=True)
    mems = memories.open_all(f"{tmp_path / 'b'},{tmp_path / 'a'},{tmp_path / 'b'}")
    assert [m.path for m in mems] == [tmp_path / "b", tmp_path / "a"]


def test_open_memory_reads_a_spec_as_a_local_directory_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(MemoryMissing, match=f"no index found at {tmp_path / 'ana' / 'kb'}"):
        open_memory("ana/kb")


def test_a_remote_is_read_from_its_cached_copy_with_its_uri_and_trust(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    open_memory(tmp_path / "snap", create=True)
    monkeypatch.setattr(memories, "locate", lambda spec: (tmp_path / "snap", "", State.READY))
    monkeypatch.setattr(memories, "is_own", lambda spec: spec.owner == "me")
    theirs = memories.open_one("team/kb")
    assert theirs.origin.remote and not theirs.trusted
    assert theirs.label == "hf://datasets/team/kb"
    mine = memories.open_spec(MemorySpec(repo_id="me/kb"))
    assert mine.origin.remote and mine.trusted


def test_an_unreachable_remote_without_a_cache_reads_the_local_memory_with_a_note(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    note = "remote hf://datasets/team/kb unreachable — recalling from your local memory\n"
    monkeypatch.setattr(memories, "locate", lambda spec: (None, note, State.OFFLINE))
    with pytest.raises(FunesError, match="unreachable and no local index yet"):
        memories.open_one("team/kb")
    open_memory(None, create=True)
    mem = memories.open_one("team/kb")
    assert mem.path == default_memory_dir() and not mem.origin.remote
    assert mem.note == note and mem.trusted
    assert mem.label == str(default_memory_dir())
