"""funes' benchmarks: speed, size and recall quality against baselines, on this machine.

    .venv/bin/python -m bench [SUITE ...] [--quick]

See bench/README.md (generated from bench/results/<date>.json by the same command).
"""

# Suite name → (module, function taking a bench._common.Context, returning a JSON-able dict).
SUITES = {
    "parse": ("bench.parse", "run"),
    "embed": ("bench.embed", "run"),
    "index": ("bench.store", "run_index"),
    "recall": ("bench.recall", "run"),
    "storage": ("bench.store", "run_storage"),
    "secrets": ("bench.secret_detection", "run"),
    "quality": ("bench.quality", "run_suite"),
    "hub": ("bench.hub", "run"),  # remote recall, when bench/hub.py is present
    "ask": ("bench.ask", "run"),
    "hub-traces": ("bench.hub_traces", "run"),
    "hostile": ("bench.hostile", "run"),
    "verbs": ("bench.verbs", "run"),  # sessions, scan, ranged get, sketch; MCP over HTTP
    "noop": ("bench.noop", "run"),  # no-op index and hook, status, get: CPU at 20k chunks
    "scale": ("bench.scale", "run"),  # 100k and 1M chunks: index, recall, status, push, scrub
}
# Suites run only when named (`python -m bench scale`): hours of CPU, not part of "every suite".
EXPLICIT = {"scale"}
# A suite module without the function is run as `python -m MODULE [args]`; its stdout is kept,
# and so is the bench/results/<name>-<date>.json it writes, if any.
SCRIPT_ARGS = {"hub": {"quick": ["--new", "200", "--reps", "2"], "default": []}}
