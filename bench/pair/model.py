"""The pair model in torch (training only; needs the ``train`` extra): SPLADE-tiny's BERT with its
own sparse relevance scoring, and its export to the two ONNX graphs funes serves.

score(q, p) = Σ_t w_q[t] · w_p[t], with w[t] = max over tokens of log(1 + relu(MLM logit of t)):
the checkpoint's own relevance function (issue 21: a fresh classifier head on a few hundred
labels did worse than zero-shot). Only the query's terms matter to the score, so a passage's
logits are computed for the top ``TERMS`` query terms only — exact for the score, and ~100×
cheaper than the whole vocabulary for a passage.
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

HIDDEN = 128
LAYERS = 2
HEADS = 2
FFN = 512
VOCAB = 30522
TERMS = 64  # query terms a passage is scored on (a query has ~10-40 non-zero terms)


def load_safetensors(data: bytes) -> dict[str, torch.Tensor]:
    """A safetensors file's tensors (F32 only), without the safetensors package."""
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] != "F32":
            raise ValueError(f"{name}: dtype {info['dtype']} not supported")
        a, b = info["data_offsets"]
        arr = np.frombuffer(data[base + a : base + b], dtype="<f4").reshape(info["shape"])
        out[name] = torch.from_numpy(arr.copy())
    return out


class Layer(nn.Module):
    """One BERT layer; SPLADE-tiny's sizes unless given (bench/pair/xenc.py: MiniLM's)."""

    def __init__(self, hidden: int = HIDDEN, heads: int = HEADS, ffn: int = FFN) -> None:
        super().__init__()
        self.hidden, self.n_heads = hidden, heads
        self.q = nn.Linear(hidden, hidden)
        self.k = nn.Linear(hidden, hidden)
        self.v = nn.Linear(hidden, hidden)
        self.o = nn.Linear(hidden, hidden)
        self.ln1 = nn.LayerNorm(hidden, eps=1e-12)
        self.ff1 = nn.Linear(hidden, ffn)
        self.ff2 = nn.Linear(ffn, hidden)
        self.ln2 = nn.LayerNorm(hidden, eps=1e-12)
        self.drop = nn.Dropout(0.1)

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        b, n, _ = x.shape
        d = self.hidden // self.n_heads

        def heads(t: torch.Tensor) -> torch.Tensor:
            return t.view(b, n, self.n_heads, d).transpose(1, 2)

        q, k, v = heads(self.q(x)), heads(self.k(x)), heads(self.v(x))
        att = (q @ k.transpose(-1, -2)) / math.sqrt(d) + bias
        ctx = (self.drop(att.softmax(-1)) @ v).transpose(1, 2).reshape(b, n, self.hidden)
        x = self.ln1(x + self.drop(self.o(ctx)))
        h = self.ff2(nn.functional.gelu(self.ff1(x)))
        return self.ln2(x + self.drop(h))


class Encoder(nn.Module):
    """BERT's embeddings and layers."""

    def __init__(self) -> None:
        super().__init__()
        self.word = nn.Embedding(VOCAB, HIDDEN)
        self.pos = nn.Embedding(512, HIDDEN)
        self.tok_type = nn.Embedding(2, HIDDEN)
        self.ln = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.drop = nn.Dropout(0.1)
        self.layers = nn.ModuleList(Layer() for _ in range(LAYERS))

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        n = ids.shape[1]
        pos = torch.arange(n, device=ids.device).unsqueeze(0)
        x = self.word(ids) + self.pos(pos) + self.tok_type(torch.zeros_like(ids))
        x = self.drop(self.ln(x))
        bias = (1.0 - mask[:, None, None, :].to(x.dtype)) * -1e4
        for layer in self.layers:
            x = layer(x, bias)
        return x


class SpladeTiny(nn.Module):
    """SPLADE-tiny with a query encoder and a passage encoder (both start as the checkpoint's
    one encoder) and the MLM head they share (decoder tied to the query encoder's word
    embeddings, as in the checkpoint). Fine-tuning trains the query encoder and the head and
    keeps the passage encoder frozen: a passage's encoder states are computed once and cached,
    which makes training ~15× cheaper (a shared 2-core machine), and the head still adapts the
    passage side (its term logits come from the trained decoder, transform and bias)."""

    def __init__(self) -> None:
        super().__init__()
        self.q_enc = Encoder()
        self.p_enc = Encoder()
        self.t_dense = nn.Linear(HIDDEN, HIDDEN)
        self.t_ln = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.out_bias = nn.Parameter(torch.zeros(VOCAB))  # decoder weight tied to q_enc.word

    def load_bert(self, sd: dict[str, torch.Tensor]) -> None:
        def ln(m: nn.LayerNorm, p: str) -> None:
            m.weight.data.copy_(sd[f"{p}.gamma"] if f"{p}.gamma" in sd else sd[f"{p}.weight"])
            m.bias.data.copy_(sd[f"{p}.beta"] if f"{p}.beta" in sd else sd[f"{p}.bias"])

        def lin(m: nn.Linear, p: str) -> None:
            m.weight.data.copy_(sd[f"{p}.weight"])
            m.bias.data.copy_(sd[f"{p}.bias"])

        e = "bert.embeddings"
        for enc in (self.q_enc, self.p_enc):
            enc.word.weight.data.copy_(sd[f"{e}.word_embeddings.weight"])
            enc.pos.weight.data.copy_(sd[f"{e}.position_embeddings.weight"])
            enc.tok_type.weight.data.copy_(sd[f"{e}.token_type_embeddings.weight"])
            ln(enc.ln, f"{e}.LayerNorm")
            for i, layer in enumerate(enc.layers):
                p = f"bert.encoder.layer.{i}"
                lin(layer.q, f"{p}.attention.self.query")
                lin(layer.k, f"{p}.attention.self.key")
                lin(layer.v, f"{p}.attention.self.value")
                lin(layer.o, f"{p}.attention.output.dense")
                ln(layer.ln1, f"{p}.attention.output.LayerNorm")
                lin(layer.ff1, f"{p}.intermediate.dense")
                lin(layer.ff2, f"{p}.output.dense")
                ln(layer.ln2, f"{p}.output.LayerNorm")
        lin(self.t_dense, "cls.predictions.transform.dense")
        ln(self.t_ln, "cls.predictions.transform.LayerNorm")
        self.out_bias.data.copy_(sd["cls.predictions.bias"])
        for prm in self.p_enc.parameters():
            prm.requires_grad_(False)

    def head(self, x: torch.Tensor) -> torch.Tensor:
        return self.t_ln(nn.functional.gelu(self.t_dense(x)))

    def query_weights(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """(B, VOCAB) max-pooled log-saturated term weights."""
        h = self.head(self.q_enc(ids, mask))
        logits = h @ self.q_enc.word.weight.T + self.out_bias
        act = torch.log1p(torch.relu(logits)) * mask.unsqueeze(-1).to(h.dtype)
        return act.max(dim=1).values

    def passage_states(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The frozen passage encoder's output (B, L, HIDDEN): what training caches."""
        return self.p_enc(ids, mask)

    def passage_weights_from_states(
        self, x: torch.Tensor, mask: torch.Tensor, terms: torch.Tensor
    ) -> torch.Tensor:
        """(B, T) weights of the given terms (T,) in each passage."""
        h = self.head(x)
        logits = h @ self.q_enc.word.weight[terms].T + self.out_bias[terms]
        act = torch.log1p(torch.relu(logits)) * mask.unsqueeze(-1).to(h.dtype)
        return act.max(dim=1).values

    def passage_weights(
        self, ids: torch.Tensor, mask: torch.Tensor, terms: torch.Tensor
    ) -> torch.Tensor:
        return self.passage_weights_from_states(self.passage_states(ids, mask), mask, terms)


class QueryGraph(nn.Module):
    """ONNX graph 1: query tokens → its top TERMS term ids and weights."""

    def __init__(self, m: SpladeTiny) -> None:
        super().__init__()
        self.m = m

    def forward(self, input_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        w = self.m.query_weights(input_ids, torch.ones_like(input_ids))[0]
        vals, idx = torch.topk(w, TERMS)
        return idx, vals


class PassageGraph(nn.Module):
    """ONNX graph 2: one passage's tokens and the query's terms → the score (1,)."""

    def __init__(self, m: SpladeTiny) -> None:
        super().__init__()
        self.m = m

    def forward(
        self, input_ids: torch.Tensor, terms: torch.Tensor, weights: torch.Tensor
    ) -> torch.Tensor:
        pw = self.m.passage_weights(input_ids, torch.ones_like(input_ids), terms)
        return pw @ weights


def export(m: SpladeTiny, out: Path) -> None:
    """Write query.onnx and passage.onnx (fp32) into ``out``."""
    m.eval()
    out.mkdir(parents=True, exist_ok=True)
    ids = torch.tensor([[101, 2054, 2003, 1037, 3231, 102]], dtype=torch.long)
    kw: dict[str, Any] = {"opset_version": 17, "do_constant_folding": True}
    if "dynamo" in torch.onnx.export.__code__.co_varnames:
        kw["dynamo"] = False
    with torch.no_grad():
        torch.onnx.export(
            QueryGraph(m), (ids,), str(out / "query.onnx"),
            input_names=["input_ids"], output_names=["terms", "weights"],
            dynamic_axes={"input_ids": {1: "tokens"}}, **kw,
        )  # fmt: skip
        terms = torch.arange(TERMS, dtype=torch.long)
        weights = torch.ones(TERMS)
        torch.onnx.export(
            PassageGraph(m), (ids, terms, weights), str(out / "passage.onnx"),
            input_names=["input_ids", "terms", "weights"], output_names=["score"],
            dynamic_axes={"input_ids": {1: "tokens"}}, **kw,
        )  # fmt: skip
