"""Cold start: the commands that answer from what is stored never load a model or the
LanceDB client (checked in a fresh interpreter through sys.modules), and recall loads
onnxruntime only when a question must be embedded."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, run_cmd

HEAVY = ("onnxruntime", "tokenizers", "lancedb")
SESSION = "5f0c2d1e-8a7b-4c3d-9e2f-1a2b3c4d5e6f"  # the Claude sample in contrib/samples
PROBE = """
import sys
import funes.cli.main as m
try:
    m.main(sys.argv[1:])
except SystemExit:
    pass
print("LOADED=" + ",".join(k for k in {heavy!r} if k in sys.modules), file=sys.stderr)
"""


def loaded(*argv: str | Path, watch: tuple[str, ...] = HEAVY) -> set[str]:
    """The heavy modules (of ``watch``) a `funes ARGV…` run imported."""
    p = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=watch), *map(str, argv)],
        capture_output=True, stdin=subprocess.DEVNULL, timeout=120, check=False,
    )  # fmt: skip
    line = [ln for ln in p.stderr.decode().splitlines() if ln.startswith("LOADED=")][-1]
    return {m for m in line.removeprefix("LOADED=").split(",") if m}


@pytest.mark.parametrize(
    "argv",
    [
        ["status"],
        ["get", SESSION, "c-11", "--window", "1"],
        ["get", SESSION, "--from", "2", "--to", "9"],
        ["sessions"],
        ["scan", "count=0", SESSION],
        ["sketch", SESSION],
        ["doctor"],
        ["--help"],
        ["recall", "--help"],
    ],
)
def test_reading_commands_never_import_the_models_or_the_lancedb_client(
    argv: list[str], samples_memory: Path
) -> None:
    reads = ("status", "get", "sessions", "scan", "sketch")
    extra = ["--memory", str(samples_memory)] if argv[0] in reads else []
    assert loaded(*argv, *extra) == set()


# What the `# lazy:` comments of funes/cli promise stays off each command, and what each may
# load: a command that reads the table needs numpy and pyarrow (Lance), never the Hub client or
# the MCP SDK; --help, --version, a usage error, a status answered from the counts its writers
# keep and a doctor with no memory to check start none of them.
LIGHT = ("numpy", "pyarrow", "huggingface_hub", "mcp")
READS_TABLE = {"numpy", "pyarrow"}


@pytest.mark.parametrize(
    ("argv", "may"),
    [
        (["--help"], set()),
        (["--version"], set()),
        *[([verb, "--help"], set()) for verb in ("get", "status", "doctor", "recall", "sessions",
                                                 "scan", "sketch", "push", "curate", "mcp", "ask",
                                                 "index", "models")],
        (["get", SESSION, "--window", "2", "--memory", "M"], set()),  # a window needs a TURN
        (["get", SESSION, "--from", "9", "--to", "2", "--memory", "M"], set()),
        (["get", SESSION, "c-11", "--window", "-1", "--memory", "M"], set()),
        (["scan", "tile", SESSION, "--context", "-1", "--memory", "M"], set()),
        (["recall", "tile cache", "-k", "0", "--memory", "M"], set()),
        (["status", "--memory", "M"], set()),  # its counts, kept by the index run
        (["status"], set()),  # this FUNES_HOME holds no memory: said without opening anything
        (["sessions", "--limit", "0", "--memory", "M"], set()),  # refused before any read
        (["doctor"], set()),  # this FUNES_HOME holds no memory
        (["models"], set()),
        (["get", SESSION, "c-11", "--window", "1", "--memory", "M"], READS_TABLE),
        (["get", SESSION, "--from", "2", "--to", "9", "--memory", "M"], READS_TABLE),
        (["sessions", "--memory", "M"], READS_TABLE),
        (["scan", "tile", SESSION, "--memory", "M"], READS_TABLE),
        (["sketch", SESSION, "--memory", "M"], READS_TABLE),
        (["doctor", "--memory", "M"], READS_TABLE),
    ],
)  # fmt: skip
def test_fast_commands_keep_numpy_pyarrow_the_hub_client_and_mcp_off_as_their_comments_promise(
    argv: list[str], may: set[str], samples_memory: Path
) -> None:
    args = [str(samples_memory) if a == "M" else a for a in argv]
    assert loaded(*args, watch=LIGHT) <= may


@pytest.mark.parametrize(
    "argv",
    [
        ["get", SESSION, "c-11", "--window", "1"],
        ["get", SESSION, "--from", "2", "--to", "9"],
        ["sessions"],
        ["--version"],
    ],
)
def test_short_commands_start_without_shutil(argv: list[str], samples_memory: Path) -> None:
    """shutil (with zlib, bz2 and lzma) cost ~4 ms of CPU at every verb's start, for a verb
    funes does not ship (`funes NAME` runs `funes-NAME`) and the lexical index's writes."""
    extra = ["--memory", str(samples_memory)] if argv[0] != "--version" else []
    p = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=("shutil", "bz2", "lzma")), *argv, *extra],
        capture_output=True, stdin=subprocess.DEVNULL, timeout=120, check=False,
    )  # fmt: skip
    assert p.stderr.decode().splitlines()[-1] == "LOADED=", p.stderr.decode()
    assert p.stdout  # the command answered


def test_masking_a_seed_phrase_as_served_starts_nothing_heavy() -> None:
    """`get` masks a memory stamped by an older install's rules as it serves it, through the
    detectors; a text naming a seed phrase makes them read the BIP39 word list, which must not
    pull in importlib.resources (zipfile, shutil, lzma, bz2, tempfile: ~10 ms at each get)."""
    words = "abandon ability able about above absent absorb abstract absurd abuse access accident"
    probe = (
        "import sys\n"
        "from funes.secrets import detectors\n"
        f"found = detectors.find('my wallet seed phrase: {words}')\n"
        "print(len(found), [k for k in ('shutil', 'zipfile', 'lzma', 'bz2', 'tempfile')"
        " if k in sys.modules])\n"
    )
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, timeout=120, check=True)
    assert p.stdout.decode().split() == ["1", "[]"], p.stdout


def test_recall_imports_onnxruntime_only_to_embed_a_question(samples_memory: Path) -> None:
    assert "onnxruntime" in loaded("recall", "tile cache", "--memory", samples_memory)
    # A bad value is refused before anything heavy loads.
    assert loaded("recall", "tile cache", "-k", "0", "--memory", samples_memory) == set()


def test_recall_over_a_memory_without_vectors_never_imports_onnxruntime(tmp_path: Path) -> None:
    mem = tmp_path / "words-only"
    r = run_cmd("funes", "index", REPO / "contrib" / "samples", "--no-embed", "--memory", mem)
    assert r.returncode == 0, r.stderr
    assert loaded("recall", "tile cache", "--memory", mem) == set()


BLAS_PROBE = """
import ctypes, gc, glob, os, sys
import funes.cli.main as m
try:
    m.main(sys.argv[1:])
except SystemExit:
    pass
import numpy
lib = glob.glob(os.path.join(os.path.dirname(numpy.__file__) + ".libs", "*openblas*"))[0]
threads = ctypes.CDLL(lib).scipy_openblas_get_num_threads64_()
gc_on = gc.isenabled()
print(f"BLAS={threads} ENV={os.environ.get('OPENBLAS_NUM_THREADS')} GC={gc_on}", file=sys.stderr)
"""


@pytest.mark.parametrize(
    "argv",
    [
        ["get", SESSION, "c-11", "--window", "1"],
        ["get", SESSION, "--from", "2"],
        ["sessions"],
        ["scan", "tile", SESSION],
        ["sketch", SESSION],
    ],
)
def test_reads_start_numpy_with_one_blas_thread_and_no_cyclic_gc_leaving_the_environment(
    argv: list[str], samples_memory: Path
) -> None:
    """OpenBLAS's threads (one per core) spin at numpy's import, and the collector walks the
    imports' objects for nothing; get, sessions, scan and a sketch (each test's FUNES_HOME has none cached) multiply
    no matrix and make no cycles to collect."""
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: OpenBLAS starts one thread anyway")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    p = subprocess.run(
        [sys.executable, "-c", BLAS_PROBE, *argv, "--memory", str(samples_memory)],
        capture_output=True, stdin=subprocess.DEVNULL, timeout=120, check=False, env=env,
    )  # fmt: skip
    assert b"tile" in p.stdout or b"turn=" in p.stdout, p.stderr.decode()
    assert p.stderr.decode().splitlines()[-1] == "BLAS=1 ENV=None GC=False"


@pytest.mark.parametrize("counted", [True, False])
def test_status_starts_without_the_recall_formats_or_the_reranker_fetch(
    counted: bool, samples_memory: Path, tmp_path: Path
) -> None:
    """`funes status` prints metadata (funes.render.text), not passages: the recall and get
    formats (with the store's redaction, the untrusted-text rules and the result records)
    and what only a reranker download uses (logging, socket) stay unloaded, whether it
    answers from the counts its writers keep or opens the table."""
    mem = samples_memory
    if not counted:
        mem = tmp_path / "copy"
        shutil.copytree(samples_memory, mem)
        (mem / "counts.json").unlink(missing_ok=True)
    watch = ("funes.render.formats", "funes.results")
    if counted:  # an opened table brings Lance, which loads logging and the store's redaction
        watch += ("funes.store.redaction", "logging", "socket")
    assert loaded("status", "--memory", mem, watch=watch) == set()


def test_status_runs_without_cyclic_gc(samples_memory: Path) -> None:
    """status loads a dict per indexed transcript and sweeps every transcript on the machine:
    the collector walked those objects again and again for no cycle (6 % of its instructions
    at 9,030 transcripts)."""
    probe = (
        "import gc, sys\nimport funes.cli.main as m\n"
        "code = m.main(sys.argv[1:])\nprint(f'EXIT={code} GC={gc.isenabled()}', file=sys.stderr)\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", probe, "status", "--memory", str(samples_memory)],
        capture_output=True, stdin=subprocess.DEVNULL, timeout=120, check=False,
    )  # fmt: skip
    assert b"chunks:" in p.stdout, p.stderr.decode()
    assert p.stderr.decode().splitlines()[-1] == "EXIT=0 GC=False"


def _ended(tmp_path: Path, *argv: str | Path) -> tuple[subprocess.CompletedProcess[bytes], bool]:
    """Run `funes ARGV…` as a user does; whether the interpreter's usual ending ran (an atexit
    hook from a sitecustomize on PYTHONPATH says so on stderr)."""
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(
        "import atexit, sys\natexit.register(lambda: sys.stderr.write('USUAL-ENDING\\n'))\n"
    )
    r = run_cmd("funes", *argv, env={"PYTHONPATH": str(site)})
    return r, b"USUAL-ENDING" in r.stderr


def test_short_reads_end_without_the_interpreters_teardown(
    tmp_path: Path, samples_memory: Path
) -> None:
    """get, status and recall end at once once their output is flushed: the interpreter's
    teardown (freeing every module, a last full collection) was ~5 % of a cold `funes get` at
    1M. What they print and their exit status stay those of the usual ending."""
    mem = str(samples_memory)
    r, usual = _ended(tmp_path, "get", SESSION, "c-11", "--window", "1", "--memory", mem)
    assert r.returncode == 0 and not usual
    assert (
        r.stdout
        == run_cmd("funes", "get", SESSION, "c-11", "--window", "1", "--memory", mem).stdout
    )
    assert b"turn=c-11" in r.stdout
    r, usual = _ended(tmp_path, "status", "--memory", mem)
    assert r.returncode == 0 and not usual and b"chunks:" in r.stdout
    r, usual = _ended(tmp_path, "recall", "tile cache", "--memory", mem)
    assert r.returncode == 0 and not usual and b"tile" in r.stdout
    assert r.stdout == run_cmd("funes", "recall", "tile cache", "--memory", mem).stdout
    r, usual = _ended(tmp_path, "get", "no-such-session", "c-1", "--memory", mem)
    assert r.returncode == 1 and not usual and b"no-such-session not found" in r.stderr
    # A command that is not a short read (and a usage error, refused before any read) ends as
    # it always did.
    r, usual = _ended(tmp_path, "--version")
    assert r.returncode == 0 and usual
    r, usual = _ended(tmp_path, "get", SESSION, "--from", "9", "--to", "2", "--memory", mem)
    assert r.returncode == 2 and usual


def test_get_starts_without_difflib(samples_memory: Path) -> None:
    """difflib suggests a verb or a value someone mistyped; a `get` that reads a window never
    needs it (main and validate import it only to suggest)."""
    argv = ["get", SESSION, "c-11", "--window", "1", "--memory", samples_memory]
    assert loaded(*argv, watch=("difflib",)) == set()
    assert loaded("stauts", watch=("difflib",)) == {"difflib"}  # a slip: `funes status`?
