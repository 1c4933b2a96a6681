"""Serve-time masking: recall and get on a memory this install never redacted or scanned (built
with `funes-chunk --no-redact`, or someone else's) print `[REDACTED:<detector>]` in place of
what the built-in detectors find — also when a secret straddles two stored pieces."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import run_cli
from test_scrub import SID, build_unredacted, leaks, served

from funes.secrets import RULES_VERSION, find
from funes.store.redaction import mask_for_serving, mask_pieces, mask_rows, vouched


@pytest.fixture(scope="module")
def unscanned(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    home = tmp_path_factory.mktemp("mask-home")
    mem = tmp_path_factory.mktemp("mask") / "mem"
    return mem, build_unredacted(home, mem)


def test_recall_and_get_mask_secrets_of_an_unscanned_memory(
    unscanned: tuple[Path, dict[str, str]],
) -> None:
    mem, values = unscanned
    from funes.store import open_memory

    stored = "\n".join(open_memory(mem).rows(columns=("text",)).column("text").to_pylist())
    assert len(leaks(stored.encode(), values)) == len(values), "the rows hold every value"
    assert not vouched(mem)
    out = served(mem)
    assert b"[REDACTED:" in out and not leaks(out, values)
    # every kind is masked in whatever block serves it: mask the whole table as served text
    m = open_memory(mem)
    rows = m.rows(columns=("session_id", "turn_uuid", "block_idx", "split_idx", "text"))
    rows = rows.to_pylist()
    mask_for_serving(m, rows, whole_blocks=True)
    masked = "\n".join(r["text"] for r in rows)
    assert not leaks(masked.encode(), values)
    for detector in set(values.values()):
        assert f"[REDACTED:{detector}]" in masked


def test_mcp_tools_mask_too(unscanned: tuple[Path, dict[str, str]]) -> None:
    from funes import mcp_server

    mem, values = unscanned
    memories = mcp_server.Memories(str(mem))
    got = mcp_server.get(memories, SID, f"{SID[:8]}-turn-0016", 500)
    assert "[REDACTED:" in got and not leaks(got.encode(), values)
    rec = mcp_server.recall(memories, "export npm run deploy staging", k=20)
    assert "[REDACTED:" in rec and not leaks(rec.encode(), values)


def test_a_stamped_memory_is_served_as_stored(
    unscanned: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    # The stamp is what skips masking: on a copy that claims to be scanned, text comes back
    # as stored (this is why only `funes index` and `funes scrub` write the stamp).
    mem = Path(shutil.copytree(unscanned[0], tmp_path / "mem"))
    stamp = {"format": 1, "scrub": {"scanner": "x", "rules": RULES_VERSION}}
    (mem / "redaction.json").write_text(json.dumps(stamp))
    assert vouched(mem)
    r = run_cli("funes", "get", SID, f"{SID[:8]}-turn-0016", "--window", "2", "--memory", mem)
    assert leaks(r.stdout, unscanned[1])


@pytest.mark.parametrize("part", ["ingest", "scrub"])
def test_a_memory_redacted_with_older_rules_is_masked_with_the_current_ones(
    unscanned: tuple[Path, dict[str, str]], tmp_path: Path, part: str
) -> None:
    # An older funes redacted (or scrubbed) this memory with rules that missed some kinds of
    # secret: its stamp names those rules, so this install masks what its own rules find.
    mem = Path(shutil.copytree(unscanned[0], tmp_path / "mem"))
    for rules in ("0123456789abcdef", None):
        stamp = {"format": 1, part: {"detectors": "builtin", "scanner": "x"}}
        if rules:
            stamp[part]["rules"] = rules
        (mem / "redaction.json").write_text(json.dumps(stamp))
        assert not vouched(mem)
        out = served(mem)
        assert b"[REDACTED:" in out and not leaks(out, unscanned[1])


def test_a_secret_cut_by_a_split_is_masked_in_both_pieces() -> None:
    token = "ghp_iK2ZWeqhFWCEPyYngFb51yBMWXaSCrUZoL8g"  # fake, random characters
    head, tail = token[:20], token[20:]
    a = "x" * 50 + " GITHUB " + head
    b = a[-30:] + tail + " done"  # b overlaps a's last 30 characters, like a split does
    assert not find(a) and not find(b[30:])
    ma, mb = mask_pieces([a, b])
    assert head not in ma and tail not in mb and token[10:] not in mb
    assert ma.endswith("[REDACTED:github-pat]") and mb.endswith("[REDACTED:github-pat] done")
    assert mask_pieces(["clean", "text"]) == ["clean", "text"]


def test_mask_rows_uses_siblings_without_changing_them() -> None:
    token = "glpat-x7Kq2_Lm9Rt-Zp4Wv8Yc"  # fake, random characters
    rows = [{"session_id": "s", "turn_uuid": "t", "block_idx": 0, "split_idx": 1,
             "text": token[8:] + " tail"}]  # fmt: skip
    sib = {"session_id": "s", "turn_uuid": "t", "block_idx": 0, "split_idx": 0,
           "text": "GITLAB_TOKEN=" + token[:8]}  # fmt: skip
    mask_rows(rows, [sib])
    assert rows[0]["text"] == "[REDACTED:gitlab-pat] tail"
    assert sib["text"] == "GITLAB_TOKEN=" + token[:8]
