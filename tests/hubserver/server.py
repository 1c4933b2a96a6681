"""A small Hub-compatible HTTP server on 127.0.0.1 for the push / remote-recall tests.

It speaks the subset of the Hugging Face Hub API that huggingface_hub 2.x uses for repo
creation, commits, listing and downloads: whoami, create repo (409 if it
exists), settings, repo info (`sha`, `private`, `siblings`), preupload (`regular` for every file,
so the LFS/xet paths are never taken — or, with ``HubServer(lfs=True)``, `lfs` where the Hub
says so: files the repo's .gitattributes marks, files over 10 MB and binary ones, uploaded by the
LFS batch API's basic transfer: the client must run with HF_HUB_DISABLE_XET=1, this server speaks
no Xet), NDJSON commits with base64 files, `lfsFile` entries and `parentCommit` (412 when it
is not the head), recursive tree listing, commits, paths-info, refs (with the `converts` of a
dataset: `refs/convert/parquet`, see ``convert()``), and `resolve` with
`X-Repo-Commit`/`ETag`/`Content-Length` and `Range` → 206. Tree, repo info and resolve answer
at any revision: `main`, a commit id (of any branch) or `refs/convert/<name>` (url-quoted).

Access control follows the Hub: a private repo answers 401 without a token and 404 (RepoNotFound)
to another user's token; a read-only token gets 403 on any write. Request bodies are consumed
even on errors. Every request is logged (method, path, status, bytes in/out) so tests can assert
"no HTTP request" or count uploaded bytes. Repos live in memory; each commit is a full snapshot
(path → bytes, shared between commits).

    hub = HubServer(); hub.start()
    hub.add_user("ana", token="hf_ana", orgs=["team"])
    env = {"HF_ENDPOINT": hub.url, "HF_TOKEN": "hf_ana"}
    ...
    hub.stop()
"""

from __future__ import annotations

import base64
import fnmatch
import hashlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

REPO_TYPES = {"datasets": "dataset", "models": "model", "spaces": "space"}
GITATTRIBUTES = b"*.lance filter=lfs diff=lfs merge=lfs -text\n"
LFS_SIZE = 10_000_000  # the Hub takes a file this large by LFS, whatever its name
LFS_UPLOAD = "lfs-upload"  # /lfs-upload/<sha256>: where the batch API sends a client's PUT
LFS_BATCH = ["info", "lfs", "objects", "batch"]  # after /{datasets/}OWNER/NAME.git/


class Blob(bytes):
    """A committed file's content, which keeps its blob id once computed: the Hub stores it,
    and hashing every file anew for each repo info (siblings with blob ids) took seconds for a
    1M-chunk memory's 1.9 GB, past the clients' 5 s reachability probe."""

    oid: str | None = None


def git_oid(data: bytes) -> str:
    """The git blob id of ``data`` (what the Hub reports as a regular file's oid and ETag)."""
    if isinstance(data, Blob) and data.oid is not None:
        return data.oid
    h = hashlib.sha1(b"blob %d\0" % len(data))
    h.update(data)
    oid = h.hexdigest()
    if isinstance(data, Blob):
        data.oid = oid
    return oid


@dataclass
class User:
    name: str
    token: str
    orgs: list[str]
    role: str  # "write" | "read"


@dataclass
class Commit:
    oid: str
    parent: str | None
    title: str
    message: str
    date: str
    author: str
    files: dict[str, bytes]


@dataclass
class Repo:
    type: str
    id: str
    private: bool
    commits: list[Commit] = field(default_factory=list)
    # Convert refs (`refs/convert/<name>`): the Hub's own branches of derived files, e.g. the
    # dataset viewer's parquet conversion. Name → that branch's commits, oldest first.
    converts: dict[str, list[Commit]] = field(default_factory=dict)

    @property
    def owner(self) -> str:
        return self.id.split("/", 1)[0]

    @property
    def head(self) -> Commit:
        return self.commits[-1]

    def at(self, rev: str) -> Commit | None:
        if rev in ("main", "refs/heads/main"):
            return self.head
        if rev.startswith("refs/convert/"):
            branch = self.converts.get(rev.removeprefix("refs/convert/"))
            return branch[-1] if branch else None
        for c in [*self.commits, *(c for b in self.converts.values() for c in b)]:
            if c.oid == rev or (len(rev) >= 7 and c.oid.startswith(rev)):
                return c
        return None


@dataclass
class RequestRecord:
    method: str
    path: str
    status: int
    bytes_in: int
    bytes_out: int
    user: str | None


class HubError(Exception):
    def __init__(self, status: int, code: str | None = None, message: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message or code or str(status)


class HubServer:
    """The server and its state; ``start()`` serves from a daemon thread."""

    def __init__(self, port: int = 0, lfs: bool = False) -> None:
        self.users: dict[str, User] = {}
        self.repos: dict[tuple[str, str], Repo] = {}
        # Answer preupload as the Hub does (LFS for large, binary and .gitattributes-marked
        # files) instead of `regular` for all: a client then streams those files from disk
        # rather than base64 in the commit's body.
        self.lfs = lfs
        self.lfs_objects: dict[str, bytes] = {}  # sha256 → content, uploaded, not yet committed
        self.log: list[RequestRecord] = []
        self.lock = threading.RLock()
        self.commit_delay = 0.0  # seconds to hold a commit open (to force races in tests)
        # Hold every commit until this many commit requests have arrived (a deterministic race:
        # all of them were built on the same head, so all but the first get 412).
        self.commit_barrier = 0
        self._arrived = 0
        # Called with each request's path before it is answered, while the client waits for it
        # (a test reads the client's memory high-water mark at its preupload, say).
        self.on_request: Callable[[str], None] | None = None
        self._cond = threading.Condition()
        self._port = port
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> HubServer:
        server = self

        class Handler(_Handler):
            hub = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", self._port), Handler)
        self._httpd.daemon_threads = True
        self._port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    # ------------------------------------------------------------------ test helpers

    def add_user(
        self, name: str, token: str, orgs: list[str] | None = None, role: str = "write"
    ) -> User:
        u = User(name, token, list(orgs or []), role)
        self.users[token] = u
        return u

    def create_repo(self, repo_id: str, private: bool = False, type: str = "dataset") -> Repo:
        with self.lock:
            repo = Repo(type, repo_id, private)
            repo.commits.append(
                _commit(None, "initial commit", "", "system", {".gitattributes": GITATTRIBUTES})
            )
            self.repos[(type, repo_id)] = repo
            return repo

    def convert(
        self, repo_id: str, files: dict[str, bytes], name: str = "parquet", type: str = "dataset"
    ) -> Commit:
        """A new commit on the repo's ``refs/convert/<name>`` branch holding exactly ``files``
        (what the Hub's parquet conversion of a dataset does); returns it."""
        with self.lock:
            branch = self.repo(repo_id, type).converts.setdefault(name, [])
            c = _commit(
                branch[-1].oid if branch else None, f"Update {name} files", "",
                "parquet-converter", dict(files),
            )  # fmt: skip
            branch.append(c)
            return c

    def repo(self, repo_id: str, type: str = "dataset") -> Repo:
        return self.repos[(type, repo_id)]

    def files(self, repo_id: str, rev: str = "main", type: str = "dataset") -> dict[str, bytes]:
        c = self.repo(repo_id, type).at(rev)
        assert c is not None
        return dict(c.files)

    def clear_log(self) -> None:
        with self.lock:
            self.log.clear()

    def requests(self) -> list[RequestRecord]:
        with self.lock:
            return list(self.log)

    def uploaded_bytes(self) -> int:
        """Request body bytes of commit calls and LFS uploads (what a push sent)."""
        return sum(
            r.bytes_in
            for r in self.requests()
            if "/commit/" in r.path or r.path.startswith(f"/{LFS_UPLOAD}/")
        )


def _commit(
    parent: str | None, title: str, message: str, author: str, files: dict[str, bytes]
) -> Commit:
    seed = f"{parent}:{title}:{time.time_ns()}:{sorted(files)}".encode()
    oid = hashlib.sha1(seed).hexdigest()
    date = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    files = {p: d if isinstance(d, Blob) else Blob(d) for p, d in files.items()}
    return Commit(oid, parent, title, message, date, author, files)


class _Handler(BaseHTTPRequestHandler):
    hub: HubServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    # ------------------------------------------------------------------ plumbing

    def _body(self) -> bytes:
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            return self.rfile.read(n)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = bytearray()
            while True:
                size = int(self.rfile.readline().strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                out += self.rfile.read(size)
                self.rfile.readline()
            return bytes(out)
        return b""

    def _user(self) -> User | None:
        auth = self.headers.get("Authorization", "")
        if auth.lower().startswith("bearer "):
            return self.hub.users.get(auth[7:].strip(), User("?", "?", [], "invalid"))
        return None

    def _handle(self, method: str) -> None:
        body = self._body()  # always consumed, even when we answer with an error
        if self.hub.on_request is not None:
            self.hub.on_request(self.path)
        user = self._user()
        status, headers, payload = 500, {}, b""
        try:
            if user is not None and user.role == "invalid":
                raise HubError(401, None, "Invalid credentials in Authorization header")
            status, headers, payload = self._route(method, body, user)
        except HubError as e:
            status = e.status
            headers = {"X-Error-Message": e.message}
            if e.code:
                headers["X-Error-Code"] = e.code
            payload = json.dumps({"error": e.message}).encode()
            headers["Content-Type"] = "application/json"
        except Exception as e:  # a bug in the test server: say so loudly
            status, payload = 500, json.dumps({"error": repr(e)}).encode()
            headers = {"Content-Type": "application/json"}
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        if "Content-Length" not in headers:
            self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if method != "HEAD":
            self.wfile.write(payload)
        with self.hub.lock:
            self.hub.log.append(
                RequestRecord(
                    method,
                    self.path,
                    status,
                    len(body),
                    0 if method == "HEAD" else len(payload),
                    user.name if user else None,
                )
            )

    def do_GET(self) -> None:
        self._handle("GET")

    def do_HEAD(self) -> None:
        self._handle("HEAD")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    # ------------------------------------------------------------------ routing

    def _route(
        self, method: str, body: bytes, user: User | None
    ) -> tuple[int, dict[str, str], bytes]:
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        parts = [unquote(p) for p in url.path.split("/") if p]
        if parts[:2] == ["api", "whoami-v2"]:
            return self._whoami(user)
        if parts[:2] == ["api", "validate-yaml"]:
            return _json({"errors": [], "warnings": []})
        if parts[:3] == ["api", "repos", "create"] and method == "POST":
            return self._create(json.loads(body or b"{}"), user)
        if len(parts) == 2 and parts[0] == LFS_UPLOAD and method == "PUT":
            return self._lfs_put(parts[1], body)
        if len(parts) >= 4 and parts[0] == "api" and parts[1] in REPO_TYPES:
            rtype, repo_id, rest = REPO_TYPES[parts[1]], f"{parts[2]}/{parts[3]}", parts[4:]
            return self._api(method, rtype, repo_id, rest, query, body, user)
        # /{datasets/|spaces/|}{owner}/{name}/resolve/{rev}/{path}
        if parts and parts[0] in REPO_TYPES:
            rtype, parts = REPO_TYPES[parts[0]], parts[1:]
        else:
            rtype = "model"
        if parts[1:2] and parts[1].endswith(".git") and parts[2:] == LFS_BATCH and method == "POST":
            repo_id = f"{parts[0]}/{parts[1][: -len('.git')]}"
            return self._lfs_batch(rtype, repo_id, json.loads(body or b"{}"), user)
        if len(parts) >= 5 and parts[2] == "resolve":
            # Revisions may be url-quoted with slashes inside (refs%2Fconvert%2F…): re-split raw.
            raw = [p for p in url.path.split("/") if p]
            if raw[0] in REPO_TYPES:
                raw = raw[1:]
            rev = unquote(raw[3])
            path = "/".join(unquote(p) for p in raw[4:])
            return self._resolve(method, rtype, f"{parts[0]}/{parts[1]}", rev, path, user)
        raise HubError(404, None, f"no route for {url.path}")

    def _whoami(self, user: User | None) -> tuple[int, dict[str, str], bytes]:
        if user is None:
            raise HubError(401, None, "Invalid credentials in Authorization header")
        return _json(
            {
                "type": "user",
                "name": user.name,
                "fullname": user.name,
                "orgs": [{"name": o, "type": "org"} for o in user.orgs],
                "auth": {
                    "type": "access_token",
                    "accessToken": {"displayName": "test", "role": user.role},
                },
            }
        )

    def _create(self, body: dict[str, Any], user: User | None) -> tuple[int, dict[str, str], bytes]:
        if user is None:
            raise HubError(401, None, "Invalid credentials in Authorization header")
        owner = body.get("organization") or user.name
        if user.role != "write" or (owner != user.name and owner not in user.orgs):
            raise HubError(403, None, "You don't have the rights to create a repo here")
        rtype = body.get("type") or "model"
        repo_id = f"{owner}/{body['name']}"
        private = body.get("visibility") == "private" or bool(body.get("private"))
        prefix = "" if rtype == "model" else f"{rtype}s/"
        with self.hub.lock:
            if (rtype, repo_id) in self.hub.repos:
                return (
                    409,
                    {"Content-Type": "application/json"},
                    json.dumps(
                        {
                            "error": "You already created this repo",
                            "url": f"{self.hub.url}/{prefix}{repo_id}",
                        }
                    ).encode(),
                )
            self.hub.create_repo(repo_id, private, rtype)
        return _json({"url": f"{self.hub.url}/{prefix}{repo_id}", "name": repo_id})

    def _repo(self, rtype: str, repo_id: str, user: User | None, write: bool = False) -> Repo:
        repo = self.hub.repos.get((rtype, repo_id))
        member = user is not None and (
            user.name == repo_id.split("/")[0] or repo_id.split("/")[0] in user.orgs
        )
        if repo is None:
            if user is None:
                raise HubError(401, "RepoNotFound", "Repository not found")
            raise HubError(404, "RepoNotFound", "Repository not found")
        if repo.private and not member:
            if user is None:
                raise HubError(401, "RepoNotFound", "Repository not found")
            raise HubError(404, "RepoNotFound", "Repository not found")
        if write:
            if user is None:
                raise HubError(401, None, "Invalid credentials in Authorization header")
            if not member or user.role != "write":
                raise HubError(
                    403, None, "You don't have write access to this repo (read-only token)"
                )
        return repo

    def _rev(self, repo: Repo, rev: str) -> Commit:
        c = repo.at(rev)
        if c is None:
            raise HubError(404, "RevisionNotFound", f"Invalid rev id: {rev}")
        return c

    def _api(
        self,
        method: str,
        rtype: str,
        repo_id: str,
        rest: list[str],
        query: dict[str, list[str]],
        body: bytes,
        user: User | None,
    ) -> tuple[int, dict[str, str], bytes]:
        verb = rest[0] if rest else ""
        if verb == "settings" and method == "PUT":
            repo = self._repo(rtype, repo_id, user, write=True)
            doc = json.loads(body or b"{}")
            if "visibility" in doc:
                repo.private = doc["visibility"] == "private"
            if "private" in doc:
                repo.private = bool(doc["private"])
            return _json({"private": repo.private})
        write = verb in ("commit", "preupload")
        with self.hub.lock:
            repo = self._repo(rtype, repo_id, user, write=write)
        if verb in ("", "revision"):
            commit = self._rev(repo, "/".join(rest[1:]) if verb else "main")
            blobs = query.get("blobs", ["false"])[0].lower() in ("1", "true")
            siblings = []
            for p, data in sorted(commit.files.items()):
                s: dict[str, Any] = {"rfilename": p}
                if blobs:
                    s.update(blobId=git_oid(data), size=len(data))
                siblings.append(s)
            return _json(
                {
                    "_id": repo_id,
                    "id": repo_id,
                    "author": repo.owner,
                    "sha": commit.oid,
                    "private": repo.private,
                    "gated": False,
                    "disabled": False,
                    "downloads": 0,
                    "likes": 0,
                    "tags": [],
                    "siblings": siblings,
                    "lastModified": commit.date,
                    "createdAt": repo.commits[0].date,
                }
            )
        if verb == "refs":
            converts = [
                {"name": name, "ref": f"refs/convert/{name}", "targetCommit": b[-1].oid}
                for name, b in sorted(repo.converts.items())
                if b
            ]
            return _json(
                {
                    "branches": [
                        {"name": "main", "ref": "refs/heads/main", "targetCommit": repo.head.oid}
                    ],
                    "tags": [],
                    "converts": converts,
                }
            )
        if verb == "preupload":
            doc = json.loads(body or b"{}")
            commit = self._rev(repo, "/".join(rest[1:]))
            files = []
            for f in doc.get("files", []):
                have = commit.files.get(f["path"])
                files.append(
                    {
                        "path": f["path"],
                        "uploadMode": "lfs" if self._is_lfs(commit, f) else "regular",
                        "shouldIgnore": False,
                        "oid": git_oid(have) if have is not None else None,
                    }
                )
            return _json({"files": files, "commitOid": commit.oid})
        if verb == "commit" and method == "POST":
            return self._commit(repo, "/".join(rest[1:]), body, user)
        if verb == "tree":
            commit = self._rev(repo, rest[1])
            base = "/".join(rest[2:]).strip("/")
            recursive = query.get("recursive", ["false"])[0].lower() in ("1", "true")
            return _json(_tree(commit.files, base, recursive))
        if verb == "commits":
            commit = self._rev(repo, "/".join(rest[1:]))
            chain = []
            by_oid = {c.oid: c for c in repo.commits}
            c: Commit | None = commit
            while c is not None:
                chain.append(
                    {
                        "id": c.oid,
                        "title": c.title,
                        "message": c.message,
                        "date": c.date,
                        "authors": [{"user": c.author}],
                    }
                )
                c = by_oid.get(c.parent) if c.parent else None
            return _json(chain)
        if verb == "paths-info" and method == "POST":
            commit = self._rev(repo, "/".join(rest[1:]))
            ctype = self.headers.get("Content-Type", "")
            if "json" in ctype:
                paths = json.loads(body or b"{}").get("paths", [])
            else:
                paths = parse_qs(body.decode()).get("paths", [])
            out = []
            for p in paths:
                p = p.strip("/")
                if p in commit.files:
                    d = commit.files[p]
                    out.append({"type": "file", "path": p, "oid": git_oid(d), "size": len(d)})
                elif any(f.startswith(p + "/") for f in commit.files):
                    out.append(
                        {"type": "directory", "path": p, "oid": _dir_oid(commit, p), "size": 0}
                    )
            return _json(out)
        raise HubError(404, None, f"no api route {verb}")

    def _commit(
        self, repo: Repo, rev: str, body: bytes, user: User | None
    ) -> tuple[int, dict[str, str], bytes]:
        lines = [json.loads(line) for line in body.splitlines() if line.strip()]
        header = next((x["value"] for x in lines if x.get("key") == "header"), {})
        if self.hub.commit_delay:
            time.sleep(self.hub.commit_delay)
        if self.hub.commit_barrier:
            with self.hub._cond:
                self.hub._arrived += 1
                self.hub._cond.notify_all()
                self.hub._cond.wait_for(
                    lambda: self.hub._arrived >= self.hub.commit_barrier, timeout=60
                )
        with self.hub.lock:
            base = self._rev(repo, rev)
            if base is not repo.head:
                raise HubError(400, None, "commits are only accepted on the branch head")
            parent = header.get("parentCommit")
            if parent and parent != repo.head.oid:
                raise HubError(
                    412, None, "A commit has happened since. Please refresh and try again."
                )
            files = dict(repo.head.files)
            for item in lines:
                key, v = item.get("key"), item.get("value", {})
                if key == "file":
                    data = v.get("content", "")
                    files[v["path"]] = (
                        base64.b64decode(data) if v.get("encoding") == "base64" else data.encode()
                    )
                elif key == "deletedFile":
                    if v["path"] not in files:
                        raise HubError(404, "EntryNotFound", "A file with this name doesn't exist")
                    del files[v["path"]]
                elif key == "deletedFolder":
                    prefix = v["path"].rstrip("/") + "/"
                    for p in [p for p in files if p.startswith(prefix)]:
                        del files[p]
                elif key == "lfsFile":
                    data = self.hub.lfs_objects.get(v.get("oid", ""))
                    if not self.hub.lfs or data is None or len(data) != v.get("size"):
                        raise HubError(400, None, f"no LFS object uploaded for {v.get('path')}")
                    files[v["path"]] = data
            c = _commit(
                repo.head.oid,
                header.get("summary", ""),
                header.get("description", ""),
                user.name if user else "?",
                files,
            )
            repo.commits.append(c)
        prefix = "" if repo.type == "model" else f"{repo.type}s/"
        return _json(
            {
                "success": True,
                "commitOid": c.oid,
                "commitUrl": f"{self.hub.url}/{prefix}{repo.id}/commit/{c.oid}",
                "hookOutput": "",
            }
        )

    def _is_lfs(self, commit: Commit, f: dict[str, Any]) -> bool:
        """The Hub's choice for a file to upload: LFS when .gitattributes marks it, when it is
        over 10 MB, or when its 512-byte sample is binary (a NUL byte)."""
        if not self.hub.lfs:
            return False
        path = f["path"]
        for line in commit.files.get(".gitattributes", b"").decode().splitlines():
            pattern, *attrs = line.split()
            if "filter=lfs" in attrs and (
                fnmatch.fnmatch(path, pattern) or fnmatch.fnmatch(path.rsplit("/", 1)[-1], pattern)
            ):
                return True
        sample = base64.b64decode(f.get("sample") or "")
        return int(f.get("size") or 0) > LFS_SIZE or b"\0" in sample

    def _lfs_batch(
        self, rtype: str, repo_id: str, doc: dict[str, Any], user: User | None
    ) -> tuple[int, dict[str, str], bytes]:
        """The LFS batch API, uploads only, basic transfer: where to PUT each object not stored
        yet (an object already stored gets no action, as on the Hub)."""
        with self.hub.lock:
            self._repo(rtype, repo_id, user, write=True)
        if not self.hub.lfs:
            raise HubError(400, None, "LFS is not enabled on this test server")
        if doc.get("operation") != "upload" or "basic" not in doc.get("transfers", ["basic"]):
            raise HubError(400, None, "only uploads by the basic transfer")
        out = []
        for o in doc.get("objects", []):
            obj: dict[str, Any] = {"oid": o["oid"], "size": o["size"], "authenticated": True}
            if o["oid"] not in self.hub.lfs_objects:
                obj["actions"] = {"upload": {"href": f"{self.hub.url}/{LFS_UPLOAD}/{o['oid']}"}}
            out.append(obj)
        return _json({"transfer": "basic", "objects": out})

    def _lfs_put(self, oid: str, body: bytes) -> tuple[int, dict[str, str], bytes]:
        if hashlib.sha256(body).hexdigest() != oid:
            raise HubError(400, None, "the uploaded content does not match its sha256")
        with self.hub.lock:
            self.hub.lfs_objects[oid] = Blob(body)
        return 200, {}, b""

    def _resolve(
        self, method: str, rtype: str, repo_id: str, rev: str, path: str, user: User | None
    ) -> tuple[int, dict[str, str], bytes]:
        with self.hub.lock:
            repo = self._repo(rtype, repo_id, user)
        commit = self._rev(repo, rev)
        data = commit.files.get(path)
        if data is None:
            raise HubError(404, "EntryNotFound", f"{path} does not exist at {rev}")
        oid = git_oid(data)
        headers = {
            "X-Repo-Commit": commit.oid,
            "ETag": f'"{oid}"',
            "Accept-Ranges": "bytes",
            "Content-Type": "application/octet-stream",
        }
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes="):
            start_s, _, end_s = rng[6:].partition("-")
            if start_s == "":
                start, end = max(0, len(data) - int(end_s)), len(data) - 1
            else:
                start = int(start_s)
                end = int(end_s) if end_s else len(data) - 1
            end = min(end, len(data) - 1)
            if start >= len(data) and len(data) > 0:
                raise HubError(416, None, "Range not satisfiable")
            part = data[start : end + 1]
            headers["Content-Range"] = f"bytes {start}-{end}/{len(data)}"
            headers["Content-Length"] = str(len(part))
            return 206, headers, part
        headers["Content-Length"] = str(len(data))
        return 200, headers, data


def _json(doc: Any, status: int = 200) -> tuple[int, dict[str, str], bytes]:
    return status, {"Content-Type": "application/json"}, json.dumps(doc).encode()


def _dir_oid(commit: Commit, base: str) -> str:
    h = hashlib.sha1()
    for p in sorted(commit.files):
        if p.startswith(base + "/"):
            h.update(p.encode() + git_oid(commit.files[p]).encode())
    return h.hexdigest()


def _tree(files: dict[str, bytes], base: str, recursive: bool) -> list[dict[str, Any]]:
    prefix = base + "/" if base else ""
    if base and base in files:
        d = files[base]
        return [{"type": "file", "path": base, "oid": git_oid(d), "size": len(d)}]
    entries: dict[str, dict[str, Any]] = {}
    for p, d in sorted(files.items()):
        if not p.startswith(prefix):
            continue
        rel = p[len(prefix) :].split("/")
        # every directory on the way (recursive) or the first level only
        for depth in range(1, len(rel)):
            dpath = prefix + "/".join(rel[:depth])
            if dpath not in entries and (recursive or depth == 1):
                entries[dpath] = {"type": "directory", "path": dpath, "oid": "0" * 40, "size": 0}
        if recursive or len(rel) == 1:
            entries[p] = {"type": "file", "path": p, "oid": git_oid(d), "size": len(d)}
    if base and not entries:
        raise HubError(404, "EntryNotFound", f"{base} does not exist")
    return list(entries.values())
