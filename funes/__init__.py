"""funes: a local, append-only memory of coding agents' sessions."""

__version__ = "0.1.0"
