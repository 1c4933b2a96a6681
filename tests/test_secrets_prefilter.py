"""The detectors' prefilter (funes.secrets.detectors `_admitted`): a rule runs on a text that
holds one of its triggers (some are context a rule needs, like `pgpass` or `sentry`), and the
prefilter finds those words without one `in` per rule — `_present`'s shared words and rare
letters, the gate's windows for the case-sensitive rules, the prose names' positions. It may
only leave out a rule that finds nothing there.

Checked on generated credentials (tests/credential_shapes.py, the seeded corpus of
bench/secret_detection.py) in the forms a transcript holds them: as written, JSON-escaped,
inside other text, in capitals: every rule whose trigger is in the text is run unfiltered, and
each that finds something must be one the prefilter admitted; and `find` with those rules run
from every position must give what `find` gives."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator

import pytest
from credential_shapes import cases
from hypothesis import given, settings
from hypothesis import strategies as st
from test_secrets import bench

from funes.secrets import detectors as d
from funes.secrets import find


def forms(text: str) -> Iterator[str]:
    yield text
    yield json.dumps(text)[1:-1]  # a transcript line holds it JSON-escaped
    yield f"ran the deploy, then:\n{text}\nand it worked"
    yield text.upper()
    yield text.lower()


def triggered(rule: d.Rule, text: str, lowered: str) -> bool:
    """What the prefilter decides, the plain way: one of the rule's triggers is in the text
    (the prose rule's: an ASCII trigger, or a name beyond ASCII)."""
    hay = lowered if rule.lower else text
    if rule is d._PROSE_RULE and any(n in lowered for n in d._PROSE_OTHER_TRIGGERS):
        return True
    return any(t in hay for t in rule.triggers)


def unfiltered(rule: d.Rule, hay: str, lowered: str) -> Iterator[re.Match[str]]:
    if rule is d._PROSE_RULE:
        return d._PROSE.finditer(lowered)
    return rule.regex.finditer(hay)


def skipped_rules(text: str) -> list[str]:
    """The rules that find something in ``text`` but which the prefilter did not admit."""
    lowered = d._lower(text)
    present = d._present(lowered)
    cased, _hits = d._gate(text)
    admitted = {
        id(r) for r, _ in d._admitted(text, lowered, present, cased, d._prose_others(lowered))
    }
    out = []
    for rule in d.RULES:
        hay = lowered if rule.lower else text
        if id(rule) in admitted or not triggered(rule, text, lowered):
            continue
        if any(d._candidate(rule, text, m) is not None for m in unfiltered(rule, hay, lowered)):
            out.append(rule.detector)
    return out


def texts(seed: int) -> list[str]:
    rng = random.Random(seed)
    return [t for _, text, _ in cases(rng) for t in forms(text)]


@given(st.integers(0, 2**32 - 1))
@settings(max_examples=6, deadline=None, derandomize=True)
def test_the_prefilter_admits_every_rule_that_finds_a_generated_credential(seed: int) -> None:
    missed = {}
    for k, text in enumerate(texts(seed)):
        if skipped := skipped_rules(text):
            missed[k] = skipped  # rule names and case numbers: never the text
    assert missed == {}


def test_the_prefilter_admits_every_rule_on_the_seeded_corpus() -> None:
    missed = []
    for s in bench.seeded_corpus(2, seed=31):
        for text in forms(s.text):
            if skipped := skipped_rules(text):
                missed.append((skipped, s.context))
    assert missed == []


def test_the_rules_admitted_are_a_few_on_clean_text() -> None:
    # the prefilter does something: prose with none of the rules' words runs no rule at all
    text = "Refactored the chunker so that split() now prefers line breaks over spaces."
    lowered = d._lower(text)
    cased, _ = d._gate(text)
    assert d._admitted(text, lowered, d._present(lowered), cased, ()) == []
    assert skipped_rules(text) == []


def test_find_with_every_rule_admitted_finds_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = texts(7) + [s.text for s in bench.seeded_corpus(2, seed=8)]
    corpus += bench.clean_corpus(100, seed=9)
    shipped = [find(t) for t in corpus]
    # the anchored rules tried at their words' occurrences however many there are (short
    # texts otherwise run the regex over the whole text)
    monkeypatch.setattr(d, "_ANCHORED_SPACING", 0)
    anchored = [find(t) for t in corpus]

    def admitted(
        text: str, lowered: str, present: object, cased: list[d.Rule], others: tuple[str, ...]
    ) -> list[tuple[d.Rule, str]]:
        return [(r, lowered if r.lower else text) for r in d.RULES if triggered(r, text, lowered)]

    # the prefilter off: every rule on every text, its regex (the prose rule's too) from every
    # position
    monkeypatch.setattr(d, "_admitted", admitted)
    monkeypatch.setattr(
        d, "_rule_matches", lambda rule, hay, found, others: unfiltered(rule, hay, hay)
    )
    unfiltered_found = [find(t) for t in corpus]
    assert sum(map(len, shipped)) > len(corpus) / 2  # the generated credentials are found
    assert [
        k for k, (a, b) in enumerate(zip(shipped, unfiltered_found, strict=True)) if a != b
    ] == []
    assert [
        k for k, (a, b) in enumerate(zip(anchored, unfiltered_found, strict=True)) if a != b
    ] == []


@given(st.integers(0, 2**32 - 1))
@settings(max_examples=20, deadline=None, derandomize=True)
def test_an_anchored_rule_finds_what_its_regex_finds(seed: int) -> None:
    # each anchored rule over generated credentials among the words other rules start with:
    # tried only at its anchors, it matches what its regex matches from every position
    rng = random.Random(seed)
    words = [w for r in d.RULES for w, _ in r.anchors] + ["-", "=", " ", "\n", '"', ":"]
    parts = [t for _, text, _ in cases(rng) for t in (text, json.dumps(text)[1:-1])]
    seps = ["", "=", ": ", " = ", '": "', " is `", "  "]
    text = "".join(
        rng.choice(words) + rng.choice(seps) + rng.choice(parts) for _ in range(60)
    ).lower()
    found = d._found(text)
    for rule in d.RULES:
        if rule.anchors:
            starts = [p + shift for w, shift in rule.anchors for p in found.get(w, ())]
            # a shared regex (the name rules') matches there what the rule's own does
            got = d._anchored_matches(rule.shared or rule.regex, text, starts, True)
            assert [m.span() for m in got] == [m.span() for m in rule.regex.finditer(text)], (
                rule.detector
            )


def test_every_trigger_and_anchor_is_a_word_of_the_automaton() -> None:
    words = set(d._AUTOMATON_WORDS)
    lowered_triggers = {t for r in d.RULES if r.lower for t in r.triggers}
    assert lowered_triggers - words == set()
    assert {w for r in d.RULES for w, _ in r.anchors} - words == set()
    assert {r.detector for r in d.RULES if r.anchors and not r.lower} == set()
    # the names beyond ASCII are looked for only in text holding one of their letters
    assert [n for n in d._PROSE_OTHER_TRIGGERS if not d._PROSE_OTHER_CHARS.search(n)] == []


@given(
    st.text(
        st.sampled_from("aZ09+/_-=.~: \n\\é→😀?") | st.sampled_from("abcXYZ019+/_-"), max_size=200
    )
)
@settings(max_examples=300, deadline=None, derandomize=True)
def test_the_base64_runs_are_the_regex_runs(text: str) -> None:
    # `_b64_runs` finds base64 runs without the regex that tries every letter; the same spans
    assert list(d._b64_runs(text)) == [m.span() for m in d._B64_RUN.finditer(text)]
