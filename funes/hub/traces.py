"""Agent-trace datasets on the Hub as index units.

A dataset of agent traces (one row per session, the parquet contract of
:mod:`funes.sources.parquet`) is read through the Hub's own parquet conversion: the
``refs/convert/parquet`` branch the dataset viewer maintains. Its target commit is the
revision; the ``*.parquet`` files at that revision, sorted by path, are the shards. Each shard is
one unit keyed ``hf://datasets/OWNER/NAME/<path>``, signed with the convert commit, so an
unchanged dataset is skipped and a new conversion re-reads every shard (chunk ids dedupe what
was already stored). A shard is downloaded into the huggingface_hub cache, pinned to that
commit, only when the indexer actually reads it.

    ds = resolve("ana/traces")        # refs + one tree listing
    units(ds)                         # [Unit(…/0000.parquet, key="hf://datasets/ana/traces/…")]
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from funes.errors import FunesError
from funes.hub.spec import MemorySpec, state_message
from funes.hub.transport import (
    REPO_TYPE,
    HubUnavailable,
    access_state,
    api,
    offline_error,
    request_errors,
    snapshot_dir,
)
from funes.sources import Unit, get_source

_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]*"
_TARGET = re.compile(rf"^(?:hf://datasets/)?({_NAME})/({_NAME})/?$")
CONVERT_REF = "refs/convert/parquet"


@dataclass(frozen=True)
class TraceDataset:
    repo_id: str
    commit: str  # the target of refs/convert/parquet
    shards: tuple[str, ...]  # *.parquet paths at that commit, sorted

    @property
    def uri(self) -> str:
        return f"hf://datasets/{self.repo_id}"

    def key(self, shard: str) -> str:
        return f"{self.uri}/{shard}"


def target(arg: str) -> str | None:
    """The ``OWNER/NAME`` an index argument names on the Hub, or None when it names a local
    path (one that exists always wins) or nothing a dataset could be."""
    if os.path.exists(os.path.expanduser(arg)):
        return None
    if arg.startswith(("/", ".", "~")):
        return None
    m = _TARGET.match(arg.strip())
    if not m or ".." in arg:
        if arg.startswith("hf://"):
            raise FunesError(
                f"cannot read {arg!r} as a Hub dataset — name it hf://datasets/OWNER/NAME "
                "or OWNER/NAME"
            )
        return None
    return f"{m[1]}/{m[2]}"


def resolve(repo_id: str) -> TraceDataset:
    """The dataset's parquet conversion: its commit and sorted shard paths (two requests)."""
    from huggingface_hub.hf_api import RepoFile  # lazy: huggingface_hub only to talk to the Hub

    spec = MemorySpec(repo_id=repo_id)
    try:
        refs = api().list_repo_refs(repo_id, repo_type=REPO_TYPE)
    except request_errors() as e:
        raise _hub_error(spec, e) from None
    commit = next(
        (
            r.target_commit
            for r in refs.converts
            if r.name == "parquet" or r.ref.endswith("convert/parquet")
        ),
        None,
    )
    if commit is None:
        raise FunesError(
            f"{spec.uri} has no {CONVERT_REF} branch (not an agent-traces dataset?) — the Hub "
            "converts a dataset to parquet once its viewer can read it"
        )
    try:
        tree = api().list_repo_tree(repo_id, revision=commit, recursive=True, repo_type=REPO_TYPE)
        shards = sorted(
            f.path for f in tree if isinstance(f, RepoFile) and f.path.lower().endswith(".parquet")
        )
    except request_errors() as e:
        raise _hub_error(spec, e) from None
    if not shards:
        raise FunesError(f"{spec.uri}: {CONVERT_REF} (commit {commit[:8]}) holds no .parquet files")
    return TraceDataset(repo_id, commit, tuple(shards))


def units(ds: TraceDataset) -> list[Unit]:
    """One unit per shard, in shard order; each downloads its shard when first read."""
    parquet = get_source("parquet")
    snap = snapshot_dir(ds.repo_id, ds.commit)
    return [
        Unit(
            snap / shard,
            parquet,
            key=ds.key(shard),
            revision=ds.commit,
            fetch=_Fetch(ds.repo_id, ds.commit, shard),
        )
        for shard in ds.shards
    ]


@dataclass(frozen=True)
class _Fetch:
    """Download one shard into the HF cache, pinned to the convert commit (a cached shard
    costs no request)."""

    repo_id: str
    commit: str
    shard: str

    def __call__(self) -> Path:
        from huggingface_hub import hf_hub_download  # lazy: huggingface_hub only to talk to the Hub

        spec = MemorySpec(repo_id=self.repo_id)
        try:
            path = hf_hub_download(
                self.repo_id, self.shard, repo_type=REPO_TYPE, revision=self.commit
            )
        except request_errors() as e:
            raise _hub_error(spec, e) from None
        return Path(path)


def _hub_error(spec: MemorySpec, e: BaseException) -> FunesError:
    """The same one-line messages remote recall gives for a dataset it cannot read."""
    # lazy: huggingface_hub only to talk to the Hub
    from huggingface_hub.errors import RevisionNotFoundError

    if isinstance(e, RevisionNotFoundError):
        return FunesError(f"{spec.uri}: {CONVERT_REF} moved while reading it — run again")
    known = None if offline_error(e) else access_state(e)
    if known is not None:
        return FunesError(state_message(spec, *known))
    if offline_error(e):
        first = (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
        return HubUnavailable(f"the Hub is unreachable ({first}) — try again once it is")
    if isinstance(e, FunesError):
        return e
    first = (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
    return FunesError(f"{spec.uri}: the Hub answered {type(e).__name__}: {first}")
