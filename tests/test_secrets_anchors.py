"""Anchored rules over the attack generator's code (tests/credential_attack.py): a rule tried
only where the automaton found one of its anchors (`Rule.anchors`, the word and how far before
it the match starts) matches exactly what its regex matches from every position.

tests/test_secrets_prefilter.py checks this on tests/credential_shapes.py's provider shapes;
the rules anchored since (SQL `IDENTIFIED BY`/`WITH PASSWORD`, `ConvertTo-SecureString`, a
name and value as two fields, Terraform variables, URL parameters named as secrets) match the
code idioms that generator writes, and URL query strings built here from every name the
URL-parameter rule knows."""

from __future__ import annotations

import json
import random

from credential_attack import cases, decoys
from hypothesis import given, settings
from hypothesis import strategies as st

from funes.secrets import detectors as d

# every spelling of the URL-parameter names (each `[_-]?` as `_`, `-` and nothing)
URL_NAMES = [
    n.replace("[_-]?", sep) for n in d._URL_PARAM_NAMES for sep in (("_", "-", "") if "[" in n else ("",))
]  # fmt: skip


def query(rng: random.Random) -> str:
    """A URL, a query string or a matrix parameter with a few named values, some secret."""
    params = [
        f"{rng.choice([*URL_NAMES, 'page', 'q', 'monkey', 'tokens', 'xsig'])}="
        + "".join(rng.choice("abcXYZ0123456789_-.%") for _ in range(rng.randint(1, 30)))
        for _ in range(rng.randint(1, 4))
    ]
    seps = [rng.choice("?&;") for _ in params]
    head = rng.choice(["https://api.acme.io/v1/items", "GET /x", "", "path;", "a?b="])
    return head + "".join(s + p for s, p in zip(seps, params, strict=True))


def haystack(rng: random.Random) -> str:
    words = [w for r in d.RULES for w, _ in r.anchors] + ["-", "=", " ", "\n", '"', ":", "?"]
    parts = [c[1] for c in cases(rng)] + [c[1] for c in decoys(rng)]
    parts = [t for p in parts for t in (p, json.dumps(p)[1:-1])] + [query(rng) for _ in range(40)]
    seps = ["", " ", "\n", "=", ": ", " = ", '": "', " is `", "  ", "\t"]
    return "".join(
        rng.choice(words) + rng.choice(seps) + rng.choice(parts) for _ in range(120)
    ).lower()


@given(st.integers(0, 2**32 - 1))
@settings(max_examples=25, deadline=None, derandomize=True)
def test_an_anchored_rule_matches_what_its_regex_matches(seed: int) -> None:
    text = haystack(random.Random(seed))
    found = d._found(text)
    for rule in d.RULES:
        if not rule.anchors:
            continue
        starts = [p + shift for w, shift in rule.anchors for p in found.get(w, ())]
        got = d._anchored_matches(rule.shared or rule.regex, text, starts, True)
        want = [m.span() for m in rule.regex.finditer(text)]
        assert [m.span() for m in got] == want, rule.detector


def test_the_haystacks_hold_matches_of_the_newly_anchored_rules() -> None:
    # the test above checks something: each of these rules matches in the generated text
    text = "".join(haystack(random.Random(seed)) for seed in range(8))
    kinds = {
        "url-secret-param": lambda r: r.detector == "url-secret-param",
        "sql": lambda r: "identified" in r.regex.pattern,
        "securestring": lambda r: r.regex.pattern.startswith("convertto-securestring"),
        "pair": lambda r: r.regex.pattern.startswith("name"),
        "terraform": lambda r: r.regex.pattern.startswith("variable"),
    }
    matched = {
        kind: sorted(
            bool(r.anchors) and next(r.regex.finditer(text), None) is not None
            for r in d.RULES
            if pick(r)
        )
        for kind, pick in kinds.items()
    }
    assert matched == {k: [True] * len(v) for k, v in matched.items()}
    assert all(matched.values())


def test_every_url_parameter_name_starts_where_an_anchor_says() -> None:
    for name in URL_NAMES:
        for sep in "?&;":
            text = f"x{sep}{name}=v4lue9xyzzy"
            found = d._found(text)
            starts = {
                p + shift
                for r in d.RULES
                if r.detector == "url-secret-param"
                for w, shift in r.anchors
                for p in found.get(w, ())
            }
            assert 1 in starts, (sep, name)
