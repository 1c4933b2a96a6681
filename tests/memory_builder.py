"""Memories built row by row for tests that need a shape no transcript gives cheaply (thousands
of chunks, chosen roles and agents, chosen vectors): the store's own writer, real LanceDB."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from funes.records import Chunk
from funes.store import open_memory


def chunk(
    session: str,
    seq: int,
    text: str,
    *,
    role: str = "assistant",
    harness: str = "claude_code",
    ts: str | None = None,
    block_type: str = "text",
    block_idx: int = 0,
    split_idx: int = 0,
    workdir: str = "/home/ana/app",
    repo: str = "ana/app",
    turn: str | None = None,
) -> Chunk:
    turn_uuid = turn or f"{session}-t{seq}"
    return Chunk(
        id=f"{turn_uuid}:{block_idx}:{split_idx}",
        text=text,
        session_id=session,
        turn_uuid=turn_uuid,
        parent_uuid=None,
        seq=seq,
        ts=ts or f"2026-03-01T10:{seq // 60 % 60:02d}:{seq % 60:02d}.000Z",
        role=role,
        block_type=block_type,
        block_idx=block_idx,
        split_idx=split_idx,
        tool_name=None,
        harness=harness,
        workdir=workdir,
        repo=repo,
        source_path=f"/tmp/{session}.jsonl",
    )


def build(path: Path, chunks: list[Chunk], vectors: Any = "random", seed: int = 0) -> Path:
    """A memory at ``path`` holding ``chunks``: with random unit vectors (``"random"``), the
    given array (one row per chunk), or none (``None``: a words-only memory)."""
    if isinstance(vectors, str):
        rng = np.random.default_rng(seed)
        vectors = rng.standard_normal((len(chunks), 384)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    if vectors is not None:
        for c, v in zip(chunks, vectors, strict=True):
            c.vector = np.asarray(v, dtype=np.float32).tolist()
    mem = open_memory(path, create=True)
    with mem.writer(interactive=False) as w:
        for i in range(0, len(chunks), 5000):
            w.append(chunks[i : i + 5000])
    return path
