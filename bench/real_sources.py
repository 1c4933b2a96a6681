"""Real transcripts from public repositories, restored at run time and read by a bare sweep.

    .venv/bin/python -m bench real-sources [--agent A] [--repo OWNER/NAME] [--from DIR ...]
    .venv/bin/python bench/real_sources.py                 # the same
    .venv/bin/python bench/real_sources.py --restore-only DIR   # lay the files out in DIR

Why here and not in tests/: the files come out of snapshots of public repositories (the search
tool's ``fetch``, into ``/work/.mirror``), and the workplace's rules say nothing a snapshot holds
is committed here, whatever its licence. So only metadata is committed: each line of
``bench/real_sources.jsonl`` names ``agent, repo, commit, path, sha256, licence`` (``none`` when
the repository carries no licence file; the file is only read on this machine). For each line
this writes ``git show COMMIT:PATH`` of that repository's git directory under every ``--from``
DIR (default ``/work/.mirror``, laid out ``OWNER+NAME/repo``; a clone at ``DIR/OWNER/NAME`` works
too) into a temporary home, where the agent keeps it, and keeps it only when its sha256 matches.
A file that cannot be restored is reported ``missing``, not failed. Each restored file is swept
bare (``funes.sources.sweep`` of that home) and checked against what the raw file says, worked
out here from the documented format, not copied from funes' output:

- Gemini CLI (the older whole-session JSON): the turn ids are the ids of the ``user`` and
  ``gemini`` messages that hold content, in order; the session id is ``sessionId`` (what
  ``gemini --resume`` takes); one ``tool_use`` per ``toolCalls[]`` element and one
  ``tool_result`` per call with a result; the ``info`` / ``error`` / ``warning`` notices are
  counted as ignored.
- OpenClaw (pi's JSONL, live transcripts and ``.jsonl.reset.<ts>`` archives): the turn ids are
  the ids of the ``message`` records holding text, thinking or a tool call; the session id is the
  header's ``id``; one ``tool_use`` per ``toolCall`` part, one ``tool_result`` per tool result
  with text.

and every record must be explained (``funes.sources.coverage``: no unexplained kinds, no
skipped lines, no error). One line per file: ``ok``, ``failed: …`` or ``missing: …``; the exit
status is 1 when a check failed, 0 otherwise (missing files included).

Each listed file was checked with ``/work/shared/eval-reserved/check OWNER/NAME FILE…`` first;
none of what it reports reserved is listed. Listed: every Gemini CLI session JSON of
mischa-thisness/M-Gemini (87, CC0-1.0) and every OpenClaw transcript and reset archive in an
``agents/<agentId>/sessions/`` directory of the mirrored repositories (1,402 from 30 of them),
as of their snapshots' HEAD; files of 4 MiB and more are absent from snapshots and not listed.

Agents without a real transcript, whose tests use fixtures built from the documented format
(their own test modules): Gemini CLI's JSONL form (introduced April 2026), GitHub Copilot CLI,
OpenCode, Cursor, Qwen Code, Cline, Roo Code, Kilo Code and omp. Searched: the code index for
each format's distinctive records (``"$rewindTo"``, ``{"$set":{"lastUpdated"``,
``"projectHash"`` metadata lines, ``session.start`` events with ``copilot-agent``,
``api_conversation_history.json`` and ``ui_messages.json`` at any path, ``events.jsonl`` beside
``workspace.yaml``, ``.omp/agent``, ``agent-transcripts``, ``opencode.db`` / ``kilo.db`` /
``state.vscdb``); the repositories named ``*copilot-session*``, ``*transcripts*``,
``*session-logs*``; and every repository mirrored on this machine (their HEAD trees, for
``chats/``, ``session-state/``, ``agent-transcripts/``, ``.qwen/``, ``.omp/``, task directories
and the databases). What turned up was test data of other parsers (vshulcz/deja-vu's
``fixtures/registry``) or repositories reserved for evaluation.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from funes import sources
from funes.sources import FileStats

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "real_sources.jsonl"
AGENTS = ("gemini", "openclaw")


@dataclass(frozen=True)
class Entry:
    agent: str
    repo: str
    commit: str
    path: str
    sha256: str
    licence: str

    @property
    def name(self) -> str:
        return f"{self.agent} {self.repo} {self.path}"


def entries(manifest: Path = MANIFEST) -> list[Entry]:
    lines = manifest.read_text(encoding="utf-8").splitlines()
    return [Entry(**json.loads(x)) for x in lines if x.strip()]


# ---------------------------------------------------------------------------- restore


def git_dirs(roots: list[Path], repo: str) -> list[Path]:
    """Git directories of ``repo`` under each root: a fetched snapshot or a plain clone."""
    owner, name = repo.split("/", 1)
    found = []
    for r in roots:
        for cand in (r / f"{owner}+{name}" / "repo", r / f"{owner}+{name}", r / owner / name):
            if (cand / ".git").exists():
                found.append(cand / ".git")
            elif (cand / "HEAD").exists():
                found.append(cand)
    return found


def restore(e: Entry, roots: list[Path]) -> tuple[bytes | None, str]:
    """The file's bytes when some git directory holds them at the commit with the right sha256,
    else None and why not."""
    dirs = git_dirs(roots, e.repo)
    if not dirs:
        return None, f"no git directory of {e.repo} under {', '.join(map(str, roots))}"
    why = f"{e.commit[:10]}:{e.path} is not in {e.repo}'s snapshot"
    for g in dirs:
        p = subprocess.run(
            ["git", "--git-dir", str(g), "show", f"{e.commit}:{e.path}"], capture_output=True
        )
        if p.returncode != 0:
            continue
        if hashlib.sha256(p.stdout).hexdigest() == e.sha256:
            return p.stdout, ""
        why = f"{e.commit[:10]}:{e.path} in {g} has another sha256"
    return None, why


def lay_out(e: Entry, data: bytes, home: Path) -> Path:
    """Write the file under ``home`` where its agent keeps its sessions."""
    name = PurePosixPath(e.path).name
    if e.agent == "gemini":
        project = json.loads(data).get("projectHash") or "project"
        dest = home / ".gemini" / "tmp" / project / "chats" / name
    elif e.agent == "openclaw":
        parts = PurePosixPath(e.path).parts
        agent_id = parts[len(parts) - 1 - parts[::-1].index("agents") + 1]
        dest = home / ".openclaw" / "agents" / agent_id / "sessions" / name
    else:
        raise ValueError(f"no layout for agent {e.agent!r}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(data)
    return dest


# ---------------------------------------------------------------------------- expectations


@dataclass
class Expected:
    session_id: str
    ids: list[str]
    tool_uses: int
    tool_results: int
    ignored: int | None = None  # records counted as not content, when the format says


def _blank(v: Any) -> bool:
    return not isinstance(v, str) or not v.strip()


def _texts(content: Any) -> list[str]:
    """The text of a string, or of a list's text / thinking parts."""
    if isinstance(content, str):
        return [content]
    parts = content if isinstance(content, list) else []
    return [p.get("text") or p.get("thinking") or "" for p in parts if isinstance(p, dict)]


def gemini_output(result: Any) -> str:
    """What a tool call returned: each ``functionResponse``'s ``output`` (or ``error``)."""
    if isinstance(result, str):
        return result
    parts = [result] if isinstance(result, dict) else result if isinstance(result, list) else []
    out: list[str] = []
    for part in parts:
        fr = part.get("functionResponse") if isinstance(part, dict) else None
        resp = fr.get("response") if isinstance(fr, dict) else None
        if isinstance(resp, dict):
            out += [str(v) for k in ("output", "error") if not _blank(v := resp.get(k))][:1]
        elif isinstance(resp, str):
            out.append(resp)
    return "\n".join(out)


def gemini_expected(data: bytes, name: str) -> Expected:
    doc = json.loads(data)
    ids, calls, outputs = [], 0, 0
    for m in doc["messages"]:
        if m["type"] not in ("user", "gemini"):
            continue
        content = m.get("content")
        text = content if isinstance(content, str) else json.dumps(content)
        has = bool(text.strip()) or bool(m.get("thoughts")) or bool(m.get("toolCalls"))
        for call in m.get("toolCalls") or []:
            calls += 1
            outputs += not _blank(gemini_output(call.get("result")))
        if has:
            ids.append(m["id"])
    notices = sum(m["type"] in ("info", "error", "warning") for m in doc["messages"])
    return Expected(doc["sessionId"], ids, calls, outputs, notices)


def pi_expected(data: bytes, name: str) -> Expected:
    """pi's entries as docs/sources.md lists them (OpenClaw writes pi's JSONL)."""
    session = name.split(".jsonl", 1)[0]
    ids: list[str] = []
    calls = results = 0
    for line in data.decode("utf-8").splitlines():
        rec = json.loads(line)
        kind = rec.get("type")
        if kind == "session" and not ids and not _blank(rec.get("id")):
            session = rec["id"]
        msg = rec.get("message")
        msg = msg if kind == "message" and isinstance(msg, dict) else {}
        role = msg.get("role")
        if kind in ("compaction", "branch_summary"):
            has = not _blank(rec.get("summary"))
        elif kind == "custom_message":
            has = any(t.strip() for t in _texts(rec.get("content")))
        elif role in ("compactionSummary", "branchSummary"):
            has = not _blank(msg.get("summary"))
        elif role == "bashExecution":  # a `!command` the user ran: the call and its output
            has = not _blank(msg.get("command"))
            calls += has
            results += has and not _blank(msg.get("output"))
        elif role in ("user", "assistant", "toolResult", "custom"):
            parts = msg["content"] if isinstance(msg["content"], list) else []
            n = sum(isinstance(p, dict) and p.get("type") == "toolCall" for p in parts)
            texts = [t for t in _texts(msg["content"]) if t.strip()]
            calls += n if role == "assistant" else 0
            results += role == "toolResult" and bool(texts)
            has = bool(texts) or (role == "assistant" and n > 0)
        else:
            continue
        if has:
            ids.append(rec["id"] if not _blank(rec.get("id")) else f"{session}-{len(ids)}")
    return Expected(session, ids, calls, results)


EXPECTED = {"gemini": gemini_expected, "openclaw": pi_expected}


# ---------------------------------------------------------------------------- the check


def check(e: Entry, data: bytes, home: Path, seen: Counter[str]) -> list[str]:
    """What is wrong with the bare sweep of ``home`` (holding only this file), or []."""
    where = lay_out(e, data, home)
    stats: list[FileStats] = []
    units = [u for u in sources.sweep(home) if u.source and u.source.name == e.agent]
    turns = list(sources.parse_units(units, stats.append))
    if [st.path for st in stats] != [str(where)]:
        return [f"the sweep read {[st.path for st in stats]}, not {where}"]
    want = EXPECTED[e.agent](data, where.name)
    wrong = []
    got_ids = [t.turn_uuid for t in turns]
    if got_ids != want.ids:
        extra = [i for i in got_ids if i not in want.ids][:3]
        lost = [i for i in want.ids if i not in got_ids][:3]
        wrong.append(f"turn ids: {len(got_ids)} read, {len(want.ids)} in the file "
                     f"(extra {extra}, lost {lost})")  # fmt: skip
    if turns and {t.session_id for t in turns} != {want.session_id}:
        wrong.append(f"session ids {sorted({t.session_id for t in turns})} != {want.session_id}")
    if {t.harness for t in turns} - {e.agent}:
        wrong.append(f"harness {sorted({t.harness for t in turns})}")
    blocks = Counter(b.type for t in turns for b in t.blocks)
    if blocks["tool_use"] != want.tool_uses:
        wrong.append(f"tool calls: {blocks['tool_use']} read, {want.tool_uses} in the file")
    if blocks["tool_result"] != want.tool_results:
        wrong.append(f"tool results: {blocks['tool_result']} read, {want.tool_results} in the file")
    report = sources.coverage(stats[0])
    if want.ignored is not None and sum(report["ignored"].values()) != want.ignored:
        wrong.append(f"ignored {report['ignored']}, {want.ignored} notices in the file")
    if report["error"] is not None:
        wrong.append(f"error {report['error']}")
    if report["unexplained"]:
        wrong.append(f"unexplained {report['unexplained']}")
    if report["skipped"]:
        wrong.append(f"skipped {report['skipped']}")
    seen.update(blocks)
    seen["turns"] += len(turns)
    seen.update(f"role:{t.role}" for t in turns)
    return wrong


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench real-sources",
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--agent", choices=AGENTS, action="append", help="only this agent's files")
    ap.add_argument("--repo", action="append", metavar="OWNER/NAME", help="only this repository")
    ap.add_argument(
        "--from",
        dest="roots",
        action="append",
        type=Path,
        metavar="DIR",
        help="folder of fetched snapshots or clones (repeatable; default /work/.mirror)",
    )
    ap.add_argument(
        "--restore-only",
        type=Path,
        metavar="DIR",
        help="lay the files out in DIR/<repo>/ as each agent keeps them, and check nothing",
    )
    ap.add_argument("--manifest", type=Path, default=MANIFEST, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    roots = a.roots or [Path("/work/.mirror")]
    todo = [
        e
        for e in entries(a.manifest)
        if (not a.agent or e.agent in a.agent) and (not a.repo or e.repo in a.repo)
    ]
    counts: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    with tempfile.TemporaryDirectory(prefix="funes-real-") as tmp:
        for i, e in enumerate(todo):
            data, why = restore(e, roots)
            if data is None:
                counts["missing"] += 1
                print(f"missing  {e.name}: {why}", flush=True)
                continue
            counts["restored"] += 1
            if a.restore_only:
                lay_out(e, data, a.restore_only / e.repo.replace("/", "+"))
                print(f"restored {e.name}", flush=True)
                continue
            home = Path(tmp) / str(i)
            try:
                wrong = check(e, data, home, seen)
            except Exception as exc:  # a crash on one file is that file's failure
                wrong = [f"{type(exc).__name__}: {exc}"]
            shutil.rmtree(home, ignore_errors=True)
            counts["failed" if wrong else "ok"] += 1
            status = "failed" if wrong else "ok"
            print(f"{status:<8} {e.name}" + (": " + "; ".join(wrong) if wrong else ""), flush=True)
    print(
        f"{len(todo)} files: {counts['restored']} restored, {counts['missing']} missing"
        + ("" if a.restore_only else f"; {counts['ok']} ok, {counts['failed']} failed")
        + (
            f" ({seen['turns']} turns, {seen['tool_use']} tool calls, {seen['tool_result']} "
            f"results, {seen['thinking']} thinking blocks)"
            if seen
            else ""
        )
    )
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
