"""The dataset card (`README.md`) of a root memory.

funes writes a card only where there is none, and afterwards refreshes only the region between
`<!-- funes:stats -->` and `<!-- /funes:stats -->`. A card without both markers (in order) is
the owner's and is never touched.
"""

from __future__ import annotations

from datetime import UTC, datetime

START = "<!-- funes:stats -->"
END = "<!-- /funes:stats -->"

_BANDS = [
    (1_000, "n<1K"),
    (10_000, "1K<n<10K"),
    (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
    (100_000_000, "10M<n<100M"),
    (1_000_000_000, "100M<n<1B"),
    (10_000_000_000, "1B<n<10B"),
    (100_000_000_000, "10B<n<100B"),
    (1_000_000_000_000, "100B<n<1T"),
]


def size_category(n: int) -> str:
    for upper, band in _BANDS:
        if n < upper:
            return band
    return "n>1T"


def stats(chunks: int, model: str, now: datetime | None = None) -> str:
    day = (now or datetime.now(UTC)).strftime("%Y-%m-%d")
    return (
        f"{START}\n| | |\n|---|---|\n| Chunks | {chunks:,} |\n"
        f"| Embedding model | `{model}` |\n| Updated | {day} |\n{END}"
    )


def full_card(short: str, chunks: int, model: str, now: datetime | None = None) -> str:
    return f"""---
pretty_name: funes memory
tags:
  - funes
  - agent-memory
  - agent-traces
  - embeddings
  - lance
size_categories:
  - {size_category(chunks)}
---

# funes memory

A memory of coding-agent sessions (prompts, answers, reasoning, tool calls and their output),
chunked, embedded and indexed by [funes](https://github.com/huggingface/funes) so an agent can
search it. Every block was scanned for secrets before it was published.

```bash
funes recall "what did we decide about …" --memory {short}
```

Install: `pip install funes`

{stats(chunks, model, now)}

*Published with `funes push`; rows are only ever appended.*
"""


def updated_card(
    current: str | None, short: str, chunks: int, model: str, now: datetime | None = None
) -> tuple[str | None, str]:
    """(new README text or None to leave it, what happened: created | refreshed | "")."""
    if current is None:
        return full_card(short, chunks, model, now), "created"
    s = current.find(START)
    e = current.find(END, s + len(START)) if s >= 0 else -1
    if s < 0 or e < 0:
        return None, ""
    new = current[:s] + stats(chunks, model, now) + current[e + len(END) :]
    if new == current:
        return None, ""
    return new, "refreshed"
