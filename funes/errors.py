"""The one exception type whose message is meant for the user."""


class FunesError(Exception):
    """A failure the user can act on. The CLI prints ``funes: <message>`` and exits 1.

    Messages say what failed, with which file or argument, and what to do next. They never
    contain secrets or whole transcript text.
    """

    exit_code = 1


class UsageError(FunesError):
    """Bad arguments: exit status 2."""

    exit_code = 2
