"""What the suites share: paths, the run context, timing and machine helpers."""

from __future__ import annotations

import math
import os
import platform
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
RESULTS = BENCH / "results"
WORK = BENCH / "work"  # git-ignored scratch, kept between runs (cached memories, models)
EVAL_DEV = ROOT.parent / "shared" / "eval-dev"
BIN = Path(sys.executable).parent
NOW = datetime(2026, 11, 30, tzinfo=UTC)  # "now" of every recency-dependent measurement


@dataclass
class Context:
    """One run of the bench: its size, a scratch directory, and artefacts suites share."""

    quick: bool
    tmp: Path
    shared: dict[str, Any] = field(default_factory=dict)
    # A source tree of an earlier build (`git worktree add --detach DIR REF`): suites that
    # compare measure it in the same run, run by this interpreter with PYTHONPATH=DIR.
    baseline: Path | None = None
    # Chunk counts a suite that measures sizes runs at (`--sizes 10k,100k`; None: its own).
    sizes: list[int] | None = None

    def once(self, name: str, build: Callable[[], Any]) -> Any:
        """``build()`` the first time a suite asks for ``name``; the same value afterwards."""
        if name not in self.shared:
            self.shared[name] = build()
        return self.shared[name]


def machine() -> dict[str, Any]:
    mem = None
    try:
        with open("/proc/meminfo") as f:
            mem = round(int(f.readline().split()[1]) / 2**20, 1)
    except (OSError, ValueError, IndexError):
        pass
    return {
        "cpus": os.cpu_count(),
        "cpu": _cpu_model(),
        "mem_gib": mem,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def pct(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100) of a non-empty sequence."""
    s = sorted(values)
    return s[max(0, min(len(s) - 1, math.ceil(p / 100 * len(s)) - 1))]


def summary_ms(seconds: Sequence[float]) -> dict[str, Any]:
    ms = [x * 1000 for x in seconds]
    return {
        "n": len(ms),
        "p50_ms": round(statistics.median(ms), 1),
        "p90_ms": round(pct(ms, 90), 1),
        "min_ms": round(min(ms), 1),
    }


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def queries() -> list[dict[str, Any]]:
    import json

    lines = (EVAL_DEV / "queries.jsonl").read_text().splitlines()
    return [json.loads(x) for x in lines if x.strip()]


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def rmtree(p: Path) -> None:
    shutil.rmtree(p, ignore_errors=True)


def standin_reranker(variant: str = "int8") -> Path:
    """A MiniLM-L6-shaped cross-encoder (cross-encoder/ms-marco-MiniLM-L-6-v2's architecture):
    the embedder's encoder plus a random classification head — no cross-encoder weights ship on
    any registry this machine reaches, so this times the architecture, not its judgement.
    Built once into bench/work/ (fp32 and per-channel dynamic int8); returns the variant's
    directory, usable as $FUNES_RERANKER."""
    base = WORK / "standin-reranker"
    d = base / variant
    if (d / "model.onnx").is_file():
        return d
    import logging

    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from funes.models.derive import dequantised
    from funes.models.embedder import tokenizer_file, verified_source

    m = dequantised(onnx.load(str(verified_source())))
    g = m.graph
    hidden = g.output[0].name
    head_w = (np.random.default_rng(0).standard_normal((384, 1)) * 0.05).astype(np.float32)
    g.initializer.extend(
        [
            numpy_helper.from_array(np.array([0], dtype=np.int64), "cls_index"),
            numpy_helper.from_array(np.array([1], dtype=np.int64), "seq_axis"),
            numpy_helper.from_array(head_w, "head_w"),
            numpy_helper.from_array(np.zeros(1, dtype=np.float32), "head_b"),
        ]
    )
    g.node.extend(
        [
            helper.make_node("Gather", [hidden, "cls_index"], ["cls3"], axis=1),
            helper.make_node("Squeeze", ["cls3", "seq_axis"], ["cls"]),
            helper.make_node("MatMul", ["cls", "head_w"], ["head"]),
            helper.make_node("Add", ["head", "head_b"], ["logits"]),
        ]
    )
    del g.output[:]
    g.output.append(helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1]))
    tmp = base.with_name("standin-reranker.tmp")
    rmtree(tmp)
    for v in ("fp32", "int8"):
        (tmp / v).mkdir(parents=True)
        (tmp / v / "tokenizer.json").write_bytes(tokenizer_file().read_bytes())
    onnx.save(m, str(tmp / "fp32" / "model.onnx"))
    logging.getLogger().setLevel(logging.ERROR)  # quantize_dynamic's pre-processing advice
    quantize_dynamic(
        tmp / "fp32" / "model.onnx",
        tmp / "int8" / "model.onnx",
        per_channel=True,
        weight_type=QuantType.QInt8,
    )
    rmtree(base)
    tmp.rename(base)
    return d
