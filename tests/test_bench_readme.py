"""bench/README.md's generated part: a day's results file of some suites only shows the other
suites from the newest earlier file, each named with its date, instead of dropping them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import REPO

sys.path.insert(0, str(REPO))  # the bench package lives at the repository root


def test_a_partial_day_keeps_the_other_suites_from_an_earlier_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bench import _readme

    full = json.loads((REPO / "bench" / "results" / "2026-11-30.json").read_text())
    results = tmp_path / "results"
    results.mkdir()
    (results / "2026-11-30.json").write_text(json.dumps(full))
    quality = json.loads(json.dumps(full["suites"]["quality"]))
    quality["sets"]["eval-dev"]["questions"] = 4242  # what only the new day's file says
    day = {**full, "date": "2026-12-01", "suites": {"quality": quality}}
    (results / "2026-12-01.json").write_text(json.dumps(day))
    monkeypatch.setattr(_readme, "RESULTS", results)
    monkeypatch.setattr(_readme, "BENCH", tmp_path)
    (tmp_path / "README.md").write_text("# hand-written\n\n" + _readme.MARKER + "\nold\n")

    _readme.write()

    text = (tmp_path / "README.md").read_text()
    assert text.startswith("# hand-written\n")
    assert "Results of 2026-12-01 (`bench/results/2026-12-01.json`)." in text
    assert "from `bench/results/2026-11-30.json`" in text
    assert "4242 questions" in text  # quality from the new day
    assert "## parse" in text and "## hub" in text  # the rest carried, not dropped
    carried = text.split("from `bench/results/2026-11-30.json`")[0].rsplit("Suites ", 1)[1]
    assert "quality" not in carried and "parse" in carried


def test_a_suites_hand_written_notes_stay_under_its_tables_when_the_readme_is_rewritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bench import _readme

    results = tmp_path / "results"
    results.mkdir()
    full = (REPO / "bench" / "results" / "2026-11-30.json").read_text()
    (results / "2026-11-30.json").write_text(full)
    (tmp_path / "notes").mkdir()
    note = "**After: a change** (A/B against main): 1.00 → **0.50**. Reproduce: `make it`."
    (tmp_path / "notes" / "embed.md").write_text(note + "\n")
    monkeypatch.setattr(_readme, "RESULTS", results)
    monkeypatch.setattr(_readme, "BENCH", tmp_path)
    monkeypatch.setattr(_readme, "NOTES", tmp_path / "notes")
    (tmp_path / "README.md").write_text("# hand-written\n\n" + _readme.MARKER + "\nold\n")

    for _ in range(2):  # a second run keeps them once, not twice
        _readme.write()

    text = (tmp_path / "README.md").read_text()
    assert text.count(note) == 1
    embed = text.split("## embed", 1)[1].split("\n## ", 1)[0]
    assert note in embed and embed.index("(`python -m bench embed`") < embed.index(note)
