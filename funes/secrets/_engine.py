"""Child-process entry point around the TruffleHog v3 detector engine (`litellm-trufflehog`).

    python -m funes.secrets._engine [--profile all] DIR

That package is AGPL-3.0: funes only ever runs it in a child process through this module and
never imports it into its own. Nothing else in funes may import this module.

Protocol (read by :mod:`funes.secrets.scanner`): one JSON object per line on stdout —
``{"file": <path relative to DIR>, "detector": <name>, "start": <int|null>, "end": <int|null>}``
per finding, offsets in code points of the file's UTF-8 text (null when the engine could not
locate the secret in the text), then exactly one ``{"summary": {"files": N, "findings": M}}``
line. Exit 0 after a complete scan; on anything else — a detector error, a truncated scan, a
file that is not UTF-8 — a one-line reason on stderr and exit 2, with no summary line. Output
never contains secret values.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _char_offsets(data: bytes, points: list[int]) -> dict[int, int]:
    """UTF-8 byte offsets → code-point offsets."""
    return {p: len(data[:p].decode("utf-8")) for p in set(points)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m funes.secrets._engine")
    ap.add_argument("dir", type=Path)
    ap.add_argument("--profile", default="all")
    args = ap.parse_args(argv)
    try:
        # lazy: an optional dependency (the `scan` extra)
        from litellm_trufflehog import Scanner
    except ImportError as e:
        print(f"the TruffleHog engine is not installed ({e.name})", file=sys.stderr)
        return 2

    files = sorted(p for p in args.dir.rglob("*") if p.is_file())
    biggest = max((p.stat().st_size for p in files), default=0)
    scanner = Scanner(profile=args.profile, max_bytes=biggest + 1)
    if scanner.warmup_errors:
        print(f"{len(scanner.warmup_errors)} detector(s) failed to start", file=sys.stderr)
        return 2
    out = sys.stdout
    count = 0
    for path in files:
        rel = path.relative_to(args.dir).as_posix()
        data = path.read_bytes()
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            print(f"{rel}: not UTF-8 text", file=sys.stderr)
            return 2
        report = scanner.scan(data)
        if report.truncated or report.errors:
            why = "truncated" if report.truncated else f"{len(report.errors)} detector error(s)"
            print(f"{rel}: scan incomplete ({why})", file=sys.stderr)
            return 2
        for f in report.findings:
            spans = [(s.start, s.end) for s in f.spans if s.end > s.start]
            if not spans:
                out.write(
                    json.dumps({"file": rel, "detector": f.label, "start": None, "end": None})
                )
                out.write("\n")
                count += 1
                continue
            offsets = _char_offsets(data, [p for span in spans for p in span])
            for start, end in spans:
                rec = {
                    "file": rel,
                    "detector": f.label,
                    "start": offsets[start],
                    "end": offsets[end],
                }
                out.write(json.dumps(rec) + "\n")
                count += 1
    out.write(json.dumps({"summary": {"files": len(files), "findings": count}}) + "\n")
    out.flush()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:  # the parent reports this line; no traceback, no input text
        print(f"engine failed: {type(e).__name__}", file=sys.stderr)
        sys.exit(2)
