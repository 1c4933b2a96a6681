"""onnxruntime sessions and the worker pool every model shares. Imported lazily (heavy)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import onnxruntime as ort

from funes.models.pins import ModelError, threads

_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_lock = threading.Lock()


def pool() -> ThreadPoolExecutor:
    """One pool per process, sized by threads(). onnxruntime releases the GIL while it runs, so
    single-threaded sessions on N workers use N cores without a barrier between them (a slow
    core, busy with someone else's work, then holds back only its own sequence)."""
    global _pool, _pool_size
    n = threads()
    with _lock:
        if _pool is None or _pool_size != n:
            if _pool is not None:
                _pool.shutdown(wait=False)
            _pool = ThreadPoolExecutor(n, thread_name_prefix="funes-model")
            _pool_size = n
        return _pool


def session(path: Path | bytes, what: str, unfused: Sequence[str] = ()) -> ort.InferenceSession:
    """A CPU session with one intra-op thread and no spinning (the parallelism is the pool's).
    ``unfused``: onnxruntime graph optimizers to leave out (by name)."""
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    so.log_severity_level = 3
    try:
        src: Any = str(path) if isinstance(path, Path) else path
        return ort.InferenceSession(
            src, so, providers=["CPUExecutionProvider"], disabled_optimizers=list(unfused)
        )
    except Exception as e:  # onnxruntime raises its own untyped errors
        where = f" ({path})" if isinstance(path, Path) else ""
        raise ModelError(f"cannot load the {what} model{where}: {str(e).splitlines()[0]}") from None


def input_names(sess: ort.InferenceSession) -> list[str]:
    return [i.name for i in sess.get_inputs()]
