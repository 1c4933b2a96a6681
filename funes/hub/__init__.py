"""Sharing memories through the Hugging Face Hub: push, remote memories, caching,
the dataset card. huggingface_hub is imported only inside the functions that talk to the Hub,
so `funes --help` and local recall never load it.

- :mod:`funes.hub.spec` — what a ``--memory`` names (local dir or Hub dataset) and its states;
- :mod:`funes.hub.remote` — reading a remote memory at its head commit from the HF cache;
- :mod:`funes.hub.push` — `funes push`: the gate, the append, one guarded commit;
- :mod:`funes.hub.gate` — whole blocks scanned before anything leaves;
- :mod:`funes.hub.card` — the dataset card (`README.md`);
- :mod:`funes.hub.receipt` — which chunk ids this host has pushed where.
- :mod:`funes.hub.traces` — agent-trace datasets (their parquet conversion) as index units.

See docs/hub.md.
"""
