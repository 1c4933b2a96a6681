"""The optional cross-encoder reranker: (query, passage) pairs → relevance in [0, 1].

Resolution order (first found wins):

1. ``$FUNES_RERANKER`` — a directory holding ``model.onnx`` and ``tokenizer.json``;
2. an installed model package, registered under the entry-point group ``funes.rerankers``
   (the entry point loads to such a directory, or to a callable returning one);
3. the pinned Hub download made by ``funes models fetch`` (cross-encoder/ms-marco-MiniLM-L-6-v2
   at a pinned revision); its sha256 is recorded at download and checked on every load.

Nothing found → ``load_reranker()`` returns None and recall ranks without it. A model that is
configured or downloaded but damaged raises ModelError instead: that is for the user to fix.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from funes import plugins
from funes.models.pins import ENV_RERANKER, RERANKER_PIN, ModelError, cache_dir, sha256_file

if TYPE_CHECKING:
    import numpy as np

ENTRY_POINT_GROUP = "funes.rerankers"
PIN_RECORD = "funes-pin.json"
BATCH = 8  # pairs per padded model call; batches are spread over the worker pool

_loaded: dict[str, Reranker | None] = {}
_load_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class RerankerFiles:
    name: str
    model: Path
    tokenizer: Path
    origin: str  # for humans: where the files came from
    expected_sha256: str | None = None  # recorded at download; None for local directories


class Reranker:
    """A cross-encoder: scores each (query, text) pair, sigmoid of the model's logit."""

    def __init__(
        self, session: Any, tokenizer: Any, *, name: str, max_length: int, origin: str = ""
    ) -> None:
        self.name = name
        self.origin = origin
        self.max_length = max_length
        self._session = session
        self._tok = tokenizer
        self._inputs = {i.name for i in session.get_inputs()}
        self._output = session.get_outputs()[0].name
        pad = tokenizer.token_to_id("[PAD]")
        self._pad_id = 0 if pad is None else pad

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """float32 relevance per text, in input order."""
        # lazy: numpy and onnxruntime stay off fast commands' start-up
        import numpy as np

        from funes.models import _runtime

        out = np.zeros(len(texts), dtype=np.float32)
        if not texts:
            return out
        # The pair is cut at max_length tokens; the tokenizer need not see more than that.
        cap = 16 * self.max_length
        encs = self._tok.encode_batch([(query[:cap], t[:cap]) for t in texts])
        # Sort by length before padding, so each batch pads to nearly its own length.
        order = sorted(range(len(encs)), key=lambda i: -len(encs[i].ids))
        batches = [order[i : i + BATCH] for i in range(0, len(order), BATCH)]

        def run(idx: list[int]) -> np.ndarray:
            return self._run([encs[i] for i in idx])

        results = map(run, batches) if len(batches) == 1 else _runtime.pool().map(run, batches)
        for idx, logits in zip(batches, results, strict=True):
            out[idx] = 1.0 / (1.0 + np.exp(-logits))
        return out

    def _run(self, encs: list[Any]) -> np.ndarray:
        # lazy: numpy stays off fast commands' start-up
        import numpy as np

        n, width = len(encs), max(len(e.ids) for e in encs)
        ids = np.full((n, width), self._pad_id, dtype=np.int64)
        mask = np.zeros((n, width), dtype=np.int64)
        types = np.zeros((n, width), dtype=np.int64)
        for r, e in enumerate(encs):
            k = len(e.ids)
            ids[r, :k] = e.ids
            mask[r, :k] = 1
            types[r, :k] = e.type_ids
        feed = {"input_ids": ids}
        if "attention_mask" in self._inputs:
            feed["attention_mask"] = mask
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = types
        try:
            raw = self._session.run([self._output], feed)[0]
        except Exception as e:  # onnxruntime's errors are untyped
            raise ModelError(
                f"the reranker {self.name} failed to run ({str(e).splitlines()[0][:200]}); "
                "check that it is a cross-encoder with input_ids/attention_mask inputs"
            ) from None
        logits = np.asarray(raw, dtype=np.float32)
        if logits.ndim == 2:
            # (n, 1) for a relevance head; for a 2-class head the last class is "relevant".
            logits = logits[:, -1]
        return logits.reshape(n)


def load_reranker(max_length: int | None = None) -> Reranker | None:
    """The installed reranker, or None when none is installed.

    Loaded once per process for each model file found (a few stat calls find it), so a
    reranker installed or removed while a server runs is picked up by its next query.
    """
    files = find_reranker()
    key = f"{max_length}:{files.model if files else None}"
    with _load_lock:
        if key not in _loaded:
            _loaded[key] = None if files is None else _load(files, max_length)
        return _loaded[key]


def find_reranker() -> RerankerFiles | None:
    """Where the reranker would be loaded from, without loading it."""
    env = os.environ.get(ENV_RERANKER)
    if env:
        d = Path(env).expanduser()
        return _dir_files(d, f"local:{d.name}", f"${ENV_RERANKER} ({d})")
    for name, value in sorted(plugins.entry_points(ENTRY_POINT_GROUP).items()):
        try:
            target = plugins.load(value)
            d = Path(target() if callable(target) else target)
        except Exception as e:  # a plug-in's own code: whatever it raises is said in one line
            raise ModelError(
                f"the reranker package entry point {name!r} ({value}) failed to load: {e}"
            ) from None
        return _dir_files(d, name, f"package entry point {name} ({d})")
    d = fetched_dir()
    rec = _read_pin_record(d)
    if rec is None:
        return None
    return RerankerFiles(
        name=RERANKER_PIN.name,
        model=d / "model.onnx",
        tokenizer=d / "tokenizer.json",
        origin=f"Hub download {RERANKER_PIN.repo}@{RERANKER_PIN.revision[:12]} ({d})",
        expected_sha256=str(rec.get("sha256", "")),
    )


def fetched_dir() -> Path:
    return cache_dir() / "models" / RERANKER_PIN.repo.replace("/", "--") / RERANKER_PIN.revision


def fetch_reranker() -> Path:
    """Download the pinned cross-encoder through huggingface_hub; record its sha256."""
    dest = fetched_dir()
    if _read_pin_record(dest) is not None:
        return dest
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ModelError(f"cannot create {dest.parent}: {e.strerror}") from None
    # lazy: huggingface_hub, and logging, shutil, socket and tempfile (~6M instructions of
    # `funes status`, which asks only where a reranker is), stay off fast commands' start-up
    import logging
    import shutil
    import tempfile

    from huggingface_hub import constants, hf_hub_download

    hint = (
        f"Check the network (or HF_ENDPOINT), or put model.onnx and tokenizer.json in a "
        f"directory and set {ENV_RERANKER} to it"
    )
    if constants.HF_HUB_OFFLINE:
        raise ModelError(f"cannot fetch {RERANKER_PIN.repo}: HF_HUB_OFFLINE is set. {hint}")
    _probe(constants.ENDPOINT, hint)
    tmp = Path(tempfile.mkdtemp(prefix=".fetch-", dir=dest.parent))
    hub_log = logging.getLogger("huggingface_hub")
    level = hub_log.level
    hub_log.setLevel(logging.ERROR)  # its retry chatter would bury our one-line error
    try:
        got: dict[str, Path] = {}
        wanted = ((RERANKER_PIN.file, "model.onnx"), (RERANKER_PIN.tokenizer, "tokenizer.json"))
        for remote, local in wanted:
            try:
                p: str = hf_hub_download(
                    RERANKER_PIN.repo, remote, revision=RERANKER_PIN.revision, local_dir=tmp
                )
            # the Hub client's errors are many (HTTP, offline, disk): each said in one line
            except Exception as e:
                reason = (str(e).strip().splitlines() or [type(e).__name__])[0]
                raise ModelError(
                    f"cannot download {RERANKER_PIN.repo} ({remote}) from the Hugging Face Hub: "
                    f"{reason[:200]}. {hint}"
                ) from None
            got[local] = Path(p)
        final = Path(tempfile.mkdtemp(prefix=".ready-", dir=dest.parent))
        for local, downloaded in got.items():
            shutil.move(downloaded, final / local)
        rec = {
            "repo": RERANKER_PIN.repo,
            "revision": RERANKER_PIN.revision,
            "file": RERANKER_PIN.file,
            "sha256": sha256_file(final / "model.onnx"),
            "tokenizer_sha256": sha256_file(final / "tokenizer.json"),
            "fetched_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        (final / PIN_RECORD).write_text(json.dumps(rec, indent=1) + "\n", encoding="utf-8")
        try:
            os.replace(final, dest)
        except OSError:
            shutil.rmtree(final, ignore_errors=True)  # another process finished first
        return dest
    finally:
        hub_log.setLevel(level)
        shutil.rmtree(tmp, ignore_errors=True)


def _probe(endpoint: str, hint: str) -> None:
    """Fail at once, with one line, when the Hub cannot be reached at all (huggingface_hub
    would otherwise retry with back-off for ~25 s before giving up)."""
    if any(os.environ.get(v) for v in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")):
        return  # a direct connection says nothing when traffic goes through a proxy
    import socket  # lazy: as in the fetch

    url = urlsplit(endpoint)
    host = url.hostname or ""
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        socket.create_connection((host, port), timeout=5).close()
    except OSError as e:
        reason = e.strerror or type(e).__name__
        raise ModelError(
            f"cannot reach the Hugging Face Hub at {endpoint} ({reason}) to fetch "
            f"{RERANKER_PIN.repo}. {hint}"
        ) from None


def _dir_files(d: Path, name: str, origin: str) -> RerankerFiles:
    files = RerankerFiles(name, d / "model.onnx", d / "tokenizer.json", origin)
    missing = [p.name for p in (files.model, files.tokenizer) if not p.is_file()]
    if missing:
        raise ModelError(
            f"the reranker directory {d} (from {origin}) has no {' or '.join(missing)}; "
            f"it needs model.onnx and tokenizer.json"
            + (f", or unset {ENV_RERANKER}" if origin.startswith("$") else "")
        )
    return files


def _read_pin_record(d: Path) -> dict[str, Any] | None:
    try:
        rec = json.loads((d / PIN_RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return rec if isinstance(rec, dict) else None


def _load(files: RerankerFiles, max_length: int | None) -> Reranker:
    # lazy: tokenizers and onnxruntime stay off fast commands' start-up
    from tokenizers import Tokenizer

    from funes.models import _runtime

    if files.expected_sha256 is not None:
        try:
            actual = sha256_file(files.model)
        except OSError:
            actual = "missing"
        if actual != files.expected_sha256:
            raise ModelError(
                f"the reranker weights {files.model} no longer match the sha256 recorded at "
                f"download; delete {files.model.parent} and run `funes models fetch` again"
            )
    try:
        tok = Tokenizer.from_file(str(files.tokenizer))
    except Exception as e:  # tokenizers raises its own untyped Exception
        raise ModelError(f"cannot read the reranker tokenizer {files.tokenizer}: {e}") from None
    length = max_length or RERANKER_PIN.max_length
    tok.enable_truncation(max_length=length, strategy="longest_first")
    tok.no_padding()
    sess = _runtime.session(files.model, "reranker")
    return Reranker(sess, tok, name=files.name, max_length=length, origin=files.origin)
