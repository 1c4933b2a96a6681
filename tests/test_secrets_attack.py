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
        if not rated(kind)
    }
    assert {k: v for k, v in missed.items() if v} == {}


def rated(kind: str) -> bool:
    """Kinds found by their look alone, which a few random values lack: letters alone (told
    from a name by their letter pairs), and a backslash before an `n` or an `r` (read, in the
    lowered text the rules run on, as an escaped line break that ends the value)."""
    return kind.startswith("letters-") or kind.endswith("-punct-backslash")


def test_passwords_of_letters_alone_or_with_backslashes_are_redacted_but_for_a_few() -> None:
    rng = random.Random(24)
    found: dict[str, int] = {"letters": 0, "backslash": 0}
    total = dict.fromkeys(found, 0)
    for _ in range(150):
        for kind, text, frags in cases(rng):
            if rated(kind):
                k = "letters" if kind.startswith("letters-") else "backslash"
                total[k] += 1
                found[k] += not leaked(redact(text), frags)
    assert total["letters"] > 250 and total["backslash"] > 50
    assert all(found[k] >= 0.95 * total[k] for k in found), (found, total)


@given(st.integers(0, 2**32 - 1))
@settings(max_examples=15, deadline=None, derandomize=True)
def test_every_generated_credential_is_redacted_as_a_transcript_stores_it(seed: int) -> None:
    missed = {}
    for kind, text, frags in cases(random.Random(seed)):
        if rated(kind):
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
