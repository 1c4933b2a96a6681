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
