"""A heavy user's history: indexing, recall, status, get, scrub and push at 100k and 1M chunks.

    .venv/bin/python -m bench scale                      # 100k and 1M chunks (hours of CPU)
    .venv/bin/python -m bench scale --sizes 10k,100k     # a quicker run
    .venv/bin/python -m bench scale --quick              # 10k chunks, into <date>-quick.json

For each size N, a `bench/synth.py` history of N / 100 sessions (the four agents' real layouts,
seed 0) is written to a scratch home, and then, each step a new process unless said otherwise
(wall and CPU time — user + system of the process and its children, from ``wait4`` — peak RSS,
and the load average at its start and end):

1. **index**: the first `funes index --yes --no-embed` a user runs (a sweep of every agent
   root, tier-major: the text of every session, then tool calls, then tool results), polled by
   this process: seconds to the first lexical answer, to all text searchable (every session's
   text tier recorded in ``state.json``, which is written only after its chunks commit), and
   to the end. A plain `funes index` writes the same text the same way before it embeds;
2. **embedding behind**: `funes index --backfill` with the real model until it has used
   :data:`EMBED_SECONDS` of CPU, then stopped (SIGTERM): its peak RSS, and chunks embedded
   (committed) per second of wall time and per second of its CPU (model load included);
3. **random vectors**: every chunk still waiting is given a **random unit vector** by this
   process (embedding a million chunks here takes hours: what follows measures search, not
   embedding; the query is still embedded by the real model, and a flat or ANN search costs the
   same on any 384-d vectors); disk per chunk as left then;
4. **warm recall** (a Searcher kept open, as MCP and `funes-query` run; eval-dev's 31
   questions, p50 and p90 of wall and CPU after two warm-up questions, whose CPU is reported
   too: a warm searcher reads what it keeps at its second question) without and with the pair model forced
   on (the shipped weights carry no pair stage: a stage over the first
   :data:`PAIR_HEAD` candidates with zero weights is added, so it times the model, not its
   judgement), on the memory as indexed (flat vector search); after `funes optimize` also
   as the MCP server asks (the memory opened anew for each question, inside the time);
5. **cold** `funes recall`, `funes status` and `funes get SESSION TURN`: a new interpreter each,
   medians of :data:`COLD_RUNS` runs after one untimed; again after `funes optimize` (step 7),
   as a user's memory is once the background build has given it its vector index;
6. **append**: a hook's `funes index TRANSCRIPT --yes --no-embed` of one new session
   (:data:`APPENDS` sessions of another seed), and the writer's open plus a 200-chunk append in
   process (vectors given: the lexical index's append cost); the hook's chunks then get random
   vectors too (recall embeds pool rows still waiting for one at query time, which would be
   timed below instead of the search);
7. `funes optimize` (lexical merge, ANN index from 50k vectors, table compaction; its own
   report of each phase), disk per chunk after it, and warm recall again (ANN);
8. **lexical build**: the lexical index removed, one process opens the memory (a reader
   indexes the table's rows in memory) and then its writer (indexes them again, persisted) —
   the cost of rebuilding it from the table;
9. **push** of the memory to the loopback Hub server of the tests (tests/hubserver: repos held
   in this process's memory; .lance and binary files taken by LFS, as the Hub does) with
   `funes push --create --yes`, then `funes recall` of it from
   another home: cold (empty HF cache, the download included) and warm (cached);
10. `funes scrub --json` (gitleaks, next to this Python), the last step: it rewrites what it
    redacts.

A step that runs past its time limit (:func:`limit`) is stopped and recorded as such, with how
far it got; so is one that fails. Results of every size merge into today's results file (a run
of some sizes keeps the others), and into ``bench/work/scale-<N>.json`` after every step (a run
killed half-way keeps what it measured). The scratch data are removed after each size.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # `python bench/scale.py`: import as the bench package
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from datetime import date
from typing import Any

import numpy as np

from bench import synth
from bench._common import (
    BIN,
    NOW,
    RESULTS,
    ROOT,
    WORK,
    Context,
    du,
    loadavg,
    log,
    queries,
    rmtree,
    summary_ms,
)

SIZES = (100_000, 1_000_000)
QUICK_SIZES = (10_000,)
EMBED_SECONDS = 60.0
PAIR_HEAD = 20
COLD_RUNS = 5
APPENDS = 3
VECTOR_BATCH = 50_000
SEED = 0


def parse_sizes(text: str) -> list[int]:
    """``10k,100k,1M`` (or plain numbers) → chunk counts."""
    out = []
    for part in text.split(","):
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*", part)
        if not m:
            raise ValueError(f"--sizes: {part!r} is not a chunk count (e.g. 100k, 1M, 20000)")
        mult = {"": 1, "k": 1000, "m": 1_000_000}[m.group(2).lower()]
        out.append(int(float(m.group(1)) * mult))
    return out


def limit(n: int) -> float:
    """Seconds a step may take at ``n`` chunks before it is stopped: 10 min, or 2.5 ms a
    chunk (40 min at 1M)."""
    return max(600.0, n * 0.0025)


# ---------------------------------------------------------------------------- processes


def proc(
    argv: list[str],
    env: dict[str, str],
    timeout: float,
    poll: Callable[[float], None] | None = None,
    stop_after_cpu: float | None = None,
) -> dict[str, Any]:
    """Run ``argv`` (a funes command, from this interpreter's bin) to its end, or stop it at
    ``stop_after_cpu`` s of its CPU time (on purpose: on a loaded machine a wall-clock window
    may hold no work at all) or at ``timeout`` s of wall time (ran too long); ``poll(elapsed)``
    every 0.5 s meanwhile and once at its end. Wall and CPU (user + system, its children
    included) from wait4; peak RSS from the kernel's high-water mark (VmHWM) of the process,
    and of its largest child process (a scanner), read every 0.1 s — wait4's maxrss would
    count this process's own RSS, which a child carries until its exec; the last JSON line it
    printed, if any."""
    load0 = loadavg()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.monotonic()
        p = subprocess.Popen(
            [str(BIN / argv[0]), *argv[1:]], env=env, stdin=subprocess.DEVNULL,
            stdout=out, stderr=err,
        )  # fmt: skip
        stopped = None
        hwm, child_hwm = 0, 0
        last_poll = 0.0
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            hwm = max(hwm, _hwm_kb(p.pid))
            child_hwm = max([child_hwm, *(_hwm_kb(c) for c in _descendants(p.pid))])
            elapsed = time.monotonic() - t0
            if stop_after_cpu is not None and _cpu_s(p.pid) >= stop_after_cpu:
                stopped = "stopped"
            elif elapsed >= timeout:
                stopped = "timed_out"
            if stopped:
                p.send_signal(signal.SIGTERM)
                try:
                    _, status, ru = _wait4(p.pid, 30)
                except TimeoutError:
                    p.kill()
                    _, status, ru = os.wait4(p.pid, 0)
                break
            if poll is not None and elapsed - last_poll >= 0.5:
                last_poll = elapsed
                poll(elapsed)
            time.sleep(0.1)
        wall = time.monotonic() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        if poll is not None and not stopped:
            poll(wall)  # a run shorter than the poll interval is still seen once, at its end
        out.seek(0)
        err.seek(0)
        lines = out.read().decode(errors="replace").strip().splitlines()
        stderr = err.read().decode(errors="replace").strip()
    res: dict[str, Any] = {
        "wall_s": round(wall, 2),
        "cpu_s": round(ru.ru_utime + ru.ru_stime, 2),
        "peak_rss_mb": round(hwm / 1024),
        "exit": p.returncode,
        "load_start": load0,
        "load_end": loadavg(),
    }
    if child_hwm:
        res["child_peak_rss_mb"] = round(child_hwm / 1024)
    if stopped:
        res[stopped] = True
    for line in reversed(lines):
        try:
            res["report"] = json.loads(line)
            break
        except ValueError:
            continue
    if p.returncode and not stopped:
        res["stderr"] = stderr[-600:]
    return res


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system) of a running process, from /proc/PID/stat."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def _hwm_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            kids = [int(x) for t in os.listdir(f"/proc/{p}/task")
                    for x in Path(f"/proc/{p}/task/{t}/children").read_text().split()]  # fmt: skip
        except (OSError, ValueError):
            kids = []
        out += kids
        todo += kids
    return out


def _wait4(pid: int, seconds: float) -> tuple[int, int, Any]:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        got = os.wait4(pid, os.WNOHANG)
        if got[0]:
            return got
        time.sleep(0.2)
    raise TimeoutError


def median_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    out = {
        "runs": len(runs),
        "wall_p50_s": round(statistics.median(r["wall_s"] for r in runs), 2),
        "cpu_p50_s": round(statistics.median(r["cpu_s"] for r in runs), 2),
        "peak_rss_mb": max(r["peak_rss_mb"] for r in runs),
        "load_start": runs[0]["load_start"],
        "load_end": runs[-1]["load_end"],
    }
    if any("child_peak_rss_mb" in r for r in runs):
        out["child_peak_rss_mb"] = max(r.get("child_peak_rss_mb", 0) for r in runs)
    if any(r["exit"] for r in runs):
        out["failed"] = [r.get("stderr") for r in runs if r["exit"]]
    return out


# ---------------------------------------------------------------------------- steps


def index_first(home: Path, fh: Path, env: dict[str, str], timeout: float) -> dict[str, Any]:
    """Step 1: the first `funes index --yes --no-embed`, polled (see the module docstring)."""
    from funes.store import open_memory

    mem_path = fh / "memory"
    marks: dict[str, Any] = {"units_timeline": []}

    def poll(elapsed: float) -> None:
        if "first_hit_s" not in marks:
            try:
                if open_memory(mem_path).lexical_search("error", 1):
                    marks["first_hit_s"] = round(elapsed, 1)
            except Exception:
                pass
        try:
            units = len(json.loads((mem_path / "state.json").read_text()))
        except (OSError, ValueError):
            return
        tl = marks["units_timeline"]
        if not tl or tl[-1][1] != units:
            tl.append((round(elapsed, 1), units))

    res = proc(["funes", "index", "--yes", "--no-embed", "--json"], env, timeout, poll)
    try:
        state = json.loads((mem_path / "state.json").read_text())
    except (OSError, ValueError):
        state = {}
    tl = marks.pop("units_timeline")
    res["units"] = len(state)
    res["units_at_text_tier"] = sum(1 for e in state.values() if e.get("level"))
    res["first_hit_s"] = marks.get("first_hit_s")
    res["all_text_searchable_s"] = (
        next((t for t, u in tl if u >= len(state)), None) if state else None
    )
    # a few points of the curve: seconds until 25 / 50 / 75 % of the files had their text in
    res["units_text_at_s"] = {
        f"{q}%": next((t for t, u in tl if u >= len(state) * q / 100), None) for q in (25, 50, 75)
    }
    return res


def embed_behind(env: dict[str, str], mem: Path, seconds: float) -> dict[str, Any]:
    """Step 2: `funes index --backfill` with the real model, stopped after ``seconds`` of its
    CPU time (or 20 times that of wall time)."""
    from funes.store import open_memory

    before = open_memory(mem).count_without_vectors()
    res = proc(["funes", "index", "--backfill", "--memory", str(mem)], env, seconds * 20,
               stop_after_cpu=seconds)  # fmt: skip
    after = open_memory(mem).count_without_vectors()
    res["embedded"] = before - after
    res["chunks_per_s_wall"] = round((before - after) / res["wall_s"], 1)
    res["chunks_per_cpu_s"] = round((before - after) / max(res["cpu_s"], 1e-3), 1)
    return res


def random_vectors(mem_path: Path) -> dict[str, Any]:
    """Step 3: a random unit vector for every chunk still waiting for one, in this process."""
    from funes.store import open_memory
    from funes.store.memory import WAITING_FOR_VECTOR

    t0, load0 = time.monotonic(), loadavg()
    mem = open_memory(mem_path)
    rng = np.random.default_rng(SEED)
    with mem.writer(interactive=False) as w:
        ids = mem._scan(["id"], WAITING_FOR_VECTOR).column("id").to_pylist()
        for i in range(0, len(ids), VECTOR_BATCH):
            part = ids[i : i + VECTOR_BATCH]
            v = rng.standard_normal((len(part), 384)).astype(np.float32)
            v /= np.linalg.norm(v, axis=1, keepdims=True)
            w.set_vectors(part, v, waited=True)
    return {"vectors": len(ids), "wall_s": round(time.monotonic() - t0, 1),
            "load_start": load0, "load_end": loadavg()}  # fmt: skip


def disk(mem_path: Path, reap: bool = False) -> dict[str, Any]:
    """Bytes per chunk on disk; ``reap``: after removing every old table version first (what
    `funes optimize` leaves for 10 minutes, for readers still on them)."""
    import warnings
    from datetime import timedelta

    from funes.store import open_memory

    if reap:
        with open_memory(mem_path).writer(interactive=False) as w, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            w.optimize(ann=False, cleanup_older_than=timedelta(0))
    mem = open_memory(mem_path)
    n = mem.count()
    ann_bytes = sum(i.total_size_bytes for i in mem._ds.describe_indices()
                    if list(i.field_names) == ["vector"])  # fmt: skip
    return {
        "chunks": n,
        "ann_index": mem.ann_index_type(),
        "ann_bytes_per_chunk": round(ann_bytes / n),
        "bytes_per_chunk": round(du(mem_path) / n),
        "table_bytes_per_chunk": round(du(mem_path / "chunks.lance") / n),
        "lexical_bytes_per_chunk": round(du(mem_path / "lexical") / n),
    }


def pair_weights(dest: Path) -> Path:
    """The shipped ranker weights plus a pair stage over the first PAIR_HEAD candidates whose
    weights are zero: recall runs the pair model and pays for it, and ranks as it does today."""
    from funes.ranker import PAIR_FEATURES

    d = json.loads((ROOT / "funes" / "data" / "ranker.json").read_text())
    k = len(PAIR_FEATURES)
    d["pair"] = {"head": PAIR_HEAD, "features": list(PAIR_FEATURES), "mean": [0.0] * k,
                 "scale": [1.0] * k, "w": [0.0] * k, "b": 0.0}  # fmt: skip
    dest.write_text(json.dumps(d))
    return dest


def warm(
    mem_path: Path, texts: list[str], weights: Path | None, reopen: bool = False
) -> dict[str, Any]:
    """Step 4: a Searcher kept open; wall per question (p50, p90) and CPU of this process.
    ``reopen``: the memory opened anew for each question, inside the time, as the MCP server
    does (so hooks' appends are seen); the searcher is kept."""
    from funes.models import load_embedder
    from funes.retrieval import Query, Searcher
    from funes.store import open_memory

    load0 = loadavg()
    s = Searcher(open_memory(mem_path), load_embedder(), None,
                 weights=None if weights is None else str(weights))  # fmt: skip

    def ask(q: str) -> None:
        if reopen:
            s.memory = open_memory(mem_path)
        s.search(Query(q), now=NOW)

    first = []  # the warm-up questions' CPU: a searcher reads what it keeps at its first two
    for q in texts[:2]:
        c = time.process_time()
        ask(q)
        first.append(round((time.process_time() - c) * 1000, 1))
    walls, cpus = [], []
    for q in texts:
        t, c = time.perf_counter(), time.process_time()
        ask(q)
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    cpu = summary_ms(cpus)
    return {**summary_ms(walls), "cpu_p50_ms": cpu["p50_ms"], "cpu_p90_ms": cpu["p90_ms"],
            "warmup_cpu_ms": first, "load_start": load0, "load_end": loadavg()}  # fmt: skip


def cold(mem_path: Path, env: dict[str, str], texts: list[str], runs: int) -> dict[str, Any]:
    """Step 5: cold `funes recall`, `status`, `get`: medians of COLD_RUNS after one untimed."""
    from funes.store import open_memory

    mem = open_memory(mem_path)
    row = mem.rows(columns=("session_id", "turn_uuid")).slice(mem.count() // 2, 1).to_pylist()[0]
    commands = {
        "recall": lambda i: ["recall", texts[i % len(texts)]],
        "status": lambda i: ["status"],
        "get": lambda i: ["get", row["session_id"], row["turn_uuid"]],
    }
    out = {}
    for name, argv in commands.items():
        done = [proc(["funes", *argv(i), "--memory", str(mem_path)], env, 600)
                for i in range(runs + 1)]  # fmt: skip
        out[name] = median_of(done[1:])
        log(f"  cold {name}: {out[name]}")
    return out


def appends(mem_path: Path, env: dict[str, str], tmp: Path) -> dict[str, Any]:
    """Step 6: a hook's index of one new session (whole process), and the in-process writer
    open + a 200-chunk append with vectors (store.time_appends)."""
    from bench.store import eval_dev_chunks, time_appends
    from funes.store import open_memory

    other = tmp / "append-home"
    synth.build(other, 12, seed=SEED + 1)
    files = sorted((other / ".claude" / "projects").rglob("*.jsonl"))[:APPENDS]
    runs = []
    for f in files:
        r = proc(["funes", "index", str(f), "--yes", "--no-embed", "--json", "--memory",
                  str(mem_path)], env, 600)  # fmt: skip
        r["chunks"] = (r.get("report") or {}).get("chunks")
        runs.append(r)
    hook = {**median_of(runs), "chunks": [r["chunks"] for r in runs]}
    n = open_memory(mem_path).count()
    opens, writes = time_appends(mem_path, eval_dev_chunks(), 50_000_000, 5)
    rmtree(other)
    return {
        "hook_index_one_session": hook,
        "writer_open_s_p50": round(statistics.median(opens), 3),
        "append_200_s_p50": round(statistics.median(writes), 3),
        "rows_before": n,
    }


def lexical_build(mem_path: Path, env: dict[str, str], timeout: float) -> dict[str, Any]:
    """Step 8: the lexical index removed; a reader's in-memory catch-up, then a writer's
    persisted one, in one process."""
    lex = mem_path / "lexical"
    old = mem_path / "lexical.bench-old"
    lex.rename(old)
    code = (
        "import json, sys, time\n"
        "from funes.store import open_memory\n"
        "t = time.monotonic()\n"
        "m = open_memory(sys.argv[1])\n"
        "t1 = time.monotonic()\n"
        "with m.writer(interactive=False) as w:\n"
        "    pass\n"
        "t2 = time.monotonic()\n"
        "print(json.dumps({'reader_catch_up_s': round(t1 - t, 2), "
        "'writer_rebuild_s': round(t2 - t1, 2)}))\n"
    )
    res = proc(["python", "-c", code, str(mem_path)], env, timeout)
    if res["exit"] == 0:
        rmtree(old)
    else:  # put the old one back: later steps need an index
        rmtree(lex)
        old.rename(lex)
    return res


def hub_steps(
    mem_path: Path, tmp: Path, texts: list[str], timeout: float, runs: int
) -> dict[str, Any]:
    """Step 9: push to the loopback Hub, then recall the remote memory cold and warm."""
    sys.path.insert(0, str(ROOT / "tests"))
    from hubserver import HubServer

    # The Hub takes .lance and binary files by LFS (Xet), streamed from disk; a server taking
    # them inline, base64 in the commit's body, measured huggingface_hub's buffer of that body
    # (7.8 GB at 1M chunks), not funes. This one speaks LFS, not Xet: HF_HUB_DISABLE_XET below.
    hub = HubServer(lfs=True).start()
    hub.add_user("bench", "hf_bench")

    def env_of(root: Path) -> dict[str, str]:
        e = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
        return {**e, "HOME": str(root), "FUNES_HOME": str(root / "funes"),
                "HF_HOME": str(root / "hf"), "HF_ENDPOINT": hub.url, "HF_TOKEN": "hf_bench",
                "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1",
                "HF_HUB_DISABLE_XET": "1"}  # fmt: skip

    out: dict[str, Any] = {}
    try:
        push = proc(["funes", "push", "bench/scale", "--create", "--yes", "--from", str(mem_path)],
                    env_of(tmp / "pub"), timeout)  # fmt: skip
        push["uploaded_mb"] = round(hub.uploaded_bytes() / 1e6, 1)
        out["push"] = push
        log(f"  push: {push}")
        if push["exit"] != 0 or push.get("timed_out"):
            return out
        colds = []
        for i in range(2):
            root = tmp / f"remote-cold-{i}"
            colds.append(proc(["funes", "recall", texts[i], "--memory", "bench/scale"],
                              env_of(root), timeout))  # fmt: skip
            colds[-1]["cache_mb"] = round(du(root / "hf") / 1e6, 1) if (root / "hf").exists() else 0
            if i == 0:
                warm_root = root
            else:
                rmtree(root)
        out["remote_recall_cold"] = {**median_of(colds), "cache_mb": colds[0]["cache_mb"]}
        log(f"  remote recall cold: {out['remote_recall_cold']}")
        warms = [proc(["funes", "recall", texts[i % len(texts)], "--memory", "bench/scale"],
                      env_of(warm_root), 600) for i in range(runs + 1)]  # fmt: skip
        out["remote_recall_warm"] = median_of(warms[1:])
        log(f"  remote recall warm: {out['remote_recall_warm']}")
        rmtree(warm_root)
    finally:
        hub.stop()
        rmtree(tmp / "pub")
    return out


# ---------------------------------------------------------------------------- one size


def one_size(n: int, tmp: Path, quick: bool = False, work: Path = WORK) -> dict[str, Any]:
    """Every step at ``n`` chunks, in ``tmp``; what is measured so far is kept in
    ``work/scale-<n>.json`` after each step."""
    texts = [q["query"] for q in queries()]
    if quick:
        texts = texts[:8]
    runs = 2 if quick else COLD_RUNS
    res: dict[str, Any] = {"target_chunks": n, "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    partial = work / f"scale-{n}.json"
    partial.parent.mkdir(parents=True, exist_ok=True)

    def step(name: str, fn: Callable[[], Any]) -> Any:
        log(f"scale {n:,}: {name} …")
        t0 = time.monotonic()
        try:
            out = fn()
        except Exception as e:  # recorded as the finding, and the next step goes on
            out = {"error": f"{type(e).__name__}: {e}"[:600]}
        res[name] = out
        partial.write_text(json.dumps(res, indent=1) + "\n")
        log(f"scale {n:,}: {name} in {time.monotonic() - t0:.0f} s: {json.dumps(out)[:600]}")
        return out

    home, fh = tmp / f"home-{n}", tmp / f"funes-{n}"
    env = {**os.environ, "HOME": str(home), "FUNES_HOME": str(fh)}
    mem = fh / "memory"
    cap = limit(n)
    try:
        sessions = synth.sessions_for(n)
        t0 = time.monotonic()
        info = synth.build(home, sessions, seed=SEED)
        res["history"] = {**info, "mb": round(info["bytes"] / 1e6, 1),
                          "generate_s": round(time.monotonic() - t0, 1)}  # fmt: skip
        log(f"scale {n:,}: history {res['history']}")
        idx = step("index", lambda: index_first(home, fh, env, cap))
        if not (mem / "chunks.lance").is_dir():
            return res
        res["chunks"] = step("disk_text_only", lambda: disk(mem))["chunks"]
        step("embed_behind", lambda: embed_behind(env, mem, 10 if quick else EMBED_SECONDS))
        step("random_vectors", lambda: random_vectors(mem))
        step("disk_as_indexed", lambda: disk(mem))
        weights = pair_weights(tmp / "ranker-pair.json")
        step("warm_flat", lambda: warm(mem, texts, None))
        step("warm_flat_pair", lambda: warm(mem, texts, weights))
        step("cold", lambda: cold(mem, env, texts, runs))
        step("append", lambda: appends(mem, env, tmp))
        # the hook's chunks wait for vectors, and recall embeds waiting pool rows at query time
        step("random_vectors_after_append", lambda: random_vectors(mem))
        step("optimize", lambda: proc(["funes", "optimize", "--json", "--memory", str(mem)],
                                      env, cap))  # fmt: skip
        step("disk_optimized", lambda: disk(mem))
        step("disk_reaped", lambda: disk(mem, reap=True))
        step("warm_optimized", lambda: warm(mem, texts, None))
        step("warm_optimized_pair", lambda: warm(mem, texts, weights))
        step("warm_optimized_pair_mcp", lambda: warm(mem, texts, weights, reopen=True))
        step("cold_optimized", lambda: cold(mem, env, texts, runs))
        step("lexical_build", lambda: lexical_build(mem, env, cap))
        step("hub", lambda: hub_steps(mem, tmp, texts, cap, runs))
        step("scrub", lambda: proc(["funes", "scrub", "--json", "--memory", str(mem)], env, cap))
        del idx
    finally:
        rmtree(home)
        rmtree(fh)
        res["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        partial.write_text(json.dumps(res, indent=1) + "\n")
    return res


VECTORS_NOTE = (
    "random unit vectors for every chunk (embedding is measured only in `embed_behind`: the "
    "real model for 60 s of its CPU); the query is embedded by the real model"
)


def run(ctx: Context) -> dict[str, Any]:
    sizes = ctx.sizes or list(QUICK_SIZES if ctx.quick else SIZES)
    measured: dict[str, Any] = {}
    for n in sizes:
        scratch = ctx.tmp / f"scale-{n}"
        scratch.mkdir(parents=True, exist_ok=True)
        measured[str(n)] = one_size(n, scratch, ctx.quick)
        shutil.rmtree(scratch, ignore_errors=True)
    # A run of some sizes keeps today's other sizes (read now: another run may have finished).
    day = RESULTS / f"{date.today().isoformat()}{'-quick' if ctx.quick else ''}.json"
    kept: dict[str, Any] = {}
    if day.exists():
        kept = (json.loads(day.read_text()).get("suites", {}).get("scale") or {}).get("sizes", {})
    every = {**kept, **measured}
    return {
        "vectors": VECTORS_NOTE,
        "sizes": dict(sorted(every.items(), key=lambda kv: int(kv[0]))),
    }


if __name__ == "__main__":
    from bench.__main__ import main

    raise SystemExit(main(["scale", *sys.argv[1:]]))
