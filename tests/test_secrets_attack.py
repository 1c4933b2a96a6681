"""An attacker's probe of the detectors (tests/credential_attack.py): fresh credentials in shapes
the other probes do not write — no digit, every punctuation class, a dozen programming and
configuration languages, prose in twenty languages, escaped as a transcript stores them,
provider formats — all redacted, and code or names after the same labels left alone."""

from __future__ import annotations

import json
import random

from credential_attack import cases, decoys, digest, escaped
from hypothesis import given, settings
from hypothesis import strategies as st

from funes.secrets import find, redact


def leaked(out: str, frags: list[str]) -> list[str]:
    """The frags still in ``out``, as written or JSON-escaped (by digest, never the value)."""
    return [digest(f) for f in frags if f in out or json.dumps(f)[1:-1] in out]


def test_the_generated_texts_hold_their_values() -> None:
    for kind, text, frags in cases(random.Random(3)):
        assert frags and leaked(text, frags), kind


@given(st.integers(0, 2**32 - 1))
@settings(max_examples=40, deadline=None, derandomize=True)
def test_every_generated_credential_is_redacted(seed: int) -> None:
    missed = {
        kind: leaked(redact(text), frags)
        for kind, text, frags in cases(random.Random(seed))
        if not kind.startswith("letters-")
    }
    assert {k: v for k, v in missed.items() if v} == {}


def test_passwords_of_letters_alone_are_redacted_but_for_a_few_that_read_as_words() -> None:
    # a value of letters alone (`sqMgLjXolXCwYjn`) after a password's name is told from a
    # name (`getApiKeyForModel`) by its letter pairs; about one in fifty reads as words
    rng = random.Random(24)
    found = total = 0
    for _ in range(150):
        for kind, text, frags in cases(rng):
            if kind.startswith("letters-"):
                total += 1
                found += not leaked(redact(text), frags)
    assert found >= 0.95 * total


@given(st.integers(0, 2**32 - 1))
@settings(max_examples=15, deadline=None, derandomize=True)
def test_every_generated_credential_is_redacted_as_a_transcript_stores_it(seed: int) -> None:
    missed = {}
    for kind, text, frags in cases(random.Random(seed)):
        if kind.startswith("letters-"):
            continue
        if left := leaked(redact(escaped(text)), frags):
            missed[kind] = left
    assert missed == {}


@given(st.integers(0, 2**32 - 1))
@settings(max_examples=20, deadline=None, derandomize=True)
def test_code_and_names_after_a_secrets_label_are_kept(seed: int) -> None:
    found = {}
    for kind, text in decoys(random.Random(seed)):
        for form in (text, escaped(text)):
            if hits := find(form):
                found[kind] = [f.detector for f in hits]
    assert found == {}
