"""A small labelled set made here, so the learned stage can be retrained with nothing from
outside the repository (bench/train_ranker.py --sets fixture).

    .venv/bin/python -m bench.ranker_fixture DIR    # writes DIR/corpus/ and DIR/queries.jsonl

Synthetic Claude Code sessions of a few made-up repositories, each one developer asking about
one problem: the prompt, the agent's thinking, an announcement ("I'll look into…"), a tool call
and its output, the answer, a thank-you and a closing edit. Questions paraphrase a session's
problem; the answer quote is a phrase of the agent's answer, never of the prompt, so the
prompt that restates the question is the distractor a ranker must learn to put below it.
Absent questions ask about what no session mentions. The same seed writes byte-identical
files. It trains a ranker that works; its figures say nothing of real transcripts.
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPOS = (
    "acme/ledger", "acme/mapview", "kite/uploader", "orbit/scheduler", "nimbus/auth",
    "pebble/search", "quill/editor", "tango/metrics",
)  # fmt: skip
COMPONENTS = (
    "invoice-sync", "tile-cache", "chunk-uploader", "cron-runner", "token-broker", "indexer",
    "autosave", "rollup", "billing-export", "geo-router", "thumbnailer", "webhook-relay",
    "session-store", "query-planner", "spellcheck", "alert-digest",
)  # fmt: skip
LIBRARIES = (("pendulum", "dateparser"), ("arrow", "maya"), ("dateutil", "parsedatetime"))
SESSIONS_PER_REPO = 5
START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Topic:
    prompt: str
    thinking: str
    announce: str
    command: str
    output: str
    answer: str
    quote: str
    question: str
    kind: str


TOPICS = (
    Topic(
        "The {comp} job keeps timing out on big batches, can you figure out why?",
        "The timeout probably comes from the job config; check {file}.",
        "I'll look into why the {comp} job times out on big batches.",
        "grep -rn timeout {file}",
        "{file}:12:    timeout = {n}\n{file}:13:    batch_size = 5000",
        "Found it: the {comp} job had timeout = {n} seconds in {file}, far below what a big "
        "batch needs. I raised it to {m} seconds and split each batch into chunks of 500 rows.",
        "the {comp} job had timeout = {n} seconds in {file}",
        "why did large batches of {comp} time out and what did we change?",
        "failure",
    ),
    Topic(
        "test_{under}_roundtrip fails about one run in five on CI, any idea what is flaky?",
        "A test that fails one time in five is usually timing; read the test first.",
        "Let me check test_{under}_roundtrip and what it compares.",
        "pytest tests/test_{under}.py -k roundtrip -x --count 20",
        "FAILED tests/test_{under}.py::test_{under}_roundtrip - AssertionError: "
        "'2026-01-05T09:00:01' != '2026-01-05T09:00:00'\n4 failed, 16 passed",
        "The flakiness comes from test_{under}_roundtrip reading the clock twice: when the "
        "second read crosses a second boundary the expected stamp is off by one. I froze the "
        "clock with a fixture, so the test reads one instant.",
        "test_{under}_roundtrip reading the clock twice",
        "what made the {comp} roundtrip test fail now and then?",
        "failure",
    ),
    Topic(
        "Should we use {lib_a} or {lib_b} for parsing dates in {comp}?",
        "Compare how both handle offsets in ISO strings.",
        "I'll compare {lib_a} and {lib_b} on the timestamps {comp} receives.",
        "python scripts/compare_dates.py --libs {lib_a},{lib_b}",
        "{lib_a}: 2026-01-05T09:00:00+02:00 -> 07:00Z\n{lib_b}: 2026-01-05T09:00:00+02:00 -> 09:00Z",
        "We went with {lib_a} because {lib_b} silently drops the timezone offset on ISO "
        "strings, which would shift every {comp} record by hours.",
        "which would shift every {comp} record by hours",
        "which date parsing library did we choose for {comp}, and for what reason?",
        "decision",
    ),
    Topic(
        "{comp} memory grows until the pod is OOM-killed after about a day. Can you find the leak?",
        "Look for a cache or a list that only grows.",
        "I'll profile {comp} to see what keeps growing.",
        "python -m tracemalloc_report --top 5 {file}",
        "{file}:88: size=912 MiB, count=4180233\n{file}:41: size=3 MiB, count=1200",
        "The leak is the per-request cache in {file}: entries were keyed by the full request "
        "object, so nothing was ever evicted. Keying it by the request id with an LRU of {n} "
        "entries keeps memory flat.",
        "the per-request cache in {file}: entries were keyed by the full request object",
        "what was leaking memory in {comp}?",
        "failure",
    ),
    Topic(
        "The migration {n}_add_{under}_index fails on staging with a lock timeout.",
        "An index build on a busy table takes a lock; check the migration.",
        "Let me read the migration and the staging error.",
        "cat migrations/{n}_add_{under}_index.sql",
        "BEGIN;\nCREATE INDEX idx_{under}_owner ON {under} (owner_id);\nCOMMIT;",
        "The migration takes an exclusive lock on the table while it builds the index, and on "
        "staging that table is busy. Building the {comp} index with CREATE INDEX CONCURRENTLY "
        "outside the transaction avoids the lock.",
        "Building the {comp} index with CREATE INDEX CONCURRENTLY",
        "how did we get the {comp} index migration past the lock timeout on staging?",
        "paraphrase",
    ),
    Topic(
        "Why does {comp} ignore the retry setting from the env file?",
        "Settings read before the env file loads would explain it.",
        "I'll trace where {comp} reads its settings.",
        "grep -rn load_settings {file}",
        "{file}:3:settings = load_settings()\n{file}:57:def main():",
        "{comp} reads RETRIES before the env file is loaded: load_settings() runs at import "
        "time in {file}. Moving the call into main() makes the env file's RETRIES={n} take "
        "effect.",
        "load_settings() runs at import time in {file}",
        "the env file's retry count had no effect on {comp}: why?",
        "keyword",
    ),
    Topic(
        "Listing {comp} pages is slow, around {n} ms a page. What is it doing?",
        "Count the queries a page makes.",
        "Let me log the SQL one page of {comp} runs.",
        "DEBUG_SQL=1 python manage.py list_{under} --page 1 | grep -c SELECT",
        "{m}1",
        "Each {comp} page ran one query per row to fetch the owner, an N+1 pattern. Joining the "
        "owners in the main query brings a page down to {m} ms.",
        "Each {comp} page ran one query per row to fetch the owner",
        "why was paging through {comp} so slow?",
        "paraphrase",
    ),
    Topic(
        "Names with accents come out garbled in the {comp} export.",
        "Probably an encoding default on the build machine.",
        "I'll check how the {comp} export opens its output file.",
        "grep -n open\\( {file}",
        "{file}:21:    with open(path, 'w') as fh:",
        "The {comp} export wrote the CSV with the platform default encoding (cp1252 on the build "
        "box). Opening the file with encoding='utf-8-sig' fixes the accents, in Excel too.",
        "The {comp} export wrote the CSV with the platform default encoding",
        "accented names were broken in the {comp} export, what was the cause?",
        "failure",
    ),
    Topic(
        "Users get logged out of {comp} every few minutes.",
        "Compare the cookie lifetime with the token lifetime.",
        "Let me look at the session cookie settings of {comp}.",
        "grep -rn max_age {file}",
        "{file}:9:    max_age={n},\n{file}:10:    refresh_ttl=86400,",
        "The {comp} session cookie had max_age={n} while the refresh token lived for a day, so "
        "the cookie expired first. I set max_age to the refresh token's lifetime.",
        "The {comp} session cookie had max_age={n}",
        "why were people signed out of {comp} so often?",
        "paraphrase",
    ),
    Topic(
        "Two {comp} workers sometimes process the same job.",
        "A select-then-update claim is racy.",
        "I'll read how a {comp} worker claims a job.",
        "sed -n 30,60p {file}",
        "job = db.fetch_one(\"SELECT id FROM jobs WHERE status='queued' LIMIT 1\")\n"
        "db.execute(\"UPDATE jobs SET status='taken' WHERE id=%s\", job.id)",
        "Both {comp} workers selected the job before either marked it taken. Claiming it with "
        "UPDATE ... WHERE status='queued' RETURNING id makes the claim atomic, so only one "
        "worker gets it.",
        "Both {comp} workers selected the job before either marked it taken",
        "how could one job be handled twice by {comp} workers?",
        "tool",
    ),
)
ABSENT = (
    "how did we size the kubernetes autoscaler for the GPU node pool?",
    "what colours did we settle on for the dark mode of the mobile app?",
    "which CDN did we move the marketing site to last spring?",
    "why did we stop using protobuf for the telemetry wire format?",
    "what was the outcome of the accessibility audit of the checkout form?",
    "how do we rotate the signing keys of the firmware updates?",
)


def _records(sid: str, cwd: str, t0: datetime, topic: Topic, slots: dict[str, Any]) -> list[dict]:
    """One session's Claude Code records."""
    texts = {k: getattr(topic, k).format(**slots) for k in (
        "prompt", "thinking", "announce", "command", "output", "answer")}  # fmt: skip
    steps: list[tuple[str, Any]] = [
        ("user", texts["prompt"]),
        ("assistant", [
            {"type": "thinking", "thinking": texts["thinking"]},
            {"type": "text", "text": texts["announce"]},
            {"type": "tool_use", "id": f"toolu_{sid[:8]}_1", "name": "Bash",
             "input": {"command": texts["command"]}},
        ]),
        ("user", [{"type": "tool_result", "tool_use_id": f"toolu_{sid[:8]}_1",
                   "content": [{"type": "text", "text": texts["output"]}]}]),
        ("assistant", [{"type": "text", "text": texts["answer"]}]),
        ("user", "Thanks, that makes sense. Go ahead and commit it."),
        ("assistant", [
            {"type": "tool_use", "id": f"toolu_{sid[:8]}_2", "name": "Bash",
             "input": {"command": f"git commit -am 'fix {slots['comp']}'"}},
        ]),
        ("user", [{"type": "tool_result", "tool_use_id": f"toolu_{sid[:8]}_2",
                   "content": [{"type": "text", "text": "1 file changed"}]}]),
        ("assistant", [{"type": "text", "text": "Committed."}]),
    ]  # fmt: skip
    out = []
    for i, (role, content) in enumerate(steps):
        ts = (t0 + timedelta(seconds=40 * i)).isoformat().replace("+00:00", "Z")
        out.append({
            "type": role, "uuid": f"{sid}-{i}", "parentUuid": f"{sid}-{i - 1}" if i else None,
            "timestamp": ts, "cwd": cwd, "sessionId": sid,
            "message": {"role": role, "content": content},
        })  # fmt: skip
    return out


def write(root: Path, seed: int = 0) -> list[dict[str, Any]]:
    """Write ``root/corpus/claude-code/*.jsonl`` and ``root/queries.jsonl``; returns the
    questions (eval-dev's fields: id, query, kind, answer_quote, file, agent, repo)."""
    rng = random.Random(seed)
    corpus = root / "corpus" / "claude-code"
    corpus.mkdir(parents=True, exist_ok=True)
    questions: list[dict[str, Any]] = []
    comps = list(COMPONENTS)
    rng.shuffle(comps)
    n_session = 0
    for r, repo in enumerate(REPOS):
        comp_a, comp_b = comps[(2 * r) % len(comps)], comps[(2 * r + 1) % len(comps)]
        for t in rng.sample(range(len(TOPICS)), SESSIONS_PER_REPO):
            comp = rng.choice((comp_a, comp_b))
            under = comp.replace("-", "_")
            lib_a, lib_b = rng.choice(LIBRARIES)
            slots = {
                "comp": comp, "under": under, "lib_a": lib_a, "lib_b": lib_b,
                "file": f"src/{repo.split('/')[1]}/{under}/{rng.choice(('core', 'worker', 'app'))}.py",
                "n": rng.choice((30, 45, 60, 90, 120, 300, 900)),
                "m": rng.choice((600, 1200, 1800, 40, 75)),
            }  # fmt: skip
            sid = f"{rng.getrandbits(128):032x}"
            sid = f"{sid[:8]}-{sid[8:12]}-{sid[12:16]}-{sid[16:20]}-{sid[20:]}"
            name = f"{repo.replace('/', '_')}__{sid}.jsonl"
            t0 = START + timedelta(days=7 * n_session, hours=rng.randrange(8))
            recs = _records(sid, f"/home/dev/{repo.split('/')[1]}", t0, TOPICS[t], slots)
            (corpus / name).write_text("".join(json.dumps(x) + "\n" for x in recs))
            topic = TOPICS[t]
            questions.append({
                "id": f"fx{n_session:03d}", "query": topic.question.format(**slots),
                "kind": topic.kind, "answer_quote": topic.quote.format(**slots),
                "file": f"claude-code/{name}", "agent": "claude-code", "repo": repo,
            })  # fmt: skip
            n_session += 1
    for i, text in enumerate(ABSENT):
        questions.append({"id": f"fx-absent{i}", "query": text, "kind": "absent",
                          "answer_quote": None, "file": None, "agent": None})  # fmt: skip
    (root / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions))
    return questions


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", type=Path)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    qs = write(a.dir, a.seed)
    print(f"written {a.dir} ({len(qs)} questions)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
