"""The external scanner wrapper (funes.secrets.scanner): real engines, and fail-closed paths.

Failure modes are driven by tiny fake scanners named by FUNES_TRUFFLEHOG.
"""

from __future__ import annotations

import importlib.util
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_secrets import bench

from funes.errors import FunesError
from funes.secrets import scanner as sc
from funes.secrets.scanner import ScanFinding, ScannerError, available_scanner, scan_texts

GHP = "ghp_" + "Xq3LmZ8vT1wR6yB0nK4sD7fH2jP9cA5eU1gM"  # fake: random letters, right shape
HAS_ENGINE = importlib.util.find_spec("litellm_trufflehog") is not None
GITLEAKS = sc._find_gitleaks() if not os.environ.get("FUNES_GITLEAKS") else None


def script(tmp_path: Path, name: str, body: str, interpreter: str = "/bin/sh") -> Path:
    p = tmp_path / name
    p.write_text(f"#!{interpreter}\n{body}\n")
    p.chmod(p.stat().st_mode | stat.S_IXUSR)
    return p


@pytest.fixture
def no_scanners(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Nothing on PATH, no engine, no gitleaks beside this Python."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    for var in ("FUNES_TRUFFLEHOG", "FUNES_GITLEAKS", "FUNES_SCANNER", "FUNES_SCAN_TIMEOUT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setitem(sc._FINDERS, "trufflehog-engine", lambda: None)
    monkeypatch.setattr(sc, "_TRUFFLEHOG_DIRS", ())
    monkeypatch.setattr(sc.sys, "executable", str(empty / "python"))


@pytest.fixture
def fake_trufflehog(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):  # type: ignore[no-untyped-def]
    def use(body: str, interpreter: str = "/bin/sh") -> Path:
        p = script(tmp_path, "trufflehog", body, interpreter)
        monkeypatch.setenv("FUNES_TRUFFLEHOG", str(p))
        monkeypatch.delenv("FUNES_SCANNER", raising=False)
        return p

    return use


# --- fail closed --------------------------------------------------------------------------


def test_no_scanner_at_all_is_an_error_with_what_to_install(no_scanners: None) -> None:
    assert available_scanner() is None
    with pytest.raises(ScannerError, match=r"no secret scanner found .*funes\[scan\]"):
        scan_texts({"a": GHP})


def test_scanner_error_is_a_funes_error() -> None:
    assert issubclass(ScannerError, FunesError)


def test_named_trufflehog_that_does_not_exist_is_an_error_not_a_fallback(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("FUNES_TRUFFLEHOG", str(tmp_path / "nope" / "trufflehog"))
    assert available_scanner() is None
    with pytest.raises(ScannerError, match=r"FUNES_TRUFFLEHOG=.* is not an executable file"):
        scan_texts({"a": "x"})


def test_asking_for_an_absent_scanner_by_name_is_an_error(no_scanners: None) -> None:
    with pytest.raises(ScannerError, match="no gitleaks secret scanner found"):
        scan_texts({"a": "x"}, prefer="gitleaks")
    with pytest.raises(ScannerError, match="unknown secret scanner 'semgrep'"):
        scan_texts({"a": "x"}, prefer="semgrep")


def test_scanner_that_crashes_is_an_error_naming_the_signal(fake_trufflehog) -> None:  # type: ignore[no-untyped-def]
    fake_trufflehog("kill -SEGV $$")
    with pytest.raises(ScannerError, match=r"trufflehog crashed \(killed by SIGSEGV\)"):
        scan_texts({"a": GHP})


def test_scanner_that_exits_with_an_unknown_status_is_an_error(fake_trufflehog) -> None:  # type: ignore[no-untyped-def]
    fake_trufflehog("echo 'error: flag provided but not defined: -fail' >&2; exit 3")
    with pytest.raises(ScannerError) as e:
        scan_texts({"a": GHP})
    msg = str(e.value)
    assert "exited with status 3" in msg and "flag provided but not defined" in msg


def test_scanner_that_prints_garbage_is_an_error(fake_trufflehog) -> None:  # type: ignore[no-untyped-def]
    fake_trufflehog("echo 'Found verified result 🐷🔑'; echo '{not json'; exit 183")
    with pytest.raises(ScannerError, match=r"not JSON \(line 1\)"):
        scan_texts({"a": GHP})


def test_scanner_that_prints_results_but_exits_zero_is_an_error(fake_trufflehog) -> None:  # type: ignore[no-untyped-def]
    fake_trufflehog('echo \'{"DetectorName":"Github"}\'; exit 0')
    with pytest.raises(ScannerError, match="printed results but exited 0"):
        scan_texts({"a": GHP})


def test_scanner_that_reports_found_but_lists_nothing_is_an_error(fake_trufflehog) -> None:  # type: ignore[no-untyped-def]
    fake_trufflehog("exit 183")
    with pytest.raises(ScannerError, match="reported none"):
        scan_texts({"a": GHP})


def test_scanner_result_missing_fields_is_an_error(fake_trufflehog) -> None:  # type: ignore[no-untyped-def]
    fake_trufflehog('echo \'{"DetectorName":"Github","Raw":"x"}\'; exit 183')
    with pytest.raises(ScannerError, match="lacks DetectorName, DecoderName, Raw or file"):
        scan_texts({"a": GHP})


def test_scanner_that_hangs_is_killed_at_the_timeout(fake_trufflehog) -> None:  # type: ignore[no-untyped-def]
    # the child also starts a grandchild: the whole process group must go
    fake_trufflehog("sleep 60 & sleep 60")
    t0 = time.monotonic()
    with pytest.raises(ScannerError, match=r"timed out after 1 s .*FUNES_SCAN_TIMEOUT"):
        scan_texts({"a": GHP}, timeout=1)
    assert time.monotonic() - t0 < 10


def test_timeout_comes_from_the_environment(
    fake_trufflehog, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    fake_trufflehog("sleep 60")
    monkeypatch.setenv("FUNES_SCAN_TIMEOUT", "0.5")
    with pytest.raises(ScannerError, match=r"timed out after 0\.5 s"):
        scan_texts({"a": GHP})
    monkeypatch.setenv("FUNES_SCAN_TIMEOUT", "soon")
    with pytest.raises(ScannerError, match="not a number of seconds"):
        scan_texts({"a": GHP})


def test_errors_never_quote_the_scanned_text(fake_trufflehog) -> None:  # type: ignore[no-untyped-def]
    # A scanner that echoes what it read into its error line: the message must not carry it.
    fake_trufflehog('cat "$2"/* >&2; echo >&2; echo "fatal: bad blob $(cat "$2"/*)" >&2; exit 3')
    other = bench.KIND_BY_DETECTOR["secret-assignment"].make(bench.random.Random(1))
    with pytest.raises(ScannerError) as e:
        scan_texts({"a": f"token {GHP}", "b": f"DB_PASSWORD={other}"})
    msg = str(e.value)
    assert GHP not in msg and other not in msg
    assert "exited with status 3" in msg


def test_nothing_to_scan_runs_nothing(no_scanners: None) -> None:
    assert scan_texts({}) == []


# --- a well-behaved TruffleHog CLI (fake, speaking v3's JSON) ------------------------------

FAKE_TRUFFLEHOG = r"""
import json, re, sys
from pathlib import Path
assert sys.argv[1] == "filesystem" and "--json" in sys.argv and "--no-verification" in sys.argv
assert "--no-update" in sys.argv and "--fail" in sys.argv
found = False
for p in sorted(Path(sys.argv[2]).iterdir()):
    text = p.read_text()
    for n, line in enumerate(text.split("\n"), 1):
        for m in re.finditer(r"ghp_[A-Za-z0-9]{36}", line):
            found = True
            print(json.dumps({"DetectorName": "Github", "DecoderName": "PLAIN", "Raw": m.group(0),
                              "SourceMetadata": {"Data": {"Filesystem": {"file": str(p), "line": n}}}}))
        if "QkFTRTY0" in line:
            found = True
            print(json.dumps({"DetectorName": "Base64Thing", "DecoderName": "BASE64", "Raw": "decoded",
                              "SourceMetadata": {"Data": {"Filesystem": {"file": str(p), "line": n}}}}))
print("a log line", file=sys.stderr)
sys.exit(183 if found else 0)
"""


def test_trufflehog_findings_map_back_to_keys_and_spans(fake_trufflehog) -> None:  # type: ignore[no-untyped-def]
    fake_trufflehog(FAKE_TRUFFLEHOG, sys.executable)
    texts = {
        "session/turn-1:0": f"export GH_TOKEN={GHP}\nand again {GHP}",
        "clean": "nothing here",
        "escaped": '{"cmd":"echo QkFTRTY0"}',
    }
    got = scan_texts(texts)
    start = len("export GH_TOKEN=")
    second = texts["session/turn-1:0"].rindex(GHP)
    assert got == [
        ScanFinding("session/turn-1:0", "Github", (start, start + len(GHP))),
        ScanFinding("session/turn-1:0", "Github", (second, second + len(GHP))),
        ScanFinding("escaped", "Base64Thing", None),  # decoded: not locatable
    ]
    assert available_scanner() == "trufflehog"


def test_trufflehog_clean_run_is_no_findings(fake_trufflehog) -> None:  # type: ignore[no-untyped-def]
    fake_trufflehog(FAKE_TRUFFLEHOG, sys.executable)
    assert scan_texts({"a": "nothing", "b": "still nothing"}) == []


def test_trufflehog_on_path_is_found(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    script(bindir, "trufflehog", FAKE_TRUFFLEHOG, sys.executable)
    monkeypatch.delenv("FUNES_TRUFFLEHOG", raising=False)
    monkeypatch.delenv("FUNES_SCANNER", raising=False)
    monkeypatch.setenv("PATH", str(bindir))
    assert available_scanner() == "trufflehog"
    assert [f.detector for f in scan_texts({"k": GHP})] == ["Github"]


# --- the real engines ---------------------------------------------------------------------


@pytest.mark.skipif(
    not HAS_ENGINE, reason="TruffleHog engine not installed (pip install funes[scan])"
)
def test_trufflehog_engine_finds_seeded_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FUNES_TRUFFLEHOG", raising=False)
    seeds = [
        s
        for s in bench.seeded_corpus(2, seed=41)
        if s.detector in ("github-pat", "gitlab-pat", "npm-token", "huggingface-token")
        and s.context in ("tool_output", "tool_input_json")
    ]
    texts = {f"k{i}": s.text for i, s in enumerate(seeds)}
    texts["clean"] = "Refactored the chunker; no credentials here.\n" * 50
    got = scan_texts(texts, prefer="trufflehog-engine")
    found = {f.key for f in got}
    assert found == set(texts) - {"clean"}
    for f in got:  # spans land on the seeded values
        assert f.span is not None
        seed = seeds[int(f.key[1:])]
        assert seed.text[f.span[0] : f.span[1]] in seed.value


@pytest.mark.skipif(
    not HAS_ENGINE, reason="TruffleHog engine not installed (pip install funes[scan])"
)
def test_engine_runs_in_a_child_and_is_never_imported_here() -> None:
    code = (
        "import sys\n"
        "from funes.secrets.scanner import scan_texts\n"
        "scan_texts({'a': 'hello'}, prefer='trufflehog-engine')\n"
        "sys.exit(1 if 'litellm_trufflehog' in sys.modules else 0)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "FUNES_TRUFFLEHOG"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr.decode()[-300:]


@pytest.mark.skipif(
    not HAS_ENGINE, reason="TruffleHog engine not installed (pip install funes[scan])"
)
def test_engine_entry_point_fails_closed_on_text_that_is_not_utf8(tmp_path: Path) -> None:
    (tmp_path / "t0.txt").write_bytes(b"\xff\xfe" + GHP.encode())
    r = subprocess.run(
        [sys.executable, "-m", "funes.secrets._engine", str(tmp_path)],
        capture_output=True,
        timeout=300,
    )
    assert r.returncode == 2
    assert b"not UTF-8" in r.stderr and GHP.encode() not in r.stderr + r.stdout
    assert b"summary" not in r.stdout


@pytest.mark.skipif(GITLEAKS is None, reason="gitleaks not installed")
def test_gitleaks_finds_seeded_keys_and_maps_spans(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FUNES_TRUFFLEHOG", raising=False)
    texts = {"a": f"GH_TOKEN={GHP}\n", "b": "clean text, nothing to see\n"}
    got = scan_texts(texts, prefer="gitleaks")
    assert [f.key for f in got] == ["a"]
    (f,) = got
    assert f.span is not None and texts["a"][f.span[0] : f.span[1]] == GHP


@pytest.mark.skipif(GITLEAKS is None, reason="gitleaks not installed")
def test_gitleaks_clean_run_is_no_findings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FUNES_TRUFFLEHOG", raising=False)
    assert scan_texts({"a": "nothing here"}, prefer="gitleaks") == []
