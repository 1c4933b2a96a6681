"""Derive, once per machine, a fast int8 graph from the pinned embedder file, and cache it.

The pinned ONNX file stores int8 weights but dequantises them at run time and computes in
fp32 (≈ 6 chunks/s here). We fold those dequantisations into fp32 weights, then apply
onnxruntime's dynamic int8 quantisation **per channel**: per-tensor scales drop the cosine to
fp32 to ≈ 0.875 on long chunks and ``reduce_range`` to ≈ 0.66, per-channel keeps it ≥ 0.985.
Before quantising, the attention mask's work is cut out (:func:`unmasked`): funes never pads, so
the mask is all ones and that work (a fifth of a 256-token call) changes no bit of the output.
The result is kept only if every calibration text embeds within that cosine of the fp32
computation; otherwise the fp32 graph is used and the decision is remembered.

Cache layout (under cache_dir()/models/), keyed by the source sha256 and the recipe version:
``<key>.json`` (the record: accepted?, cosine, the graph's file name and sha256) and
``<key>-<sha16>.onnx``. Both are written to a temp name and renamed, so two processes deriving
at once each leave a consistent pair and readers never see a partial file.
"""

from __future__ import annotations

import gc
import json
import logging
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from funes.models.pins import ModelError, cache_dir, sha256_file

# Bump when the derivation or how its graph is run changes, so old caches are not reused: the
# record's cosine is measured with the graph as it runs. 3: run without SkipLayerNormFusion.
RECIPE = 3
MIN_COSINE = 0.985
# onnxruntime fuses each residual Add + LayerNormalization of the int8 graph into one
# SkipLayerNormalization kernel that costs ≈ 0.5 ms per 256-token call, against ≈ 0.06 ms for
# the two it replaces (onnxruntime 1.32, one thread): ≈ 16 % of the whole call. Left unfused
# (bench/README.md, "embed"; the vectors stay within MIN_COSINE of fp32 on every eval-dev chunk).
UNFUSED = ("SkipLayerNormFusion",)

EmbedFn = Callable[[Any], Any]  # session -> (n, dim) array for the calibration texts


@dataclass(frozen=True, slots=True)
class Derived:
    path: Path | None  # the int8 graph, or None when the fp32 graph must be used
    min_cosine: float
    record: Path
    derived_now: bool


def cache_key(source_sha256: str) -> str:
    return f"minilm-l6-int8pc-{source_sha256[:16]}-r{RECIPE}"


def record_path(source_sha256: str) -> Path:
    return cache_dir() / "models" / f"{cache_key(source_sha256)}.json"


def read_record(source_sha256: str) -> dict[str, Any] | None:
    try:
        rec = json.loads(record_path(source_sha256).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return rec if isinstance(rec, dict) else None


def cached(source_sha256: str) -> Derived | None:
    """The cached decision, if there is one and its graph is intact."""
    rec = read_record(source_sha256)
    if rec is None or rec.get("source_sha256") != source_sha256:
        return None
    where = record_path(source_sha256)
    cos = float(rec.get("min_cosine", 0.0))
    if not rec.get("accepted"):
        return Derived(None, cos, where, False)
    graph = where.parent / str(rec.get("file", ""))
    try:
        if graph.is_file() and sha256_file(graph) == rec.get("sha256"):
            return Derived(graph, cos, where, False)
    except OSError:
        pass
    return None  # missing or damaged: derive again


def derive(source: Path, source_sha256: str, embed: EmbedFn) -> Derived:
    """Build, check and cache the int8 graph (a few seconds, once per machine)."""
    # lazy: numpy and onnxruntime stay off fast commands' start-up
    import numpy as np
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from funes.models import _runtime

    where = record_path(source_sha256)
    out_dir = where.parent
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ModelError(
            f"cannot create the model cache {out_dir}: {e.strerror}; "
            "set FUNES_CACHE_DIR to a writable directory"
        ) from None

    fd, tmp_name = tempfile.mkstemp(prefix=".derive-", suffix=".onnx", dir=out_dir)
    os.close(fd)
    tmp = Path(tmp_name)
    plain = tmp.with_suffix(".fp32.onnx")
    try:
        # The fp32 graph goes through a file and the reference session opens after the
        # quantiser is done: the proto, the quantiser's copies and that session at once peaked
        # at 787 MB, this way at 490 MB (a first `funes index` derives it in its own process).
        onnx.save(unmasked(dequantised(onnx.load(str(source)))), plain)
        gc.collect()  # the protos' cycles, ≈ 200 MB, before the quantiser makes its own copies
        quiet = logging.getLogger()
        level = quiet.level
        quiet.setLevel(logging.ERROR)  # quantize_dynamic suggests pre-processing on every call
        try:
            quantize_dynamic(plain, tmp, per_channel=True, weight_type=QuantType.QInt8)
        finally:
            quiet.setLevel(level)
        plain.unlink()
        ref = embed(_runtime.session(source, "embedder"))
        got = embed(session(tmp))
        min_cos = float(np.min(np.sum(ref * got, axis=1)))
        accepted = min_cos >= MIN_COSINE
        rec: dict[str, Any] = {
            "source_sha256": source_sha256,
            "recipe": RECIPE,
            "accepted": accepted,
            "min_cosine": round(min_cos, 6),
            "threshold": MIN_COSINE,
            "derived_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        graph: Path | None = None
        if accepted:
            sha = sha256_file(tmp)
            graph = out_dir / f"{cache_key(source_sha256)}-{sha[:16]}.onnx"
            os.replace(tmp, graph)
            rec.update(file=graph.name, sha256=sha)
        _write_atomic(where, json.dumps(rec, indent=1) + "\n")
        return Derived(graph, min_cos, where, True)
    except OSError as e:
        raise ModelError(
            f"cannot write the derived embedder graph under {out_dir}: {e.strerror}; "
            "set FUNES_CACHE_DIR to a writable directory"
        ) from None
    finally:
        tmp.unlink(missing_ok=True)
        plain.unlink(missing_ok=True)


def session(path: Path) -> Any:
    """A session running the derived graph as the derivation checked it."""
    # lazy: onnxruntime stays off fast commands' start-up
    from funes.models import _runtime

    return _runtime.session(path, "derived int8 embedder", unfused=UNFUSED)


def dequantised(model: Any) -> Any:
    """Fold every ``Mul(Cast(int8 initializer), scale initializer)`` into an fp32 initializer,
    so the quantiser sees plain fp32 MatMul/Gather weights."""
    # lazy: numpy stays off fast commands' start-up
    import numpy as np
    from onnx import TensorProto, numpy_helper

    g = model.graph
    inits = {t.name: t for t in g.initializer}
    producer = {n.output[0]: n for n in g.node if n.output}
    uses: dict[str, int] = {}
    for n in g.node:
        for name in n.input:
            uses[name] = uses.get(name, 0) + 1

    dead_nodes: set[int] = set()
    dead_inits: set[str] = set()
    new: list[Any] = []
    for n in g.node:
        if n.op_type != "Mul" or len(n.input) != 2:
            continue
        cast = producer.get(n.input[0])
        scale = inits.get(n.input[1])
        if cast is None or cast.op_type != "Cast" or scale is None:
            continue
        q = inits.get(cast.input[0])
        if q is None or q.data_type != TensorProto.INT8 or uses.get(cast.output[0]) != 1:
            continue
        w = numpy_helper.to_array(q).astype(np.float32) * numpy_helper.to_array(scale)
        new.append(numpy_helper.from_array(w.astype(np.float32), n.output[0]))
        dead_nodes.update((id(n), id(cast)))
        dead_inits.update((q.name, scale.name))

    keep = [n for n in g.node if id(n) not in dead_nodes]
    del g.node[:]
    g.node.extend(keep)
    still_used = {name for n in keep for name in n.input}
    kept_inits = [t for t in g.initializer if t.name not in dead_inits or t.name in still_used]
    del g.initializer[:]
    g.initializer.extend(kept_inits + new)
    return model


def unmasked(model: Any) -> Any:
    """The graph for unpadded sequences: every use of the attention mask cut out, outputs
    unchanged bit for bit when the mask is all ones (what :class:`~funes.models.embedder.Embedder`
    always feeds: one unpadded sequence per call). ``attention_mask`` stays a declared input,
    read by nothing; the graph must never be fed a padded batch.

    Two patterns, as the exporter writes them: the additive mask bias (an ``Add`` one of whose
    inputs is computed from ``attention_mask`` and constants alone: all zeros for an all-ones
    mask) and the softmax's NaN guard ``Where(IsNaN(s), 0, s)`` (a NaN needs a fully masked row).
    On the pinned MiniLM they cost ≈ 23 % of a 256-token call, mostly the guard's ``Where`` over
    the (heads × tokens × tokens) attention weights."""
    g = model.graph
    producer = {o: n for n in g.node for o in n.output}
    memo: dict[tuple[str, str], bool] = {}

    def reads(name: str, source: str) -> bool:
        """Whether the value of ``name`` depends on graph input ``source`` (a Shape reads none)."""
        key = (name, source)
        if key not in memo:
            n = producer.get(name)
            memo[key] = name == source or (
                n is not None
                and n.op_type != "Shape"
                and any(reads(i, source) for i in n.input if i)
            )
        return memo[key]

    def mask_only(name: str) -> bool:
        return reads(name, "attention_mask") and not reads(name, "input_ids")

    alias: dict[str, str] = {}  # an output cut out → the value it equals
    for n in g.node:
        if n.op_type == "Where" and len(n.input) == 3:
            guard = producer.get(n.input[0])
            if guard is not None and guard.op_type == "IsNaN" and guard.input[0] == n.input[2]:
                alias[n.output[0]] = n.input[2]
        elif n.op_type == "Add" and len(n.input) == 2:
            a, b = n.input
            if mask_only(b) and not mask_only(a):
                alias[n.output[0]] = a
            elif mask_only(a) and not mask_only(b):
                alias[n.output[0]] = b

    def resolve(name: str) -> str:
        while name in alias:
            name = alias[name]
        return name

    if any(o.name in alias for o in g.output):  # an output itself: leave the graph as it is
        return model
    kept = [n for n in g.node if not n.output or n.output[0] not in alias]
    for n in kept:
        for k, name in enumerate(n.input):
            if name in alias:
                n.input[k] = resolve(name)
    # Drop what no output reads any more (the mask's subgraph, the guards' IsNaN).
    needed = {o.name for o in g.output}
    live = []
    for n in reversed(kept):
        if any(o in needed for o in n.output):
            live.append(n)
            needed.update(i for i in n.input if i)
    live.reverse()
    del g.node[:]
    g.node.extend(live)
    inits = [t for t in g.initializer if t.name in needed]
    del g.initializer[:]
    g.initializer.extend(inits)
    return model


def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
