"""numpy started with one BLAS thread, for the commands that read a memory and never multiply
a matrix (`get`, `status`).

numpy's OpenBLAS starts a thread per core when numpy is imported, and those threads spin while
they wait for work: ~0.03 s of CPU at `funes get`'s start on 2 idle cores, more on a loaded
machine (measured: bench/noop.py), for a command whose BLAS use is none. OpenBLAS reads its
thread count once, when it loads; the environment is put back as it was right after, so no
child process and no later numpy use sees the setting.
"""

from __future__ import annotations

import os
import sys

VAR = "OPENBLAS_NUM_THREADS"


def import_numpy_with_one_blas_thread() -> None:
    """Import numpy (and so pyarrow's and Lance's use of it) with one OpenBLAS thread, unless it
    is imported already or the user set the thread count."""
    if "numpy" in sys.modules or VAR in os.environ:
        return
    os.environ[VAR] = "1"
    try:
        # lazy: this is the import whose start-up cost the thread count cuts
        import numpy  # noqa: F401
    finally:
        os.environ.pop(VAR, None)
