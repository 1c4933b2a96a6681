"""The code-aware tokenizer of the lexical index.

A *word* is a run of word characters that may be joined by ``. - / : _ @`` (so
``src/store/lock.py``, ``std::vec::Vec``, ``--no-thinking``, ``E0502`` and ``a1b2c3d`` are one
word each). Every word is kept whole (lowercased) and also broken into its parts:

- ``src/store/lock.py`` → ``src/store/lock.py``, ``src``, ``store``, ``lock.py``, ``lock``, ``py``
- ``parse_unit_stats`` → ``parse_unit_stats``, ``parse``, ``unit``, ``stats``
- ``MemoryWriter.appendRows`` → the whole, ``memorywriter``, ``appendrows``, ``memory``,
  ``writer``, ``append``, ``rows``
- ``--no-thinking`` → ``--no-thinking``, ``no-thinking``, ``thinking`` (``no`` is a stop word)

Numbers, hashes and codes are never split between letters and digits (``E0502``, ``ENOENT``,
``0x1f3a``, ``3.14`` keep their whole form). Parts that are English stop words are dropped;
whole words never are, so ``--no-thinking`` stays findable. Words longer than
:data:`MAX_TOKEN` characters (base64 runs, minified blobs) are dropped.

Queries go through the same function, so a query for a part finds the whole and a query for the
whole finds it exactly.
"""

from __future__ import annotations

import re

MAX_TOKEN = 80

# The English stop words bm25s ships (bm25s.stopwords.STOPWORDS_EN), kept here so the query
# path does not import bm25s.
STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their "
    "then there these they this to was will with".split()
)

# bm25s' extended English list (bm25s.stopwords.STOPWORDS_EN_PLUS: question and function words),
# dropped from questions only — "why did we …" carries no evidence — never from the index.
QUESTION_STOPWORDS = frozenset(
    "a about above after again against ain all am an and any are aren aren't as at be because "
    "been before being below between both but by can couldn couldn't d did didn didn't do does "
    "doesn doesn't doing don don't down during each few for from further had hadn hadn't has "
    "hasn hasn't have haven haven't having he her here hers herself him himself his how i if in "
    "into is isn isn't it it's its itself just ll m ma me mightn mightn't more most mustn "
    "mustn't my myself needn needn't no nor not now o of off on once only or other our ours "
    "ourselves out over own re s same shan shan't she she's should should've shouldn shouldn't "
    "so some such t than that that'll the their theirs them themselves then there these they "
    "this those through to too under until up ve very was wasn wasn't we were weren weren't "
    "what when where which while who whom why will with won won't wouldn wouldn't y you you'd "
    "you'll you're you've your yours yourself yourselves".split()
)

_WORD = re.compile(r"(?:--?)?\w(?:[\w.\-/:@]*\w)?")
_OUTER = re.compile(r"/|::|:|@")  # path and namespace separators
_INNER = re.compile(r"[._\-]+")
_NUMBER = re.compile(r"[0-9][0-9.]*$")
# camelCase / PascalCase / ACRONYMWord boundaries; digits stay attached to their neighbours.
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+[0-9]*|[A-Z]+[0-9]*|[0-9]+[a-z]*")

_cache: dict[str, tuple[str, ...]] = {}
_CACHE_MAX = 500_000


def tokenize(text: str) -> list[str]:
    """The index tokens of ``text``, in order, with repeats (term frequency matters)."""
    out: list[str] = []
    for word in _WORD.findall(text):
        toks = _cache.get(word)
        if toks is None:
            toks = _expand(word)
            if len(_cache) < _CACHE_MAX:
                _cache[word] = toks
        out.extend(toks)
    return out


def query_tokens(text: str) -> list[str]:
    """Distinct tokens of a query, in first-seen order, without question stop words (unless
    nothing else is left: a query of only stop words still searches for them)."""
    toks = list(dict.fromkeys(tokenize(text)))
    return [t for t in toks if t not in QUESTION_STOPWORDS] or toks


def _expand(word: str) -> tuple[str, ...]:
    if len(word) > MAX_TOKEN:
        return ()
    whole = word.lower()
    toks = [whole]
    bare = word.lstrip("-")
    if bare != word:
        toks.append(bare.lower())
    seen = set(toks)

    def add(t: str) -> None:
        t = t.lower()
        if t and t not in seen and t not in STOPWORDS:
            seen.add(t)
            toks.append(t)

    outer = [p for p in _OUTER.split(bare) if p]
    if len(outer) > 1:
        for p in outer:
            add(p)
    for seg in outer:
        if _NUMBER.match(seg):
            continue
        inner = [p for p in _INNER.split(seg) if p]
        if len(inner) > 1:
            for p in inner:
                add(p)
        for p in inner:
            if p.islower() or p.isupper() or not p.isalnum():
                continue  # no case boundary to split on (hashes, codes, plain words)
            camel = _CAMEL.findall(p)
            if len(camel) > 1:
                for c in camel:
                    add(c)
    if len(toks) == 1 and whole in STOPWORDS:
        return ()
    return tuple(toks)
