"""`funes push`: publish the local memory's new chunks to a Hub dataset (append-only).

One attempt:

1. resolve the head of `main` (one request) and bring the memory files of that commit into the
   HF cache (only files the cache lacks are fetched — the same files recall reads);
2. copy them into a scratch directory (hard links where possible) and read the remote's ids
   there: ``to_push`` = local ids − remote ids (a host receipt answers "up to date" before any
   of this);
3. the secret gate (first attempt only): whole blocks rebuilt and scanned, dirty blocks held;
4. append the clean rows to the scratch copy with the store's own writer (new Lance fragment,
   manifest and transaction; a new lexical segment), then upload exactly the files that are new
   or changed — plus the dataset card — as **one** commit guarded by ``parent_commit``.

A concurrent push that lands first makes the commit fail with 412; the attempt is redone from
the new head (its rows are now in the remote's ids, so nothing is sent twice), up to
:data:`MAX_RETRIES` times. Push never deletes or rewrites remote rows; only lexical index
segments that a merge replaced are removed.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

from funes.errors import FunesError, UsageError, counted
from funes.hub import receipt, transport
from funes.hub.card import updated_card
from funes.hub.curate import Selection, remote_project, selection_for
from funes.hub.gate import GateResult, scan
from funes.hub.remote import forget_head, materialize
from funes.hub.spec import MemorySpec, State, state_message
from funes.hub.upload import SHIPPED, changes, check_writable, listing
from funes.records import Chunk
from funes.store import native

if TYPE_CHECKING:
    import pyarrow as pa

    from funes.hub.gate import GateResult
    from funes.hub.transport import RemoteInfo
    from funes.store.idset import IdSet
    from funes.store.memory import Memory

MAX_RETRIES = 10
# Rows read, converted and written at a time: the push's memory is one batch's, whatever the
# memory's size. It also cuts the lexical segments the remote receives: changing it changes the
# files pushed (not the rows).
PUSH_BATCH = 2_000
# Batches read between two returns of freed memory to the system (native.release).
RELEASE_EVERY = 10


class NothingPublished(FunesError):
    """Every row to push was held back by the gate (exit status 2, as in the reference)."""

    exit_code = 2


@dataclass
class PushReport:
    label: str
    pushed: int = 0
    commit: str | None = None
    remote_chunks: int = 0
    local_chunks: int = 0
    held: GateResult | None = None
    card: str = ""  # "created" | "refreshed" | ""
    up_to_date: bool = False
    created_repo: bool = False
    bytes_sent: int = 0
    files_sent: int = 0
    attempts: int = 0
    notes: list[str] = field(default_factory=list)
    project: str = ""  # a project memory: only curated sessions are pushed
    pending_review: int = 0


Confirm = Callable[[str], bool]


def check_target(spec: MemorySpec) -> None:
    """Push publishes to a Hub dataset: a local ``spec`` is refused (before any memory opens)."""
    if not spec.remote:
        raise UsageError(
            "funes push publishes to a Hugging Face dataset — name one: `funes push OWNER/NAME`"
        )


def push(
    spec: MemorySpec,
    local: Memory,
    *,
    yes: bool = False,
    create: bool = False,
    confirm: Confirm | None = None,
) -> PushReport:
    """Publish the local memory ``local`` (opened by ``funes.memories.open_for_write``) to
    ``spec``. ``confirm`` asks the user a yes/no question (None off a terminal: questions
    become errors naming the flag to pass)."""
    check_target(spec)
    if not transport.token():
        raise FunesError("no HF token (set HF_TOKEN, or run `hf auth login`) — required to push")
    report = PushReport(spec.label, local_chunks=local.count())
    candidates = [str(x) for x in local.rows(columns=("id",)).column("id").to_pylist()]
    info = _resolve_target(spec, report, len(candidates), create, confirm)
    pushed_before = receipt.load(spec)
    selection = selection_for(spec, remote_project(info), local)
    if selection is not None:  # a project memory: only the sessions curated in
        candidates, report.project = selection.ship, selection.project
        report.pending_review = len(selection.pending(pushed_before))
    if info.state is State.READY and pushed_before is not None and set(candidates) <= pushed_before:
        report.up_to_date = True
        return report
    check_writable(spec)
    native.streaming()  # the gate and the append read the table in batches

    verdicts = _Verdicts(local)  # the gate's, kept across attempts
    for attempt in range(1, MAX_RETRIES + 2):
        report.attempts = attempt
        with tempfile.TemporaryDirectory(prefix="funes-push-") as tmp:
            work = Path(tmp) / "memory"
            base = _checkout(info, work)
            to_push = _missing(spec, work, base, candidates, selection, pushed_before, report)
            if not to_push:
                report.up_to_date = True
                return report
            if attempt == 1:
                _guard(spec, local, to_push, candidates, pushed_before, report, yes, confirm)
            send = verdicts.clean(spec, to_push, report)
            files, deletes = _stage(spec, info, local, work, send, base, report)
            try:
                oid = transport.commit(
                    spec, files, deletes, f"funes push: +{len(send)} chunks", parent=info.sha
                )
            except transport.CommitConflict:
                info = transport.probe(spec)
                if info.state not in (State.READY, State.EMPTY):
                    raise FunesError(state_message(spec, info.state, info.detail)) from None
                continue
            _record(spec, report, oid, send, files)
            return report
    raise FunesError(f"data commit kept conflicting after {MAX_RETRIES} retries; re-run push")


# ---------------------------------------------------------------------------- the target


def _resolve_target(
    spec: MemorySpec, report: PushReport, chunks: int, create: bool, confirm: Confirm | None
) -> RemoteInfo:
    """The remote as of one probe, reachable and ours to read; a missing dataset is created
    (private) when ``create`` or the user's yes says so."""
    info = transport.probe(spec)
    if info.state is State.OFFLINE:
        raise FunesError(
            f"{spec.uri} is unreachable right now — push again once you're back online"
        )
    if info.state is State.UNAUTHORIZED:
        raise FunesError(state_message(spec, info.state, info.detail))
    if info.state is not State.MISSING:
        return info
    question = (
        f"{spec.uri} does not exist. Create it as a private dataset and publish "
        f"{counted(chunks, 'chunk')} there? [y/N] "
    )
    if not (create or (confirm is not None and confirm(question))):
        raise FunesError(
            f"{spec.uri} does not exist — funes creates Hub repos only when asked: "
            "re-run with `--create` (the new dataset will be private)"
        )
    check_writable(spec)
    transport.create_repo(spec)
    report.created_repo = True
    info = transport.probe(spec)
    if info.state not in (State.EMPTY, State.READY):
        raise FunesError(state_message(spec, info.state, info.detail))
    return info


def _missing(
    spec: MemorySpec,
    work: Path,
    base: bool,
    candidates: list[str],
    selection: Selection | None,
    pushed_before: set[str] | None,
    report: PushReport,
) -> list[str]:
    """The ``candidates`` the remote copy in ``work`` lacks, in order; the ones it holds are
    recorded in this host's receipt."""
    remote_ids = _ids(work, base)
    report.remote_chunks = len(remote_ids)
    if selection is not None:
        report.pending_review = len(selection.pending(set(remote_ids) | (pushed_before or set())))
    shared = [i for i in candidates if i in remote_ids]
    if shared:
        receipt.add(spec, shared)
    return [i for i in candidates if i not in remote_ids]


def _guard(
    spec: MemorySpec,
    local: Memory,
    to_push: list[str],
    candidates: list[str],
    pushed_before: set[str] | None,
    report: PushReport,
    yes: bool,
    confirm: Confirm | None,
) -> None:
    """The wrong-memory guard: pushing a memory that shares no chunk
    with the remote is confirmed first — unless this run just created the repo."""
    if yes or report.created_repo or pushed_before:
        return
    if len(to_push) != len(candidates):  # some are on the remote already
        return
    what = (
        "is empty"
        if not report.remote_chunks
        else (f"holds {report.remote_chunks} chunks, none of them from {local.label}")
    )
    question = f"{spec.uri} {what}. Publish {counted(len(to_push), 'chunk')} anyway? [y/N] "
    if confirm is None:
        raise FunesError(
            f"push aborted — {spec.uri} {what}; if {local.label} is the memory to publish "
            f"there ({len(to_push)} chunks), re-run with --yes"
        )
    if not confirm(question):
        raise FunesError("push aborted")


# ---------------------------------------------------------------------------- the gate


class _Verdicts:
    """The secret gate's verdicts, kept across attempts: a retry scans only the rows it has not
    judged yet. The ids judged are kept 8 bytes each (a million pushed: 8 MB, not ~100 MB as a
    dict of str), the few held back as a set."""

    def __init__(self, local: Memory) -> None:
        # lazy: numpy (under the IdSet) stays off fast commands' start-up
        from funes.store.idset import IdSet

        self.local = local
        self.judged = IdSet()
        self.held: set[str] = set()
        self.first: GateResult | None = None  # the first scan's detectors and blocks

    def clean(self, spec: MemorySpec, to_push: list[str], report: PushReport) -> list[str]:
        """The ids of ``to_push`` the gate lets go (``report.held`` says what it holds);
        NothingPublished when it holds them all."""
        todo = [i for i in to_push if i not in self.judged]
        if todo:
            self._judge(todo)
        del todo
        report.held = self._held_now(to_push)
        if not report.held.clean:
            h = report.held
            raise NothingPublished(
                f"{spec.label}: nothing published — held back "
                f"{counted(len(h.held), 'row')} with secrets ({h.summary()}); run "
                "`funes scrub`, then push again"
            )
        return report.held.clean

    def _judge(self, ids: list[str]) -> None:
        # lazy: funes.secrets.scanner stays off fast commands' start-up
        from funes.secrets.scanner import ScannerError

        try:
            res = scan(self.local, ids)
        except ScannerError as e:
            raise FunesError(f"nothing pushed: the secret scan could not run — {e}") from None
        self.judged.update(ids)
        self.held.update(res.held)
        if self.first is None:
            self.first = GateResult([], [], res.detectors, res.blocks_held)

    def _held_now(self, to_push: list[str]) -> GateResult:
        held = self.held
        res = GateResult([i for i in to_push if i not in held], [i for i in to_push if i in held])
        if self.first is not None:
            res.detectors = self.first.detectors
            res.blocks_held = self.first.blocks_held
        return res


# ---------------------------------------------------------------------------- stage, record


def _stage(
    spec: MemorySpec,
    info: RemoteInfo,
    local: Memory,
    work: Path,
    send: list[str],
    base: bool,
    report: PushReport,
) -> tuple[list[tuple[str, bytes | Path]], list[str]]:
    """Append the rows ``send`` to the remote's copy in ``work``: the files to upload (those
    new or rewritten, and the dataset card) and the lexical files to delete, as paths in the
    repo."""
    before = listing(work)
    _append(local, work, send, create_table=not base)
    adds, deletes = changes(before, work)
    files: list[tuple[str, bytes | Path]] = [(spec.path_in_repo(rel), work / rel) for rel in adds]
    if not spec.prefix:
        current = (
            transport.fetch_text(spec, "README.md", info.sha or "main")
            if "README.md" in info.files
            else None
        )
        card_text, report.card = updated_card(
            current, spec.short, report.remote_chunks + len(send), local.model or ""
        )
        if card_text is not None:
            files.append(("README.md", card_text.encode("utf-8")))
    return files, [spec.path_in_repo(rel) for rel in deletes]


def _record(
    spec: MemorySpec,
    report: PushReport,
    oid: str,
    send: list[str],
    files: list[tuple[str, bytes | Path]],
) -> None:
    """After the commit landed: what it sent, in the report and this host's receipt."""
    report.commit = oid
    report.pushed = len(send)
    report.files_sent = len(files)
    report.bytes_sent = sum(
        len(src) if isinstance(src, bytes) else src.stat().st_size for _, src in files
    )
    receipt.add(spec, send)
    forget_head(spec)


# ---------------------------------------------------------------------------- scratch copy


def _checkout(info: RemoteInfo, work: Path) -> bool:
    """Copy the remote memory at ``info.sha`` into ``work``; False when it holds none yet."""
    if info.state is not State.READY:
        return False

    src = materialize(info)
    for p in src.rglob("*"):
        rel = p.relative_to(src)
        if p.is_dir() or not str(rel).startswith(SHIPPED):
            continue
        dst = work / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        real = os.path.realpath(p)
        try:
            # Shipped files are never modified in place (Lance writes new files; the lexical
            # index renames over), so a hard link to the cached blob is safe and free.
            os.link(real, dst)
        except OSError:
            shutil.copyfile(real, dst)
    return True


# The scratch copy is opened by its path, not through funes.memories: it is this module's own
# temporary directory (a copy of the remote at one commit), never a memory a user named, and
# the Hub layer sits below the resolver.


def _ids(work: Path, base: bool) -> IdSet:
    """The remote copy's ids, 8 bytes each (a million as a set of str held ~100 MB for the
    whole push)."""
    # lazy: numpy stays off fast commands' start-up
    from funes.store.idset import IdSet
    from funes.store.memory import open_memory

    return IdSet(open_memory(work).id_batches()) if base else IdSet()


def _append(local: Memory, work: Path, ids: list[str], create_table: bool) -> None:
    # lazy: numpy stays off fast commands' start-up
    from funes.store.memory import open_memory

    native.release()  # what the gate freed, before the append's batches
    target = open_memory(work, create=create_table, model=local.model)
    with target.writer(interactive=False) as w:
        w.append_batches(_chunks(local, ids))
    native.release()


def _chunks(local: Memory, ids: list[str], batch: int = PUSH_BATCH) -> Iterator[list[Chunk]]:
    """The local rows of ``ids`` as chunks, in table order, ``batch`` rows read at a time.

    What this holds does not grow with the rows pushed: the ids wanted are an ``IdSet`` (8
    bytes an id; Arrow's ``is_in`` hashed all of them again for every batch), and each
    chunk's vector is its row of the batch's float32 array, not 384 Python floats (12 KB a
    row, three batches of them alive at once between the reader and the table write)."""
    # lazy: pyarrow and numpy (under the IdSet) stay off fast commands' start-up
    import numpy as np
    import pyarrow as pa

    from funes.store.idset import IdSet
    from funes.store.memory import COLUMNS

    want = IdSet([ids])
    for n, b in enumerate(local.scan_batches(COLUMNS, batch)):
        keep = np.fromiter((i in want for i in b.column("id").to_pylist()), bool, b.num_rows)
        if keep.any():
            yield _batch_chunks(b.filter(pa.array(keep)))
        if n % RELEASE_EVERY == RELEASE_EVERY - 1:
            native.release()


def _batch_chunks(b: pa.RecordBatch) -> list[Chunk]:
    """A batch's rows as chunks whose vectors are rows of one float32 array (or None)."""
    # lazy: pyarrow stays off fast commands' start-up
    import pyarrow as pa

    vec = b.column("vector")
    if not pa.types.is_fixed_size_list(vec.type):  # not a table funes wrote: read as lists
        return [Chunk.from_row(r) for r in b.to_pylist()]
    dim = vec.type.list_size
    flat = vec.values.to_numpy(zero_copy_only=False)
    rows = flat[vec.offset * dim : (vec.offset + len(vec)) * dim].reshape(len(vec), dim)
    valid = vec.is_valid().to_numpy(zero_copy_only=False)
    out = []
    for r, row, ok in zip(b.drop_columns(["vector"]).to_pylist(), rows, valid, strict=True):
        c = Chunk.from_row(r)
        if ok:
            c.vector = cast("list[float]", row)  # read as a sequence of floats (chunks_to_arrow)
        out.append(c)
    return out
