"""The one exception type whose message is meant for the user."""

import errno
import re


class FunesError(Exception):
    """A failure the user can act on. The CLI prints ``funes: <message>`` and exits 1.

    Messages say what failed, with which file or argument, and what to do next. They never
    contain secrets or whole transcript text.
    """

    exit_code = 1


class UsageError(FunesError):
    """Bad arguments: exit status 2."""

    exit_code = 2


def no_space(e: BaseException) -> bool:
    """Whether ``e`` is the disk (or the user's quota) being full, however the layer that
    wrote wrapped it: Lance raises RuntimeError naming `os error 28` and its Rust source file,
    numpy's ``tofile`` an OSError without errno for its short write."""
    if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    text = str(e)
    if isinstance(e, OSError) and e.errno is None and _SHORT_WRITE.fullmatch(text):
        return True
    return "os error 28" in text or "os error 122" in text or "No space left on device" in text


_SHORT_WRITE = re.compile(r"\d+ requested and \d+ written")


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1 (`1 row`, `2 rows`): how a message to the
    user counts, never `row(s)`."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
