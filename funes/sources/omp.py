"""omp (Oh My Pi) sessions: `~/.omp/agent/sessions/<encoded-project>/<ISO-ts>_<uuid>.jsonl`.

omp is a fork of pi and writes pi's JSONL (read by the pi source's parser, see
``funes.sources.pi``), stored under harness ``omp``. Besides pi's entries it writes ``title`` /
``title_change`` records and ``developer`` messages (instructions the harness gives the model),
neither conversation content.

Where: the default profile keeps sessions in ``~/.omp/agent/sessions``, a named profile in
``~/.omp/profiles/<name>/agent/sessions``; with ``$XDG_DATA_HOME/omp`` present omp keeps them
there instead, without the ``agent`` segment (``$XDG_DATA_HOME/omp/sessions`` and
``$XDG_DATA_HOME/omp/profiles/<name>/sessions``). All are swept.

Session id: the header's ``id``.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from funes.sources import Source, env_path, pi

NOT_CONTENT = pi.NOT_CONTENT | {"title", "title_change", "message:developer"}


def locate(home: Path) -> list[Path]:
    out = [home / ".omp/agent/sessions"]
    out += sorted((home / ".omp/profiles").glob("*/agent/sessions"))
    xdg = env_path("XDG_DATA_HOME")
    if xdg is not None and (xdg / "omp").is_dir():
        out.append(xdg / "omp/sessions")
        out += sorted((xdg / "omp/profiles").glob("*/sessions"))
    return out


SOURCE = Source(
    name="omp",
    harness="omp",
    roots=(".omp/agent/sessions",),
    parse_records=partial(pi.parse_pi_records, harness="omp"),
    locate=locate,
    sniff_order=60,  # never by sniffing: pi's sniff reads the same records
    not_content=NOT_CONTENT,
)
