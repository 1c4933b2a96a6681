"""The built-in secret detectors: stdlib regexes, no external binary, cheap on clean text.

Each rule is a regex plus the substrings that must occur for it to possibly match (its
triggers). Most blocks mention none, so ``find`` spends its time deciding which rules to run:
one regex pass (``_CASED_GATE``) over the text for all the provider prefixes, then plain ``in``
tests on the lowercased text for the words (``key``, ``token``, ``secret``, ``pass``…), URLs and
``Bearer``. A block that has none of them runs no rule regex at all.

Rules come in two kinds. Provider-prefixed tokens (``ghp_``, ``sk-ant-``, ``AKIA``…) are
recognised by shape and only checked for not being an obvious placeholder (low entropy). Generic
rules (``NAME_KEY=value``, URL credentials, bearer tokens) see a value whose name says "secret",
and keep it only when the value looks random: long enough, mixed letters and digits, Shannon
entropy over a threshold, and not a placeholder, variable reference or path.

A rule's span covers the secret value only, so ``API_KEY=[REDACTED:secret-assignment]`` keeps
the name, which is what makes a redacted transcript still answer "where did we set the key?".
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

# A token starts where no identifier character precedes it — or right after a JSON string
# escape such as the ``\n`` of an escaped newline, where the preceding ``n`` is not really a
# letter of the text.
_PRE = r"(?:(?<![A-Za-z0-9_])|(?<=\\[nrt]))"
_PRE_DASH = r"(?:(?<![A-Za-z0-9_-])|(?<=\\[nrt]))"


@dataclass(frozen=True, slots=True)
class Finding:
    """A secret found in a text: which detector, and its span ``text[start:end]``.

    Deliberately holds no copy of the value, so a finding can be logged.
    """

    detector: str
    start: int
    end: int


Validator = Callable[[str], bool]


@dataclass(frozen=True, slots=True)
class Rule:
    detector: str
    regex: re.Pattern[str]
    triggers: tuple[str, ...]  # any one must be in the text (or its lowercase, if lower)
    group: int | str = 0  # the part of the match that is the secret; "value": see _assignment_value
    validate: Validator | None = None
    priority: int = 10  # when spans overlap, the lowest priority names the merged span
    lower: bool = False  # triggers and regex run on the lowercased text


# --- value checks ---------------------------------------------------------------------------


def entropy(s: str) -> float:
    """Shannon entropy of ``s`` in bits per character."""
    n = len(s)
    if n == 0:
        return 0.0
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


_PLACEHOLDER_WORDS = (
    "xxx",
    "***",
    "...",
    "<",
    ">",
    "${",
    "$(",
    "{",
    "}",
    "#",
    "%s",
    "%(",
    "redacted",
    "password",
    "passwd",
    "your",
    "example",
    "changeme",
    "change_me",
    "change-me",
    "placeholder",
    "dummy",
    "replace",
    "insert",
    "os.environ",
    "process.env",
    "getenv",
    "secrets.",
    "env.",
)
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")  # OPENAI_API_KEY: a reference, not a value


def is_placeholder(value: str) -> bool:
    """Obvious stand-ins: ``xxx``, ``<your-key>``, ``${VAR}``, ``$VAR``, ``changeme``, ``***``."""
    v = value.lower()
    if any(w in v for w in _PLACEHOLDER_WORDS):
        return True
    if value[:1] in ("$", "%", "@", "&") or value.startswith("[REDACTED"):
        return True
    if len(set(v)) <= 2:
        return True
    return bool(_ENV_NAME.fullmatch(value))


def random_token(min_entropy: float = 3.0) -> Validator:
    """For shaped tokens: reject placeholders made of a repeated character or `xxx`."""

    def check(body: str) -> bool:
        return entropy(body) >= min_entropy and "xxxx" not in body.lower()

    return check


_PATHLIKE = re.compile(r"(?:[~.]{0,2}/|[A-Za-z]:\\|https?:)")
_HAS_DIGIT = re.compile(r"\d")
_HAS_ALPHA = re.compile(r"[A-Za-z]")
# `a.b.c`: unquoted, that is an attribute or module path in code, not a credential.
_DOTTED_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_MIXED_CASE = re.compile(r"[a-z][A-Z].*[a-z][A-Z].*[a-z][A-Z]|[A-Z][a-z].*[A-Z][a-z].*[A-Z][a-z]")

ENTROPY_THRESHOLD = 3.0
MIN_VALUE_LEN = 10


_FORMAT_SPEC = re.compile(r"%[-#0 +]*\d*(?:\.\d*)?[A-Za-z(]")
_WORD_SEGMENT = re.compile(r"(?:^|(?<=[/._=-]))[a-z]{4,}(?=$|[/._=-])")


def _wordy(value: str) -> bool:
    """Words joined by separators (`nyc-taxi/year=2019`, `s3_credentials`), not random."""
    words = _WORD_SEGMENT.findall(value)
    return len(words) >= 2 or sum(map(len, words)) * 2 >= len(value)


# Crypto addresses and public keys (Solana, 32 bytes in base58) are named `*_key` in API
# docs but are public. A random alphanumeric value of this length avoids 0/O/I/l only ~5% of
# the time, which is the generic rule's price for not flagging every wallet address.
_BASE58_PUBKEY = re.compile(r"[1-9A-HJ-NP-Za-km-z]{43,44}|0x[0-9a-fA-F]{40}")


def looks_secret(value: str, min_len: int = MIN_VALUE_LEN, digitless_ok: bool = False) -> bool:
    """A value named as a secret is kept when it looks generated rather than written.

    Generated: long enough, letters and digits, Shannon entropy ≥ ``ENTROPY_THRESHOLD``.
    Written: placeholders, variable references, paths, dotted names, format strings, and
    separator-joined words (`nyc-taxi/2019`, `s3_credentials`).
    """
    if len(value) < min_len or is_placeholder(value):
        return False
    if _PATHLIKE.match(value):
        return False
    if not (_HAS_DIGIT.search(value) or (digitless_ok and _MIXED_CASE.search(value))):
        return False
    if not _HAS_ALPHA.search(value):
        return False
    if _FORMAT_SPEC.search(value) or _wordy(value):
        return False
    if _BASE58_PUBKEY.fullmatch(value):
        return False
    return entropy(value) >= ENTROPY_THRESHOLD


def _not_placeholder(value: str) -> bool:
    return not is_placeholder(value) and entropy(value) >= 2.5


_B64_CHARS = re.compile(r"[A-Za-z0-9+/]")


def _pem_body(block: str) -> bool:
    """A PEM block with a real body, not `-----BEGIN … KEY-----\\n...\\n-----END …`."""
    body = re.sub(r"-----(?:BEGIN|END)[^-]*-----|\\+[nrt]", " ", block)
    return len(_B64_CHARS.findall(body)) >= 64


# --- the rules ------------------------------------------------------------------------------


def _rx(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(pattern, flags)


_TOKEN_END = r"(?![A-Za-z0-9_])"
_B64URL_END = r"(?![A-Za-z0-9_-])"

_PEM_LABEL = r"[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?"

# Secret-ish names: `api_key`, `API_TOKEN`, `clientSecret`, `db_password`, `x-api-key`. The name
# must end at the keyword (`TOKEN_URL`, `tokenizer` and `keyboard` are not secrets). One regex
# per keyword, each starting with it as a literal, so the regex engine jumps from one
# occurrence to the next without a Python loop. Matched on the lowercased text.
_ASSIGN_TAIL = (
    r"s?(?![a-z0-9_])"
    r"(?:\\?[\"'])?"  # the name's closing quote in JSON/YAML, maybe JSON-escaped
    r"(?P<sep>[ \t]*(?::=|=>|=|:)[ \t]*)"
    r"(?:\\\"(?P<v1>[^\"\\\s\[\]]{1,512})\\\""
    r"|\"(?P<v2>[^\"\\\s\[\]]{1,512})\""
    r"|'(?P<v3>[^'\\\s\[\]]{1,512})'"
    r"|(?P<v4>[^\s\"'\\`,;(){}\[\]<>&]{1,512}))"
)
# `postgres://postgres:postgres@db`, `github://org:repo@sha`: a plain word in the password
# place is an example or a path syntax, not a credential.
_PLAIN_WORD = re.compile(r"[a-z]+|[0-9]{1,4}")

_NAME_KEYWORDS = ("key", "secret", "token", "pass(?:w(?:or)?d)?", "pwd", "credential")


RULES: tuple[Rule, ...] = (
    # AWS
    Rule(
        "aws-access-key-id",
        _rx(_PRE + r"((?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16})" + _TOKEN_END),
        ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
        group=1,
        validate=random_token(2.5),
    ),
    Rule(
        "aws-secret-access-key",
        _rx(
            r"secret[_.-]?(?:access)?[_.-]?key(?:\\?[\"'])?"
            r"(?:[ \t]*(?::=|=>|=|:)[ \t]*|[ \t]+)(?:\\?[\"'])?"  # `set …_key VALUE` too
            r"(?<![a-z0-9/+])([a-z0-9/+]{40})(?![a-z0-9/+=])"
        ),
        ("secret",),
        group=1,
        validate=random_token(3.5),
        priority=5,
        lower=True,
    ),
    Rule(  # an access key id followed on the same line by its secret (CSV, `aws configure`)
        "aws-secret-access-key",
        _rx(
            r"(?:AKIA|ASIA)[A-Z0-9]{16}[^\n]{1,100}?"
            r"(?<![A-Za-z0-9/+])([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
        ),
        ("AKIA", "ASIA"),
        group=1,
        validate=lambda v: looks_secret(v) and entropy(v) >= 4.0,
        priority=6,
    ),
    # GitHub
    Rule(
        "github-pat",
        _rx(_PRE + r"(ghp_[A-Za-z0-9]{36,255})" + _TOKEN_END),
        ("ghp_",),
        group=1,
        validate=lambda v: random_token()(v[4:]),
    ),
    Rule(
        "github-oauth",
        _rx(_PRE + r"(gho_[A-Za-z0-9]{36,255})" + _TOKEN_END),
        ("gho_",),
        group=1,
        validate=lambda v: random_token()(v[4:]),
    ),
    Rule(
        "github-app-token",
        _rx(_PRE + r"((?:ghu|ghs)_[A-Za-z0-9]{36,255})" + _TOKEN_END),
        ("ghu_", "ghs_"),
        group=1,
        validate=lambda v: random_token()(v[4:]),
    ),
    Rule(
        "github-refresh-token",
        _rx(_PRE + r"(ghr_[A-Za-z0-9]{36,255})" + _TOKEN_END),
        ("ghr_",),
        group=1,
        validate=lambda v: random_token()(v[4:]),
    ),
    Rule(
        "github-fine-grained-pat",
        _rx(_PRE + r"(github_pat_[A-Za-z0-9_]{50,255})" + _TOKEN_END),
        ("github_pat_",),
        group=1,
        validate=lambda v: random_token()(v[11:]),
    ),
    # GitLab
    Rule(
        "gitlab-pat",
        _rx(_PRE + r"(glpat-[A-Za-z0-9_-]{20,255}(?:\.[A-Za-z0-9_-]+)*)" + _B64URL_END),
        ("glpat-",),
        group=1,
        validate=lambda v: random_token()(v[6:]),
    ),
    # Slack
    Rule(
        "slack-token",
        _rx(_PRE + r"((?:xox[abposre]|xapp)-\d+-[A-Za-z0-9-]{18,250})" + _B64URL_END),
        ("xox", "xapp-"),
        group=1,
        validate=_not_placeholder,
    ),
    Rule(
        "slack-webhook-url",
        _rx(
            r"(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{20,}"
        ),
        ("hooks.slack.com",),
        validate=lambda v: random_token()(v.rsplit("/", 1)[-1]),
    ),
    # Stripe
    Rule(
        "stripe-key",
        _rx(_PRE + r"((?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,247})" + _TOKEN_END),
        ("k_live_", "k_test_"),
        group=1,
        validate=lambda v: random_token()(v[8:]),
    ),
    # sk- keys: Anthropic and OpenRouter before OpenAI's catch-all `sk-`.
    Rule(
        "anthropic-api-key",
        _rx(_PRE_DASH + r"(sk-ant-[A-Za-z0-9_-]{32,255})" + _B64URL_END),
        ("sk-ant-",),
        group=1,
        validate=lambda v: random_token()(v[7:]),
        priority=8,
    ),
    Rule(
        "openrouter-api-key",
        _rx(_PRE_DASH + r"(sk-or-v1-[A-Za-z0-9]{32,255})" + _TOKEN_END),
        ("sk-or-",),
        group=1,
        validate=lambda v: random_token()(v[9:]),
        priority=8,
    ),
    Rule(
        "openai-api-key",
        _rx(
            _PRE_DASH + r"(sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{40,255}"
            r"|sk-[A-Za-z0-9]{32,255})" + _B64URL_END
        ),
        ("sk-",),
        group=1,
        validate=lambda v: random_token(3.5)(v[3:]) and bool(_HAS_DIGIT.search(v)),
    ),
    # Others
    Rule(
        "huggingface-token",
        _rx(_PRE + r"(hf_[A-Za-z0-9]{30,40})" + _TOKEN_END),
        ("hf_",),
        group=1,
        validate=lambda v: random_token(3.5)(v[3:]),
    ),
    Rule(
        "google-api-key",
        _rx(_PRE_DASH + r"(AIza[0-9A-Za-z_-]{35})" + _B64URL_END),
        ("AIza",),
        group=1,
        validate=lambda v: random_token()(v[4:]),
    ),
    Rule(
        "linear-api-key",
        _rx(_PRE + r"(lin_api_[A-Za-z0-9]{40})" + _TOKEN_END),
        ("lin_api_",),
        group=1,
        validate=lambda v: random_token()(v[8:]),
    ),
    Rule(
        "npm-token",
        _rx(_PRE + r"(npm_[A-Za-z0-9]{36})" + _TOKEN_END),
        ("npm_",),
        group=1,
        validate=lambda v: random_token()(v[4:]),
    ),
    Rule(
        "pypi-token",
        _rx(r"(pypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{50,})" + _B64URL_END),
        ("pypi-AgE",),
        group=1,
    ),
    # Structured secrets
    Rule(
        "jwt",
        _rx(
            _PRE_DASH
            + r"(eyJ[A-Za-z0-9_-]{8,}\.ey[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"
            + _B64URL_END
        ),
        ("ey",),  # checked near the gate's `.ey` only, so short is fine
        group=1,
    ),
    Rule(
        "private-key",
        _rx(
            r"-----BEGIN " + _PEM_LABEL + r"-----"
            r"(?:[\s\S]{0,20000}?-----END " + _PEM_LABEL + r"-----"
            # no END marker (a truncated paste): the body up to where base64 stops
            r"|(?:[A-Za-z0-9+/=:,. \t\r\n-]|\\+[nrt])*)"
        ),
        ("PRIVATE KEY",),
        validate=_pem_body,
        priority=1,
    ),
    Rule(
        "url-credentials",
        _rx(r"://[^\s:@/?#\"'<>\\]{0,128}:([^\s:@/?#\"'<>\\,]{1,256})@(?=[A-Za-z0-9\[])"),
        ("://",),
        group=1,
        validate=lambda v: not is_placeholder(v) and not _PLAIN_WORD.fullmatch(v),
        priority=20,
        lower=True,  # the pattern is caseless: running it on the lowered text is the same
    ),
    Rule(
        "url-secret-param",
        _rx(
            r"[?&;](?:api[_-]?key|apikey|key|token|access[_-]?token|auth[_-]?token"
            r"|refresh[_-]?token|id[_-]?token|client[_-]?secret|secret|password|passwd|pwd"
            r"|sig|signature|x-amz-signature|x-amz-security-token)"
            r"=([^&\s#\"'<>\\]{1,2048})"
        ),
        ("?",),  # the regex's own first character, [?&;], is rare enough to scan for
        group=1,
        validate=lambda v: looks_secret(v, 12),
        priority=20,
        lower=True,
    ),
    Rule(
        "bearer-token",
        _rx(r"bearer[ \t]+([a-z0-9_.~+/=-]{20,2048})"),
        ("bearer",),
        group=1,
        # a token after `Bearer` is a credential by place: letters alone will do
        validate=lambda v: looks_secret(v, 20, digitless_ok=True),
        priority=30,
        lower=True,
    ),
    *(
        Rule(
            "secret-assignment",
            _rx(keyword + _ASSIGN_TAIL),
            (keyword[:4],),
            group="value",
            priority=40,
            lower=True,
        )
        for keyword in _NAME_KEYWORDS
    ),
)

_PUBLIC_NAME = re.compile(r"(?i)public|publishable|pubkey")
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def _assignment_value(text: str, m: re.Match[str]) -> tuple[int, int] | None:
    for g in ("v1", "v2", "v3", "v4"):
        if m.group(g) is not None:
            start, end = m.span(g)
            break
    else:  # pragma: no cover - the regex always sets one
        return None
    i = m.start()
    while i > 0 and text[i - 1] in _NAME_CHARS:
        i -= 1
    if _PUBLIC_NAME.search(text, i, m.start() + 12):
        return None
    if m.group("v4") is not None and _code(text, start, end, m.group("sep").strip()):
        return None
    return (start, end) if looks_secret(text[start:end]) else None


def _code(text: str, start: int, end: int, sep: str) -> bool:
    """Unquoted values that are code: `make_key(…)`, `x[…]`; `_DEFAULT` unless written as
    `KEY=value` (a shell or .env file); `mod.attr` after ` = `, `:=` or `=>` only (after `: ` it
    may be a YAML value or an HTTP header)."""
    if text[end : end + 1] in ("(", "["):
        return True
    if sep == "=" and text[start - 1] == "=":
        return False
    if text[start] == "_":
        return True
    return sep != ":" and _DOTTED_NAME.fullmatch(text, start, end) is not None


DETECTORS: tuple[str, ...] = tuple(dict.fromkeys(r.detector for r in RULES))


def _fingerprint() -> str:
    import hashlib

    h = hashlib.sha256()
    for r in RULES:
        h.update(f"{r.detector}\0{r.regex.pattern}\0{r.triggers}\0{r.group}\0".encode())
    return h.hexdigest()[:16]


# Which rules redacted a memory (its redaction stamp records this): changes with any rule.
RULES_VERSION = _fingerprint()

_CASED = tuple(r for r in RULES if not r.lower)
_LOWERED = tuple(r for r in RULES if r.lower)
# One search decides whether any case-sensitive rule can match at all. Every cased rule's
# match contains one of these branches (the tests check it on every seeded secret); each
# branch starts with a character that is rare in prose and code, so the scan is quick.
_CASED_GATE = re.compile(
    r"A(?:KIA|SIA|BIA|CCA|3T|Iza)"  # AWS key ids, Google API keys
    r"|_[A-Za-z0-9]{20}"  # ghp_ gho_ ghu_ ghs_ ghr_ github_pat_ hf_ npm_ lin_api_ sk_live_
    r"|-[A-Za-z0-9_-]{20}"  # sk- sk-proj- sk-ant- sk-or-v1- glpat- xoxb- xapp- pypi-
    r"|\.ey[A-Za-z0-9_-]{8}"  # the payload of a JWT
    r"|\.slack\.com/"
    r"|PRIVATE KEY"
)


def _lower(text: str) -> str:
    """``text.lower()`` with the same length, so spans found in it apply to ``text``."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


_WINDOW_BEFORE, _WINDOW_AFTER, _MAX_WINDOWS = 64, 16, 64


def _cased_rules(text: str) -> list[Rule]:
    """The case-sensitive rules worth running on ``text``.

    Their triggers are looked for only near where the gate matched — a few hundred
    characters instead of the whole text — unless the gate matched so often (a base64 blob)
    that checking the whole text once is cheaper.
    """
    windows: list[str] = []
    for m in _CASED_GATE.finditer(text):
        if len(windows) == _MAX_WINDOWS:
            hay = text
            break
        windows.append(text[max(0, m.start() - _WINDOW_BEFORE) : m.end() + _WINDOW_AFTER])
    else:
        if not windows:
            return []
        hay = "\0".join(windows)
    return _triggered(_CASED_T, hay)


def _triggered(rules: tuple[tuple[Rule, str, tuple[str, ...]], ...], hay: str) -> list[Rule]:
    """Rules with a trigger in ``hay`` (the hot path: a plain ``in`` for one-trigger rules)."""
    return [r for r, one, many in rules if (one in hay if one else any(t in hay for t in many))]


def _indexed(rules: tuple[Rule, ...]) -> tuple[tuple[Rule, str, tuple[str, ...]], ...]:
    return tuple((r, r.triggers[0] if len(r.triggers) == 1 else "", r.triggers) for r in rules)


_CASED_T = _indexed(_CASED)
_LOWERED_T = _indexed(_LOWERED)


def find(text: str) -> list[Finding]:
    """Every secret in ``text``: sorted, non-overlapping spans (overlaps merged)."""
    cands: list[tuple[int, int, int, str]] = []
    rules = [(r, text) for r in _cased_rules(text)]
    lowered = _lower(text)
    rules += [(r, lowered) for r in _triggered(_LOWERED_T, lowered)]
    for rule, hay in rules:
        for m in rule.regex.finditer(hay):
            if rule.group == "value":
                span = _assignment_value(text, m)
                if span is None:
                    continue
                s, e = span
            else:
                s, e = m.span(rule.group)
                if s >= e or (rule.validate is not None and not rule.validate(text[s:e])):
                    continue
            cands.append((s, e, rule.priority, rule.detector))
    if not cands:
        return []
    cands.sort()
    out: list[Finding] = []
    cs, ce, cp, cd = cands[0]
    for s, e, p, d in cands[1:]:
        if s < ce:
            if p < cp:
                cp, cd = p, d
            ce = max(ce, e)
        else:
            out.append(Finding(cd, cs, ce))
            cs, ce, cp, cd = s, e, p, d
    out.append(Finding(cd, cs, ce))
    return out


def redact(text: str) -> str:
    """``text`` with each secret replaced by ``[REDACTED:<detector>]``.

    Idempotent: a marker never matches a rule, so redacting twice changes nothing more.
    """
    found = find(text)
    if not found:
        return text
    parts: list[str] = []
    pos = 0
    for f in found:
        parts.append(text[pos : f.start])
        parts.append(f"[REDACTED:{f.detector}]")
        pos = f.end
    parts.append(text[pos:])
    return "".join(parts)
