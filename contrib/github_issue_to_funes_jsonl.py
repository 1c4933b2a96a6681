#!/usr/bin/env python3
"""A GitHub issue thread → a `.funes.jsonl` file funes indexes (the producer contract).

    gh issue view 42 --repo acme/tiles --json number,title,body,author,createdAt,comments,url \\
      | python contrib/github_issue_to_funes_jsonl.py --repo acme/tiles --cwd ~/src/tiles \\
      > issue-42.funes.jsonl
    funes index --check issue-42.funes.jsonl && funes index issue-42.funes.jsonl

The thread is one session (`gh/<owner>/<name>#<number>`); the issue and each comment are one
turn each, in order (`seq` from 0), their GitHub ids the turn ids; the author's association with
the project is the role, the login is written into the text where it can be searched. An
edited comment is a new turn (`<id>@<updatedAt>`), as the contract asks: funes is append-only
and keys chunks on ids, never on text. `--cwd` names a local clone so the repo facet resolves.
Only the standard library is used.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def utc_z(ts: str) -> str:
    """GitHub's timestamps are already UTC `Z`; anything else is refused by funes, so fail here."""
    if not ts.endswith("Z"):
        raise SystemExit(f"github_issue_to_funes_jsonl: timestamp {ts!r} is not UTC (Z)")
    return ts


def stamp(ts: str) -> str:
    return ts.replace("-", "").replace(":", "")  # no ':' may appear in an id


def turns(issue: dict[str, Any], repo: str, cwd: str | None) -> list[dict[str, Any]]:
    session = f"gh/{repo}#{issue['number']}"
    out: list[dict[str, Any]] = []

    def turn(uuid: str, ts: str, role: str, text: str) -> None:
        rec: dict[str, Any] = {
            "format": 1,
            "session_id": session,
            "turn_uuid": uuid.replace(":", "_"),
            "seq": len(out),
            "ts": utc_z(ts),
            "role": role,
            "harness": "github",
            "blocks": [{"block_type": "text", "text": text}],
        }
        if out:
            rec["parent_uuid"] = out[0]["turn_uuid"]
        if cwd:
            rec["cwd"] = cwd
        out.append(rec)

    author = (issue.get("author") or {}).get("login", "ghost")
    body = issue.get("body") or ""
    turn(issue.get("id") or f"issue-{issue['number']}", issue["createdAt"], "author",
         f"**@{author}** opened: {issue.get('title', '')}\n\n{body}")  # fmt: skip
    for c in issue.get("comments") or []:
        login = (c.get("author") or {}).get("login", "ghost")
        role = (c.get("authorAssociation") or "none").lower()
        uuid = c.get("id") or c.get("url") or f"comment-{len(out)}"
        edited = (
            c.get("updatedAt") if c.get("updatedAt") not in (None, c.get("createdAt")) else None
        )
        ts = edited or c["createdAt"]
        turn(
            f"{uuid}@{stamp(edited)}" if edited else uuid,
            ts,
            role,
            f"**@{login}** wrote: {c.get('body', '')}",
        )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", required=True, help="OWNER/NAME of the issue's repository")
    ap.add_argument("--cwd", help="a local clone of it (for the repo facet)")
    args = ap.parse_args()
    issue = json.load(sys.stdin)
    for rec in turns(issue, args.repo, args.cwd):
        sys.stdout.write(json.dumps(rec, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
