"""The publish gate end to end: blocks holding secrets (seeded with bench/secret_detection.py's
generator, stored unredacted) never reach the Hub; clean blocks do; nothing left → exit 2; no
scanner → nothing leaves."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest
from conftest import REPO
from hubserver.helpers import Machine, hub, remote_table, turn
from hubserver.server import HubServer

__all__ = ["hub"]


def _seeds(contexts: tuple[str, ...] = ("prose", "shell", "straddle", "tool_output")) -> list:
    spec = importlib.util.spec_from_file_location(
        "secret_detection", REPO / "bench" / "secret_detection.py"
    )
    assert spec and spec.loader
    sd = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("secret_detection", sd)  # dataclasses look their module up
    spec.loader.exec_module(sd)
    seeds = sd.seeded_corpus(per_detector=1, seed=23)
    by_detector: dict[str, dict[str, object]] = {}
    for s in seeds:
        by_detector.setdefault(s.detector, {})[s.context] = s
    picked = []
    for i, (_, ctx) in enumerate(sorted(by_detector.items())):
        want = contexts[i % len(contexts)]
        picked.append(ctx.get(want) or next(c for k, c in ctx.items() if k in contexts))
    return picked


def _secret_session(seeds: list, sid: str = "leaky", start: int = 0) -> list[dict]:
    return [
        turn(sid, start + i, s.text, role="user" if i % 2 else "assistant")
        for i, s in enumerate(seeds)
    ]


def _all_bytes(hub: HubServer, repo: str) -> bytes:
    return b"\n".join(hub.files(repo).values())


@pytest.mark.needs_scanner
def test_blocks_with_secrets_stay_home_and_clean_ones_go(hub: HubServer, tmp_path: Path) -> None:
    seeds = _seeds()
    assert any(s.context == "straddle" for s in seeds)  # a secret across the chunk split
    clean = [
        turn("leaky", 10_000 + i, f"clean note {i}: the lemur cache keeps 256 entries")
        for i in range(3)
    ]
    ana = Machine(tmp_path / "ana", hub)
    written = ana.index(_secret_session(seeds) + clean)
    assert written["written"] > len(seeds)
    r = ana.funes("push", "ana/kb", "--create")
    assert r.returncode == 0, r.stderr
    assert "held back" in r.stdout and "funes scrub" in r.stdout
    assert "pushed 3 chunks" in r.stdout
    blob = _all_bytes(hub, "ana/kb")
    texts = "\n".join(t or "" for t in remote_table(hub, "ana/kb").column("text").to_pylist())
    for s in seeds:
        for frag in [s.value, *s.value.splitlines()[1:-1]]:
            if len(frag) >= 16:
                assert frag not in texts and frag.encode() not in blob, s.detector
    assert texts.count("lemur cache") == 3
    # The summary names detectors, never values.
    assert not any(s.value in r.stdout + r.stderr for s in seeds)
    # status says what is still pending here and that the gate would hold it back.
    st = ana.funes("status", "ana/kb")
    assert st.returncode == 0, st.stderr
    assert "chunks: 3" in st.stdout and "local push: 1 of 1 session pending" in st.stdout
    assert re.search(r"  (1 pending row holds|\d+ pending rows hold) secrets", st.stdout)
    assert not any(s.value in st.stdout for s in seeds)


@pytest.mark.needs_scanner
def test_everything_held_back_exits_2_with_a_summary_by_detector(
    hub: HubServer, tmp_path: Path
) -> None:
    seeds = _seeds(("prose",))[:4]
    ana = Machine(tmp_path / "ana", hub)
    ana.index(_secret_session(seeds))
    hub.create_repo("ana/kb", private=True)
    r = ana.funes("push", "ana/kb", "--yes")
    assert r.returncode == 2, r.stderr
    assert "nothing published — held back" in r.stderr
    assert "×" in r.stderr and any(s.detector in r.stderr for s in seeds)
    assert not any(s.value in r.stderr for s in seeds)
    assert len(hub.repo("ana/kb").commits) == 1  # nothing uploaded


def test_no_scanner_means_no_push(hub: HubServer, tmp_path: Path) -> None:
    ana = Machine(tmp_path / "ana", hub)
    ana.index([turn("s1", 0, "a perfectly clean note about wombats")])
    hub.create_repo("ana/kb", private=True)
    env = {"FUNES_SCANNER": "trufflehog", "FUNES_TRUFFLEHOG": "", "PATH": "/nonexistent"}
    r = ana.funes("push", "ana/kb", "--yes", env=env)
    assert r.returncode == 1
    assert "secret scan could not run" in r.stderr
    assert len(hub.repo("ana/kb").commits) == 1
    assert not any(p.startswith("chunks.lance") for p in hub.files("ana/kb"))
