"""Shared test set-up: every test runs with a private HOME and FUNES_HOME."""

from __future__ import annotations

import contextlib
import fcntl
import functools
import gc
import importlib
import io
import json
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time
import traceback
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parent.parent
EVAL_DEV = REPO.parent / "shared" / "eval-dev"


def model_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test run's model cache: the derived int8 embedding graph is made once per run and
    shared by every test, and by every worker when pytest-xdist runs the tests in several
    processes (their temporary roots are folders of one; two deriving at once is safe: each
    writes a temporary file and renames it)."""
    base = tmp_path_factory.getbasetemp()
    return (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "funes-model-cache"


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run's model cache (:func:`model_cache_dir`): the int8 graph is derived once."""
    return model_cache_dir(tmp_path_factory)


def model_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cache: Path, *unset: str) -> None:
    """A test of the models: HOME and FUNES_HOME under ``tmp_path``, the run's model ``cache``,
    no embedder file or thread count from the outer environment, and ``unset`` removed too."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("FUNES_HOME", str(tmp_path / "funes-home"))
    monkeypatch.setenv("FUNES_CACHE_DIR", str(cache))
    for name in ("FUNES_EMBEDDER_FILE", "FUNES_THREADS", *unset):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def private_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("FUNES_HOME", str(home / ".funes-home"))
    # The derived int8 embedding graph is cached once per test session, shared by all tests.
    monkeypatch.setenv("FUNES_CACHE_DIR", str(model_cache_dir(tmp_path_factory)))
    return home


def write_jsonl(path: Path, records: Iterable[dict[str, Any] | str]) -> Path:
    """Write records (dicts, or raw strings written as-is) one per line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for r in records:
            f.write((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n")
    return path


def run_cmd(
    name: str,
    *args: str | Path,
    input: bytes | str | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run an installed funes command as a user would, capturing bytes."""
    data = input.encode("utf-8") if isinstance(input, str) else input
    return subprocess.run(
        [str(BIN / name), *map(str, args)],
        input=data,
        capture_output=True,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        timeout=120,
        check=False,
    )


# The installed console scripts (pyproject.toml [project.scripts]) and the function each runs.
SCRIPTS = {
    "funes": "funes.cli.main",
    **{f"funes-{v}": f"funes.cli.{v}" for v in ("parse", "chunk", "write", "embed", "query")},
}
# Environment that decides which model a process loads; a model loaded under other values is
# dropped before the next in-process run.
MODEL_ENV = (
    "FUNES_CACHE_DIR", "FUNES_EMBEDDER_FILE", "FUNES_RERANKER", "FUNES_PAIR_MODEL",
    "FUNES_RANKER_WEIGHTS", "FUNES_THREADS",
)  # fmt: skip
_models_env: list[tuple[str | None, ...]] = []
_hf_env: list[list[tuple[str, str]]] = []


def run_cli(
    name: str,
    *args: str | Path,
    input: bytes | str | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    clear_env: bool = False,
) -> subprocess.CompletedProcess[bytes]:
    """`run_cmd`, in this process: the command's `main(argv)` with stdin, stdout and stderr as
    byte streams (no terminal), ``env`` over os.environ, and exit status as `run_cmd` gives it.
    It saves the ~0.5-2 s a child spends importing funes, LanceDB and onnxruntime and loading
    the embedder (kept loaded between runs while the model's environment is the same).

    What a command changes in the process — environment, umask, working directory, signal
    handlers, the garbage collector, warning filters, sys.argv and the standard streams — is
    put back after it, and the caches funes keeps per process (entry points, registries) are
    emptied before it, so each run starts as a new process would (huggingface_hub's settings,
    read from the environment when it is imported, are read again when that changed). With
    ``clear_env`` the command sees ``env`` alone, as a child given ``env=`` would. A verb funes
    does not ship
    (run as `funes-VERB` from PATH) and `funes mcp` (which ends with os._exit) still run as a
    child process."""
    argv = [str(a) for a in args]
    verb = argv[0] if name == "funes" and argv else ""
    if name not in SCRIPTS or verb == "mcp" or (verb and not _shipped(verb)):
        if clear_env:
            return _run_child(name, *args, input=input, env=env or {}, cwd=cwd)
        return run_cmd(name, *args, input=input, env=env, cwd=cwd)
    data = input.encode("utf-8") if isinstance(input, str) else (input or b"")
    # buffered binary streams under text ones, as a process's are (a command peeks at stdin)
    stdin = io.TextIOWrapper(io.BufferedReader(io.BytesIO(data)), encoding="utf-8")
    out, err = _Sink(), _Sink()
    stdout = io.TextIOWrapper(io.BufferedWriter(out), encoding="utf-8", write_through=True)
    stderr = io.TextIOWrapper(
        io.BufferedWriter(err), encoding="utf-8", errors="backslashreplace", write_through=True
    )
    saved_env = dict(os.environ)
    saved_streams = (
        sys.stdin,
        sys.stdout,
        sys.stderr,
        sys.__stdin__,
        sys.__stdout__,
        sys.__stderr__,
    )
    saved_argv, saved_cwd, saved_gc = sys.argv, os.getcwd(), gc.isenabled()
    saved_signals = {
        s: signal.getsignal(s)
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE)
    }
    saved_umask = os.umask(0o022)
    os.umask(saved_umask)
    code: int
    try:
        if clear_env:
            os.environ.clear()
        os.environ.update(env or {})
        _fresh_process()
        sys.argv = [str(BIN / name), *argv]
        if cwd is not None:
            os.chdir(cwd)
        sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
        sys.__stdin__, sys.__stdout__, sys.__stderr__ = stdin, stdout, stderr  # type: ignore[misc]
        with warnings.catch_warnings():
            main = importlib.import_module(SCRIPTS[name]).main
            code = _status(main(argv))
    except SystemExit as e:
        code = _status(e.code, stderr)
    except Exception:
        traceback.print_exc(file=stderr)  # what an uncaught exception prints, with status 1
        code = 1
    finally:
        for stream in (stdout, stderr):
            with contextlib.suppress(ValueError):  # closed by the command, after a flush
                stream.flush()
        sys.stdin, sys.stdout, sys.stderr, sys.__stdin__, sys.__stdout__, sys.__stderr__ = (
            saved_streams  # type: ignore[misc]
        )
        sys.argv = saved_argv
        os.environ.clear()
        os.environ.update(saved_env)
        os.chdir(saved_cwd)
        os.umask(saved_umask)
        for s, h in saved_signals.items():
            signal.signal(s, h)
        if saved_gc:
            gc.enable()
    return subprocess.CompletedProcess([name, *argv], code, out.getvalue(), err.getvalue())


def as_text(r: subprocess.CompletedProcess[bytes]) -> subprocess.CompletedProcess[str]:
    """``r`` with stdout and stderr decoded, as ``subprocess.run(..., text=True)`` gives them."""
    decode = functools.partial(bytes.decode, encoding="utf-8", errors="strict")
    out, err = (decode(b).replace("\r\n", "\n").replace("\r", "\n") for b in (r.stdout, r.stderr))
    return subprocess.CompletedProcess(r.args, r.returncode, out, err)


class _Sink(io.BytesIO):
    """A standard stream's bytes, kept when the command closes the stream (a wrapper it put
    around ``sys.stdout.buffer`` closes it when collected, as the process's would at exit)."""

    def close(self) -> None:
        pass


def _run_child(
    name: str, *args: str | Path, input: bytes | str | None, env: dict[str, str], cwd: Path | None
) -> subprocess.CompletedProcess[bytes]:
    data = input.encode("utf-8") if isinstance(input, str) else input
    return subprocess.run(
        [str(BIN / name), *map(str, args)],
        input=data, capture_output=True, env=env, cwd=cwd, timeout=180, check=False,
    )  # fmt: skip


def _shipped(verb: str) -> bool:
    """Whether `funes VERB` runs in funes.cli.main itself (not an executable on PATH)."""
    from funes.cli.main import verbs

    return verb.startswith("-") or verb in ("help", "version") or verb in verbs()


def _status(code: object, stderr: io.TextIOBase | None = None) -> int:
    """The exit status of a `main` return or SystemExit code, as the interpreter makes it."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    if stderr is not None:
        print(code, file=stderr)
    return 1


def _reread_hf_settings() -> None:
    """huggingface_hub reads HF_ENDPOINT, HF_HOME, HF_TOKEN's file and the like into
    ``huggingface_hub.constants`` when imported: read them again, and update the names other
    huggingface_hub modules imported from it (``from ..constants import HF_HUB_CACHE``)."""
    constants = sys.modules["huggingface_hub.constants"]
    old = {k: v for k, v in vars(constants).items() if k.isupper()}
    importlib.reload(constants)
    new = vars(constants)
    for name, mod in list(sys.modules.items()):
        if mod is None or not name.startswith("huggingface_hub") or mod is constants:
            continue
        for k, v in list(vars(mod).items()):
            if k in old and v is old[k] and k in new:
                setattr(mod, k, new[k])


def _fresh_process() -> None:
    """Empty the per-process caches funes keeps (a new process starts without them); keep the
    loaded models unless the environment that chose them changed."""
    for mod in [m for n, m in sys.modules.items() if n == "funes" or n.startswith("funes.")]:
        for value in list(vars(mod).values()):
            if isinstance(value, functools._lru_cache_wrapper) and value.__module__ == mod.__name__:
                value.cache_clear()
    http = sys.modules.get("huggingface_hub.utils._http")
    if http is not None:  # a new process opens new connections (a stopped Hub refuses them)
        http.close_session()
    hf = sorted((k, v) for k, v in os.environ.items() if k.startswith(("HF_", "HUGGING")))
    if _hf_env and _hf_env[0] != hf and "huggingface_hub.constants" in sys.modules:
        _reread_hf_settings()
    _hf_env[:] = [hf]
    key = tuple(os.environ.get(v) for v in MODEL_ENV)
    if _models_env and _models_env[0] == key:
        return
    _models_env[:] = [key]
    for name, empty in (("embedder", None), ("reranker", {}), ("pair", {})):
        mod = sys.modules.get(f"funes.models.{name}")
        if mod is not None:
            mod._loaded = empty  # type: ignore[attr-defined]


def start_on_a_terminal(
    argv: list[str], env: dict[str, str], stdin: int | None = None, stdout: int | None = None
) -> tuple[subprocess.Popen[bytes], int]:
    """Start ``argv`` with stderr on a new pseudo-terminal, and stdin and stdout too unless
    given; returns the process and the terminal's master end (the caller closes it).

    Ctrl-C is at its default in the child, as in a terminal's foreground job: a suite started
    in the background by a non-interactive shell (`bin/test &`, CI) has SIGINT ignored, which
    children inherit and Python then never turns into KeyboardInterrupt."""
    master, slave = pty.openpty()
    p = subprocess.Popen(
        argv, stdin=slave if stdin is None else stdin, stdout=slave if stdout is None else stdout,
        stderr=slave, env={**os.environ, **env}, close_fds=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    os.close(slave)
    return p, master


def answer_on_a_terminal(
    args: list[str],
    answers: list[bytes],
    env: dict[str, str],
    timeout: float = 180,
    size: tuple[int, int] | None = None,
) -> tuple[int, str, str]:
    """`funes ARGS` with stdin and stderr on a pseudo-terminal (stdout piped) of ``size`` (rows,
    columns) when given — a new one has no size, and a bar of no width draws nothing —
    answering each `[Y/n]` question with the next of ``answers``. Returns (status, stdout,
    what the terminal showed)."""
    p, master = start_on_a_terminal([str(BIN / "funes"), *args], env, stdout=subprocess.PIPE)
    if size is not None:
        fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", *size, 0, 0))
    answers = list(answers)
    seen = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the child closed the terminal
                break
            seen += chunk
            if answers and seen.count(b"[Y/n]") > seen.count(b"\r\n[answered]"):
                os.write(master, answers.pop(0) + b"\n")
                seen += b"\r\n[answered]"
        elif p.poll() is not None:
            break
    out = p.communicate(timeout=timeout)[0].decode()
    os.close(master)
    return p.returncode, out, seen.decode("utf-8", "replace")


def read_terminal(master: int, timeout: float = 120) -> bytes:
    """All the child writes to the terminal until it closes it (or ``timeout`` seconds)."""
    seen = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    return seen


@contextlib.contextmanager
def writer_held(memory: Path | None = None) -> Iterator[None]:
    """Hold a memory's writer lock (the default memory unless named) for the block: a `funes
    index` started meanwhile — a hook's detached worker — stores nothing until the block ends
    (the hook script retries a busy memory every $FUNES_HOOK_RETRY_SECONDS)."""
    from funes.store.lock import WriterLock
    from funes.store.paths import memory_dir

    lock = WriterLock(memory_dir(memory))
    assert lock.try_acquire(), "the memory's writer lock is already held"
    try:
        yield
    finally:
        lock.release()


def load_bench_secrets() -> ModuleType:
    """bench/secret_detection.py as a module, loaded once by path (its name would shadow the
    stdlib `secrets` module if imported as a package member)."""
    import importlib.util

    name = "funes_bench_secrets"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, REPO / "bench" / "secret_detection.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def jsonl(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="session")
def samples_memory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """contrib/samples indexed (with vectors) once per test session, for tests that only read.

    Tests that write copy it first (``shutil.copytree``)."""
    root = tmp_path_factory.mktemp("samples-memory")
    env = {
        "HOME": str(root / "home"),
        "FUNES_HOME": str(root / "funes-home"),
        "FUNES_CACHE_DIR": str(model_cache_dir(tmp_path_factory)),
    }
    mem = root / "memory"
    p = run_cli("funes", "index", REPO / "contrib" / "samples", "--yes", "--memory", mem, env=env)
    assert p.returncode == 0, p.stderr.decode()
    return mem


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked `needs_scanner` run a real secret scanner (the `scan` extra, which bin/setup
    installs); without one they are skipped, with the reason, rather than failing."""
    from funes.secrets.scanner import available_scanner

    if any("needs_scanner" in item.keywords for item in items) and available_scanner() is None:
        skip = pytest.mark.skip(
            reason="no secret scanner installed — `pip install -e '.[scan]'` (bin/setup) runs it"
        )
        for item in items:
            if "needs_scanner" in item.keywords:
                item.add_marker(skip)
