"""``RULES_VERSION``: which detector rules redacted a text.

An explicit version of the built-in rules (the detectors, the provider table, the wallet
checks), raised by hand in the change that makes them find something they did not find before
or stop finding something they found. A memory's redaction stamp records it, and a stamp with
another version — or an older funes's fingerprint of the detectors' source — vouches for
nothing (see :mod:`funes.store.redaction`): the memory is masked at serve time by `get` and
`recall` until the next `funes scrub` cleans it with these rules.

A refactor that finds exactly what it found before keeps the version, so it costs no memory
its stamp. tests/test_secrets.py holds a digest of what the rules find on a seeded corpus for
this version: a change of behaviour without a raised version fails there.
"""

from __future__ import annotations

RULES_VERSION = "10"
