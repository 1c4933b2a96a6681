"""Agent transcript formats → Turns.

Each agent format is one module exposing a ``SOURCE`` (a :class:`Source`), registered under the
entry-point group ``funes.sources``; nothing else in funes knows the formats' names. The
package is split by concern:

- ``funes.sources.base``: the :class:`Source` and :class:`FileStats` records every source shares,
  and the registry of the installed sources;
- ``funes.sources.facets``: timestamps, the workdir / repo facets, tool content helpers;
- ``funes.sources.jsonl``: line-level JSONL reading with skip accounting;
- ``funes.sources.routing``: paths → units (which source reads which file) → turns.

Their public names are re-exported here, so a source imports everything from ``funes.sources``.
"""

from __future__ import annotations

from funes.sources.base import (
    FileStats,
    RecordParser,
    Source,
    coverage,
    distinct_id,
    env_path,
    get_source,
    known_roots,
    no_turns,
    registry,
)
from funes.sources.facets import (
    TurnChain,
    anthropic_blocks,
    compact_json,
    display_path,
    flatten_tool_content,
    is_blank,
    iso_from_epoch,
    iso_utc,
    line_id,
    munge_workdir,
    opt_str,
    repo_of,
    text_blocks,
    text_part,
    thinking_block,
    tool_blocks,
    workdir_of_path,
)
from funes.sources.jsonl import (
    irregular,
    iter_json_lines,
    open_regular,
    read_json_document,
)
from funes.sources.routing import (
    NotATranscript,
    Unit,
    discover,
    os_reason,
    parse,
    parse_stream,
    parse_unit,
    parse_units,
    sniff,
    sweep,
)

__all__ = [
    "FileStats",
    "NotATranscript",
    "RecordParser",
    "Source",
    "TurnChain",
    "Unit",
    "anthropic_blocks",
    "compact_json",
    "coverage",
    "discover",
    "display_path",
    "distinct_id",
    "env_path",
    "flatten_tool_content",
    "get_source",
    "irregular",
    "is_blank",
    "iso_from_epoch",
    "iso_utc",
    "iter_json_lines",
    "known_roots",
    "line_id",
    "munge_workdir",
    "no_turns",
    "open_regular",
    "opt_str",
    "os_reason",
    "parse",
    "parse_stream",
    "parse_unit",
    "parse_units",
    "read_json_document",
    "registry",
    "repo_of",
    "sniff",
    "sweep",
    "text_blocks",
    "text_part",
    "thinking_block",
    "tool_blocks",
    "workdir_of_path",
]
