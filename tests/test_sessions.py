"""The session verbs on fixture memories: `funes sessions` (listing, paging, filters, several
memories), `funes scan` (literal, every occurrence, capped with a continuation) and ranged
`funes get` (capped near 40,000 characters, the printed continuation reads the rest)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from conftest import jsonl, run_cli, write_jsonl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memory_builder import build, chunk

from funes.store import open_memory
from funes.store.sessions import scan

PROJECT = "-home-ana-app"


def claude(uuid: str, ts: str, text: str, role: str = "assistant") -> dict[str, object]:
    return {
        "type": role,
        "uuid": uuid,
        "parentUuid": None,
        "timestamp": ts,
        "cwd": "/home/ana/app",
        "message": {"role": role, "content": [{"type": "text", "text": text}]},
    }


def session(root: Path, sid: str, day: str, prompt: str, answers: list[str]) -> None:
    """A Claude Code transcript: the user's prompt, then the answers, one a minute; one
    malformed line and one truncated line among them (skipped, never fatal)."""
    recs: list[dict[str, object] | str] = [
        claude(f"{sid}-u", f"{day}T09:00:00.000Z", prompt, "user")
    ]
    recs.append("{this is not json")
    for i, a in enumerate(answers):
        recs.append(claude(f"{sid}-a{i}", f"{day}T09:{i + 1:02d}:00.000Z", a))
    recs.append('{"type": "assistant", "uuid": "trunc", "message": {"role": "assi')
    write_jsonl(root / ".claude" / "projects" / PROJECT / f"{sid}.jsonl", recs)


def index(root: Path, mem: Path) -> Path:
    r = run_cli("funes", "index", root / ".claude" / "projects", "--no-embed", "--memory", mem)
    assert r.returncode in (0, 1), r.stderr  # 1: the bad lines were skipped and counted
    return mem


def funes(*args: str | Path) -> str:
    r = run_cli("funes", *args)
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout.decode()


def follow(line: str) -> list[str]:
    """The argv of a printed `→ VERB …` continuation line."""
    assert line.startswith("→ "), line
    return shlex.split(line[2:])


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("history")
    session(root, "s-jan", "2026-01-10", "why is the tile cache cold after deploys?", ["a.b axb"])
    session(root, "s-feb", "2026-02-11", "bump redis to 7 and keep the TTLs", ["done", "ok"])
    session(root, "s-mar", "2026-03-12", "pin the runner image for the cache step", ["x"] * 3)
    return index(root, root / "memory")


def test_sessions_are_listed_newest_first_with_their_opening_prompts(history: Path) -> None:
    out = funes("sessions", "--memory", history).splitlines()
    heads = [ln for ln in out if ln.startswith("[")]
    assert [h.split()[-1] for h in heads] == ["s-mar", "s-feb", "s-jan"]
    assert heads[0].startswith("[2026-03-12T09:00:00.000Z] claude_code ")
    assert heads[0].split()[3:5] == ["4", "turns"]
    assert out[1] == "  > pin the runner image for the cache step"
    assert out[-1] == "sessions 1–3 of 3"


def test_sessions_page_and_the_printed_continuation_reads_the_next_page(history: Path) -> None:
    first = funes("sessions", "--limit", "2", "--memory", history).splitlines()
    assert [ln.split()[-1] for ln in first if ln.startswith("[")] == ["s-mar", "s-feb"]
    assert first[-2] == "sessions 1–2 of 3"
    argv = follow(first[-1])
    assert argv[:5] == ["sessions", "--offset", "2", "--limit", "2"]
    second = funes(*argv).splitlines()
    assert [ln.split()[-1] for ln in second if ln.startswith("[")] == ["s-jan"]
    assert second[1] == "  > why is the tile cache cold after deploys?"
    assert second[-1] == "sessions 3–3 of 3"
    past = funes("sessions", "--offset", "5", "--memory", history)
    assert past == "no sessions past offset 5 (there are 3)\n"


def test_sessions_filter_by_time_and_agent_and_print_json(history: Path) -> None:
    until = funes("sessions", "--until", "2026-02-11", "--json", "--memory", history)
    assert [s["session_id"] for s in jsonl(until.encode())] == ["s-feb", "s-jan"]
    since = jsonl(
        funes("sessions", "--since", "2026-02-12", "--json", "--memory", history).encode()
    )
    assert [(s["session_id"], s["turns"], s["prompt"]) for s in since] == [
        ("s-mar", 4, "pin the runner image for the cache step")
    ]
    assert funes("sessions", "--harness", "codex", "--memory", history) == "no sessions\n"
    r = run_cli("funes", "sessions", "--limit", "500", "--memory", history)
    assert r.returncode == 2
    assert r.stderr.decode() == "funes: --limit must be a whole number from 1 to 200 (got '500')\n"


def test_sessions_of_several_memories_are_merged_and_listed_once(
    history: Path, tmp_path: Path
) -> None:
    other = build(
        tmp_path / "other",
        [
            chunk("s-apr", 0, "port the tiler to rust?", role="user", repo="ana/tiler",
                  ts="2026-04-01T08:00:00.000Z"),
            chunk("s-apr", 1, "yes, start with mvt", repo="ana/tiler",
                  ts="2026-04-01T08:01:00.000Z"),
            chunk("s-jan", 0, "a copy of january", role="user", ts="2026-01-10T09:00:00.000Z"),
        ],
        vectors=None,
    )  # fmt: skip
    got = jsonl(funes("sessions", "--json", "--memory", f"{history},{other}").encode())
    assert [(s["session_id"], s["memory"]) for s in got] == [
        ("s-apr", str(other)),
        ("s-mar", str(history)),
        ("s-feb", str(history)),
        ("s-jan", str(history)),  # held by both: listed once, from the memory named first
    ]
    assert got[0]["repo"] == "ana/tiler" and got[0]["prompt"] == "port the tiler to rust?"
    repo = jsonl(funes("sessions", "--repo", "ana/tiler", "--json", "--memory", other).encode())
    assert [s["session_id"] for s in repo] == ["s-apr"]


# ---------------------------------------------------------------------------- scan


@pytest.fixture(scope="module")
def haystack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One session whose text holds `a.b` (and look-alikes a regex would take) in several
    blocks, once across a split boundary, and 250 turns holding `tick` once each."""
    long_text = "x" * 1195 + "a.b" + "y" * 500  # split at 1,200 characters: a.b straddles it
    rows = [
        chunk("hay", 0, "find a.b here, and A.B, and axb and a-b", role="user"),
        chunk("hay", 1, "no needle in this one"),
        chunk("hay", 2, long_text[:1200], split_idx=0),
        chunk("hay", 2, long_text[1190:], split_idx=1),
        chunk("hay", 3, "a.b a.b", block_type="tool_result", role="tool"),
    ]
    rows += [chunk("tock", i, f"tick number {i}") for i in range(250)]
    rows.append(chunk("many", 0, " ".join(["boom"] * 300)))
    rows.append(chunk("many", 1, "boom once more"))
    return build(tmp_path_factory.mktemp("haystack") / "memory", rows, vectors=None)


def test_scan_finds_every_occurrence_and_none_of_a_regex_reading(haystack: Path) -> None:
    out = funes("scan", "a.b", "hay", "--memory", haystack, "--context", "5").splitlines()
    heads = [ln for ln in out if ln.startswith("[")]
    assert [re.search(r"seq(\d+)", h)[1] for h in heads] == ["0", "2", "3", "3"]
    assert "@1195" in heads[1]  # found whole across the split, at its place in the block
    assert out[-1] == '4 occurrences of "a.b"'
    snippets = [ln for ln in out if ln.startswith("  ")]
    assert snippets[0] == "  find a.b here…" and all("a.b" in s for s in snippets)
    # -i adds the upper-case one, never axb or a-b
    ci = funes("scan", "a.b", "hay", "-i", "--memory", haystack).splitlines()
    assert ci[-1] == '5 occurrences of "a.b"'
    at = [ln.rsplit("@", 1)[1] for ln in ci if ln.startswith("[") and " seq0 " in ln]
    assert at == ["5", "19"]  # "a.b" and "A.B"; "axb" (28) and "a-b" (36) are not the needle


def test_scan_says_plainly_when_there_is_nothing(haystack: Path) -> None:
    out = funes("scan", "a+b", "hay", "--memory", haystack)
    assert out == 'no occurrence of "a+b" in session hay (4 turns, 4 blocks scanned)\n'
    r = run_cli("funes", "scan", "a.b", "nope", "--memory", haystack)
    assert r.returncode == 1 and r.stderr.decode().startswith("funes: session nope not found")
    r = run_cli("funes", "scan", "", "hay", "--memory", haystack)
    assert r.returncode == 2 and r.stderr.decode().startswith("funes: the needle is empty")


def test_scan_stops_at_200_and_its_continuation_reads_the_rest(haystack: Path) -> None:
    first = funes("scan", "tick", "tock", "--memory", haystack).splitlines()
    assert first[-2] == '200 occurrences of "tick"'
    argv = follow(first[-1])
    assert argv[:5] == ["scan", "tick", "tock", "--from", "200"]
    rest = funes(*argv).splitlines()
    assert rest[-1] == '50 occurrences of "tick" from seq 200'
    seqs = [int(re.search(r"seq(\d+)", ln)[1]) for ln in first + rest if ln.startswith("[")]
    assert seqs == list(range(250))


def test_scan_moves_past_a_turn_holding_more_than_the_cap(haystack: Path) -> None:
    out = funes("scan", "boom", "many", "--memory", haystack).splitlines()
    assert out[-3] == '200 occurrences of "boom"'
    assert out[-2].startswith("(turn seq0 holds more than 200 occurrences")
    rest = funes(*follow(out[-1])).splitlines()
    assert rest[-1] == '1 occurrence of "boom" from seq 1' and "seq1" in rest[0]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(needle=st.text(alphabet="ab.*+?()[]\\^$|{}", min_size=1, max_size=4))
def test_scan_counts_exactly_what_str_count_counts(haystack: Path, needle: str) -> None:
    mem = open_memory(haystack)
    res = scan(mem, "hay", needle, cap=10_000)
    texts = {
        0: "find a.b here, and A.B, and axb and a-b",
        1: "no needle in this one",
        2: "x" * 1195 + "a.b" + "y" * 500,
        3: "a.b a.b",
    }
    assert len(res.hits) == sum(t.count(needle) for t in texts.values())


# ---------------------------------------------------------------------------- ranged get


@pytest.fixture(scope="module")
def long_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rows = [chunk("long", i, f"turn {i} " + "w" * 2990) for i in range(30)]
    rows.append(chunk("long", 30, "Z" * 45_000))  # one turn bigger than the cap
    return build(tmp_path_factory.mktemp("long") / "memory", rows, vectors=None)


def turns_of(out: str) -> list[int]:
    return [int(m[1]) for m in re.finditer(r"^\[[^\]]*\] \w+ seq(\d+) turn=", out, re.M)]


def test_a_ranged_get_stops_at_the_cap_and_its_continuation_reads_the_rest(
    long_session: Path,
) -> None:
    out = funes("get", "long", "--from", "0", "--to", "29", "--memory", long_session)
    assert turns_of(out) == list(range(13))  # 13 × 3,000 characters fit in 40,000
    assert len(out) < 41_000
    lines = out.splitlines()
    assert lines[-2] == "17 more turns of seq 0–29 past the 40,000-character cap"
    seen = turns_of(out)
    while lines[-1].startswith("→ "):
        out = funes(*follow(lines[-1]))
        seen += turns_of(out)
        lines = out.splitlines()
    assert seen == list(range(30))


def test_a_ranged_get_defaults_to_twenty_turns_and_cuts_one_huge_turn(long_session: Path) -> None:
    out = funes("get", "long", "--from", "20", "--memory", long_session)
    assert turns_of(out) == list(range(20, 30))  # then seq 30 alone is bigger than the cap
    assert out.splitlines()[-2] == "1 more turn of seq 20–39 past the 40,000-character cap"
    big = funes("get", "long", "--from", "30", "--to", "30", "--memory", long_session)
    assert turns_of(big) == [30] and big.splitlines()[1] == "Z" * 40_000
    assert "(the last turn shown is cut: 5,000 more characters)" in big


def test_recall_get_lines_still_run_beside_ranges(long_session: Path) -> None:
    out = funes("get", "long", "long-t5", "--window", "1", "--memory", long_session)
    assert turns_of(out) == [4, 5, 6]
    r = run_cli("funes", "get", "long", "long-t5", "--from", "3", "--memory", long_session)
    assert r.returncode == 2
    assert r.stderr.decode().startswith("funes: give a TURN or a range (--from/--to), not both")
    r = run_cli("funes", "get", "long", "--from", "9", "--to", "3", "--memory", long_session)
    assert r.returncode == 2 and "--to 3 is before --from 9" in r.stderr.decode()


def test_a_short_session_id_as_a_hit_header_shows_it_is_answered_with_the_whole_id(
    tmp_path: Path,
) -> None:
    """A hit header shows a session as its first 8 characters; `funes get`, a ranged get and
    `funes sketch` given those name the whole id (or the several that start with them)."""
    one = "5e1ec7ed-1111-4000-8000-00000000000a"
    twins = ["7a1ba1ba-2222-4000-8000-00000000000b", "7a1ba1ba-3333-4000-8000-00000000000c"]
    for sid in (one, *twins):
        session(tmp_path, sid, "2026-11-02", f"about {sid[:4]}", ["the okapi answer"])
    mem = index(tmp_path, tmp_path / "m")
    for args in (("get", one[:8]), ("get", one[:8], f"{one}-a0"), ("get", one[:8], "--from", "0"),
                 ("sketch", one[:8])):  # fmt: skip
        r = run_cli("funes", *args, "--memory", mem)
        assert r.returncode == 1, (args, r.stdout)
        assert r.stderr.decode().splitlines() == [
            f"funes: session {one[:8]} not found in {mem} — did you mean {one}? (sessions are "
            "named by their whole id)"
        ], args
    r = run_cli("funes", "get", "7a1ba1ba", "--memory", mem)
    assert r.returncode == 1
    assert f"2 sessions start with it ({twins[0]}, {twins[1]}); name one by its whole id" in (
        r.stderr.decode()
    )
    r = run_cli("funes", "get", "ffffffff", "--memory", mem)
    assert "`funes sessions` lists the sessions it holds" in r.stderr.decode()
    assert funes("get", one, "--memory", mem).count("the okapi answer") == 1
