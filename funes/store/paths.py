"""Where funes keeps its files: `$FUNES_HOME` and the memory directories under it.

`$FUNES_HOME`, else the platformdirs user data dir for `funes`. Every layer
that needs a path under the home asks here, so tests that set `FUNES_HOME` move everything.
"""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_MEMORY = "memory"
TABLE = "chunks"  # the LanceDB table; on disk `<memory>/chunks.lance`


def funes_home() -> Path:
    """`$FUNES_HOME`, else platformdirs' user data dir for funes (not created here)."""
    env = os.environ.get("FUNES_HOME")
    if env:
        return Path(env).expanduser()
    # lazy: platformdirs stays off fast commands' start-up
    from platformdirs import user_data_dir

    return Path(user_data_dir("funes", appauthor=False))


def default_memory_dir() -> Path:
    return funes_home() / DEFAULT_MEMORY


def memory_dir(spec: str | os.PathLike[str] | None = None) -> Path:
    """The directory of a local memory: ``--memory DIR`` as given, else the default one.

    ``local`` and an empty spec mean the default memory.
    """
    if spec is None or str(spec).strip() in ("", "local"):
        return default_memory_dir()
    return Path(os.path.abspath(Path(spec).expanduser()))


def memory_label(path: Path) -> str:
    """How a local memory is named in output (and accepted back by ``--memory``): its path."""
    return str(path)
