"""The rendering floor: text made from data, shared by the CLI and the MCP server.

- :mod:`funes.render.formats` — the agent formats of `recall` and `get` (a byte-stable
  contract) and their human renderings for a terminal;
- :mod:`funes.render.turns` — the turns of a session window (what `get` shows);
- :mod:`funes.render.status` — `status` of a local or a remote memory, and :func:`age`;
- :mod:`funes.render.sessions` — the session verbs: `sessions`, `scan`, ranged `get`, `sketch`;
- :mod:`funes.render.push` — the report of a `push`;
- :mod:`funes.render.curate` — the sessions `curate` lists for review off a terminal;
- :mod:`funes.render.doctor` — the wiring report of `doctor`, and what `doctor --fix` did;
- :mod:`funes.render.models` — the models of `models`, their checks, what `models fetch` fetched;
- :mod:`funes.render.parse` — `funes-parse`'s counts and its `--report` coverage table;
- :mod:`funes.render.ask` — the passages `ask` hands an agent, its answer, unrecalled citations.

Nothing here parses arguments, looks at the terminal (its width, whether it takes colour) or
decides an exit status: the CLI does, and passes width and colour in. Importing any of these
modules is cheap (no model, no LanceDB client, no numpy).
"""
