"""The sweep's walk of an agent's root lists what ``os.walk`` lists — hidden directories
skipped, symlinked directories not entered, FIFOs, dangling links and link loops reported or passed
through as before — while telling regular files by the listing's file type (no stat per
transcript: `funes status` sweeps 10,000 of them)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from funes.sources import get_source
from funes.sources.jsonl import irregular
from funes.sources.routing import _walk, discover

NAMES = st.sampled_from(
    ["a.jsonl", "b.jsonl", "agent-1.jsonl", "notes.txt", ".hidden.jsonl", "x.json", "c.jsonl"]
)
DIRS = st.sampled_from(["p", "q", ".git", "sub", "agent-x", "r s"])
KINDS = st.sampled_from(["file", "fifo", "link-file", "link-dir", "dangling", "loop", "dir"])


def as_os_walk_did(root: Path, patterns: tuple[str, ...]) -> list[tuple[str, str | None]]:
    """The walk as it was written before (os.walk, a stat per file, Path.match)."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            f = Path(dirpath, name)
            if (why := irregular(f)) is not None:
                if any(f.match(p) for p in patterns):
                    found.append((f, why))
            elif any(f.match(p) for p in patterns):
                found.append((f, None))
    found.sort(key=lambda fw: (fw[0].stem.startswith("agent-"), str(fw[0])))
    return [(str(f), why) for f, why in found]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.lists(DIRS, max_size=3), NAMES, KINDS), max_size=25))
def test_the_walk_lists_what_os_walk_listed(tree: list) -> None:
    base = Path(tempfile.mkdtemp(prefix="walk-"))
    try:
        root = base / "root"
        root.mkdir()
        (base / "outside").mkdir()
        (base / "outside" / "o.jsonl").write_text("{}\n")
        for dirs, name, kind in tree:
            d = root.joinpath(*dirs)
            try:
                d.mkdir(parents=True, exist_ok=True)
                p = d / name
                if p.exists() or p.is_symlink():
                    continue
                if kind == "file":
                    p.write_text("{}\n")
                elif kind == "fifo":
                    os.mkfifo(p)
                elif kind == "link-file":
                    p.symlink_to(base / "outside" / "o.jsonl")
                elif kind == "link-dir":
                    p.symlink_to(base / "outside")  # never entered
                elif kind == "dangling":
                    p.symlink_to(base / "nowhere")
                elif kind == "loop":
                    p.symlink_to(p)
                else:
                    (p / "inner.jsonl").parent.mkdir()
                    (p / "inner.jsonl").write_text("{}\n")
            except (FileExistsError, NotADirectoryError):
                continue  # a name already taken by a file: that path is not built
        claude = get_source("claude")
        got = [(str(f), why) for f, why in _walk(root, claude)]
        assert got == as_os_walk_did(root, claude.patterns)
        if got:
            assert [str(u.path) for u in discover([root], "claude")] == [f for f, _ in got]
    finally:
        shutil.rmtree(base)


def test_a_fifo_among_transcripts_is_reported_and_never_opened(tmp_path: Path) -> None:
    root = tmp_path / ".claude" / "projects" / "-home-ana-proj"
    root.mkdir(parents=True)
    (root / "s1.jsonl").write_text("{}\n")
    os.mkfifo(root / "s2.jsonl")
    got = _walk(tmp_path / ".claude" / "projects", get_source("claude"))
    assert [(f.name, why) for f, why in got] == [
        ("s1.jsonl", None),
        ("s2.jsonl", "not a regular file: a named pipe"),
    ]


def test_sweep_paths_lists_what_the_sweep_lists_for_every_agent(tmp_path: Path) -> None:
    """`funes status` counts waiting transcripts over ``sweep_paths`` (path strings, no unit
    per file); an index run reads ``sweep``: both see the same files, errors and pruning (a
    Gemini session resumed from ``.json`` into ``.jsonl`` is read once)."""
    import agent_homes as ah

    for write in (ah.write_gemini, ah.write_omp, ah.write_copilot, ah.write_qwen, ah.write_cline,
                  ah.write_roo, ah.write_openclaw, ah.write_cursor_cli):  # fmt: skip
        write(tmp_path)
    chats = tmp_path / ".gemini" / "tmp" / "tiles" / "chats"
    (chats / "session-2026-05-03T08-00-5f0c9e2a.json").write_text('{"messages": []}')
    (chats / "session-2026-05-04T08-00-older.json").write_text('{"messages": []}')
    claude = tmp_path / ".claude" / "projects" / "-home-ana-proj"
    claude.mkdir(parents=True)
    (claude / "s1.jsonl").write_text("{}\n")
    (claude / "agent-s1.jsonl").write_text("{}\n")
    os.mkfifo(claude / "s2.jsonl")
    from funes.sources import sweep
    from funes.sources.routing import sweep_paths

    units = sweep(tmp_path)
    assert {u.source.name for u in units if u.source} >= {"gemini", "claude", "qwen", "cline"}
    assert not any(u.path.name == "session-2026-05-03T08-00-5f0c9e2a.json" for u in units)
    assert any(u.error for u in units)  # the FIFO, reported and never opened
    as_units = [(str(u.path), u.source, u.error) for u in units]
    got = sweep_paths(tmp_path)
    assert sorted(got, key=lambda t: t[0]) == sorted(as_units, key=lambda t: t[0])
