"""The argument parser every funes command uses: a mistake is one `funes:` line, exit 2.

argparse's own error prints the whole usage block and its message under the program's name;
here it is one line naming what was wrong, with a pointer when the mistake is a common one
(``--top 3`` → ``-k``) or a near spelling of a real option, and where the full help is.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import Any, NoReturn

# Options people reach for from other tools, and the one funes means.
HINTS = {
    "--top": "-k",
    "--top-k": "-k",
    "--topk": "-k",
    "-n": "-k",
    "--num": "-k",
    "--count": "-k",
    "--results": "-k",
    "--agent": "--harness",
    "--kind": "--type",
    "--block-type": "--type",
    "--after": "--since",
    "--before": "--until",
    "--db": "--memory",
}


class _AgentNames:
    """The registered agents' ``--harness`` names, looked up only when help is printed (an
    option's help names them as ``%(agents)s``)."""

    def __str__(self) -> str:
        from funes import validate  # lazy: the sources registry only for --help

        return ", ".join(validate.agent_names())


def harness_option(p: argparse.ArgumentParser, help: str, **kw: object) -> argparse.Action:
    """A ``--harness`` option whose help lists the registered agents (``%(agents)s`` in
    ``help``), read from the registry when the help is shown, never at start-up."""
    action = p.add_argument("--harness", help=help, **kw)  # type: ignore[arg-type]
    action.agents = _AgentNames()  # type: ignore[attr-defined]
    return action


_INVALID_CHOICE = re.compile(r"invalid choice: '([^']*)' \(choose from (.*)\)$")
_CODE = re.compile(r"`[^`\n]*`")


class Formatter(argparse.RawDescriptionHelpFormatter):
    """Help text as written where it is indented (an example's command and sample output, to
    copy whole), filled to the terminal's width where it is prose: each run of lines that
    start at the margin is one paragraph."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        import textwrap  # lazy: only for --help (0.7 ms at every command's start-up otherwise)

        out: list[str] = []
        prose: list[str] = []

        def flush() -> None:
            if prose:
                # A `code span` (a command to type) is never split across two lines.
                para = _CODE.sub(lambda m: m[0].replace(" ", "\0"), " ".join(prose))
                lines = textwrap.wrap(para, width, initial_indent=indent,
                                      subsequent_indent=indent, break_long_words=False)  # fmt: skip
                out.extend(x.replace("\0", " ") for x in lines)
                prose.clear()

        for line in text.splitlines():
            if line and not line[0].isspace():
                prose.append(line.strip())
            else:
                flush()
                out.append(indent + line)
        flush()
        return "\n".join(out)


def term_cols(stream: Any = None) -> int:
    """The terminal's columns, unclamped: those of the terminal ``stream`` writes to, when one
    is given and it reports a size (a line redrawn in place must fit the terminal as it is now,
    whatever $COLUMNS said at start); else $COLUMNS; else standard output's terminal's; else 80.

    ``shutil.get_terminal_size()``'s rule, without shutil: importing it (and its zlib, bz2,
    lzma) doubles what building a plumbing command's parser costs (3.8 against 1.7 ms of CPU).
    Every width funes lays out or cuts to comes from here (help, human output, bars, spinners).
    """
    if stream is not None and (columns := _reported(stream)):
        return columns
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    return columns if columns > 0 else _reported(sys.__stdout__) or 80


def _reported(stream: Any) -> int:
    """The columns the terminal ``stream`` writes to reports; 0 for none (a pipe, a file, a
    closed stream, a new pseudo-terminal)."""
    try:
        return max(os.get_terminal_size(stream.fileno()).columns, 0)
    except (AttributeError, ValueError, OSError):
        return 0


class Parser(argparse.ArgumentParser):
    """argparse with one-line `funes:` errors and, after the help, an example to copy."""

    def __init__(self, *args: Any, example: str | None = None, **kw: Any) -> None:
        kw.setdefault("formatter_class", Formatter)
        super().__init__(*args, **kw)
        self.example = example

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse makes a formatter per add_argument, each asking `shutil` for the terminal's
        # width: the same width, without shutil (see term_cols)
        return self.formatter_class(prog=self.prog, width=term_cols() - 2)  # type: ignore[call-arg]

    def format_help(self) -> str:
        text = super().format_help()
        return f"{text}\nexample:\n  $ {self.example}\n" if self.example else text

    def error(self, message: str) -> NoReturn:
        hint = self._hint(message)
        sys.stderr.write(f"funes: {message}{hint} — see `{self.prog} --help`\n")
        sys.exit(2)

    def _hint(self, message: str) -> str:
        import difflib  # lazy: only a refused argument needs a suggestion

        choice = _INVALID_CHOICE.search(message)
        if choice:
            near = difflib.get_close_matches(
                choice[1], re.findall(r"'([^']*)'", choice[2]), n=1, cutoff=0.7
            )
            return f" (did you mean {near[0]}?)" if near else ""
        if not message.startswith("unrecognized arguments:"):
            return ""
        options = {s for a in self._actions for s in a.option_strings}
        for token in message.split(":", 1)[1].split():
            if not token.startswith("-"):
                continue
            flag = token.split("=", 1)[0]
            want = HINTS.get(flag)
            if want in options:
                return f" (did you mean {want}?)"
            near = difflib.get_close_matches(flag, sorted(options), n=1, cutoff=0.75)
            if near:
                return f" (did you mean {near[0]}?)"
        return ""
