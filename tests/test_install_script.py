"""`bin/install` says what it is doing before the minute or two pip takes, not only after."""

from __future__ import annotations

import os
import select
import signal
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_install_names_its_slow_step_before_taking_it(tmp_path: Path) -> None:
    venv, bindir = tmp_path / "venv", tmp_path / "bin"
    env = {**os.environ, "HOME": str(tmp_path), "FUNES_VENV": str(venv), "FUNES_BIN": str(bindir)}
    p = subprocess.Popen(
        [str(REPO / "bin" / "install")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
    )
    assert p.stdout is not None
    try:
        ready, _, _ = select.select([p.stdout], [], [], 20)
        first = p.stdout.readline().decode() if ready else ""
        still_running = p.poll() is None
    finally:
        os.killpg(p.pid, signal.SIGKILL)  # the install itself is not what is tested
        p.wait(timeout=30)
    assert first == (
        f"bin/install: installing funes and its dependencies into {venv} "
        "(a minute or two the first time)…\n"
    )
    assert still_running  # said before the install, not at its end
