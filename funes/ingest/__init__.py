"""Ingest: transcripts in, a memory filled — everything that reads sources and writes a store.

- :mod:`funes.ingest.indexer` — `funes index`: parse → chunk (redacted) → skip stored ids →
  write, lexical-first; Hub trace datasets resolved into units through :mod:`funes.hub.traces`;
- :mod:`funes.ingest.backfill` — vectors filled in behind the text (`funes index --backfill`);
- :mod:`funes.ingest.report` — what a run reports (counts, lines to show) and the progress hook
  it calls (the CLI draws the bar; the library draws nothing);
- :mod:`funes.ingest.scrub` — `funes scrub`: secrets already stored taken out for good;
- :mod:`funes.ingest.pending` — which transcripts on this machine are not fully indexed yet.

The store below (:mod:`funes.store`) keeps the table, the lexical index, the indexing state and
the writer lock; it never reads a transcript.
"""
