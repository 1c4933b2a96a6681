"""The learned second stage: shipped weights load and rank deterministically, a damaged weights
file is one clear line, the assistant's answer beats the user's paraphrase of it, identical
passages collapse into one hit, and cross-validation never scores a question with weights
trained on its own repository."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import REPO, jsonl, run_cli, write_jsonl

from funes import ranker
from funes.errors import FunesError

sys.path.insert(0, str(REPO))  # the bench package lives at the repository root

QUESTION = "why did the nightly export job stop writing files to the bucket?"


def turn(uuid: str, parent: str | None, ts: str, role: str, content: Any) -> dict[str, Any]:
    return {
        "type": role, "uuid": uuid, "parentUuid": parent, "timestamp": ts,
        "sessionId": "s", "cwd": "/home/ana/exporter",
        "message": {"role": role, "content": content},
    }  # fmt: skip


def session(sid: str, day: int, extra: list[dict[str, Any]]) -> list[dict[str, Any]]:
    ts = f"2026-10-{day:02d}T10:00:00.000Z"
    recs = [
        turn(f"{sid}-u1", None, ts, "user", [{"type": "text", "text":
             "the nightly export stopped writing files to the bucket, can you find out why?"}]),
        turn(f"{sid}-a1", f"{sid}-u1", ts, "assistant", [{"type": "text", "text":
             "Found it: the service account lost the storage.objects.create permission when the "
             "IAM policy was rotated on Friday, so every upload returned 403 and the job exited "
             "quietly. I re-granted the role and the export wrote all 14 files."}]),
        *extra,
    ]  # fmt: skip
    for r in recs:
        r["sessionId"] = sid
    return recs


def tool_pair(sid: str, n: int, ts: str) -> list[dict[str, Any]]:
    call = {"type": "tool_use", "id": f"{sid}-t{n}", "name": "Bash",
            "input": {"command": "npm run typecheck"}}  # fmt: skip
    result = {"type": "tool_result", "tool_use_id": f"{sid}-t{n}",
              "content": "tsc: Found 0 errors. Watching for file changes in the export job."}  # fmt: skip
    return [
        turn(f"{sid}-c{n}", None, ts, "assistant", [call]),
        turn(f"{sid}-r{n}", f"{sid}-c{n}", ts, "user", [result]),
    ]


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tr") / ".claude" / "projects" / "-home-ana-exporter"
    write_jsonl(root / "a.jsonl", session("a", 3, tool_pair("a", 1, "2026-10-03T10:05:00Z")
                                         + tool_pair("a", 2, "2026-10-03T10:06:00Z")))  # fmt: skip
    write_jsonl(root / "b.jsonl", session("b", 9, tool_pair("b", 1, "2026-10-09T11:00:00Z")))
    noise = [turn(f"n-{i}", None, "2026-09-01T10:00:00Z", "assistant",
                  [{"type": "text", "text": f"Refactored the CSV writer, step {i}: renamed columns "
                    "and added a header row to the export."}]) for i in range(6)]  # fmt: skip
    write_jsonl(root / "n.jsonl", [{**r, "sessionId": "n"} for r in noise])
    mem = tmp_path_factory.mktemp("mem") / "memory"
    r = run_cli("funes", "index", root, "--yes", "--memory", mem)
    assert r.returncode == 0, r.stderr
    return mem


def query(mem: Path, text: str, *args: str, env: dict[str, str] | None = None) -> Any:
    return run_cli("funes-query", text, "--memory", mem, *args, env=env)


def test_the_answer_outranks_the_question_that_paraphrases_it(memory: Path) -> None:
    hits = jsonl(query(memory, QUESTION, "-k", "5").stdout)
    assert hits[0]["role"] == "assistant" and "storage.objects.create" in hits[0]["text"]
    ranks = {(h["session_id"], h["role"], h["block_type"]): h["rank"] for h in hits}
    user_rank = min(r for (s, role, b), r in ranks.items() if role == "user" and b == "text")
    assert hits[0]["rank"] < user_rank
    assert 0.0 <= hits[0]["answerable"] <= 1.0


def test_identical_tool_outputs_collapse_into_one_hit_with_their_places(memory: Path) -> None:
    hits = jsonl(query(memory, "tsc found 0 errors watching for file changes", "-k", "8").stdout)
    same = [h for h in hits if "tsc: Found 0 errors" in h["text"]]
    assert len(same) == 1, [h["text"][:40] for h in hits]
    dups = same[0]["duplicates"]
    assert len(dups) == 2  # three copies: the hit and two more places
    assert {d["session_id"] for d in dups} | {same[0]["session_id"]} == {"a", "b"}
    for d in dups:
        assert d["get"].startswith(f"funes get {d['session_id']} {d['turn_uuid']} --memory ")
    out = run_cli("funes", "recall", "tsc found 0 errors watching for file changes",
                  "--memory", memory, "-k", "8").stdout.decode()  # fmt: skip
    blocks = [b for b in out.split("---\n") if "tsc: Found 0" in "".join(b.splitlines()[2:3])]
    assert len(blocks) == 1
    assert blocks[0].splitlines()[0].endswith("also in 1 other session")


def test_a_memory_with_no_vectors_ranks_with_weights_fit_for_it(tmp_path: Path) -> None:
    """A memory indexed with --no-embed (or before its vectors are filled in) has no cosine to
    read: recall uses the weights fit on lexical-only pools, so the answer still comes first
    and a question the memory answers word for word is not called weak."""
    assert ranker.load_model().lexical is not None
    root = tmp_path / ".claude" / "projects" / "-home-ana-exporter"
    write_jsonl(root / "a.jsonl", session("a", 3, tool_pair("a", 1, "2026-10-03T10:05:00Z")))
    mem = tmp_path / "memory"
    r = run_cli("funes", "index", root, "--no-embed", "--yes", "--memory", mem)
    assert r.returncode == 0, r.stderr
    hits = jsonl(query(mem, "which permission did the service account lose?", "-k", "3").stdout)
    assert "storage.objects.create" in hits[0]["text"], [h["text"][:40] for h in hits]
    assert hits[0]["verdict"] == "strong"


def test_the_same_memory_and_question_rank_the_same_every_time(memory: Path) -> None:
    first = jsonl(query(memory, QUESTION, "-k", "8").stdout)
    for _ in range(2):
        again = jsonl(query(memory, QUESTION, "-k", "8").stdout)
        assert [h["id"] for h in again] == [h["id"] for h in first]
        # vectors are batch-independent to 1e-5, so a score may move in its sixth decimal
        assert [h["score"] for h in again] == pytest.approx([h["score"] for h in first], abs=1e-5)


@pytest.mark.parametrize("damage", ["missing", "not json", "wrong features"])
def test_a_missing_or_damaged_weights_file_is_one_funes_line(
    memory: Path, tmp_path: Path, damage: str
) -> None:
    path = tmp_path / "ranker.json"
    if damage == "not json":
        path.write_text('{"version": 1, "features": [')
    elif damage == "wrong features":
        doc = json.loads((REPO / "funes" / "data" / "ranker.json").read_text())
        doc["features"] = doc["features"][::-1]
        path.write_text(json.dumps(doc))
    r = run_cli("funes", "recall", QUESTION, "--memory", memory,
                env={"FUNES_RANKER_WEIGHTS": str(path)})  # fmt: skip
    err = r.stderr.decode()
    assert r.returncode == 1 and r.stdout == b""
    assert err.count("\n") == 1 and err.startswith("funes: the ranking weights ")
    assert "reinstall funes" in err and "Traceback" not in err


def test_the_shipped_weights_load_and_match_the_feature_list() -> None:
    m = ranker.load_model()
    assert m.w.shape == (len(ranker.FEATURES),) and 0.0 < m.threshold < 1.0
    with pytest.raises(FunesError):
        ranker.load_model("/nonexistent/ranker.json")


def test_cross_validation_never_scores_a_question_with_its_own_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bench import quality, train_ranker

    repos = [f"owner{i}/repo{i}" for i in range(12)]
    ss = [
        train_ranker.Sample({"id": f"q{i}", "repo": repos[i % 12], "kind": "paraphrase"},
                            np.zeros((1, len(ranker.FEATURES))), np.ones(1), None)
        for i in range(60)
    ]  # fmt: skip
    trained_on: dict[str, set[str]] = {}

    def fake_fit(train: list[Any], l2: float = 1.0) -> dict[str, Any]:
        return {"repos": sorted({s.q["repo"] for s in train})}

    monkeypatch.setattr(train_ranker, "fit", fake_fit)
    paths = train_ranker.cross_validate(ss, 5, tmp_path)
    for f, p in enumerate(paths):
        trained_on[str(f)] = set(json.loads(p.read_text())["repos"])
    folds = train_ranker.folds([s.q for s in ss], 5)
    assert len(set(folds)) > 1
    for s, f in zip(ss, folds, strict=True):
        assert s.q["repo"] not in trained_on[str(f)]
        assert trained_on[str(f)]  # every fold is trained on something
    # and the scorer dispatches each question to its own fold's weights
    seen = []

    class Spy:
        def __init__(self, f: int) -> None:
            self.f = f

        def search(self, q: Any, now: Any = None) -> None:
            seen.append((q.id, self.f))

    fs = quality.FoldSearcher({f: Spy(f) for f in range(5)}, {s.q["id"]: f for s, f in zip(ss, folds, strict=True)})  # fmt: skip
    from funes.retrieval import Query

    for s in ss:
        fs.search(Query("x", id=s.q["id"]))
    assert seen == [(s.q["id"], f) for s, f in zip(ss, folds, strict=True)]


def test_frozen_fold_repositories_are_never_trained_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bench import train_ranker
    from bench.labelled import folds as labelled_folds

    repos = [f"newowner{i}/repo{i}" for i in range(40)]
    frozen = {r for r in repos if labelled_folds.frozen(r)}
    assert frozen and len(frozen) < len(repos)  # the hash puts some, not all, in the frozen fold
    assert not any(labelled_folds.frozen(r) for r in labelled_folds.FIRST_BATCH)
    ss = [
        train_ranker.Sample({"id": f"q{i}", "repo": repos[i % 40], "kind": "paraphrase",
                             "set": "labelled"},
                            np.zeros((1, len(ranker.FEATURES))), np.ones(1), None)
        for i in range(120)
    ]  # fmt: skip
    monkeypatch.setattr(
        train_ranker, "fit", lambda train, l2=1.0: {"repos": sorted({s.q["repo"] for s in train})}
    )
    paths = train_ranker.cross_validate(ss, 5, tmp_path)
    assert len(paths) == 6  # five folds, then every question outside the frozen fold
    for p in paths:
        assert not frozen & set(json.loads(p.read_text())["repos"])
    assert set(json.loads(paths[-1].read_text())["repos"]) == set(repos) - frozen
    for s in ss:
        i = train_ranker.fold_index(s.q, 5)
        assert (i == 5) == (s.q["repo"] in frozen)


def test_text_thinking_and_splits_of_one_turn_collapse_into_one_hit(tmp_path: Path) -> None:
    root = tmp_path / ".claude" / "projects" / "-home-ana-uploader"
    ts = "2026-10-20T10:00:00.000Z"

    def rec(uuid: str, parent: str | None, role: str, block: dict[str, Any]) -> dict[str, Any]:
        r = turn(uuid, parent, ts, role, [block])
        r["sessionId"] = "t"
        if role == "assistant":
            r["message"]["id"] = "msg_01"  # one API message written as one record per block
        return r

    finding = ("The upload retries were flaky because the S3 multipart upload reused a stale "
               "presigned URL after it expired; refreshing the presigned URL on every retry "
               "fixed the flaky upload retries. ")  # fmt: skip
    recs = [
        turn("t-u1", None, ts, "user", [{"type": "text", "text":
             "why are the upload retries flaky on large files?"}]),
        rec("t-a1", "t-u1", "assistant", {"type": "thinking", "thinking":
            "Thinking about the flaky upload retries: the presigned URL of the multipart "
            "upload may have expired before the retry.", "signature": "x"}),
        rec("t-a2", "t-a1", "assistant", {"type": "text", "text": finding * 30}),
    ]  # fmt: skip
    recs[0]["sessionId"] = "t"
    write_jsonl(root / "t.jsonl", recs)
    mem = tmp_path / "memory"
    r = run_cli("funes", "index", root, "--yes", "--memory", mem)
    assert r.returncode == 0, r.stderr
    chunks = jsonl(run_cli("funes-parse", root / "t.jsonl").stdout)
    assert len(chunks) == 3
    hits = jsonl(query(mem, "why were the flaky upload retries failing", "-k", "5").stdout)
    step = [h for h in hits if h["turn_uuid"] in ("t-a1", "t-a2")]
    assert len(step) == 1, [(h["turn_uuid"], h["block_type"], h["split_idx"]) for h in hits]
    others = step[0]["turn_chunks"]
    assert others, "the turn's other chunks are listed with the hit"
    assert {o["id"] for o in others}.isdisjoint({h["id"] for h in hits})
    # the thinking and the text's other splits are what was folded in
    assert {o["block_type"] for o in others} | {step[0]["block_type"]} == {"thinking", "text"}


def test_two_assistant_texts_in_a_row_stay_two_hits(tmp_path: Path) -> None:
    """Two texts written one after the other are two steps (the second often the finding after
    the first announced a step): folding them into one hit would hide one of them."""
    root = tmp_path / ".claude" / "projects" / "-home-ana-uploader"
    ts = "2026-10-20T10:00:00.000Z"
    recs = [
        turn("t-u1", None, ts, "user", [{"type": "text", "text":
             "why are the upload retries flaky on large files?"}]),
        turn("t-a1", "t-u1", ts, "assistant", [{"type": "text", "text":
             "Let me look at how the upload retries handle the presigned URL."}]),
        turn("t-a2", "t-a1", ts, "assistant", [{"type": "text", "text":
             "Found it: the retry reused a presigned URL that had expired after 15 minutes."}]),
    ]  # fmt: skip
    for i, r in enumerate(recs):
        r["sessionId"] = "t"
        if r["type"] == "assistant":
            r["message"]["id"] = f"msg_0{i}"
    write_jsonl(root / "t.jsonl", recs)
    mem = tmp_path / "memory"
    r = run_cli("funes", "index", root, "--yes", "--memory", mem)
    assert r.returncode == 0, r.stderr
    hits = jsonl(query(mem, "why did the upload retry fail with an expired URL", "-k", "5").stdout)
    assert {"t-a1", "t-a2"} <= {h["turn_uuid"] for h in hits}, [h["turn_uuid"] for h in hits]


@pytest.fixture(scope="module")
def listings(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Sessions full of one-letter tokens: `ls -l` listings and `chmod +x`."""
    root = tmp_path_factory.mktemp("ls") / ".claude" / "projects" / "-home-ana-tools"
    for k in range(3):
        recs = []
        for n in range(4):
            call = {
                "type": "tool_use",
                "id": f"l{k}{n}",
                "name": "Bash",
                "input": {"command": f"chmod +x bin/run{n} && ls -l bin"},
            }
            out = "\n".join(f"-rwxr-xr-x 1 ana staff {100 * i + n} x run{i}" for i in range(6))
            result = {"type": "tool_result", "tool_use_id": f"l{k}{n}", "content": out}
            recs += [
                turn(f"l{k}-c{n}", None, "2026-10-03T10:05:00Z", "assistant", [call]),
                turn(f"l{k}-r{n}", f"l{k}-c{n}", "2026-10-03T10:05:01Z", "user", [result]),
            ]
        write_jsonl(root / f"l{k}.jsonl", [{**r, "sessionId": f"l{k}"} for r in recs])
    mem = tmp_path_factory.mktemp("lsmem") / "memory"
    r = run_cli("funes", "index", root, "--yes", "--memory", mem)
    assert r.returncode == 0, r.stderr
    return mem


@pytest.mark.parametrize("question", ["x", "x 1", "+x"])
def test_a_question_with_no_real_word_is_never_strong(listings: Path, question: str) -> None:
    hits = jsonl(query(listings, question, "-k", "3").stdout)
    assert hits and {h["verdict"] for h in hits} == {"weak"}


@pytest.fixture(scope="module")
def samples_memory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled sample sessions (contrib/samples): a new user's first memory, 28 chunks."""
    mem = tmp_path_factory.mktemp("samples") / "memory"
    r = run_cli("funes", "index", REPO / "contrib" / "samples", "--yes", "--memory", mem)
    assert r.returncode == 0, r.stderr
    return mem


def test_a_memory_of_a_few_sessions_calls_a_question_it_cannot_answer_weak(
    samples_memory: Path,
) -> None:
    # In every trained memory the lexical leg fills its pool, so a signal counting its hits
    # once read a small memory's few matches as certainty: this absent question came back
    # "strong" with a tile-server prompt on top.
    absent = jsonl(
        query(samples_memory, "why did we move the realtime server to uWebSockets.js?").stdout
    )
    assert absent and {h["verdict"] for h in absent} == {"weak"}, absent[0]["answerable"]
    answered = jsonl(
        query(samples_memory, "why did the tile server return empty tiles at zoom 14?").stdout
    )
    assert answered and answered[0]["verdict"] == "strong"
    assert "LineTo" in " ".join(h["text"] for h in answered[:2])
