"""Robustness (issue 24): inputs that used to hang or abort a run, or lose what it read.

- a FIFO named like a transcript is never opened (a reader would block forever, holding the
  writer lock);
- a JSON integer past Python's 4,300-digit limit is one bad line, on a transcript or on any
  plumbing command's stdin;
- a non-finite vector is refused by ``funes-write`` and never makes recall score ``nan``;
- turns sharing an id are each stored; a byte-order mark no longer loses the first record;
- Ctrl-C in `funes index` is one line saying what is kept, and the next run completes it.
"""

from __future__ import annotations

import io
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import BIN, jsonl, run_cli, write_jsonl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from funes.records import NumberTooLong, RecordError, load_json, loads
from funes.sources import FileStats, iter_json_lines, parse

SID = "7c2a1e55-0000-4000-8000-0000000000aa"
CWD = "/home/ana/proj"
PROJ = Path(".claude/projects/-home-ana-proj")


def rec(uuid: str, seq: int, text: str, role: str = "assistant", **extra: Any) -> dict[str, Any]:
    return {
        "type": role,
        "uuid": uuid,
        "parentUuid": None,
        "sessionId": SID,
        "timestamp": f"2026-11-01T10:00:{seq:02d}.000Z",
        "cwd": CWD,
        "message": {"role": role, "content": [{"type": "text", "text": text}]},
        **extra,
    }


def big_int(digits: int = 5000) -> str:
    return "9" + "1234567890" * (digits // 10) + "8" * (digits % 10 - 1 if digits % 10 else 9)


def with_big_int(r: dict[str, Any], digits: int = 5000) -> str:
    """``r`` as a JSON line with an integer of ``digits`` digits as one more field."""
    return json.dumps(r)[:-1] + f', "n": {big_int(digits)}}}'


# ---------------------------------------------------------------------------- FIFO


def test_a_fifo_in_a_swept_folder_is_skipped_with_one_line_and_never_opened(
    private_home: Path,
) -> None:
    proj = private_home / PROJ
    write_jsonl(proj / f"{SID}.jsonl", [rec("u-1", 1, "the quokkaferry runbook lives in ops/")])
    fifo = proj / "0000-pipe.jsonl"
    os.mkfifo(fifo)
    os.mkfifo(proj / "state")  # no transcript name: a source that sniffs content never opens it
    # A FIFO opened for reading would wait for a writer: none ever comes, so a run that opens
    # it hangs, and the timeout fails the test.
    r = subprocess.run(
        [str(BIN / "funes"), "index", "--no-embed"],
        capture_output=True,
        timeout=90,
        check=False,
    )
    err = r.stderr.decode()
    assert r.returncode == 0, err
    lines = [line for line in err.splitlines() if "0000-pipe.jsonl" in line]
    assert len(lines) == 1, err
    assert "not a regular file: a named pipe" in lines[0]
    assert "state" not in err
    # The session beside it is stored, and the writer lock is free: another writer gets in.
    got = run_cli("funes", "recall", "quokkaferry runbook")
    assert b"quokkaferry runbook lives in ops/" in got.stdout
    w = run_cli("funes-write", input="")
    assert w.returncode == 0, w.stderr


def test_funes_parse_skips_a_fifo_given_or_found_in_a_directory(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "a.jsonl", [rec("u-1", 1, "hello from a")])
    fifo = tmp_path / "b.jsonl"
    os.mkfifo(fifo)
    for args in ([tmp_path], [fifo, tmp_path / "a.jsonl"]):
        r = subprocess.run(
            [str(BIN / "funes-parse"), *map(str, args)],
            capture_output=True,
            timeout=60,
            check=False,
        )
        err = r.stderr.decode()
        assert f"{fifo}: cannot read (not a regular file: a named pipe)" in err
        assert [t["turn_uuid"] for t in jsonl(r.stdout)] == ["u-1"]


def test_the_home_sweep_reports_a_fifo_where_hermes_keeps_its_database(
    private_home: Path,
) -> None:
    (private_home / ".hermes").mkdir()
    os.mkfifo(private_home / ".hermes" / "state.db")
    r = subprocess.run(
        [str(BIN / "funes"), "index", "--no-embed"], capture_output=True, timeout=90, check=False
    )
    assert "state.db — read failed, skipping: not a regular file: a named pipe" in (
        r.stderr.decode()
    )


def test_a_fifo_in_a_named_folder_is_one_line_naming_it_once(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "p" / f"{SID}.jsonl", [rec("u-1", 1, "the wallabyspool flag")])
    fifo = tmp_path / "p" / "pipe.jsonl"
    os.mkfifo(fifo)
    r = subprocess.run(
        [str(BIN / "funes"), "index", str(tmp_path / "p"), "--no-embed", "--memory",
         str(tmp_path / "m")],
        capture_output=True,
        timeout=90,
        check=False,
    )  # fmt: skip
    err = r.stderr.decode()
    assert r.returncode == 0, err
    assert [ln for ln in err.splitlines() if "pipe.jsonl" in ln] == [
        f"funes: {fifo} — read failed, skipping: not a regular file: a named pipe"
    ]
    assert r.stdout.decode().startswith("indexed sessions=1 ")


# ---------------------------------------------------------------------------- long numbers


@pytest.mark.parametrize("digits", [4301, 5000, 20000])
def test_a_number_past_the_digit_limit_is_one_bad_line_of_a_transcript(
    tmp_path: Path, digits: int
) -> None:
    f = write_jsonl(
        tmp_path / "s.jsonl",
        [
            rec("u-1", 1, "before the long number"),
            with_big_int(rec("u-2", 2, "the line with it"), digits),
            rec("u-3", 3, "after the long number"),
        ],
    )
    r = run_cli("funes-parse", f)
    assert [t["turn_uuid"] for t in jsonl(r.stdout)] == ["u-1", "u-3"]
    assert f"{f}:2: number too long" in r.stderr.decode()
    assert "1 skipped line" in r.stderr.decode()


def test_a_number_at_the_digit_limit_is_read() -> None:
    value, _ = load_json('{"n": ' + "7" * 4300 + "}")
    assert value["n"] == int("7" * 4300)


def test_index_stores_the_lines_around_a_long_number(tmp_path: Path) -> None:
    f = write_jsonl(
        tmp_path / f"{SID}.jsonl",
        [
            rec("u-1", 1, "the wombatledger schema has three tables"),
            with_big_int(rec("u-2", 2, "lost with its line")),
            rec("u-3", 3, "the wombatledger export runs nightly"),
        ],
    )
    r = run_cli("funes", "index", "--no-embed", "--json", f)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["chunks"] == 2
    assert "s.jsonl" not in r.stderr.decode()  # the file is named by its own path
    assert f"{f}:2: number too long — skipped" in r.stderr.decode()


def test_every_plumbing_stage_skips_a_long_number_and_keeps_its_batch() -> None:
    turns = run_cli("funes-parse", "-", input=json.dumps(rec("u-1", 1, "kept turn"))).stdout
    good_turn = turns.decode().strip()
    bad_turn = good_turn[:-1] + f',"n":{big_int()}}}'
    r = run_cli("funes-chunk", input=f"{good_turn}\n{bad_turn}\n{good_turn}\n")
    assert r.returncode == 1
    assert "<stdin>:2: a number too long to read" in r.stderr.decode()
    chunks = jsonl(r.stdout)
    assert len(chunks) == 2

    good_chunk = json.dumps(chunks[0])
    bad_chunk = good_chunk[:-1] + f',"n":{big_int()}}}'
    e = run_cli("funes-embed", input=f"{good_chunk}\n{bad_chunk}\n")
    assert e.returncode == 1
    assert "<stdin>:2: a number too long to read" in e.stderr.decode()
    embedded = jsonl(e.stdout)
    assert len(embedded) == 1 and len(embedded[0]["vector"]) == 384

    w = run_cli("funes-write", input=f"{bad_chunk}\n{json.dumps(embedded[0])}\n")
    assert w.returncode == 1
    assert "<stdin>:1: a number too long to read" in w.stderr.decode()
    assert json.loads(w.stdout)["written"] == 1

    q = run_cli(
        "funes-query",
        input=f'{{"query": "kept turn", "k": {big_int()}}}\n{{"query": "kept turn"}}\n',
    )
    assert "<stdin>:1: a number too long to read" in q.stderr.decode()
    hits = [h for h in jsonl(q.stdout) if h["kind"] == "hit"]
    assert hits and hits[0]["text"] == "kept turn"


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    digits=st.integers(4301, 9000),
    where=st.sampled_from(["top", "nested", "list", "negative", "concatenated"]),
)
def test_no_long_number_anywhere_on_a_line_aborts_the_read(digits: int, where: str) -> None:
    n = big_int(digits)
    good = json.dumps(rec("u-0", 0, "good"))
    line = {
        "top": good[:-1] + f',"n":{n}}}',
        "nested": good[:-1] + f',"meta":{{"a":[1,{{"b":{n}}}]}}}}',
        "list": good[:-1] + f',"n":[{n},{n}]}}',
        "negative": good[:-1] + f',"n":-{n}}}',
        "concatenated": good + good[:-1] + f',"n":{n}}}',
    }[where]
    stats = FileStats("x")
    data = f"{good}\n{line}\n{good}\n".encode()
    got = list(iter_json_lines(io.BufferedReader(io.BytesIO(data)), stats))  # type: ignore[arg-type]
    assert len(got) >= 2
    assert stats.skipped_lines == 1
    with pytest.raises(RecordError):
        loads(line)
    with pytest.raises(NumberTooLong):
        load_json(good[:-1] + f',"n":{n}}}')


# ---------------------------------------------------------------------------- vectors


def _chunk_line(vector_text: str) -> str:
    turns = run_cli("funes-parse", "-", input=json.dumps(rec("u-1", 1, "the finite one"))).stdout
    chunk = jsonl(run_cli("funes-chunk", input=turns).stdout)[0]
    chunk["vector"] = [0.05] * 384
    chunk["model"] = "sentence-transformers/all-MiniLM-L6-v2"
    return json.dumps(chunk).replace("[" + ", ".join(["0.05"] * 384) + "]", vector_text)


@pytest.mark.parametrize("bad", ["1e999", "-1e999", "NaN", "Infinity", "3.5e38", "1" + "0" * 60])
def test_funes_write_refuses_a_non_finite_vector_naming_the_line(bad: str) -> None:
    good = json.loads(_chunk_line("[" + ", ".join(["0.05"] * 384) + "]"))
    other = dict(good, id="0123456789abcdef", text="the other one", turn_uuid="u-2")
    vec = "[" + ", ".join([bad] + ["0.05"] * 383) + "]"
    line = _chunk_line(vec)
    r = run_cli("funes-write", input=f"{json.dumps(other)}\n{line}\n")
    assert r.returncode == 1
    err = r.stderr.decode()
    assert "<stdin>:2: chunk 'vector' holds a number that is not finite" in err
    assert json.loads(r.stdout)["written"] == 1
    got = run_cli("funes-query", "--json", "the finite one")
    for h in (x for x in jsonl(got.stdout) if x["kind"] == "hit"):
        assert h["text"] != "the finite one"
        assert math.isfinite(h["score"])


def test_recall_scores_stay_finite_beside_a_stored_infinite_vector(tmp_path: Path) -> None:
    """A memory written before funes-write refused them may hold one: recall ignores its
    vector and every score stays a number."""
    from funes.chunking import chunk_turns
    from funes.models.embedder import embed_chunks
    from funes.store import open_memory

    turns = list(
        parse(
            [
                write_jsonl(
                    tmp_path / "s.jsonl",
                    [
                        rec("u-1", 1, "set pool_size to 20 in the database settings"),
                        rec("u-2", 2, "redis timeouts are five seconds"),
                    ],
                )
            ]
        )
    )
    chunks = list(embed_chunks(list(chunk_turns(turns))))
    assert chunks[0].vector is not None
    chunks[0].vector[0] = float("inf")  # what an older funes-write let through
    mem = open_memory(str(tmp_path / "m"), create=True)
    with mem.writer() as w:
        w.append(chunks)
    r = run_cli("funes", "recall", "--json", "--memory", tmp_path / "m", "pool size database")
    assert r.returncode == 0, r.stderr
    hits = jsonl(r.stdout)
    assert hits and all(math.isfinite(h["score"]) for h in hits)
    assert any("pool_size" in h["text"] for h in hits)
    human = run_cli("funes", "recall", "--memory", tmp_path / "m", "pool size database")
    assert b"nan" not in human.stdout


# ---------------------------------------------------------------------------- ids and BOM


def test_turns_sharing_an_id_are_each_stored_with_ids_from_their_position(
    tmp_path: Path,
) -> None:
    f = write_jsonl(
        tmp_path / f"{SID}.jsonl",
        [rec("same", i, f"distinct turn number {i} of the capybaraloom") for i in range(4)],
    )
    parsed = jsonl(run_cli("funes-parse", f).stdout)
    assert [t["turn_uuid"] for t in parsed] == ["same", "same~1", "same~2", "same~3"]
    r = run_cli("funes", "index", "--no-embed", "--json", f)
    assert json.loads(r.stdout)["chunks"] == 4
    assert "duplicate turn id — read anyway" in r.stderr.decode()
    # The same ids on a second read of a grown copy: nothing is stored twice.
    with open(f, "a", encoding="utf-8") as fp:
        fp.write(json.dumps(rec("same", 4, "a fifth turn of the capybaraloom")) + "\n")
    again = run_cli("funes", "index", "--no-embed", "--json", f)
    assert json.loads(again.stdout)["chunks"] == 1
    got = run_cli("funes", "get", SID, "same~2")
    assert b"distinct turn number 2 of the capybaraloom" in got.stdout


@settings(max_examples=40, deadline=None)
@given(ids=st.lists(st.sampled_from(["a", "b", "a~1", "c", "b~3"]), min_size=1, max_size=12))
def test_every_parsed_turn_gets_an_id_no_other_turn_has(ids: list[str]) -> None:
    with tempfile.TemporaryDirectory() as d:
        f = write_jsonl(Path(d) / "s.jsonl", [rec(u, i, f"turn {i}") for i, u in enumerate(ids)])
        turns = list(parse([f]))
    got = [t.turn_uuid for t in turns]
    assert len(got) == len(ids)
    assert len(set(got)) == len(got)
    assert [t.blocks[0].text for t in turns] == [f"turn {i}" for i in range(len(ids))]


def test_a_byte_order_mark_does_not_lose_the_first_record(tmp_path: Path) -> None:
    f = tmp_path / "bom.jsonl"
    lines = [json.dumps(rec("u-1", 1, "first, after the mark")), json.dumps(rec("u-2", 2, "2nd"))]
    f.write_bytes("\ufeff".encode() + "\n".join(lines).encode() + b"\n")
    r = run_cli("funes-parse", f)
    assert [t["turn_uuid"] for t in jsonl(r.stdout)] == ["u-1", "u-2"]
    assert "1 repaired" in r.stderr.decode()
    # And on a plumbing command's stdin.
    c = run_cli("funes-chunk", input=b"\xef\xbb\xbf" + r.stdout)
    assert c.returncode == 0, c.stderr
    assert [x["text"] for x in jsonl(c.stdout)] == ["first, after the mark", "2nd"]


# ---------------------------------------------------------------------------- writers


HUB_SPECS = ["hf://datasets/bob/kb", "bob/kb", "hf://datasets/bob/kb/sub"]


@pytest.mark.parametrize("spec", HUB_SPECS)
def test_every_writer_refuses_a_hub_memory_and_creates_nothing_locally(
    tmp_path: Path, spec: str
) -> None:
    f = write_jsonl(tmp_path / "in" / f"{SID}.jsonl", [rec("u-1", 1, "a line to index")])
    work = tmp_path / "cwd"
    work.mkdir()
    chunk = json.dumps(
        jsonl(run_cli("funes-chunk", input=run_cli("funes-parse", f).stdout).stdout)[0]
    )
    envelope = json.dumps({
        "version": 1, "harness": "aider", "session_id": "chat-7", "cwd": "/home/ana/tiles",
        "turns": [{"turn_uuid": "u1", "ts": "2026-05-01T10:00:00Z", "role": "user",
                   "blocks": [{"block_type": "text", "text": "why is the tile cache thrashing?"}]}],
    })  # fmt: skip
    writers = [
        (("funes", "index", "--memory", spec, f), chunk),
        (("funes", "index", "--no-embed", "--memory", spec), chunk),
        (("funes", "index", "--no-embed", "--embed-tool-results", "head", "--memory", spec), chunk),
        (("funes", "index", "--backfill", "--memory", spec), chunk),
        (("funes", "index", "--backfill", "--behind", "--memory", spec), chunk),
        (("funes", "ingest", "--memory", spec), envelope),  # made ./bob/kb before the one door
        (("funes", "scrub", "--builtin-only", "--memory", spec), chunk),
        (("funes", "optimize", "--memory", spec), chunk),
        (("funes", "optimize", "--behind", "--memory", spec), chunk),
        (("funes-write", "--memory", spec), chunk),
    ]
    for cmd, stdin in writers:
        r = run_cli(cmd[0], *cmd[1:], input=stdin.encode(), cwd=work)
        err = r.stderr.decode().strip().splitlines()
        assert r.returncode == 2, (cmd, err)
        assert len(err) == 1 and "is a Hub memory, and funes writes only local ones" in err[0]
        # the hint is a command that runs: push takes the Hub dataset, --from the directory
        assert "`funes push bob/kb" in err[0] and " --from DIR`" in err[0], err[0]
    assert list(work.iterdir()) == []
    assert not (Path(os.environ["FUNES_HOME"]) / "memory").exists()


@pytest.mark.parametrize("spec", HUB_SPECS)
def test_push_from_a_hub_memory_is_refused_before_anything_is_opened(
    tmp_path: Path, spec: str
) -> None:
    env = {"HF_TOKEN": "hf_" + "x" * 34, "HF_ENDPOINT": "http://127.0.0.1:9"}
    r = run_cli("funes", "push", "ana/kb", "--from", spec, cwd=tmp_path, env=env)
    err = r.stderr.decode().strip().splitlines()
    assert r.returncode == 2, err
    assert err == [f"funes: --from must name a local memory, not the Hub memory {spec_uri(spec)}"]
    assert list(tmp_path.iterdir()) == []


def spec_uri(spec: str) -> str:
    return spec if spec.startswith("hf://") else f"hf://datasets/{spec}"


def test_writers_still_write_a_local_memory_named_like_a_relative_path(tmp_path: Path) -> None:
    f = write_jsonl(tmp_path / f"{SID}.jsonl", [rec("u-1", 1, "the narwhalgrid notes")])
    (tmp_path / "team" / "kb").mkdir(parents=True)  # exists: a directory, not a Hub dataset
    r = run_cli("funes", "index", "--no-embed", "--json", "--memory", "team/kb", f, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["chunks"] == 1
    got = run_cli("funes", "recall", "--memory", tmp_path / "team" / "kb", "narwhalgrid")
    assert b"the narwhalgrid notes" in got.stdout


# ---------------------------------------------------------------------------- a full disk


def _in_a_tiny_filesystem(tmp_path: Path, script: str, size: str = "2m") -> str:
    """Run ``script`` (sh) with ``$TINY`` a fresh tmpfs of ``size``, mounted in a private mount
    namespace (an unprivileged user namespace, or as root); returns what it printed."""
    tiny = tmp_path / "tiny"
    tiny.mkdir()
    body = f'mount -t tmpfs -o size={size} tmpfs "$TINY" || exit 97\n{script}'
    env = {**os.environ, "TINY": str(tiny), "PATH": f"{BIN}:{os.environ['PATH']}"}
    for wrap in (["unshare", "--user", "--map-root-user", "--mount"], ["unshare", "--mount"]):
        try:
            r = subprocess.run(
                [*wrap, "sh", "-c", body], capture_output=True, env=env, timeout=300, check=False
            )
        except FileNotFoundError:
            break
        if r.returncode != 97 and b"unshare:" not in r.stderr[:200]:
            return r.stdout.decode() + r.stderr.decode()
    pytest.skip("no mount namespace here to make a small filesystem in")


def test_a_full_disk_is_one_line_saying_what_was_kept(tmp_path: Path) -> None:
    words = [f"w{i:05d}x" for i in range(4000)]
    f = write_jsonl(
        tmp_path / f"{SID}.jsonl",
        [rec(f"u-{i}", i % 60, " ".join(words[(i * 37 + j) % 4000] for j in range(150)))
         for i in range(3000)],
    )  # fmt: skip
    out = _in_a_tiny_filesystem(
        tmp_path,
        f'funes index --no-embed --memory "$TINY/m" {f}; echo "exit=$?"\n'
        'funes status --memory "$TINY/m" | head -2\n'
        'funes recall --memory "$TINY/m" w00001x >/dev/null; echo "recall=$?"\n',
    )
    funes_lines = [ln for ln in out.splitlines() if ln.startswith("funes:")]
    assert len(funes_lines) == 1, out
    line = funes_lines[0]
    assert line.startswith(f"funes: no space left on the disk holding {tmp_path}/tiny/m — ")
    kept = int(line.split(" — ")[1].split(" chunks")[0].replace(",", ""))
    assert kept > 0 and "chunks of this run were stored before it filled and are kept" in line
    assert ".rs:" not in line and "may be damaged" not in line and "LanceError" not in line
    assert "exit=1" in out
    assert f"chunks: {kept}\n" in out  # what it said it kept is what the memory holds
    assert "recall=0" in out


def test_funes_write_on_a_full_disk_says_what_is_intact(tmp_path: Path) -> None:
    turns = run_cli("funes-parse", "-", input=json.dumps(rec("u-1", 1, "x " * 500))).stdout
    chunk = jsonl(run_cli("funes-chunk", input=turns).stdout)[0]
    lines = [json.dumps({**chunk, "id": f"{i:016x}", "text": f"{i} " * 600}) for i in range(6000)]
    (tmp_path / "in.jsonl").write_text("\n".join(lines) + "\n")
    out = _in_a_tiny_filesystem(
        tmp_path, f'funes-write --memory "$TINY/m" < {tmp_path}/in.jsonl; echo "exit=$?"\n'
    )
    err = [ln for ln in out.splitlines() if ln.startswith("funes")]
    assert err == [
        f"funes-write: no space left on the disk holding {tmp_path}/tiny/m — the write in "
        "progress was not stored; what the memory held before it is intact. Free some space "
        "and run the command again"
    ], out
    assert "exit=1" in out


def test_embedding_writes_nothing_under_the_users_cache_microsoft(private_home: Path) -> None:
    turns = run_cli("funes-parse", "-", input=json.dumps(rec("u-1", 1, "embed me"))).stdout
    r = run_cli("funes-embed", input=run_cli("funes-chunk", input=turns).stdout)
    assert r.returncode == 0, r.stderr
    assert len(jsonl(r.stdout)[0]["vector"]) == 384
    assert not (private_home / ".cache" / "Microsoft").exists()


# ---------------------------------------------------------------------------- Ctrl-C


# `funes` stopping at a known point of the run — its progress hook (funes.ingest.report.Progress,
# the one the CLI draws) at a phase, or the first-run derivation of the int8 embedding graph once
# it is quantised — where it says so in a file and sleeps until the test's SIGINT ends the sleep
# with KeyboardInterrupt, as Ctrl-C would end whatever the run was doing at that point.
PAUSED_FUNES = """
import os, signal, sys, time

# Ctrl-C as on a terminal. A suite started in the background of a non-interactive shell (CI,
# `bin/test &`) hands its children SIGINT ignored, and Python then installs no KeyboardInterrupt
# handler at all: the signal would be lost and the run would sleep on.
signal.signal(signal.SIGINT, signal.default_int_handler)

from funes.cli import index
from funes.cli.main import main

phase, mark, argv = sys.argv[1], sys.argv[2], sys.argv[3:]


def pause(note):
    with open(mark + ".tmp", "w") as f:
        f.write(note + "\\n")
    os.replace(mark + ".tmp", mark)
    time.sleep(600)
    sys.exit(99)  # never signalled


class PauseMidRun(index.IndexProgress):
    def update(self, ph, done, total, chunks, force=False, unit="", after=0):
        super().update(ph, done, total, chunks, force, unit, after)
        if ph == phase and 0 < chunks and done < total:
            pause(f"{done} {total} {chunks}")


index.IndexProgress = PauseMidRun
if phase == "deriving":
    import onnxruntime.quantization as q

    quantize = q.quantize_dynamic

    def quantize_then_pause(*args, **kwargs):
        quantize(*args, **kwargs)  # the graph is on disk under a temporary name, not yet checked
        pause("quantised")

    q.quantize_dynamic = quantize_then_pause
sys.exit(main(argv))
"""


def ctrl_c_when_paused(phase: str, mark: Path, argv: list[str]) -> str:
    """Run `funes ARGV` paused at ``phase`` (see PAUSED_FUNES), send it SIGINT there as Ctrl-C
    does, and return what it wrote on stderr once it has ended. Fails (and kills the run) when
    it never gets there, or is still running a minute after the signal."""
    p = subprocess.Popen(
        [sys.executable, "-c", PAUSED_FUNES, phase, str(mark), *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 300
        while not mark.exists() and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if not mark.exists():
            p.kill()
            _, err = p.communicate()
            pytest.fail(f"funes {' '.join(argv)} never reached {phase} mid-way: {err.decode()}")
        p.send_signal(signal.SIGINT)
        try:
            _, err = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            _, err = p.communicate()
            pytest.fail(f"paused at {phase}, the run was still going 60 s after SIGINT: {err!r}")
        assert p.returncode == 130, err.decode()
        return err.decode()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


@pytest.fixture(scope="module")
def two_big_sessions(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """Two sessions of more chunks each than one commit holds, so the first is stored before
    the second is read; and the ids a clean run of both stores."""
    from funes.ingest.indexer import FLUSH_CHUNKS
    from funes.store import open_memory

    root = tmp_path_factory.mktemp("two-big-sessions")
    src = root / "p"
    for n in range(2):
        sid = f"{n:08d}-0000-4000-8000-0000000000aa"
        write_jsonl(
            src / f"{sid}.jsonl",
            [{**rec(f"u-{n}-{i}", i % 60, f"session {n} turn {i}: the ferret{i} cache note"),
              "sessionId": sid} for i in range(FLUSH_CHUNKS + 100)],
        )  # fmt: skip
    clean = run_cli("funes", "index", src, "--yes", "--no-embed", "--memory", root / "clean")
    assert clean.returncode == 0, clean.stderr
    want = open_memory(root / "clean").rows(columns=("id",)).column("id").to_pylist()
    return src, sorted(want)


@pytest.mark.slow
@pytest.mark.parametrize("phase", ["indexing", "embedding"])
def test_ctrl_c_mid_index_says_what_is_kept_and_a_rerun_completes_it(
    phase: str, two_big_sessions: tuple[Path, list[str]], tmp_path: Path
) -> None:
    """SIGINT while `funes index` stores text (one session committed, one to go) or embeds (one
    batch of vectors written, more to go): exit 130 with one line saying what is kept and what
    to do, no traceback; what the run had stored is there, whole, and the next run stores
    exactly what a clean run does."""
    from funes.store import open_memory

    src, want = two_big_sessions
    mem, mark = tmp_path / "m", tmp_path / "paused"
    text = ctrl_c_when_paused(phase, mark, ["index", str(src), "--yes", "--memory", str(mem)])
    assert text.splitlines()[-1] == (
        "funes: interrupted — what this run stored is kept; run it again to go on"
    )
    assert "Traceback" not in text

    _done, total, stored = map(int, mark.read_text().split())
    kept = open_memory(mem)
    ids = kept.rows(columns=("id",)).column("id").to_pylist()
    assert len(ids) == len(set(ids)) and set(ids) <= set(want)
    if phase == "indexing":  # what was committed before the signal, and not all of it (the
        # mark counts chunks found, committed or still in the batch: the pass bar's count)
        assert stored > 0 and len(ids) < len(want)
    else:  # all the text, and the vectors of the batches written before the signal
        assert len(ids) == len(want)
        with_vectors = kept.count() - kept.count_without_vectors()
        # the mark counts chunks embedded (the bar moves every 64), stored a batch at a time
        assert with_vectors < total
    again = run_cli("funes", "index", src, "--yes", "--no-embed", "--memory", mem)
    assert again.returncode == 0, again.stderr
    ids = open_memory(mem).rows(columns=("id",)).column("id").to_pylist()
    assert sorted(ids) == want


@pytest.mark.slow
def test_ctrl_c_while_the_embedding_model_is_first_derived_keeps_the_text_and_no_half_graph(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first `funes index` on a machine derives the int8 embedding graph (seconds). SIGINT
    in the middle of that — the graph quantised under a temporary name, not yet checked — is
    the same one line and exit 130; the text is stored, no vector, nothing of the graph is left
    in the cache, and the next run derives it and fills every vector."""
    from funes.store import open_memory

    cache = tmp_path / "model-cache"  # no graph derived on this "machine" yet
    monkeypatch.setenv("FUNES_CACHE_DIR", str(cache))
    src, mem = tmp_path / "p", tmp_path / "m"
    write_jsonl(src / f"{SID}.jsonl", [rec(f"u-{i}", i, f"turn {i}: the okapi{i} note") for i in range(40)])  # fmt: skip
    text = ctrl_c_when_paused(
        "deriving", tmp_path / "paused", ["index", str(src), "--yes", "--memory", str(mem)]
    )
    assert text.splitlines()[-1] == (
        "funes: interrupted — what this run stored is kept; run it again to go on"
    )
    assert "Traceback" not in text
    kept = open_memory(mem)
    assert kept.count() == 40 and kept.count_without_vectors() == 40
    assert sorted(p.name for p in (cache / "models").iterdir()) == []  # no temp, no record

    again = run_cli("funes", "index", src, "--yes", "--memory", mem)
    assert again.returncode == 0, again.stderr
    assert open_memory(mem).count_without_vectors() == 0
    names = sorted(p.suffix for p in (cache / "models").iterdir())
    assert names == [".json", ".onnx"]  # the derived graph and its record, nothing else
