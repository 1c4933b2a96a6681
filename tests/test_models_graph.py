"""The derived embedder graph and how texts run through it: one unpadded sequence per call, a
graph without the attention mask's work that gives the same vectors bit for bit, and the pool
sized by the cores the process may use."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import model_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from funes.models import _runtime, load_embedder
from funes.models.derive import MIN_COSINE, RECIPE, dequantised, read_record, unmasked
from funes.models.embedder import Embedder, load_tokenizer, verified_source
from funes.models.pins import EMBEDDER_PIN, MAX_THREADS, threads


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, model_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model_env(monkeypatch, tmp_path, model_cache)


@pytest.fixture(scope="module")
def masked_int8(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The int8 graph as it was derived before the mask was cut out (recipe 1)."""
    # lazy: the quantiser is only needed here
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out = tmp_path_factory.mktemp("masked") / "masked.onnx"
    logging.getLogger().setLevel(logging.ERROR)
    quantize_dynamic(
        dequantised(onnx.load(str(verified_source()))),
        out,
        per_channel=True,
        weight_type=QuantType.QInt8,
    )
    return out


@pytest.fixture(scope="module")
def unmasked_int8(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The int8 graph with the mask cut out and nothing fused (recipe 3; the derived graph
    also fuses attention and GELU, tests/test_derive_fused.py)."""
    # lazy: the quantiser is only needed here
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out = tmp_path_factory.mktemp("unmasked") / "unmasked.onnx"
    logging.getLogger().setLevel(logging.ERROR)
    quantize_dynamic(
        unmasked(dequantised(onnx.load(str(verified_source())))),
        out,
        per_channel=True,
        weight_type=QuantType.QInt8,
    )
    return out


def _feed(ids: list[int], names: set[str]) -> dict[str, np.ndarray]:
    x = np.asarray(ids, dtype=np.int64)[None, :]
    feed = {"input_ids": x, "attention_mask": np.ones_like(x), "token_type_ids": np.zeros_like(x)}
    return {k: v for k, v in feed.items() if k in names}


def test_derived_graph_reads_no_attention_mask() -> None:
    emb = load_embedder()
    assert emb.path is not None
    g = onnx.load(str(emb.path)).graph
    readers = [n.op_type for n in g.node if "attention_mask" in n.input]
    assert readers == []
    assert not [n for n in g.node if n.op_type == "IsNaN"]  # the softmax guards are gone
    rec = read_record(EMBEDDER_PIN.sha256)
    assert rec is not None and rec["recipe"] >= 2 and rec["min_cosine"] >= rec["threshold"]


def test_derived_graph_as_funes_runs_it_stays_within_the_bound_of_fp32() -> None:
    """The derived graph runs without onnxruntime's SkipLayerNormalization fusion
    (derive.UNFUSED: that kernel cost ≈ 16 % of a call). On texts outside the calibration set
    (pieces of this repository's docs: prose, tables, code, most near the 256-token truncation)
    its vectors stay within MIN_COSINE of the exact fp32 computation, and the cache record is
    the current recipe's, so a graph checked as it ran before is derived and checked again."""
    rec = read_record(EMBEDDER_PIN.sha256)
    emb = load_embedder()
    assert rec is not None and rec["recipe"] == RECIPE
    docs = sorted((Path(__file__).resolve().parents[1] / "docs").glob("*.md"))
    text = "\n".join(d.read_text(encoding="utf-8") for d in docs)
    pieces = [text[i : i + 1200] for i in range(0, len(text) - 1200, len(text) // 24)][:24]
    assert len(pieces) == 24
    fp32 = Embedder(_runtime.session(verified_source(), "fp32"), load_tokenizer())
    cos = np.sum(fp32.embed(pieces) * emb.embed(pieces), axis=1)
    assert float(cos.min()) >= MIN_COSINE, sorted(cos)[:3]


@pytest.mark.slow
def test_unmasked_graph_gives_the_masked_graphs_hidden_states_bit_for_bit(
    masked_int8: Path, unmasked_int8: Path
) -> None:
    old = _runtime.session(masked_int8, "masked")
    new = _runtime.session(unmasked_int8, "unmasked")
    old_in = {i.name for i in old.get_inputs()}
    new_in = {i.name for i in new.get_inputs()}
    rng = np.random.default_rng(7)
    lengths = [1, 2, 3, 5, 8, 13, 31, 64, 100, 127, 128, 129, 200, 255, 256]
    for n in lengths:
        body = rng.integers(999, 30_000, size=max(n - 2, 0)).tolist()
        ids = ([101, *body, 102])[:n]
        want = old.run(None, _feed(ids, old_in))[0]
        got = new.run(None, _feed(ids, new_in))[0]
        assert got.shape == want.shape == (1, n, 384)
        assert np.array_equal(got, want), f"{n} tokens"


def test_unmasked_leaves_a_graph_without_a_mask_unchanged() -> None:
    # A tiny graph: y = x + 1; nothing reads attention_mask, so nothing is cut out.
    from onnx import TensorProto, helper

    g = helper.make_graph(
        [helper.make_node("Add", ["input_ids", "one"], ["y"])],
        "g",
        [helper.make_tensor_value_info("input_ids", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
        [helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0])],
    )
    m = unmasked(helper.make_model(g))
    assert [n.op_type for n in m.graph.node] == ["Add"]
    assert [t.name for t in m.graph.initializer] == ["one"]


_WORDS = st.sampled_from(
    "the lock writer merge_insert pytest FAILED def return 42 0x1f café ✓ { } ( ) : . , "
    "src/funes/store.py -- Traceback (most recent call last) npm ci checkout_latest() "
    "日本語 𝔘nicode \n \t".split(" ")
)
_TEXTS = st.lists(st.lists(_WORDS, min_size=0, max_size=400).map(" ".join), min_size=2, max_size=7)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=_TEXTS)
def test_a_list_embeds_each_text_exactly_as_alone(texts: list[str]) -> None:
    """Texts of many token counts (0 to past the 256-token truncation), some of equal length:
    each text's row in a list is its vector alone, bit for bit (nothing shares a batch)."""
    emb = load_embedder()
    together = emb.embed(texts)
    for i, t in enumerate(texts):
        assert np.array_equal(together[i], emb.embed([t])[0])


def test_workers_follow_the_cores_the_process_may_use(monkeypatch: pytest.MonkeyPatch) -> None:
    code = "from funes.models.pins import threads; print(threads())"
    one = subprocess.run(
        ["taskset", "-c", "0", sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={k: v for k, v in os.environ.items() if k != "FUNES_THREADS"},
    )
    assert one.stdout.strip() == "1"
    assert threads() == min(MAX_THREADS, len(os.sched_getaffinity(0)))
    monkeypatch.setenv("FUNES_THREADS", "3")
    assert threads() == 3
