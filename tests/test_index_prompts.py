"""A first index finishes or says how: the terminal prompts past the budget, the one line a
run without a terminal prints instead, and a summary that counts sessions once."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from conftest import answer_on_a_terminal, run_cli
from test_index import write_claude, write_codex

from funes.ingest import indexer
from funes.ingest.report import fmt_eta


@pytest.mark.slow
def test_a_sweep_past_its_budget_asks_on_a_terminal_and_declining_says_what_is_left(
    private_home: Path,
) -> None:
    write_claude(private_home, "sess-p", 9)
    write_codex(private_home, "cdx-p", 6)
    env = {"FUNES_INDEX_BUDGET": "0"}
    status, out, term = answer_on_a_terminal(["index"], [b"n"], env)
    assert status == 0, term
    assert "more to index (~" in term and "left, rough). Finish it now? [Y/n]" in term
    assert "funes: 2 sessions not fully indexed yet — per-turn indexing" in term
    assert out.strip() == "indexed sessions=0 skipped=0 chunks=0 embedded=0"
    # Yes finishes every pass and every vector; nothing is left to say.
    status, out, term = answer_on_a_terminal(["index"], [b""], env)
    assert status == 0, term
    assert out.strip().startswith("indexed sessions=2 skipped=0 chunks=")
    # (the embedding bar may show "~0s left" on its way: only what is said counts)
    after = term.split("[answered]")[-1]
    assert "waiting=" not in out
    for left in ("more to index", "not fully indexed", "without vectors", "--backfill"):
        assert left not in after, after


def test_without_a_terminal_the_run_names_the_chunks_waiting_and_the_command(
    private_home: Path, tmp_path: Path
) -> None:
    src = write_claude(private_home, "sess-n", 6)
    mem = tmp_path / "mem"
    r = run_cli("funes", "index", src, "--no-embed", "--memory", mem)
    assert r.returncode == 0
    waiting = int(r.stdout.decode().split("waiting=")[1].split()[0])
    assert waiting > 0
    assert r.stderr.decode().splitlines() == [
        f"funes: {waiting:,} chunks are stored without vectors (searchable by words now) — "
        f"`funes index --backfill --memory {mem}` embeds them"
    ]
    # A budgeted sweep stopped off a terminal says how many sessions it left unfinished.
    write_codex(private_home, "cdx-n", 4)
    r = run_cli("funes", "index", "--memory", mem, env={"FUNES_INDEX_BUDGET": "0"})
    assert r.returncode == 0
    assert "funes: 1 session not fully indexed yet" in r.stderr.decode()  # claude: current
    assert "pass" not in r.stderr.decode()


def test_when_the_budget_ends_while_embedding_the_terminal_is_asked_to_finish(
    private_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_claude(private_home, "sess-e", 6)
    clock = [0.0]
    monkeypatch.setattr(indexer.time, "monotonic", lambda: clock[0])
    embed_behind = indexer.embed_behind

    def slow_embedding(*args: object) -> None:
        clock[0] += 1000  # the parse passes fit the budget; the vectors do not
        embed_behind(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(indexer, "embed_behind", slow_embedding)
    questions: list[str] = []

    def ask(q: str) -> bool:
        questions.append(q)
        return True

    opts = indexer.IndexOptions(home=private_home, interactive=True, budget=60)
    report = indexer.index(opts, ask=ask)
    assert len(questions) == 1
    assert "chunks are searchable by words but still need vectors (~" in questions[0]
    assert questions[0].endswith("left, rough). Finish it now? [Y/n] ")
    assert report.without_vectors == 0 and report.embedded == report.chunks > 0
    assert report.sessions == 1


class _Clock:
    """A Progress that moves the run's clock past its budget once the first vectors are
    committed: the budget ends part-way through the embedding."""

    def __init__(self, clock: list[float]) -> None:
        self.clock = clock
        self.embedding: list[tuple[int, int]] = []

    def status(self, text: str) -> None:
        return None

    def update(
        self,
        phase: str,
        done: int,
        total: int,
        chunks: int,
        force: bool = False,
        unit: str = "",
        after: int = 0,
    ) -> None:
        if phase == "embedding":
            self.embedding.append((done, total))
            if done:
                self.clock[0] += 1000

    def clear(self) -> None:
        return None


def test_a_run_finished_past_its_budget_counts_every_vector_it_embedded(
    private_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_claude(private_home, "sess-f", 180)  # 300 chunks: more than one commit of vectors
    clock = [0.0]
    monkeypatch.setattr(indexer.time, "monotonic", lambda: clock[0])
    progress = _Clock(clock)
    questions: list[str] = []
    opts = indexer.IndexOptions(home=private_home, interactive=True, budget=60)
    report = indexer.index(opts, progress=progress, ask=lambda q: questions.append(q) or True)
    assert len(questions) == 1 and "still need vectors" in questions[0]
    assert 0 < int(questions[0].split(" chunks")[0].replace(",", "")) < report.chunks
    # The summary counts the vectors embedded before the question and after it.
    assert report.without_vectors == 0
    assert report.embedded == report.chunks
    assert report.summary().startswith(f"indexed sessions=1 skipped=0 chunks={report.chunks} "
                                       f"embedded={report.chunks}")  # fmt: skip


class _Recorder:
    """A Progress that records what a terminal would be shown, in order."""

    def __init__(self) -> None:
        self.events: list[tuple[str, ...]] = []

    def status(self, text: str) -> None:
        self.events.append(("status", text))

    def update(
        self,
        phase: str,
        done: int,
        total: int,
        chunks: int,
        force: bool = False,
        unit: str = "",
        after: int = 0,
    ) -> None:
        self.events.append(("update", phase, str(done), str(total)))

    def clear(self) -> None:
        return None


def test_the_embedding_bar_shows_once_the_model_is_loaded_and_moves_every_few_seconds(
    private_home: Path,
) -> None:
    src = write_claude(private_home, "sess-b", 180)  # 300 chunks: more than one commit
    progress = _Recorder()
    opts = indexer.IndexOptions(paths=[str(src)], home=private_home, budget=None)
    report = indexer.index(opts, progress=progress)
    assert report.embedded == report.chunks == 300
    ev = progress.events
    loading = next(i for i, e in enumerate(ev) if e[0] == "status" and "embedding model" in e[1])
    # Right after the model loads, the bar at 0 — not the loading line until 256 are embedded.
    assert ev[loading + 1] == ("update", "embedding", "0", "300")
    done = [int(e[2]) for e in ev[loading + 1 :] if e[:2] == ("update", "embedding")]
    assert done[-1] == 300 and done == sorted(done)
    assert max(b - a for a, b in itertools.pairwise(done)) <= 64


class _SlowLoad:
    """A Progress on a fake clock: the model takes 30 s to load, the first 64 chunks 100 s."""

    def __init__(self, clock: list[float]) -> None:
        self.clock = clock
        self.ticked = False

    def status(self, text: str) -> None:
        if text.startswith("loading the embedding model"):
            self.clock[0] += 30

    def update(
        self,
        phase: str,
        done: int,
        total: int,
        chunks: int,
        force: bool = False,
        unit: str = "",
        after: int = 0,
    ) -> None:
        if phase == "embedding" and done and not self.ticked:
            self.ticked = True
            self.clock[0] += 100

    def clear(self) -> None:
        return None


def test_the_question_estimates_as_the_bar_does_without_the_models_load(
    private_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first batch embedded in 100 s (after a 30 s load), the rest left: the question's
    estimate is the bar's rate (the batch over 100 s), not one that counts the load as
    embedding time (over 130 s). The batch is the text tier's 180 chunks since backfills read
    what waits a kind at a time (it was 256 chunks, 44 left, ~17 s)."""
    write_claude(private_home, "sess-r", 180)  # 300 chunks
    clock = [0.0]
    monkeypatch.setattr(indexer.time, "monotonic", lambda: clock[0])
    questions: list[str] = []
    opts = indexer.IndexOptions(home=private_home, interactive=True, budget=60)
    report = indexer.index(
        opts, progress=_SlowLoad(clock), ask=lambda q: questions.append(q) or False
    )
    done = report.embedded
    left = 300 - done
    assert 0 < done < 300
    eta, with_load = fmt_eta(left * 100 / done), fmt_eta(left * 130 / done)
    assert eta != with_load
    assert questions == [
        f"{left} chunks are searchable by words but still need vectors (~{eta} left, rough). "
        "Finish it now? [Y/n] "
    ]


class _Counts(_Recorder):
    def update(
        self,
        phase: str,
        done: int,
        total: int,
        chunks: int,
        force: bool = False,
        unit: str = "",
        after: int = 0,
    ) -> None:
        self.events.append(("update", phase, str(done), str(total), str(chunks), str(after)))


def test_the_sweeps_bar_counts_the_chunks_found_before_they_are_committed(
    private_home: Path,
) -> None:
    """A sweep commits every 2 s: the bar's `N chunks` counted only committed ones, and said
    `9/30 passes, 0 chunks` through a whole first pass."""
    for i in range(4):
        write_claude(private_home, f"sess-c{i}", 6)
    progress = _Counts()
    opts = indexer.IndexOptions(home=private_home, budget=None, embed=False)
    report = indexer.index(opts, progress=progress)
    assert report.chunks == 40
    text = [e for e in progress.events if e[:2] == ("update", "text (1 of 3)")]
    assert text[-1][2:4] == ("4", "4")  # the text read's 4 files of 4 …
    assert int(text[-1][4]) == 24  # … found its 24 chunks (6 per session), not yet committed
    assert text[-1][5] == "8"  # with 8 files to read after it: tool calls and tool results
