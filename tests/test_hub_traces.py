"""`funes index OWNER/NAME`: agent-trace datasets read through the Hub's parquet conversion
(refs/convert/parquet), one unit per shard signed by the convert commit — against the loopback
Hub server."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hubserver.helpers import Machine, hub
from hubserver.server import HubServer

from funes.errors import FunesError
from funes.hub.traces import target

__all__ = ["hub"]

SHARD0 = "default/train/0000.parquet"
SHARD1 = "default/train/0001.parquet"


def shard(rows: list[dict]) -> bytes:
    """An agents-traces parquet file: one row per session, messages as JSON strings."""
    s = pa.string()
    table = pa.table(
        {
            "session_id": pa.array([r["session_id"] for r in rows], s),
            "messages": pa.array(
                [[json.dumps(m) for m in r["messages"]] for r in rows], pa.list_(s)
            ),
            "sent_at": pa.array([r.get("sent_at") for r in rows], s),
            "harness": pa.array([r.get("harness", "codex") for r in rows], s),
            "metadata": pa.array(
                [json.dumps({"cwd": r["cwd"]}) if "cwd" in r else None for r in rows], s
            ),
        }
    )
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def session(sid: str, question: str, answer: str, cwd: str | None = None) -> dict:
    row: dict = {
        "session_id": sid,
        "sent_at": "2026-10-01T12:00:00.000Z",
        "messages": [
            {"role": "user", "content": question},
            {"role": "assistant", "content": answer},
        ],
    }
    if cwd:
        row["cwd"] = cwd
    return row


def publish_traces(hub: HubServer, repo: str = "ana/traces", private: bool = False) -> str:
    hub.create_repo(repo, private=private)
    c = hub.convert(
        repo,
        {
            SHARD1: shard(
                [session("tr-ocelot", "how does the ocelot scheduler retry?",
                         "The ocelot scheduler retries failed jobs with jittered exponential "
                         "backoff, capped at ninety seconds.", cwd="/srv/ocelot")]
            ),
            SHARD0: shard(
                [session("tr-quokka", "where do quokka thumbnails live?",
                         "Quokka thumbnails are written to the cold bucket under thumbs/v2.")]
            ),
            "default/train/README.txt": b"not a shard",
        },
    )  # fmt: skip
    return c.oid


def downloads(hub: HubServer) -> list[str]:
    return [r.path for r in hub.requests() if "/resolve/" in r.path and r.method == "GET"]


def test_a_two_shard_trace_dataset_is_indexed_and_recallable_with_provenance(
    hub: HubServer, tmp_path: Path
) -> None:
    commit = publish_traces(hub)
    m = Machine(tmp_path / "m", hub)
    r = m.funes("index", "ana/traces")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("indexed sessions=2 skipped=0 chunks=4 ")
    assert f"2 parquet shards at refs/convert/parquet (commit {commit[:8]})" in r.stderr
    # Both shards were downloaded at the convert commit, in path order, and nothing else was.
    assert [p.split("/resolve/")[1] for p in downloads(hub)] == [
        f"{commit}/{SHARD0}",
        f"{commit}/{SHARD1}",
    ]
    snap = tmp_path / "m/hf/hub/datasets--ana--traces/snapshots" / commit
    assert (snap / SHARD0).is_file() and (snap / SHARD1).is_file()

    r = m.funes("recall", "jittered exponential backoff capped", "-k", "1", "--json")
    assert r.returncode == 0, r.stderr
    hit = json.loads(r.stdout)
    assert "jittered exponential backoff" in hit["text"]
    assert hit["session_id"] == "tr-ocelot" and hit["harness"] == "codex"
    assert hit["source_path"] == f"hf://datasets/ana/traces/{SHARD1}"
    assert hit["workdir"] == "-srv-ocelot"
    r = m.funes("recall", "cold bucket thumbs v2", "-k", "1", "--json")
    hit = json.loads(r.stdout)
    assert hit["session_id"] == "tr-quokka" and hit["workdir"] == "0000"  # the shard's stem
    # Hub shards are not transcripts on this machine: status has nothing pending for them.
    st = m.funes("status")
    assert st.returncode == 0 and "pending" not in st.stdout and "sessions: 2" in st.stdout


def test_an_unchanged_dataset_is_skipped_and_a_new_conversion_is_read_again(
    hub: HubServer, tmp_path: Path
) -> None:
    publish_traces(hub)
    m = Machine(tmp_path / "m", hub)
    assert m.funes("index", "hf://datasets/ana/traces").returncode == 0
    hub.clear_log()
    r = m.funes("index", "ana/traces")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("indexed sessions=0 skipped=2 chunks=0 ")
    assert downloads(hub) == []  # skipped shards are not even fetched
    state = json.loads((tmp_path / "m/funes/memory/state.json").read_text())
    assert sorted(state) == [f"hf://datasets/ana/traces/{SHARD0}", f"hf://datasets/ana/traces/{SHARD1}"]  # fmt: skip

    # The dataset grows a session; the Hub re-converts it: both shards are read again, and
    # only the new session's chunks are written.
    new = hub.convert(
        "ana/traces",
        {
            **{p: d for p, d in hub.repo("ana/traces").converts["parquet"][-1].files.items()},
            SHARD1: shard(
                [session("tr-ocelot", "how does the ocelot scheduler retry?",
                         "The ocelot scheduler retries failed jobs with jittered exponential "
                         "backoff, capped at ninety seconds.", cwd="/srv/ocelot"),
                 session("tr-wombat", "why is the wombat build slow?",
                         "The wombat build is slow because protobuf stubs regenerate on every run.")]
            ),
        },
    )  # fmt: skip
    hub.clear_log()
    r = m.funes("index", "ana/traces")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("indexed sessions=3 skipped=0 chunks=2 ")
    # Both shards are resolved at the new commit; the unchanged one's bytes are already in
    # the HF cache (same blob), so only the changed shard is downloaded.
    resolved = {r.path.split("/resolve/")[1] for r in hub.requests() if "/resolve/" in r.path}
    assert resolved == {f"{new.oid}/{SHARD0}", f"{new.oid}/{SHARD1}"}
    assert [p.split("/resolve/")[1] for p in downloads(hub)] == [f"{new.oid}/{SHARD1}"]
    r = m.funes("recall", "protobuf stubs regenerate", "-k", "1", "--json")
    assert json.loads(r.stdout)["session_id"] == "tr-wombat"


def test_sessions_are_counted_from_the_rows_not_the_shards(hub: HubServer, tmp_path: Path) -> None:
    hub.create_repo("ana/pair")
    hub.convert(
        "ana/pair",
        {SHARD0: shard([session("tr-heron", "where do heron logs go?", "Heron logs go to /var/log/heron."),
                        session("tr-ibis", "why is ibis slow?", "Ibis is slow because it re-reads its cache.")])},
    )  # fmt: skip
    m = Machine(tmp_path / "m", hub)
    r = m.funes("index", "ana/pair", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert (doc["sessions"], doc["skipped"], doc["chunks"]) == (2, 0, 4)
    assert m.funes("status").stdout.count("sessions: 2") == 1
    r = m.funes("index", "ana/pair")
    assert r.stdout.startswith("indexed sessions=0 skipped=1 chunks=0 ")


def test_a_dataset_without_a_parquet_conversion_is_one_clear_error(
    hub: HubServer, tmp_path: Path
) -> None:
    hub.create_repo("ana/notes")
    m = Machine(tmp_path / "m", hub)
    r = m.funes("index", "ana/notes")
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.splitlines() == [
        "funes: hf://datasets/ana/notes has no refs/convert/parquet branch (not an "
        "agent-traces dataset?) — the Hub converts a dataset to parquet once its viewer can "
        "read it"
    ]
    assert not (tmp_path / "m/funes/memory/state.json").exists()


def test_private_datasets_get_the_same_messages_as_remote_recall(
    hub: HubServer, tmp_path: Path
) -> None:
    publish_traces(hub, private=True)
    for name, user in (("anon", None), ("bob", "bob")):
        m = Machine(tmp_path / name, hub, user=user)
        r = m.funes("index", "ana/traces")
        assert r.returncode == 1 and r.stdout == ""
        assert len(r.stderr.splitlines()) == 1
        recall = m.funes("recall", "ocelot", "--memory", "ana/traces")
        assert recall.returncode == 1
        assert r.stderr == recall.stderr
        want = "not found on the Hub, or private — " if user is None else "not found on the Hub"
        assert want in r.stderr
        assert "hf_" not in r.stderr  # no token in the message
    # The owner's token reads it.
    r = Machine(tmp_path / "ana", hub).funes("index", "ana/traces")
    assert r.returncode == 0 and "sessions=2" in r.stdout


def test_index_targets_local_paths_win_over_hub_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert target("ana/traces") == "ana/traces"
    assert target("hf://datasets/ana/traces") == "ana/traces"
    assert target("./ana/traces") is None and target("/abs/x") is None
    assert target("a/b/c") is None  # a dataset name has two parts; this is a (missing) path
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ana" / "traces").mkdir(parents=True)
    assert target("ana/traces") is None
    with pytest.raises(FunesError, match="hf://datasets/OWNER/NAME"):
        target("hf://models/ana/traces")


def test_an_unreachable_hub_is_one_line_and_nothing_is_recorded(
    hub: HubServer, tmp_path: Path
) -> None:
    publish_traces(hub)
    m = Machine(tmp_path / "m", hub)
    hub.stop()
    r = m.funes("index", "ana/traces")
    assert r.returncode == 1 and r.stdout == ""
    [line] = r.stderr.splitlines()
    assert line.startswith("funes: the Hub is unreachable (") and "hf_" not in line
    assert not (tmp_path / "m/funes/memory/state.json").exists()
