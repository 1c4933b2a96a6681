"""`funes status [--memory M]`: what the memory holds and what is still pending."""

from __future__ import annotations

import argparse
import json
import sys

from funes.cli._args import Parser
from funes.cli._cold import start_reading
from funes.cli._pipe import run
from funes.cli._tty import spinner
from funes.hub.spec import parse, parse_one
from funes.hub.status import remote_status
from funes.models import EMBEDDER_PIN
from funes.render.status import remote_status_text, status_text


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="funes status", example="funes status --json", description="What the memory holds."
    )
    p.add_argument(
        "memory_pos", nargs="?", metavar="MEMORY", help="a memory dir or a Hub dataset OWNER/NAME"
    )
    p.add_argument("--memory", metavar="M", help="a memory directory (default: your local memory)")
    p.add_argument("--json", action="store_true", help="one JSON object")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run(lambda: _main(args))


def _main(args: argparse.Namespace) -> int:
    with spinner("reading the memory"):
        text = _status(args.memory or args.memory_pos, args.json)
    sys.stdout.write(text)
    return 0


def _status(spec: str | None, as_json: bool) -> str:
    """What `funes status` prints (text, or one JSON line)."""
    # lazy: funes.ingest.pending and funes.models.reranker stay off fast commands' start-up
    from funes.ingest.pending import pending_sources
    from funes.models.pair import pair_summary
    from funes.models.reranker import find_reranker
    from funes.store.status import cached_status

    one = parse_one(spec)
    # A local memory's counts come from the counts.json its writers keep, without opening the
    # table (0.3 s of CPU less at 20k chunks, measured: Lance, pyarrow and numpy).
    path = None if one.remote else one.path
    st = None if path is None else cached_status(path)
    note = ""
    if st is None:
        start_reading()
        # lazy: Lance, pyarrow and numpy, only when the table must be read (and numpy when
        # there is none: the store says so)
        from funes.memories import open_one
        from funes.store.status import memory_status

        mem = open_one(spec)
        if mem.origin.uri is not None:
            rs = remote_status(parse(mem.origin.uri), mem)
            if as_json:
                doc = {
                    **rs.__dict__,
                    "last_push": rs.last_push.isoformat() if rs.last_push else None,
                }
                return json.dumps(doc, ensure_ascii=False) + "\n"
            return remote_status_text(rs)
        note = mem.note if not as_json else ""
        st = memory_status(mem)
        path = mem.path
    assert path is not None
    st.pending_sources = pending_sources(path)
    rr = find_reranker()
    models = {"embedder": EMBEDDER_PIN.name, "pair": pair_summary(),
              "reranker": rr.name if rr else None}  # fmt: skip
    if as_json:
        doc = {
            **st.__dict__,
            "last_indexed": st.last_indexed.isoformat() if st.last_indexed else None,
        }
        doc["models"] = models
        return json.dumps(doc, ensure_ascii=False) + "\n"
    return note + status_text(st, models)


if __name__ == "__main__":
    sys.exit(main())
