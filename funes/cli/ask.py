"""`funes ask AGENT QUESTION… [--memory M] [--anyway]`: an answer from an agent's own CLI
(every registered agent that declares how to ask it: Claude Code, Codex, Gemini CLI, Qwen Code,
Copilot CLI, Cursor, OpenCode), grounded in what recall finds in the memory.

Order: the agent is on PATH (its `--version` runs while recall does, and must succeed); the
memory is readable (no offline fallback); recall runs in process with fixed parameters (k 8,
candidates 30, half-life 30 d, neighbours 1); a weak verdict stops here unless `--anyway`; the
agent runs non-interactively on the grounding prompt with its MCP servers off, a spinner on a
terminal following its stream; its answer is printed, and any session it cites that recall did
not return is flagged on stderr. See docs/funes-ask.md.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import threading
from typing import TYPE_CHECKING, TextIO

from funes.cli._args import Parser, term_cols
from funes.cli._pipe import run
from funes.cli._tty import Line, plain
from funes.errors import FunesError, UsageError
from funes.hub.spec import parse_many

if TYPE_CHECKING:
    from funes.agents.ask import Outcome
    from funes.results import Result


def build_parser() -> argparse.ArgumentParser:
    # lazy: the agents' registry stays off fast commands' start-up
    from funes.agents.ask import agents

    names = ", ".join(agents())
    p = Parser(
        prog="funes ask",
        example="funes ask claude 'which retry budget did we settle on?'",
        description=f"Ask an agent ({names}) a question; it answers from the passages funes "
        "recalls from your memory, and names the sessions it used.",
        epilog="Exit status: 0 answered, 1 no answer (agent missing or failed, memory "
        "unreadable, nothing or only weak evidence recalled), 2 bad arguments.",
    )
    p.add_argument("agent", metavar="AGENT", help=f"one of {names} (its CLI must be on PATH)")
    p.add_argument(
        "question", nargs="+", metavar="QUESTION", help="the question (words are joined by spaces)"
    )
    p.add_argument("--memory", metavar="M", help="the memory to recall from (default: yours)")
    p.add_argument(
        "--anyway",
        action="store_true",
        help="ask even when recall finds only weak evidence (the agent is told so)",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run(lambda: _main(args))


def _main(args: argparse.Namespace) -> int:
    # lazy: funes.agents and funes.render stay off fast commands' start-up
    from funes.agents import ask
    from funes.render.ask import unrecalled_text
    from funes.render.formats import neutralise

    agent = ask.check_agent(args.agent)
    question = " ".join(args.question).strip()
    if not question:
        raise UsageError("empty question — say what to ask")
    pre = ask.Preflight(agent)  # a missing agent fails here; its --version overlaps recall
    spin = Spinner(sys.stderr)
    try:
        spin.show("recalling…")
        result = _recall(question, args.memory)
        spin.show(f"checking {agent}…")
        pre.check()
        if result.verdict == "weak" and not args.anyway:
            raise FunesError(
                f"weak evidence — nothing in {result.memory} closely matches that question, so "
                f"{agent} was not asked; rephrase it, look at the nearest passages with "
                "`funes recall …`, or pass --anyway"
            )
        # the passages are neutralised by the recall format; the question is the user's words
        prompt = neutralise(ask.grounding_prompt(question, _passages(result)))
        spin.show(f"asking {agent}…")
        outcome = ask.run(agent, prompt, on_activity=spin.show)
    finally:
        spin.stop()
        pre.cancel()
    if outcome.exit_code != 0 or not (outcome.answer or "").strip():
        shown = _replay(outcome)
        if outcome.exit_code != 0:
            where = "its output is above" if shown else "it printed nothing"
            raise FunesError(f"`{agent}` failed (exit {outcome.exit_code}); {where}")
        where = "; its output is above" if shown else " and printed nothing"
        raise FunesError(f"`{agent}` ended without an answer{where}")
    answer = neutralise((outcome.answer or "").rstrip())
    _print_answer(answer)
    recalled = [h.row["session_id"] for h in result.hits]
    sys.stderr.write(unrecalled_text(ask.unrecalled_citations(answer, recalled)))
    return 0


def _recall(question: str, memory: str | None) -> Result:
    """Recall with the reference's fixed parameters; the memory must be read as it is now
    (an unreachable remote is an error, never a cached copy or the local memory)."""
    # lazy: funes.agents and funes.retrieval stay off fast commands' start-up
    from funes.agents import ask
    from funes.retrieval import Filters, MultiSearcher, Query
    from funes.search import open_searcher

    searcher = open_searcher(memory)
    searchers = searcher.searchers if isinstance(searcher, MultiSearcher) else [searcher]
    # A note means the memory named was not read as it is now (an offline remote served from
    # its cached copy, or replaced by the local memory): ask refuses rather than degrade.
    for spec, s in zip(parse_many(memory), searchers, strict=False):
        if s.memory.note:
            raise FunesError(
                f"{spec.label} is unreachable right now — try again once you're back online"
            )
    q = Query(
        question,
        k=ask.RECALL_K,
        candidates=ask.RECALL_CANDIDATES,
        neighbors=ask.RECALL_NEIGHBORS,
        half_life=ask.RECALL_HALF_LIFE,
        filters=Filters(),
    )
    result = searcher.search(q)
    if not result.hits:
        raise FunesError("nothing recalled for that question — no passages to ground an answer in")
    return result


def _passages(result: Result) -> str:
    """The recalled passages as the prompt gives them (:func:`funes.render.ask.passages_text`)."""
    # lazy: funes.agents.ask and funes.render.ask stay off fast commands' start-up
    from funes.agents.ask import PROMPT_BYTES
    from funes.render.ask import passages_text

    return passages_text(result, PROMPT_BYTES)


def _replay(outcome: Outcome) -> bool:
    """Write what the agent printed to stderr; False when it printed nothing."""
    # lazy: funes.render.ask stays off fast commands' start-up
    from funes.render.ask import replay_text

    text = replay_text(outcome.stdout, outcome.stderr)
    sys.stderr.write(text)
    sys.stderr.flush()
    return bool(text)


def _print_answer(answer: str) -> None:
    # lazy: funes.render.ask stays off fast commands' start-up
    from funes.render.ask import answer_text

    out = sys.stdout
    color = out.isatty() and not plain()
    out.write(answer_text(answer, _width(out) if color else 0, color))
    out.flush()


def _width(stream: TextIO) -> int:
    return max(20, min(120, term_cols(stream)))


class Spinner:
    """A one-line spinner on a terminal's stderr, labelled by what is happening; silent when
    stderr is not a terminal. ``show`` may be called from any thread. Its frames are drawn by
    :class:`~funes.cli._tty.Line`, as every spinner's: never wider than the terminal is now, no
    escape byte under NO_COLOR or TERM=dumb."""

    FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        try:
            self.enabled = stream.isatty()
        except (ValueError, OSError):
            self.enabled = False
        self.label = ""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._line = Line(stream)

    def show(self, label: str) -> None:
        if not self.enabled:
            return
        with self._lock:
            self.label = label
        if self._thread is None:
            self._thread = threading.Thread(target=self._spin, daemon=True)
            self._thread.start()

    def _spin(self) -> None:
        for frame in itertools.cycle(self.FRAMES):
            with self._lock:
                if self._stop.is_set():
                    return
                self._line.draw(f"{frame} {self.label}")
            self._stop.wait(0.1)

    def stop(self) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self._thread = None
        with self._lock:
            self._line.erase()


if __name__ == "__main__":
    sys.exit(main())
