"""A file funes cannot write or read is one `funes:` line naming it, why, and what to do next.

Tests run as root here, where permissions do not stop a write and no read-only mount is at
hand, so the command body raises the OS error the store raises (`store.lock` on a read-only
file system, as a walk-through with a read-only FUNES_HOME saw) and the real error path of
every command (`funes.cli._pipe.run`) reports it."""

from __future__ import annotations

import errno
import os

import pytest

from funes.cli._pipe import run


def _fail(code: int, path: str) -> int:
    raise OSError(code, os.strerror(code), path)


@pytest.mark.parametrize(
    ("code", "says"),
    [
        (errno.EROFS, "read-only file system — this command writes there: make it writable, or "
                      "point FUNES_HOME (or --memory) at a directory you can write"),
        (errno.EACCES, "permission denied — check its owner and permissions (and its folders')"),
        (errno.EPERM, "permission denied — check its owner and permissions (and its folders')"),
    ],
)  # fmt: skip
def test_a_file_funes_cannot_use_is_named_with_what_to_do(
    code: int, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(lambda: _fail(code, "/srv/funes/memory/store.lock")) == 1
    err = capsys.readouterr().err
    assert err == f"funes: /srv/funes/memory/store.lock: {says}\n"


def test_other_os_errors_keep_their_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(lambda: _fail(errno.ELOOP, "/srv/x.jsonl")) == 1
    assert capsys.readouterr().err == "funes: /srv/x.jsonl: symlink loop\n"
