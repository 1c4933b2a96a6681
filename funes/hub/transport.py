"""The Hub transport: thin wrappers over huggingface_hub that name Hub concepts only (repo
info at a revision, downloads into the HF cache at a commit, one guarded commit) and turn its
exceptions into :class:`State`s and user-facing errors. huggingface_hub is imported lazily.

The endpoint comes from ``HF_ENDPOINT`` (read by huggingface_hub at import), the token from
``HF_TOKEN`` or the huggingface_hub login.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from funes.errors import FunesError
from funes.hub.spec import TOKEN_REJECTED, MemorySpec, State

PROBE_TIMEOUT = 5.0  # seconds: the reachability probe
REPO_TYPE = "dataset"


@dataclass
class RemoteInfo:
    """A remote memory as of one probe: its state, the head commit and its files."""

    spec: MemorySpec
    state: State
    sha: str | None = None
    private: bool | None = None
    last_modified: str | None = None
    files: dict[str, tuple[str, int]] = field(default_factory=dict)  # path → (etag, size)
    detail: str = ""

    def memory_files(self) -> dict[str, tuple[str, int]]:
        """The files under the memory's prefix, relative to it."""
        pre = self.spec.prefix + "/" if self.spec.prefix else ""
        return {p[len(pre) :]: v for p, v in self.files.items() if p.startswith(pre)}

    @property
    def has_index(self) -> bool:
        return any(p.startswith("chunks.lance/_versions/") for p in self.memory_files())


class HubUnavailable(FunesError):
    """The Hub could not be reached (connection refused, timeout, 5xx)."""


def token() -> str | None:
    # lazy: huggingface_hub stays off fast commands' start-up
    from huggingface_hub import get_token

    return get_token()


def api() -> Any:
    # lazy: huggingface_hub stays off fast commands' start-up
    from huggingface_hub import HfApi

    return HfApi()


def status_of(exc: BaseException) -> int | None:
    resp = getattr(exc, "response", None)
    code = getattr(resp, "status_code", None)
    return int(code) if isinstance(code, int) else None


def request_errors() -> tuple[type[BaseException], ...]:
    """What a huggingface_hub call raises when the Hub refuses a request or cannot be reached:
    OSError (connection refused, timeouts, offline mode, a file it could not fetch — and
    ``HfHubHTTPError``, which is one), its HTTP client's errors (httpx2's in 2.x, httpx's before:
    found through ``HfHubHTTPError`` rather than imported by name) and hf_xet's download failure.
    Anything else is a bug, and is not caught as a refusal."""
    # lazy: huggingface_hub only to talk to the Hub
    from huggingface_hub import errors

    client = [
        c
        for c in errors.HfHubHTTPError.__mro__
        if c.__name__ == "HTTPError" and c.__module__.split(".")[0] in ("httpx", "httpx2")
    ]
    xet = [errors.XetDownloadError] if hasattr(errors, "XetDownloadError") else []
    return (OSError, *client, *xet)


def offline_error(exc: BaseException) -> bool:
    """Connect errors, timeouts and 5xx: the Hub is unreachable, not the repo missing."""
    if isinstance(exc, TimeoutError | ConnectionError):
        return True
    # huggingface_hub's HTTP client (httpx2 in 2.x, httpx before): match its transport errors
    # by name rather than import a particular client.
    for cls in type(exc).__mro__:
        if cls.__name__ in ("TransportError", "NetworkError", "TimeoutException") and (
            cls.__module__.split(".")[0] in ("httpx", "httpx2", "requests", "urllib3")
        ):
            return True
    try:
        # lazy: huggingface_hub only to talk to the Hub
        from huggingface_hub.errors import OfflineModeIsEnabled

        if isinstance(exc, OfflineModeIsEnabled):
            return True
    except ImportError:  # pragma: no cover
        pass
    code = status_of(exc)
    return code in (500, 502, 503, 504)


def probe(spec: MemorySpec, timeout: float = PROBE_TIMEOUT) -> RemoteInfo:
    """One request: repo info at `main` with file metadata → the memory's state."""
    # lazy: huggingface_hub stays off fast commands' start-up
    from huggingface_hub.errors import RevisionNotFoundError

    try:
        info = api().dataset_info(
            spec.repo_id, revision="main", files_metadata=True, timeout=timeout
        )
    except RevisionNotFoundError:
        return RemoteInfo(spec, State.EMPTY)
    except request_errors() as e:
        if offline_error(e):
            return RemoteInfo(spec, State.OFFLINE, detail=_short(e))
        known = access_state(e)
        if known is None:
            raise
        return RemoteInfo(spec, known[0], detail=known[1])
    files: dict[str, tuple[str, int]] = {}
    for s in info.siblings or []:
        lfs = getattr(s, "lfs", None)
        etag = (lfs.get("sha256") if isinstance(lfs, dict) else getattr(lfs, "sha256", None)) or (
            s.blob_id or ""
        )
        files[s.rfilename] = (etag, int(s.size or 0))
    last = info.last_modified.isoformat() if getattr(info, "last_modified", None) else None
    out = RemoteInfo(spec, State.READY, info.sha, bool(info.private), last, files)
    if not out.has_index:
        out.state = State.EMPTY
    return out


def access_state(exc: BaseException) -> tuple[State, str] | None:
    """What a refused request says of the dataset, as a state and its detail, or None.

    Repo not found (404) → missing (or private to others); 401 → unauthorized (without a
    token the Hub answers a missing and a private dataset alike; with one, it was rejected);
    403 → unauthorized, the dataset there but this token without access to it."""
    code = status_of(exc)
    if code == 401:
        return State.UNAUTHORIZED, TOKEN_REJECTED if token() else ""
    if code == 403:
        return State.UNAUTHORIZED, _forbidden(exc)
    # lazy: huggingface_hub only to talk to the Hub
    from huggingface_hub.errors import RepositoryNotFoundError

    if isinstance(exc, RepositoryNotFoundError):
        return State.MISSING, ""
    return None


def _forbidden(e: BaseException) -> str:
    # lazy: huggingface_hub only to talk to the Hub
    from huggingface_hub.errors import GatedRepoError

    return "it is gated" if isinstance(e, GatedRepoError) else "403 Forbidden"


def _short(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0][:200] if text else type(e).__name__


# ---------------------------------------------------------------------------- downloads


def cache_repo_dir(repo_id: str) -> Path:
    # lazy: huggingface_hub stays off fast commands' start-up
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE) / f"datasets--{repo_id.replace('/', '--')}"


def snapshot_dir(repo_id: str, commit: str) -> Path:
    return cache_repo_dir(repo_id) / "snapshots" / commit


def download(
    spec: MemorySpec, commit: str, files: dict[str, tuple[str, int]], threads: int = 4
) -> Path:
    """Put ``files`` (paths in the repo → etag, size) of ``commit`` into the HF hub cache and
    return the snapshot dir. A file whose blob is already cached (same etag, e.g. from an older
    commit — memory files never change once written) is linked without a request; the others are
    downloaded with ``hf_hub_download`` pinned to the commit."""
    # lazy: huggingface_hub stays off fast commands' start-up
    from huggingface_hub import hf_hub_download

    snap = snapshot_dir(spec.repo_id or "", commit)
    blobs = cache_repo_dir(spec.repo_id or "") / "blobs"
    todo = []
    for path, (etag, size) in files.items():
        pointer = snap / path
        if pointer.exists():
            continue
        blob = blobs / etag if etag else None
        if blob is not None and blob.is_file() and blob.stat().st_size == size:
            pointer.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.symlink(os.path.relpath(blob, pointer.parent), pointer)
                continue
            except FileExistsError:
                continue
            except OSError:
                pass
        todo.append(path)

    def fetch(path: str) -> None:
        hf_hub_download(spec.repo_id or "", path, repo_type=REPO_TYPE, revision=commit)

    if todo:
        with ThreadPoolExecutor(max(1, min(threads, len(todo)))) as pool:
            list(pool.map(fetch, todo))
    return snap


def fetch_text(spec: MemorySpec, path: str, commit: str) -> str | None:
    """One small file at a commit (None if it does not exist)."""
    # lazy: huggingface_hub stays off fast commands' start-up
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError

    try:
        p = hf_hub_download(spec.repo_id or "", path, repo_type=REPO_TYPE, revision=commit)
    except EntryNotFoundError:
        return None
    return Path(p).read_text(encoding="utf-8")


# ---------------------------------------------------------------------------- writes


class CommitConflict(FunesError):
    """The branch moved since the parent commit we built on (HTTP 409/412)."""


class ReadOnly(FunesError):
    """The token cannot write to this repo (HTTP 403)."""


def read_only_message(spec: MemorySpec) -> str:
    return (
        f"{spec.uri} is read-only for your token — recall can read it, but publishing needs "
        "write access (check your HF token)"
    )


def whoami() -> dict[str, Any]:
    try:
        return dict(api().whoami())
    except request_errors() as e:
        if offline_error(e):
            raise HubUnavailable(f"the Hub is unreachable ({_short(e)})") from None
        if status_of(e) == 401:
            raise FunesError(
                "the Hub rejected your token — set a valid HF_TOKEN (or run `hf auth login`)"
            ) from None
        raise


def create_repo(spec: MemorySpec) -> None:
    """Create the dataset repo, private (only ever with the user's consent)."""
    try:
        api().create_repo(spec.repo_id, repo_type=REPO_TYPE, private=True, exist_ok=True)
    except request_errors() as e:
        if status_of(e) == 403:
            raise FunesError(
                f"your token cannot create {spec.repo_id} — check the owner name and that the "
                "token has write access to it"
            ) from None
        raise


def commit(
    spec: MemorySpec,
    add: Iterable[tuple[str, bytes | Path]],
    delete: Sequence[str],
    message: str,
    parent: str | None,
) -> str:
    """One commit to `main` guarded by ``parent``; returns the new commit id."""
    # lazy: huggingface_hub stays off fast commands' start-up
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    ops: list[Any] = [
        CommitOperationAdd(p, str(src) if isinstance(src, Path) else src) for p, src in add
    ]
    ops += [CommitOperationDelete(p) for p in delete]
    try:
        info = api().create_commit(
            spec.repo_id,
            ops,
            commit_message=message,
            repo_type=REPO_TYPE,
            revision="main",
            parent_commit=parent,
        )
    except request_errors() as e:
        code = status_of(e)
        if code in (409, 412):
            raise CommitConflict(f"{spec.uri} moved while pushing") from None
        if code == 403:
            raise ReadOnly(read_only_message(spec)) from None
        if offline_error(e):
            raise HubUnavailable(f"the Hub is unreachable ({_short(e)})") from None
        raise
    return str(info.oid)
