"""funes' own pair model (funes/models/pair.py): the shipped files load, are sha256-checked and
score deterministically; a missing or damaged file is one `funes:` line naming it; on a
transcript built here the finding outranks the agent's restatement of the task and a tool
result answers a question asked in other words; and the trainer runs end to end (slow)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from funes.chunking import chunk_turns
from funes.models.pair import load_pair_model, open_pair_model, verified_dir
from funes.models.pins import DATA_DIR, ENV_PAIR_MODEL, PAIR_PIN, ModelError
from funes.sources import parse
from tests.conftest import REPO, run_cli, write_jsonl

SHIPPED = DATA_DIR / PAIR_PIN.dir

RESTATEMENT = (
    "I'll help you fix the syntax error in your build script. Let me first examine the file "
    "to understand what is going on with the build."
)
FINDING = (
    "Found it: line 957 of tools/release.py is corrupted — half of a previous edit was pasted "
    "into the middle of a dictionary literal, so Python stops with an unterminated string. "
    "I removed the stray fragment and `python tools/release.py --check` passes now."
)
EMAIL_ERROR = (
    "Author identity unknown\n\n*** Please tell me who you are.\n\nRun\n\n"
    '  git config --global user.email "you@example.com"\n'
    '  git config --global user.name "Your Name"\n\n'
    "to set your account's default identity.\n"
    "fatal: unable to auto-detect email address (got 'root@4f2a9c.(none)')"
)


def _claude(tmp_path: Path) -> Path:
    """A Claude Code session: a task restated, tool calls, a finding turns later, a commit that
    fails on git's identity, and a malformed and a truncated line (skipped, counted)."""
    recs: list[dict[str, Any] | str] = []
    n = 0

    def add(role: str, content: Any) -> None:
        nonlocal n
        n += 1
        recs.append({
            "type": "user" if role == "user" else "assistant",
            "uuid": f"u-{n}", "parentUuid": f"u-{n - 1}" if n > 1 else None,
            "timestamp": f"2026-03-02T10:{n:02d}:00.000Z", "cwd": "/home/ana/proj",
            "sessionId": "s-pair", "message": {"role": role, "content": content},
        })  # fmt: skip

    def tool(tid: str, name: str, inp: dict[str, Any], out: str) -> None:
        add("assistant", [{"type": "tool_use", "id": tid, "name": name, "input": inp}])
        add("user", [{"type": "tool_result", "tool_use_id": tid, "content": out}])

    add("user", "The release build fails with a syntax error, can you fix the build script?")
    add("assistant", [{"type": "text", "text": RESTATEMENT}])
    tool("t1", "Bash", {"command": "python tools/release.py --check"},
         '  File "tools/release.py", line 957\n    "name": "funes\n SyntaxError')  # fmt: skip
    add("assistant", [{"type": "text", "text": "Let me check a few things in the file."}])
    tool("t2", "Read", {"file_path": "tools/release.py", "offset": 950},
         "950  RELEASE = {\n951      'version': '0.4.1',\n957      \"name\": \"funes")  # fmt: skip
    add("assistant", [{"type": "text", "text": FINDING}])
    recs.append('{"type": "assistant", "message": ')  # truncated mid-object
    recs.append("not json at all")
    add("user", "Great, please commit the fix.")
    add("assistant", [{"type": "text", "text": "I'll commit the change now."}])
    tool("t3", "Bash", {"command": "git add tools/release.py && git commit -m 'fix release'"},
         EMAIL_ERROR)  # fmt: skip
    tool("t4", "Bash", {"command": "git log --oneline -3"},
         "a1b2c3d docs: changelog\n9f8e7d6 feat: release script\n0c0ffee init")  # fmt: skip
    add("assistant", [{"type": "text", "text": "The commit is blocked until git knows who you "
                       "are; set user.email and user.name and I will retry."}])  # fmt: skip
    return write_jsonl(tmp_path / "s-pair.jsonl", recs)


def _chunks(tmp_path: Path) -> list[str]:
    return [c.text for c in chunk_turns(parse([_claude(tmp_path)]))]


def test_the_shipped_model_loads_checked_and_scores_deterministically() -> None:
    assert verified_dir() == SHIPPED  # every file matches its pin
    m = load_pair_model()
    assert m is load_pair_model()  # loaded once per process
    passages = [FINDING, RESTATEMENT, EMAIL_ERROR, "", "x" * 20000]
    a = m.score("why did the release build fail?", passages)
    b = m.score("why did the release build fail?", passages)
    assert a.dtype == np.float32 and a.shape == (5,)
    assert np.array_equal(a, b)
    assert np.isfinite(a).all()
    # a passage's logit depends on the pair alone, not on what it was scored with
    alone = [m.score("why did the release build fail?", [p])[0] for p in passages]
    assert np.array_equal(a, np.asarray(alone, dtype=np.float32))
    assert m.score("why did the release build fail?", []).shape == (0,)


def test_the_finding_outranks_the_restatement_of_the_task(tmp_path: Path) -> None:
    texts = _chunks(tmp_path)
    assert FINDING in texts and RESTATEMENT in texts
    s = load_pair_model().score("what was corrupting the release script?", texts)
    assert s[texts.index(FINDING)] > s[texts.index(RESTATEMENT)]


@pytest.mark.xfail(
    strict=True,
    reason="the shipped pair model cannot yet: it ranks git's 'fatal: unable to auto-detect "
    "email address' below the other tool results for 'why did the first commit fail?' "
    "(reported on issue 21; strict, so it fails once a model can)",
)
def test_a_tool_result_answers_a_question_in_other_words(tmp_path: Path) -> None:
    texts = _chunks(tmp_path)
    result = next(t for t in texts if "unable to auto-detect email address" in t)
    s = load_pair_model().score("why did the first commit fail?", texts)
    others = [i for i, t in enumerate(texts) if t.startswith("[tool_result") and t != result]
    i = texts.index(result)
    assert all(s[i] > s[j] for j in others), "another tool result ranks above git's error"
    # the announcement of the step shares the question's words; the error answers it
    assert s[i] > s[texts.index("I'll commit the change now.")]
    assert s[i] > s[texts.index(RESTATEMENT)]


def _copy(tmp_path: Path) -> Path:
    d = tmp_path / "pair-copy"
    shutil.copytree(SHIPPED, d)
    return d


@pytest.mark.parametrize("damage", ["missing", "flipped"])
def test_a_missing_or_damaged_file_is_one_line_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    d = _copy(tmp_path)
    target = d / "passage.onnx"
    if damage == "missing":
        target.unlink()
    else:
        data = bytearray(target.read_bytes())
        data[len(data) // 2] ^= 0xFF
        target.write_bytes(bytes(data))
    monkeypatch.setenv(ENV_PAIR_MODEL, str(d))
    with pytest.raises(ModelError) as e:
        load_pair_model()
    msg = str(e.value)
    assert str(target) in msg and "\n" not in msg
    assert ENV_PAIR_MODEL in msg  # what to do: point it at an intact copy or unset it
    r = run_cli("funes", "models", env={ENV_PAIR_MODEL: str(d)})
    assert r.returncode == 1
    err = [x for x in r.stderr.decode().splitlines() if x.strip()]
    assert len(err) == 1 and err[0].startswith("funes: ") and str(target) in err[0], err
    assert "Traceback" not in r.stderr.decode()


def test_the_shipped_model_is_named_by_models_and_status(tmp_path: Path) -> None:
    r = run_cli("funes", "models", "--json")
    assert r.returncode == 0, r.stderr
    pair = json.loads(r.stdout)["pair"]
    assert pair["name"] == PAIR_PIN.name and pair["ok"]
    assert {Path(f["file"]).name for f in pair["files"]} == {n for n, _ in PAIR_PIN.files}
    assert all(f["sha256"] == f["sha256_pinned"] for f in pair["files"])
    r = run_cli("funes", "models")
    assert PAIR_PIN.name in r.stdout.decode()
    r = run_cli("funes", "index", _claude(tmp_path), "--no-embed", "--yes")
    assert r.returncode == 0, r.stderr
    r = run_cli("funes", "status")
    out = r.stdout.decode()
    line = next(x for x in out.splitlines() if x.startswith("pair model:"))
    assert PAIR_PIN.name in line and PAIR_PIN.files[0][1][:12] in line and "MB" in line


def test_the_shipped_model_is_package_data() -> None:
    text = (REPO / "pyproject.toml").read_text()
    assert '"data/pair/*.onnx"' in text
    card = (SHIPPED / "MODEL_CARD.md").read_text()
    assert "bin/train" in card and "Apache-2.0" in card
    assert "Apache License" in (SHIPPED / "NOTICE").read_text()


@pytest.mark.slow
def test_the_trainer_runs_end_to_end_on_a_tiny_set(tmp_path: Path) -> None:
    """bin/train builds .venv-train (torch only there) and trains a few steps; the ONNX graphs
    it writes load with funes' own runtime and score; the same seed writes the same files."""
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    recs = []
    for run in ("a", "b"):
        out = tmp_path / run
        r = subprocess.run([str(REPO / "bin" / "train"), "--tiny", "--seed", "5", "--out",
                            str(out)], env=env, capture_output=True, text=True, timeout=3000,
                           check=False)  # fmt: skip
        assert r.returncode == 0, r.stderr[-3000:]
        recs.append(json.loads((out / "train.json").read_text()))
    rec = recs[0]
    assert rec["label_stage"]["steps"] > 0 and rec["mined_stage"]["steps"] > 0
    assert recs[0]["files"] == recs[1]["files"]  # deterministic under --seed
    m = open_pair_model(tmp_path / "a")
    s = m.score("what port does the server listen on?",
                ["the server listens on 8443", "I'll look into the port now."])  # fmt: skip
    assert s.shape == (2,) and np.isfinite(s).all() and s[0] != s[1]
