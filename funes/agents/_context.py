"""Where an agent integration installs (``Context``), what one `add`/`remove` did (``Result``),
and the error for a user's config file funes cannot read (``ConfigError``): what every helper
module of ``funes.agents`` uses, imported from here so none imports ``_common``."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from funes.errors import FunesError
from funes.hub.spec import is_remote


class ConfigError(FunesError):
    """A user's config file funes cannot read safely; it is left untouched."""


@dataclass
class Context:
    """Where and what to install: ``home`` is ``$HOME`` (never ``$FUNES_HOME``)."""

    home: Path
    funes_bin: str
    memory: str | None = None
    mcp_url: str | None = None  # register this `funes mcp --http` URL instead of a stdio server

    @property
    def push_memory(self) -> str | None:
        """The Hub memory the session-boundary hooks publish to (None: no push hooks)."""
        return self.memory if self.memory and is_remote(self.memory) else None

    @property
    def index_memory(self) -> str | None:
        """The memory the index hook writes: a local one (a Hub memory is fed by push)."""
        return None if self.push_memory else self.memory

    @property
    def integrations(self) -> Path:
        return self.home / ".funes" / "integrations"

    def show(self, path: Path) -> str:
        """``path`` with ``$HOME`` written as ``~``, for output."""
        try:
            return "~/" + str(path.relative_to(self.home))
        except ValueError:
            return str(path)


@dataclass
class Result:
    """What one `add`/`remove` did, what the user must do by hand, and what went wrong."""

    agent: str
    done: list[str] = field(default_factory=list)
    manual: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    changed: bool = False

    def did(self, msg: str, changed: bool = True) -> None:
        self.done.append(msg)
        self.changed = self.changed or changed

    def todo(self, cmd: str) -> None:
        self.manual.append(cmd)

    def problem(self, msg: str) -> None:
        self.problems.append(msg)
