"""The derived embedder graph fuses each layer's attention and GELU into one onnxruntime kernel
(derive.fused). The rewrite is checked where it is made, in fp32, and as funes runs it, in int8:
its vectors against the same graph unfused, on token sequences of many lengths and on real
text, within the embedder's recorded bound; a rewrite that drifts is dropped at derive time."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import model_env
from onnx import TensorProto, helper

from funes.models import _runtime, derive, embedder, load_embedder
from funes.models.derive import MIN_COSINE, dequantised, fused, unmasked
from funes.models.embedder import Embedder, load_tokenizer, verified_source
from funes.models.pins import EMBEDDER_PIN

# Every length the model reads, the edges of its truncation and of onnxruntime's kernels'
# blocking, and a spread between.
LENGTHS = [1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 31, 32, 33, 47, 63, 64, 65, 100, 127, 128, 129]
LENGTHS += [150, 191, 192, 193, 200, 224, 240, 254, 255, 256]


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, model_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model_env(monkeypatch, tmp_path, model_cache)


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, int]]:
    """The pinned graph in fp32 without the mask's work, as derive quantises it: unfused and
    fused (what fused() made)."""
    d = tmp_path_factory.mktemp("plain")
    model = unmasked(dequantised(onnx.load(str(verified_source()))))
    onnx.save(model, d / "unfused.onnx")
    counts = fused(model)
    onnx.save(model, d / "fused.onnx")
    return d / "unfused.onnx", d / "fused.onnx", counts


@pytest.fixture(scope="module")
def unfused_int8(plain: tuple[Path, Path, dict[str, int]]) -> Path:
    """The int8 graph derive made before the fusions (recipe 3)."""
    # lazy: the quantiser is only needed here
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out = plain[0].with_name("unfused-int8.onnx")
    logging.getLogger().setLevel(logging.ERROR)
    quantize_dynamic(plain[0], out, per_channel=True, weight_type=QuantType.QInt8)
    return out


def _ids(n: int, seed: int) -> list[int]:
    body = np.random.default_rng(seed).integers(999, 30_000, size=max(n - 2, 0)).tolist()
    return [101, *body, 102][:n]


def _mean_unit(sess: object, ids: list[int]) -> np.ndarray:
    names = {i.name for i in sess.get_inputs()}  # type: ignore[attr-defined]
    feed = embedder.feed(names, np.asarray(ids, dtype=np.int64)[None, :])
    hidden = sess.run(None, feed)[0][0]  # type: ignore[attr-defined]
    v = hidden.mean(axis=0)
    return np.asarray(v / np.linalg.norm(v), dtype=np.float32)


def test_every_attention_and_gelu_of_the_pinned_graph_becomes_one_kernel(
    plain: tuple[Path, Path, dict[str, int]],
) -> None:
    _, fused_path, counts = plain
    assert counts == {"MultiHeadAttention": 6, "Gelu": 6}  # six layers
    ops = [n.op_type for n in onnx.load(str(fused_path)).graph.node]
    for gone in ("Softmax", "Erf", "Transpose"):
        assert gone not in ops
    assert ops.count("MultiHeadAttention") == ops.count("Gelu") == 6


def test_fused_fp32_graph_computes_the_same_hidden_states(
    plain: tuple[Path, Path, dict[str, int]],
) -> None:
    """In fp32 the rewrite is the same arithmetic: hidden states equal to float rounding
    at every length, so any drift of the int8 graph comes from the quantiser, not the
    rewrite."""
    old = _runtime.session(plain[0], "unfused fp32")
    new = _runtime.session(plain[1], "fused fp32")
    for n in LENGTHS:
        ids = _ids(n, n)
        names = {i.name for i in old.get_inputs()}
        feed = embedder.feed(names, np.asarray(ids, dtype=np.int64)[None, :])
        want = old.run(None, feed)[0]
        got = new.run(None, feed)[0]
        assert got.shape == want.shape == (1, n, 384)
        assert float(np.max(np.abs(got - want))) < 1e-4, f"{n} tokens"


def test_derived_graph_gives_the_unfused_graphs_vectors_within_the_bound(
    unfused_int8: Path,
) -> None:
    """The graph funes runs (fused, int8) against the same int8 graph unfused, as funes ran it
    before: token sequences of every length class and real text, each within MIN_COSINE (in
    practice much closer), and the pinned fp32 computation within MIN_COSINE too."""
    emb = load_embedder()
    assert emb.path is not None
    rec = json.loads(derive.record_path(EMBEDDER_PIN.sha256).read_text())
    assert rec["fused"] == {"MultiHeadAttention": 6, "Gelu": 6}
    ops = {n.op_type for n in onnx.load(str(emb.path)).graph.node}
    assert {"MultiHeadAttention", "Gelu"} <= ops
    before = derive.session(unfused_int8)
    cos = []
    for n in LENGTHS:
        for seed in (n, n + 1000):
            ids = _ids(n, seed)
            cos.append(float(_mean_unit(before, ids) @ emb._one(ids)))
    assert min(cos) >= MIN_COSINE, sorted(cos)[:3]

    docs = sorted((Path(__file__).resolve().parents[1] / "docs").glob("*.md"))
    text = "\n".join(d.read_text(encoding="utf-8") for d in docs)
    step = len(text) // 40
    pieces = [text[i : i + 60 + 37 * (i // step % 40)] for i in range(0, 40 * step, step)]
    tok = load_tokenizer()
    assert len({len(e.ids) for e in tok.encode_batch(pieces)}) > 20  # many lengths
    old = Embedder(before, tok).embed(pieces)
    got = emb.embed(pieces)
    assert float(np.min(np.sum(old * got, axis=1))) >= MIN_COSINE
    fp32 = Embedder(_runtime.session(verified_source(), "fp32"), tok).embed(pieces)
    assert float(np.min(np.sum(fp32 * got, axis=1))) >= MIN_COSINE


def test_a_graph_without_those_patterns_is_left_unchanged() -> None:
    # y = softmax(x) @ x with no head split: no attention pattern; erf(x) alone: no GELU.
    g = helper.make_graph(
        [
            helper.make_node("Softmax", ["x"], ["p"], axis=-1),
            helper.make_node("MatMul", ["p", "x"], ["a"]),
            helper.make_node("Erf", ["a"], ["y"]),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])],
    )
    m = helper.make_model(g)
    before = m.SerializeToString()
    assert fused(m) == {"MultiHeadAttention": 0, "Gelu": 0}
    assert m.SerializeToString() == before


@pytest.mark.slow
def test_a_fused_graph_that_drifts_is_derived_again_without_the_fusions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rewrite whose vectors leave the bound (here: every attention's scale tripled, as a
    wrong match would) is not kept: the graph is derived again unfused and accepted, and the
    record says nothing was fused."""
    real = derive.fused

    def drifting(model: onnx.ModelProto) -> dict[str, int]:
        counts = real(model)
        for n in model.graph.node:
            for a in n.attribute:
                if n.op_type == "MultiHeadAttention" and a.name == "scale":
                    a.f *= 3
        return counts

    monkeypatch.setattr(derive, "fused", drifting)
    monkeypatch.setenv("FUNES_CACHE_DIR", str(tmp_path / "cache"))
    tok = load_tokenizer()
    texts = ["the writer lock " * k for k in (1, 5, 20, 60)]

    def embed(sess: object) -> np.ndarray:
        return Embedder(sess, tok).embed(texts)

    d = derive.derive(verified_source(), EMBEDDER_PIN.sha256, embed)
    assert d.path is not None and d.min_cosine >= MIN_COSINE
    assert d.fusions == {"MultiHeadAttention": 0, "Gelu": 0}
    ops = {n.op_type for n in onnx.load(str(d.path)).graph.node}
    assert "MultiHeadAttention" not in ops and "Softmax" in ops
    rec = json.loads(d.record.read_text())
    assert rec["accepted"] and rec["fused"] == {"MultiHeadAttention": 0, "Gelu": 0}
    assert not list(d.record.parent.glob(".derive-*"))
