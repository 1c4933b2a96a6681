"""Shared test set-up: every test runs with a private HOME and FUNES_HOME."""

from __future__ import annotations

import contextlib
import fcntl
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
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parent.parent
EVAL_DEV = REPO.parent / "shared" / "eval-dev"


@pytest.fixture(autouse=True)
def private_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("FUNES_HOME", str(home / ".funes-home"))
    # The derived int8 embedding graph is cached once per test session, shared by all tests.
    monkeypatch.setenv("FUNES_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "funes-model-cache"))
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
) -> subprocess.CompletedProcess[bytes]:
    """Run an installed funes command as a user would, capturing bytes."""
    data = input.encode("utf-8") if isinstance(input, str) else input
    return subprocess.run(
        [str(BIN / name), *map(str, args)],
        input=data,
        capture_output=True,
        env={**os.environ, **(env or {})},
        timeout=120,
        check=False,
    )


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
        "FUNES_CACHE_DIR": str(tmp_path_factory.getbasetemp() / "funes-model-cache"),
    }
    mem = root / "memory"
    p = run_cmd("funes", "index", REPO / "contrib" / "samples", "--yes", "--memory", mem, env=env)
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
