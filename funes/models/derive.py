"""Derive, once per machine, a fast int8 graph from the pinned embedder file, and cache it.

The pinned ONNX file stores int8 weights but dequantises them at run time and computes in
fp32 (≈ 6 chunks/s here). We fold those dequantisations into fp32 weights, then apply
onnxruntime's dynamic int8 quantisation **per channel**: per-tensor scales drop the cosine to
fp32 to ≈ 0.875 on long chunks and ``reduce_range`` to ≈ 0.66, per-channel keeps it ≥ 0.985.
Before quantising, the attention mask's work is cut out (:func:`unmasked`): funes never pads, so
the mask is all ones and that work (a fifth of a 256-token call) changes no bit of the output.
Then each layer's attention and GELU, exported as a dozen small nodes, become one onnxruntime
kernel each (:func:`fused`): ≈ 15 % of a call. The result is kept only if every calibration
text embeds within that cosine of the fp32 computation; otherwise the graph is derived again
without the fusions, then the fp32 graph is used, and the decision is remembered.

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

from funes.models.pins import ModelError, cache_dir, sha256_checked, sha256_file

# Bump when the derivation or how its graph is run changes, so old caches are not reused: the
# record's cosine is measured with the graph as it runs. 3: run without SkipLayerNormFusion.
# 4: attention and GELU fused (fused()).
RECIPE = 4
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
    fusions: dict[str, int] | None = None  # fused(): kernels made, when derived now


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
        want = str(rec.get("sha256"))
        if graph.is_file() and sha256_checked(graph, want) == want:
            return Derived(graph, cos, where, False)
    except OSError:
        pass
    return None  # missing or damaged: derive again


def derive(source: Path, source_sha256: str, embed: EmbedFn) -> Derived:
    """Build, check and cache the int8 graph (a few seconds, once per machine)."""
    # lazy: numpy and onnxruntime stay off fast commands' start-up
    import numpy as np

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
        ref = None
        for fuse in (True, False):  # without the fusions only if the fused graph drifted
            fusions = _quantised(source, plain, tmp, fuse)
            if ref is None:
                ref = embed(_runtime.session(source, "embedder"))
            got = embed(session(tmp))
            min_cos = float(np.min(np.sum(ref * got, axis=1)))
            accepted = min_cos >= MIN_COSINE
            if accepted or not any(fusions.values()):
                break
        rec: dict[str, Any] = {
            "source_sha256": source_sha256,
            "recipe": RECIPE,
            "accepted": accepted,
            "min_cosine": round(min_cos, 6),
            "threshold": MIN_COSINE,
            "fused": fusions,
            "derived_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        graph: Path | None = None
        if accepted:
            sha = sha256_file(tmp)
            graph = out_dir / f"{cache_key(source_sha256)}-{sha[:16]}.onnx"
            os.replace(tmp, graph)
            rec.update(file=graph.name, sha256=sha)
        _write_atomic(where, json.dumps(rec, indent=1) + "\n")
        return Derived(graph, min_cos, where, True, fusions)
    except OSError as e:
        raise ModelError(
            f"cannot write the derived embedder graph under {out_dir}: {e.strerror}; "
            "set FUNES_CACHE_DIR to a writable directory"
        ) from None
    finally:
        tmp.unlink(missing_ok=True)
        plain.unlink(missing_ok=True)


def _quantised(source: Path, plain: Path, out: Path, fuse: bool) -> dict[str, int]:
    """Write the per-channel int8 graph of ``source`` to ``out`` (``plain``: scratch); return
    the kernels :func:`fused` made (none when ``fuse`` is false)."""
    # lazy: onnx and the quantiser stay off fast commands' start-up
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # The fp32 graph goes through a file and the reference session opens after the quantiser
    # is done: the proto, the quantiser's copies and that session at once peaked at 787 MB,
    # this way at 490 MB (a first `funes index` derives it in its own process).
    model = unmasked(dequantised(onnx.load(str(source))))
    fusions = fused(model) if fuse else {"MultiHeadAttention": 0, "Gelu": 0}
    onnx.save(model, plain)
    del model
    gc.collect()  # the protos' cycles, ≈ 200 MB, before the quantiser makes its own copies
    quiet = logging.getLogger()
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # quantize_dynamic suggests pre-processing on every call
    try:
        quantize_dynamic(plain, out, per_channel=True, weight_type=QuantType.QInt8)
    finally:
        quiet.setLevel(level)
    plain.unlink()
    return fusions


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
    _keep_live(g, kept)  # drops the mask's subgraph and the guards' IsNaN
    return model


def fused(model: Any) -> dict[str, int]:
    """Rewrite, in place, each attention and each exact (erf) GELU of a BERT-style export into
    one onnxruntime contrib kernel: ``MultiHeadAttention`` and ``Gelu`` (domain com.microsoft).
    Returns how many of each were made.

    The exporter writes attention as head-split Reshape/Transposes of Q, K, V, a scale split in
    two ``Mul``s (one on Q, one on K), MatMul, Softmax, MatMul and a head merge: ≈ 30 nodes a
    layer that onnxruntime's own fusions do not recognise, whose Transposes and separate passes
    cost ≈ 10 % of a 256-token call; its GELU is five elementwise passes over the widest
    activation (Div, Erf, Add, Mul, Mul), ≈ 5 %. The same arithmetic in one kernel: fp32
    hidden states equal to 1e-4 (tests/test_derive_fused.py); once quantised, whose per-tensor
    activation scales amplify rounding, vectors within cosine 0.992 of the unfused graph's on
    every eval-dev chunk (median 0.9996; bench/README.md, "embed"). For unpadded sequences
    only, like :func:`unmasked` (no mask is given to the kernel). A pattern that does not match
    exactly is left as it is."""
    # lazy: numpy and onnx stay off fast commands' start-up
    import numpy as np
    from onnx import helper, numpy_helper

    g = model.graph
    const = {t.name: t for t in g.initializer}
    producer = {o: n for n in g.node for o in n.output}
    outputs = {o.name for o in g.output}
    readers: dict[str, list[Any]] = {}
    for n in g.node:
        for name in n.input:
            readers.setdefault(name, []).append(n)

    def scalar(name: str) -> float | None:
        t = const.get(name)
        if t is None:
            return None
        a = numpy_helper.to_array(t)
        return float(a.reshape(())) if a.size == 1 else None

    def only_reader(name: str) -> Any:
        """The one node reading ``name``'s values (a Shape reads none), if only one does."""
        r = [n for n in readers.get(name, []) if n.op_type != "Shape"]
        return r[0] if len(r) == 1 and name not in outputs else None

    def perm(n: Any) -> list[int]:
        return next((list(a.ints) for a in n.attribute if a.name == "perm"), [])

    def trail(name: str) -> tuple[str, list[Any], float] | None:
        """Back from an attention MatMul's input through head-split layout ops and scalar
        scales to the (batch, tokens, hidden) tensor: (its name, the layout ops from it
        outward, the product of the scales)."""
        ops: list[Any] = []
        scale = 1.0
        while (n := producer.get(name)) is not None and only_reader(name) is not None:
            if n.op_type in ("Reshape", "Transpose"):
                ops.append(n)
            elif n.op_type in ("Mul", "Div") and (c := scalar(n.input[1])) is not None and c:
                scale *= c if n.op_type == "Mul" else 1.0 / c
            else:
                break
            name = n.input[0]
        ops.reverse()
        if not ops or ops[0].op_type != "Reshape":
            return None
        return name, ops, scale

    def shape_of(reshape: Any) -> list[int | None]:
        """The target shape of a Reshape, a constant or a Concat of parts (None: not constant)."""
        shape = reshape.input[1]
        if shape in const:
            return [int(x) for x in numpy_helper.to_array(const[shape]).reshape(-1)]
        c = producer.get(shape)
        if c is None or c.op_type != "Concat":
            return []
        dims: list[int | None] = []
        for i in c.input:
            if i not in const:
                dims.append(None)  # one dimension each (batch, tokens), read from a Shape
            else:
                dims.extend(int(x) for x in numpy_helper.to_array(const[i]).reshape(-1))
        return dims

    def width(name: str) -> int | None:
        """The last dimension of a projection's output: its bias's size, or its weight's."""
        n = producer.get(name)
        if n is not None and n.op_type in ("Add", "MatMul"):
            for i in n.input[1 if n.op_type == "MatMul" else 0 :]:
                if i in const and len(const[i].dims) == (1 if n.op_type == "Add" else 2):
                    return int(const[i].dims[-1])
            if n.op_type == "Add":
                return next((w for i in n.input if (w := width(i)) is not None), None)
        return None

    def heads_of(x: tuple[str, list[Any], float], merge: Any) -> tuple[int, int] | None:
        """(heads, head size) of an attention input split by a Reshape to (batch, tokens,
        heads, head size) and merged back to (batch, tokens, hidden); the exporter writes
        the head count and the hidden size -1 (inferred), so the hidden size is read from
        the projection's weights."""
        hidden = width(x[0])
        s4, s3 = shape_of(x[1][0]), shape_of(merge)
        if hidden is None or len(s4) != 4 or len(s3) != 3 or s4[3] is None:
            return None
        size = s4[3]
        if size <= 0 or hidden % size or s4[2] not in (-1, hidden // size):
            return None
        return (hidden // size, size) if s3[2] in (-1, hidden) else None

    swap_last = ([0, 2, 1], [0, 1, 3, 2])
    swaps: dict[int, Any] = {}  # id(node to replace) → the fused node
    counts = {"MultiHeadAttention": 0, "Gelu": 0}
    for s in g.node:
        if s.op_type != "Softmax" or any(
            a.name == "axis" and a.i not in (-1, 3) for a in s.attribute
        ):
            continue
        m1 = producer.get(s.input[0])
        m2 = only_reader(s.output[0])
        if m1 is None or m1.op_type != "MatMul" or m2 is None or m2.op_type != "MatMul":
            continue
        if m2.input[0] != s.output[0] or only_reader(m1.output[0]) is not s:
            continue
        q, k, v = trail(m1.input[0]), trail(m1.input[1]), trail(m2.input[1])
        t = only_reader(m2.output[0])
        r = only_reader(t.output[0]) if t is not None else None
        if q is None or k is None or v is None or r is None or r.op_type != "Reshape":
            continue
        if t.op_type != "Transpose" or perm(t) != [0, 2, 1, 3] or v[2] != 1.0:
            continue
        heads = heads_of(q, r)
        if heads is None or any(heads_of(x, r) != heads for x in (k, v)):
            continue
        kinds = [
            [x.op_type + str(perm(x)) for x in ops if x.op_type == "Transpose"]
            for ops in (q[1], k[1], v[1])
        ]
        head_split = "Transpose[0, 2, 1, 3]"
        k_ok = kinds[1] == ["Transpose[0, 2, 3, 1]"] or (
            len(kinds[1]) == 2
            and kinds[1][0] == head_split
            and kinds[1][1] in (f"Transpose{p}" for p in swap_last)
        )
        if kinds[0] != [head_split] or kinds[2] != [head_split] or not k_ok:
            continue
        swaps[id(r)] = helper.make_node(
            "MultiHeadAttention",
            [q[0], k[0], v[0]],
            [r.output[0]],
            name=f"{r.name or r.output[0]}_fused_attention",
            domain="com.microsoft",
            num_heads=heads[0],
            scale=float(np.float32(q[2] * k[2])),
        )
        counts["MultiHeadAttention"] += 1

    root2 = 2.0**0.5
    for e in g.node:
        if e.op_type != "Erf":
            continue
        d = producer.get(e.input[0])
        if d is None or only_reader(d.output[0]) is not e:
            continue
        c = scalar(d.input[1])
        if c is None or not (
            (d.op_type == "Div" and abs(c - root2) < 1e-6)
            or (d.op_type == "Mul" and abs(c - 1 / root2) < 1e-6)
        ):
            continue
        x = d.input[0]
        a = only_reader(e.output[0])
        h = only_reader(a.output[0]) if a is not None and a.op_type == "Add" else None
        last = only_reader(h.output[0]) if h is not None and h.op_type == "Mul" else None
        if a is None or h is None or last is None or last.op_type != "Mul":
            continue
        one = next((scalar(i) for i in a.input if i != e.output[0]), None)
        half = next((scalar(i) for i in h.input if i != a.output[0]), None)
        other = [i for i in last.input if i != h.output[0]]
        if one != 1.0 or half != 0.5 or other != [x]:
            continue
        swaps[id(last)] = helper.make_node(
            "Gelu",
            [x],
            [last.output[0]],
            name=f"{last.name or x}_fused_gelu",
            domain="com.microsoft",
        )
        counts["Gelu"] += 1

    if swaps:
        _keep_live(g, [swaps.get(id(n), n) for n in g.node])
        if not any(o.domain == "com.microsoft" for o in model.opset_import):
            model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return counts


def _keep_live(g: Any, nodes: list[Any]) -> None:
    """Set ``g``'s nodes to ``nodes`` less those no graph output reads, and drop the
    initializers nothing reads any more."""
    needed = {o.name for o in g.output}
    live = []
    for n in reversed(nodes):
        if any(o in needed for o in n.output):
            live.append(n)
            needed.update(i for i in n.input if i)
    live.reverse()
    del g.node[:]
    g.node.extend(live)
    # In place: extending the field with the kept ones would copy every weight (≈ 90 MB).
    for k in reversed(range(len(g.initializer))):
        if g.initializer[k].name not in needed:
            del g.initializer[k]


def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
