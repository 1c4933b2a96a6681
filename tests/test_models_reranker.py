"""The reranker code path, run on a tiny cross-encoder built here (real onnxruntime, real
tokenizers). It is no quality claim: its logit is the share of passage words that occur in
the query, which is enough to check that pairs are tokenised, batched, padded and mapped back
in order."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import as_text, run_cli
from onnx import TensorProto, helper, numpy_helper

from funes.models import ModelError, load_reranker
from funes.models import reranker as rr_mod
from funes.models.pins import RERANKER_PIN

WORDS = (
    "the a is to of and how do i fix flaky test tests ci lock writer database migration "
    "timeout docker build cache layer oven bake bread flour recipe weather rain sunny"
).split()
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]


def build_tiny_cross_encoder(d: Path) -> Path:
    """model.onnx + tokenizer.json in ``d``: inputs input_ids/attention_mask/token_type_ids
    (batch, seq), output logits (batch, 1) = 8 * overlap - 4, where overlap is the fraction of
    the passage's word tokens (segment B) that also occur in the query (segment A)."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    vocab = {w: i for i, w in enumerate(SPECIAL + WORDS)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    d.mkdir(parents=True, exist_ok=True)
    tok.save(str(d / "tokenizer.json"))

    v = len(vocab)
    words = np.ones(v, dtype=np.float32)
    words[: len(SPECIAL)] = 0.0  # specials and [UNK] never count as shared words
    ints = [("input_ids", TensorProto.INT64), ("attention_mask", TensorProto.INT64)]
    inputs = [helper.make_tensor_value_info(n, t, ["batch", "seq"]) for n, t in ints]
    inputs.append(helper.make_tensor_value_info("token_type_ids", TensorProto.INT64, ["batch", "seq"]))  # fmt: skip
    init = [
        numpy_helper.from_array(np.eye(v, dtype=np.float32), "onehot_table"),
        numpy_helper.from_array(words.reshape(v, 1), "word_weight"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
        numpy_helper.from_array(np.array([-1], dtype=np.int64), "axis_last"),
        numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one"),
        numpy_helper.from_array(np.array(8.0, dtype=np.float32), "gain"),
        numpy_helper.from_array(np.array(-4.0, dtype=np.float32), "bias"),
    ]
    n = helper.make_node
    nodes = [
        n("Gather", ["onehot_table", "input_ids"], ["onehot"]),  # (b, s, v)
        n("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
        n("Cast", ["token_type_ids"], ["type_f"], to=TensorProto.FLOAT),
        n("Mul", ["mask_f", "type_f"], ["p_mask"]),  # passage tokens
        n("Sub", ["mask_f", "p_mask"], ["q_mask"]),  # query tokens
        n("Unsqueeze", ["p_mask", "axis_last"], ["p_mask3"]),
        n("Unsqueeze", ["q_mask", "axis_last"], ["q_mask3"]),
        n("Mul", ["onehot", "q_mask3"], ["q_hot"]),
        n("Mul", ["onehot", "p_mask3"], ["p_hot"]),
        n("ReduceMax", ["q_hot", "axis1"], ["q_bag"], keepdims=0),  # (b, v) presence
        n("ReduceSum", ["p_hot", "axis1"], ["p_bag"], keepdims=0),  # (b, v) counts
        n("Mul", ["q_bag", "p_bag"], ["shared_bag"]),
        n("MatMul", ["shared_bag", "word_weight"], ["shared"]),  # (b, 1)
        n("MatMul", ["p_bag", "word_weight"], ["p_words"]),  # (b, 1)
        n("Max", ["p_words", "one"], ["p_words1"]),
        n("Div", ["shared", "p_words1"], ["overlap"]),
        n("Mul", ["overlap", "gain"], ["scaled"]),
        n("Add", ["scaled", "bias"], ["logits"]),
    ]
    out = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])]
    graph = helper.make_graph(nodes, "tiny_cross_encoder", inputs, out, init)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(d / "model.onnx"))
    return d


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("FUNES_HOME", str(tmp_path / "funes-home"))
    monkeypatch.setenv("FUNES_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("FUNES_RERANKER", raising=False)
    rr_mod._loaded.clear()  # the per-process cache would hide the environment changes
    yield
    rr_mod._loaded.clear()


@pytest.fixture
def tiny(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = build_tiny_cross_encoder(tmp_path / "tiny-ce")
    monkeypatch.setenv("FUNES_RERANKER", str(d))
    return d


QUERY = "how do I fix the flaky test in ci"
ANSWER = "fix the flaky test: the ci lock writer"
DISTRACTORS = [
    "bake bread with flour",
    "docker build cache layer timeout",
    "the weather is sunny and rain",
    "database migration timeout " * 30,  # long: forces padding of its batch-mates
]


def test_answering_passage_outranks_distractors_under_the_cross_encoder(tiny: Path) -> None:
    rr = load_reranker()
    assert rr is not None and rr.name == f"local:{tiny.name}"
    texts = [*DISTRACTORS[:2], ANSWER, *DISTRACTORS[2:]]
    scores = rr.score(QUERY, texts)
    assert scores.dtype == np.float32 and scores.shape == (len(texts),)
    assert ((scores >= 0) & (scores <= 1)).all()
    assert int(np.argmax(scores)) == 2
    assert load_reranker() is rr


def test_scores_do_not_depend_on_batch_composition_or_order(tiny: Path) -> None:
    rr = load_reranker()
    assert rr is not None
    many = [*DISTRACTORS, ANSWER] * 5  # > one batch, mixed lengths
    scores = rr.score(QUERY, many)
    alone = rr.score(QUERY, [ANSWER])[0]
    assert np.abs(scores[4::5] - alone).max() <= 1e-5
    assert np.allclose(rr.score(QUERY, many[::-1])[::-1], scores, atol=1e-5)
    assert rr.score(QUERY, []).shape == (0,)


def test_truncation_keeps_long_pairs_within_max_length(tiny: Path) -> None:
    rr = load_reranker(max_length=16)
    assert rr is not None and rr.max_length == 16
    scores = rr.score(QUERY, [ANSWER + " bread" * 500])
    assert scores.shape == (1,)


def test_no_reranker_installed_gives_none() -> None:
    assert load_reranker() is None


def test_reranker_directory_without_model_is_reported(tmp_path: Path, monkeypatch) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("FUNES_RERANKER", str(empty))
    with pytest.raises(ModelError, match=r"has no model\.onnx or tokenizer\.json"):
        load_reranker()


def test_fetched_reranker_is_checked_against_the_sha256_recorded_at_download(
    tmp_path: Path,
) -> None:
    d = rr_mod.fetched_dir()
    build_tiny_cross_encoder(d)
    rec = {"repo": RERANKER_PIN.repo, "revision": RERANKER_PIN.revision, "sha256": "0" * 64}
    (d / rr_mod.PIN_RECORD).write_text(json.dumps(rec))
    with pytest.raises(ModelError, match="funes models fetch"):
        load_reranker()
    rr_mod._loaded.clear()
    rec["sha256"] = rr_mod.sha256_file(d / "model.onnx")
    (d / rr_mod.PIN_RECORD).write_text(json.dumps(rec))
    rr = load_reranker()
    assert rr is not None and rr.name == RERANKER_PIN.name


def _funes(*args: str) -> subprocess.CompletedProcess[str]:
    return as_text(run_cli("funes", "models", *args))


def test_funes_models_reports_a_missing_reranker() -> None:
    p = _funes()
    assert p.returncode == 0, p.stderr
    assert "sentence-transformers/all-MiniLM-L6-v2" in p.stdout
    assert "reranker  none installed" in p.stdout and "funes models fetch" in p.stdout
    d = json.loads(_funes("--json").stdout)
    assert d["reranker"]["installed"] is False and d["embedder"]["ok"] is True


def test_funes_models_reports_an_installed_reranker(tiny: Path) -> None:
    p = _funes()
    assert p.returncode == 0, p.stderr
    assert f"reranker  local:{tiny.name}" in p.stdout


def test_funes_models_flags_corrupted_embedder_weights(tmp_path: Path, monkeypatch) -> None:
    bad = tmp_path / "model.onnx"
    bad.write_bytes(b"not the pinned file")
    monkeypatch.setenv("FUNES_EMBEDDER_FILE", str(bad))
    p = _funes()
    assert p.returncode == 1
    assert "MISMATCH" in p.stdout
    assert p.stderr.startswith("funes: ") and "pinned sha256" in p.stderr


def test_models_fetch_with_the_hub_unreachable_fails_with_one_line(monkeypatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # loopback, nothing listens
    for v in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "HF_HUB_OFFLINE"):
        monkeypatch.delenv(v, raising=False)
    p = _funes("fetch")
    assert p.returncode == 1
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("funes: cannot reach the Hugging Face Hub")
    assert "FUNES_RERANKER" in lines[0]
