"""The start of a short command that reads a memory (`get`, `sessions`, `scan`, a `sketch` not
yet cached, a `status` that counts the table): numpy with one BLAS thread, and no cyclic
garbage collection (`status` runs without it from its start: ``start_short``).

- numpy's OpenBLAS starts a thread per core when numpy is imported, and those threads spin
  while they wait for work: ~0.03 s of CPU at `funes get`'s start on 2 idle cores, more on a
  loaded machine, for a command that multiplies no matrix. OpenBLAS reads its thread count
  once, when it loads; the environment is put back as it was right after, so no child process
  and no later numpy use sees the setting (a user's own setting wins).
- Importing numpy, pyarrow and Lance allocates ~60,000 objects, and the collector walks the
  young ones some 90 times on the way for garbage there is none of: ~0.03 s of CPU (medians of
  15: 0.24 s against 0.27 s for those imports). Such a command reads one session window or two
  columns and exits, so it runs without the cyclic collector (reference counting still frees
  everything that is not in a cycle).
"""

from __future__ import annotations

import gc
import os
import sys

VAR = "OPENBLAS_NUM_THREADS"
_short = False  # start_short was called: this process runs one short command and ends


def start_short() -> None:
    """Call at the start of a short command that makes no garbage cycles worth collecting:
    `funes status` loads the index state (a dict per transcript: 9,030 at the 1M-chunk scale
    memory) and sweeps a Path and a unit per transcript, and the collector walked them some
    thirty times for nothing (94M of its 1,467M instructions, measured with callgrind)."""
    global _short
    gc.disable()
    _short = True


def start_reading() -> None:
    """Call before the first import of numpy (through the store) in a short reading command."""
    start_short()
    if "numpy" in sys.modules or VAR in os.environ:
        return
    os.environ[VAR] = "1"
    try:
        # lazy: this is the import whose start-up cost the thread count cuts
        import numpy  # noqa: F401
    finally:
        os.environ.pop(VAR, None)


def end(code: int) -> int:
    """End the process now with ``code`` if it ran a short command (``start_short``), its
    output flushed: the interpreter's own ending frees every module and object one by one and
    runs a last full collection, ~5 % of `funes get`'s instructions at the 1M scale memory
    (59M of 1,095M, callgrind) for memory the process hands back anyway. Nothing of funes
    runs at exit, and a short command writes nothing it has not closed. Returns ``code``
    (the interpreter ends as usual) for any other command, while a thread the usual ending
    would wait for still runs, or when the output cannot be flushed (a reader gone: the
    usual ending says so as before)."""
    if not _short:
        return code
    threading = sys.modules.get("threading")
    if threading is not None and any(
        t.is_alive() and not t.daemon and t is not threading.main_thread()
        for t in threading.enumerate()
    ):
        return code  # a thread the usual ending waits for (a Hub client's, say)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return code
    os._exit(code)
