"""Warm recall latency of one build at N synth chunks, for A/B runs of two builds.

    .venv/bin/python bench/warm_ab.py 20000                              # this tree
    PYTHONPATH=/path/to/other/tree .venv/bin/python bench/warm_ab.py 20000  # another build

The memory (bench/recall.py's synth history, random unit vectors, flat search) is built once in
$TMPDIR/funes-warm-ab-N and reused, so both builds search the same rows. Prints one JSON line:
which funes ran, p50 and p90 over eval-dev's 31 questions asked twice (after two warm-up calls).
Run the two builds alternately, twice each, and quote medians and the ratio: the machine is
shared.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))  # bench, after PYTHONPATH's funes

from bench import recall as br
from bench._common import NOW, Context


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    path = Path(tempfile.gettempdir()) / f"funes-warm-ab-{n}"
    if not path.exists():
        ctx = Context(quick=False, tmp=Path(tempfile.mkdtemp()))
        os.rename(br.synth_memory(ctx, n), path)
    import funes
    from funes.models import load_embedder
    from funes.retrieval import Query, Searcher
    from funes.store import open_memory

    eval_dev = Path(__file__).resolve().parents[2] / "shared" / "eval-dev" / "queries.jsonl"
    qs = [json.loads(line)["query"] for line in eval_dev.read_text().splitlines() if line]
    s = Searcher(open_memory(path), load_embedder(), None)
    for q in qs[:2]:
        s.search(Query(q), now=NOW)
    ts = []
    for _ in range(2):
        for q in qs:
            t = time.perf_counter()
            s.search(Query(q), now=NOW)
            ts.append(time.perf_counter() - t)
    print(json.dumps({"funes": funes.__file__, "chunks": n,
                      "p50_ms": round(statistics.median(ts) * 1000, 1),
                      "p90_ms": round(sorted(ts)[int(0.9 * len(ts))] * 1000, 1)}))  # fmt: skip


if __name__ == "__main__":
    main()
