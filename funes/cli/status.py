"""`funes status [--memory M]`: what the memory holds and what is still pending."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime

from funes.cli._args import Parser
from funes.cli._pipe import run
from funes.cli._tty import spinner
from funes.store.status import Status


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="funes status", description="What the memory holds.")
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
    from funes.ingest.pending import pending_sources
    from funes.memories import open_one
    from funes.models import EMBEDDER_PIN
    from funes.models.reranker import find_reranker
    from funes.store.status import memory_status

    mem = open_one(spec)
    if mem.origin.uri is not None:
        from funes.hub.spec import parse
        from funes.hub.status import remote_status

        rs = remote_status(parse(mem.origin.uri), mem)
        if as_json:
            doc = {**rs.__dict__, "last_push": rs.last_push.isoformat() if rs.last_push else None}
            return json.dumps(doc, ensure_ascii=False) + "\n"
        return str(rs.text())
    note = mem.note if not as_json else ""
    st = memory_status(mem, pending_sources(mem.path))
    rr = find_reranker()
    models = {"embedder": EMBEDDER_PIN.name, "reranker": rr.name if rr else None}
    if as_json:
        doc = {
            **st.__dict__,
            "last_indexed": st.last_indexed.isoformat() if st.last_indexed else None,
        }
        doc["models"] = models
        return json.dumps(doc, ensure_ascii=False) + "\n"
    return note + render(st, models)


def render(st: Status, models: dict[str, str | None]) -> str:
    from funes.cli._format import one_line

    lines = [f"memory: {one_line(st.label)}", f"chunks: {st.chunks}", f"sessions: {st.sessions}"]
    for h, c in st.by_agent.items():  # harness names come from the rows: someone else's, maybe
        lines.append(
            f"  {one_line(h)}: {c['sessions']} session{'s' if c['sessions'] != 1 else ''}, "
            f"{c['chunks']} chunks"
        )
    if st.without_vectors:
        lines.append(
            f"awaiting vectors: {st.without_vectors} chunks (searchable by words now; "
            "`funes index --backfill` embeds them)"
        )
    if st.pending_sources:
        s = "s" if st.pending_sources != 1 else ""
        lines.append(
            f"pending indexing: {st.pending_sources} source session{s} — run `funes index`"
        )
    if st.last_indexed:
        lines.append(f"last indexed: {st.last_indexed:%Y-%m-%d %H:%M} UTC ({age(st.last_indexed)})")
    lines.append(f"embedding model: {st.model or models['embedder']}")
    rr = models["reranker"]
    lines.append(
        f"reranking: on ({rr})"
        if rr
        else "reranking: off (no cross-encoder installed; ranked by the learned second stage)"
    )
    lines.append(f"vector search: {'ANN index' if st.ann_index else 'exact (flat)'}")
    lines.append(f"disk: {st.disk_bytes / 1e6:.1f} MB")
    return "\n".join(lines) + "\n"


def age(t: datetime, now: datetime | None = None) -> str:
    mins = int(((now or datetime.now(UTC)) - t).total_seconds() // 60)
    if mins < 1:
        return "just now"
    if mins < 60:
        return f"{mins} minute{'s' if mins != 1 else ''} ago"
    if mins < 2880:
        h = mins // 60
        return f"{h} hour{'s' if h != 1 else ''} ago"
    d = mins // 1440
    return f"{d} day{'s' if d != 1 else ''} ago"


if __name__ == "__main__":
    sys.exit(main())
