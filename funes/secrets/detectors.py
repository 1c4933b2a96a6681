"""The built-in secret detectors: regexes, no external binary, cheap on clean text.

Each rule is a regex plus the substrings that must occur for it to possibly match (its
triggers). Most blocks mention none, so ``find`` spends its time deciding which rules to run:
one regex pass (``_GATE``) over the text for all the provider prefixes, then one pass of an
Aho–Corasick automaton (pyahocorasick) over the lowercased text for the words (``key``,
``token``, ``secret``, ``pass``…), URLs and ``Bearer``, which also says where each is. A block
that has none of them runs no rule regex at all, and a rule's regex is tried only where the
literal it starts with is.

Rules come in two kinds. Provider-prefixed tokens (``ghp_``, ``sk-ant-``, ``AKIA``…) are
recognised by shape and only checked for not being an obvious placeholder (low entropy). Generic
rules (``NAME_KEY=value``, URL credentials, bearer tokens) see a value whose name says "secret",
and keep it only when the value looks random: long enough, mixed letters and digits, Shannon
entropy over a threshold, and not a placeholder, variable reference or path.

A rule's span covers the secret value only, so ``API_KEY=[REDACTED:secret-assignment]`` keeps
the name, which is what makes a redacted transcript still answer "where did we set the key?".
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import ahocorasick

from funes.secrets import crypto
from funes.secrets.providers import NAMED, PROVIDERS, Named, Provider

_RX_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub")


class _Rx:
    """A regex compiled the first time it is used: compiling the ~100 patterns of the rules
    and their checks costs ~20 ms, which every `funes-chunk` start (a hook's included) would
    pay for rules its input never gets to. Once compiled, its methods are the pattern's own
    (bound in the slots), so a call costs what a compiled pattern's does."""

    __slots__ = ("flags", "pattern", *_RX_METHODS)
    search: Callable[..., re.Match[str] | None]
    match: Callable[..., re.Match[str] | None]
    fullmatch: Callable[..., re.Match[str] | None]
    finditer: Callable[..., Iterator[re.Match[str]]]
    findall: Callable[..., list[Any]]
    sub: Callable[..., str]

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags

    def __getattr__(self, name: str) -> Any:  # only while a method's slot is empty
        if name not in _RX_METHODS:
            raise AttributeError(name)
        compiled = re.compile(self.pattern, self.flags)
        for method in _RX_METHODS:
            setattr(self, method, getattr(compiled, method))
        return getattr(compiled, name)


def _rx(pattern: str, flags: int = 0) -> _Rx:
    return _Rx(pattern, flags)


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
    regex: _Rx
    triggers: tuple[str, ...]  # any one must be in the text (or its lowercase, if lower)
    group: int | str = 0  # the part of the match that is the secret; "value": see _assignment_value
    validate: Validator | None = None
    priority: int = 10  # when spans overlap, the lowest priority names the merged span
    lower: bool = False  # triggers and regex run on the lowercased text
    # Where a match can start (lowered rules): at an occurrence of one of these words of the
    # automaton, plus the shift (`_auth` is `auth` less one). Empty: anywhere.
    anchors: tuple[tuple[str, int], ...] = ()
    # A regex that matches what ``regex`` matches where an anchor is (and other rules' matches
    # elsewhere), tried only at the anchors: rules with a long common tail compile it once.
    shared: _Rx | None = None


# --- value checks ---------------------------------------------------------------------------


def entropy(s: str) -> float:
    """Shannon entropy of ``s`` in bits per character."""
    n = len(s)
    if n == 0:
        return 0.0
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


_PLACEHOLDER_WORDS = (
    "xxxx",
    "***",
    "...",
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
_ENV_NAME = _rx(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")  # OPENAI_API_KEY: a reference, not a value
# Templates and references, not values: `<your-key>`, `${VAR}`, `{{ secret }}`, `#{var}`,
# `{name}`, `%(name)s`. A lone `#`, `<` or `{` inside a value is a character of a password, and
# so is a pair between letters or digits (`P9V]Q{fvnoIk}fS`, `Z2<i>1cS`): a template's
# placeholder stands alone or after a separator (`sk-{key}`, `Bearer <token>`).
_TEMPLATE = _rx(
    r"(?:^|(?<=[\s/:._@\"'`-]))(?:<[A-Za-z_][\w .:-]*>|\{[A-Za-z_][\w.]*\})"
    # closed: `${` inside `Dfozjm35${0Iyu` and `%(` inside `pSN3%(G*gf7` are a password's
    r"|[$#]\{[^}\s]*\}|\{\{.*\}\}|%\([A-Za-z_]\w*\)[sdifrx]"
)


def is_placeholder(value: str) -> bool:
    """Obvious stand-ins: ``xxx``, ``<your-key>``, ``${VAR}``, ``$VAR``, ``changeme``, ``***``."""
    v = value.lower()
    # written in one case (`your-key`, `YOUR_KEY`, `YourKey`), not letters that happen to spell
    # a word in a random mixed-case string (`…vYoUr…`)
    if any(w in v and (w in value or w.upper() in value or w.capitalize() in value)
           for w in _PLACEHOLDER_WORDS):  # fmt: skip
        return True
    if value[:1] in ("$", "%", "@", "&", "<") or value.startswith("[REDACTED"):
        return True
    if len(set(v)) <= 2 or _TEMPLATE.search(value):
        return True
    return bool(_ENV_NAME.fullmatch(value))


def random_token(min_entropy: float = 3.0) -> Validator:
    """For shaped tokens: reject placeholders made of a repeated character or `xxx`."""

    def check(body: str) -> bool:
        return entropy(body) >= min_entropy and "xxxx" not in body.lower()

    return check


_PATHLIKE = _rx(r"(?:[~.]{0,2}/|[A-Za-z]:\\|https?:)")
_HAS_DIGIT = _rx(r"\d")
_HAS_ALPHA = _rx(r"[A-Za-z]")
# `a.b.c`: unquoted, that is an attribute or module path in code, not a credential.
_DOTTED_NAME = _rx(r"[A-Za-z_][A-Za-z0-9_]*(?:\??\.[A-Za-z_][A-Za-z0-9_]*)+")  # `a?.b` too
_MIXED_CASE = _rx(r"[a-z][A-Z].*[a-z][A-Z].*[a-z][A-Z]|[A-Z][a-z].*[A-Z][a-z].*[A-Z][a-z]")

ENTROPY_THRESHOLD = 3.0
MIN_VALUE_LEN = 10


# A printf conversion ends its token: `user_%s_key`, `%d`, `%-10s`; `Pz%a1Q`, `Z6%X^fl9V` and
# `U24O<d%c$5` are passwords (a conversion does not follow a letter or a digit).
_FORMAT_SPEC = _rx(r"(?:^|(?<=[\s_./=:'\"-]))%[-#0 +]*\d*(?:\.\d+)?[sdifxXrcegu](?![A-Za-z0-9])")
_WORD_SEGMENT = _rx(r"(?:^|(?<=[/._=:-]))[a-z]{3,}(?=$|[/._=:-])")
_GO_TEST = _rx(r"(?:Test|Benchmark|Example|Fuzz)[A-Z][A-Za-z0-9_]*(?:/|$)")
_UUID = _rx(r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")
_CAMEL_TOKEN = _rx(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_VOWEL = _rx(r"[aeiou]")
_CONSONANTS = _rx(r"[^aeiouy]{5}")


def _camel_words(value: str) -> bool:
    """Words run together in an identifier (`Uint8Array`, `TestTruncateTranscriptAt/u2`), not
    random: most letters are in pronounceable words of three or more, few digits."""
    letters = good = digits = short = 0
    for tok in _CAMEL_TOKEN.findall(value):
        if tok[0].isdigit():
            digits += len(tok)
            continue
        letters += len(tok)
        short += len(tok) <= 2
        low = tok.lower()
        if (
            len(tok) >= 4
            and not tok.isupper()
            and len(_VOWEL.findall(low)) * 5 >= len(low)
            and not _CONSONANTS.search(low)
        ):
            good += len(tok)
    # random strings break into many one- and two-letter pieces; identifiers into words
    return letters >= 6 and good >= 0.75 * letters and digits <= 4 and short * 8 <= letters


def _case_scattered(value: str) -> bool:
    """Letters of both cases that spell no words, as a generator's do (`tHWnsCGRlrwZbqca`,
    `sqMgLj*olXCwYjn`), not a name's (`getApiKeyForModel`, `NSURLCredential`): fewer than
    70 % of the letter pairs inside its words are pairs English words are made of (a random
    string of 14 letters reaches 70 % about once in a hundred; names are at 80 % and more)."""
    if value.lower() == value or value.upper() == value or _camel_words(value):
        return False
    pairs = common = 0
    bigrams = _common_bigrams()
    for seg in _LETTERS.findall(value):
        if seg.isupper():
            continue  # an acronym (`JWT/JWS/claim`) spells no English, nor is it random
        for tok in _CAMEL_TOKEN.findall(seg):
            low = tok.lower()
            for i in range(len(low) - 1):
                pairs += 1
                common += low[i : i + 2] in bigrams
    return pairs >= 4 and common < 0.7 * pairs


def _digitless_generated(value: str) -> bool:
    """Letters of both cases, with no words in them or with a password's punctuation inside."""
    if _PASSWORD_PUNCT.search(value, 1, len(value) - 1) is not None:
        return value.lower() != value and value.upper() != value
    return _case_scattered(value)


_LETTERS = _rx(r"[A-Za-z]+")
_BIGRAMS: list[frozenset[str]] = []


def _common_bigrams() -> frozenset[str]:
    """The letter pairs that make up 90 % of the pairs in the words of the BIP39 English list
    (2,048 common words, shipped for the mnemonic check): ~190 of the 676."""
    if not _BIGRAMS:
        counts = Counter(w[i : i + 2] for w in crypto.bip39_words() for i in range(len(w) - 1))
        total, acc, top = sum(counts.values()), 0, []
        # ties in count ordered by the pair itself: most_common() would order them by first
        # appearance in a frozenset's iteration, which changes with PYTHONHASHSEED — and with it
        # what is redacted (the same transcript must give the same chunks in every process)
        for pair, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
            if acc >= 0.9 * total:
                break
            acc += n
            top.append(pair)
        _BIGRAMS.append(frozenset(top))
    return _BIGRAMS[0]


def _wordy(value: str) -> bool:
    """Words joined by separators (`nyc-taxi/year=2019`, `s3_credentials`), not random."""
    if _GO_TEST.match(value):
        return True  # `--- PASS: TestTruncateTranscript/case_2`: a test's name
    words = _WORD_SEGMENT.findall(value)
    if len(words) >= 2 or sum(map(len, words)) * 2 >= len(value):
        return True
    if _camel_words(value) and not credential_mix(value):
        return True  # …but a generated value can break into pronounceable pieces too
    # `agent:main:subagent:<uuid>`: words around an identifier
    bare = _UUID.sub("", value)
    return bare != value and (not bare.strip(":/_.-") or _wordy(bare))


_DIGIT_RUN = _rx(r"\d+")
_ALNUM_RUN = _rx(r"[A-Za-z0-9]{3,}")
_LAST_WORD = _rx(r"(?:[A-Z]?[a-z]{2,}|[A-Z]{2,}|[a-z]{3,})$")


def credential_mix(value: str) -> bool:
    """The character mix of a generated credential, which names and words do not have: a run
    of letters and digits (between punctuation) with letters of both cases and a number that
    is not part of a word (`33UaHcSV&aI3a6IY1`, `Acamxn0ElmnnG17Yep`); not a name with a number
    in it (`Uint8Array`, `HTTP2ServerConfig`, `ubuntu24-go-1.26`, `Token-2022`)."""
    for run in _ALNUM_RUN.finditer(value):
        r = run.group()
        if r.lower() == r or r.upper() == r:
            continue
        if any(not _word_number(r, m) for m in _DIGIT_RUN.finditer(r)):
            return True
    return False


def _word_number(run: str, m: re.Match[str]) -> bool:
    """A number that belongs to a word: first in its run, or after a word of three letters or
    more (`int`, `Uint`, `HTTP`; not `ZiO` or `LZ`) and not followed by a lowercase letter
    (`Uint8Array`, `base64`, `sha256Digest`, `HTTP2Server`)."""
    s, e = m.span()
    if s == 0:
        return e == len(run) or not run[e].islower()  # `2022`, `2FA`; not `2ialxnj`
    word = _LAST_WORD.search(run, max(0, s - 12), s)
    if word is None or len(word.group()) < 3 or run[e : e + 1].islower():
        return False
    # the word starts where the letters' case says so: `QMBCZiO` ends in `O`, not in `ZiO`
    w0 = word.start()
    return not (w0 > 0 and run[w0 - 1].isupper() and word.group()[:1].islower())


# Crypto addresses and public keys (Solana, 32 bytes in base58) are named `*_key` in API
# docs but are public. A random alphanumeric value of this length avoids 0/O/I/l only ~5% of
# the time, which is the generic rule's price for not flagging every wallet address.
_BASE58_PUBKEY = _rx(r"[1-9A-HJ-NP-Za-km-z]{43,44}|0x[0-9a-fA-F]{40}")


def looks_secret(
    value: str, min_len: int = MIN_VALUE_LEN, digitless_ok: bool = False, private: bool = False
) -> bool:
    """A value named as a secret is kept when it looks generated rather than written.

    Generated: long enough, letters and digits, Shannon entropy ≥ ``ENTROPY_THRESHOLD``.
    Written: placeholders, variable references, paths, dotted names, format strings, and
    separator-joined words (`nyc-taxi/2019`, `s3_credentials`).
    """
    if len(value) < min_len or is_placeholder(value):
        return False
    if _PATHLIKE.match(value) and not _slash_base64(value):
        return False
    if not (
        _HAS_DIGIT.search(value)
        or (digitless_ok and (_MIXED_CASE.search(value) or _digitless_generated(value)))
    ):
        return False
    if not _HAS_ALPHA.search(value):
        return False
    if _FORMAT_SPEC.search(value):
        return False
    # words a name is made of; a password's punctuation among them makes it generated
    # (`xumfPkxiN~)ZP5^6Rdcac`, `219LE*5ggrujo`)
    if _wordy(value) and not _STRONG_PUNCT.search(value, 1, len(value) - 1):
        return False
    # …unless its name says it is private (`ENCRYPTION_KEY`, `client_secret`)
    if _BASE58_PUBKEY.fullmatch(value) and not (private and value[:2] != "0x"):
        return False
    if _VERSION_PIN.match(value):
        return False
    return entropy(value) >= ENTROPY_THRESHOLD


_BASE64_VALUE = _rx(r"/[A-Za-z0-9+/]{19,}={0,2}")


def _slash_base64(value: str) -> bool:
    """Base64 that happens to start with `/` (`/RZ3cGXQPNUvzwP14amzRlIzu5G6…=`), not a path."""
    return _BASE64_VALUE.fullmatch(value) is not None and (
        credential_mix(value)
        # random bytes: more bits a character than a path's words, and few slashes
        or (len(value) >= 24 and entropy(value) >= 4.2 and value.count("/") * 12 <= len(value))
    )


# between two letters or digits, where no name, path, link or address puts it
_STRONG_PUNCT = _rx(r"(?<=[A-Za-z0-9])[#%()\[\]{}<>!$^*~?|](?=[A-Za-z0-9])")

# `v2.2.1@29824e69…`: an action or package pinned to a commit
_VERSION_PIN = _rx(r"v?\d+(?:\.\d+)*@[0-9a-f]{7,40}\b")


def _unquote(value: str) -> str:
    """A URL query value as it was before percent-encoding (`%2B` is a `+` of base64, not a
    format specifier)."""
    if "%" not in value:
        return value
    from urllib.parse import unquote

    return unquote(value)


def _not_placeholder(value: str) -> bool:
    return not is_placeholder(value) and entropy(value) >= 2.5


_B64_CHARS = _rx(r"[A-Za-z0-9+/]")


def _pem_body(block: str) -> bool:
    """A PEM block with a real body, not `-----BEGIN … KEY-----\\n...\\n-----END …`."""
    body = re.sub(r"-----(?:BEGIN|END)[^-]*-----|\\+[nrt]", " ", block)
    return len(_B64_CHARS.findall(body)) >= 64


# --- the rules ------------------------------------------------------------------------------


_TOKEN_END = r"(?![A-Za-z0-9_])"
_B64URL_END = r"(?![A-Za-z0-9_-])"

_PEM_LABEL = r"[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?"

# Secret-ish names: `api_key`, `API_TOKEN`, `clientSecret`, `db_password`, `x-api-key`. The name
# must end at the keyword (`TOKEN_URL`, `tokenizer` and `keyboard` are not secrets). One regex
# per keyword, each starting with it as a literal, so the regex engine jumps from one
# occurrence to the next without a Python loop. Matched on the lowercased text.
_ASSIGN_TAIL = (
    r"s?(?:_base)?(?![a-z0-9_])"  # `secret_key_base` (Rails) too
    # the name's closing quote in JSON/YAML, maybe JSON-escaped, and bracket (`env["KEY"] =`)
    r"(?:(?:\\?[\"'])?\]?"
    # a type between the name and `=`: `API_KEY: &str =`, `apiKey: string =`, `token string =`
    r"(?:[ \t]*:[ \t]*&?(?:'static[ \t]+)?[a-z_][a-z0-9_:<>]{0,40}[ \t]+(?==)"
    r"|[ \t]+(?:string|str)[ \t]*(?==))?"
    r"(?P<sep>[ \t]*(?::=|=>|=|:(?!:)|%3d)[ \t]*"  # `a::b` is a path, not `a: :b`
    # `db_pass     C2IG?sN6…` in a two-column table: the value ends its line
    r"|[ \t]{2,}(?=[^\s\\]+[ \t]*(?:\r?\n|\\[rn]|$)))"
    # a quoted name, a comma, a quoted value: `define('DB_PASSWORD', '…')`, `getenv("KEY", "…")`
    r"|\\?[\"'][ \t]*,[ \t]*(?=\\?[\"'])"
    # a setter's argument: `.password("…")`, `setApiKey('…')`
    r"|(?P<call>\()[ \t]*(?=\\?[\"'`]))"
    # a literal wrapped in a call: `String::from("…")`, `SecretStr('…')`, `bytes.fromhex("…")`
    r"(?:[a-z_][a-z0-9_]*(?:(?:::|\.)[a-z_][a-z0-9_]*)*\((?=\\?[\"'`]))?"
    # a value ends at whitespace or its closing quote, not at punctuation: `#`, `(`, `;`, `&`…
    # are characters of a password (`_trim_value` then drops what is code or the next field)
    r"(?:\\\"(?P<v1>(?:[^\"\\\s]|\\\\\\\\|\\\\\\\"){1,512})\\\""  # `\\\\`, `\\\"` inside
    r"|\"(?P<v2>(?:[^\"\\\s]|\\[^\s]){1,512})\""  # JSON escapes inside (`\"`, `\\`)
    # escapes inside, or a quote doubled as SQL, PowerShell and YAML write it (`'a''b'`)
    r"|'(?P<v3>(?:[^'\\\s]|\\\\'|\\[^\snr]|''|'\\{1,2}''){1,512})'"  # and the shell's `'\''`
    r"|`(?P<v5>[^`\s]{1,512})`"  # Go's and JavaScript's raw strings
    # a backslash of the value, not one that starts a JSON escape of a line break or a quote
    # (the text is lowered: `\T` of a password reads as `\t`); a backtick inside it
    r"|(?P<v4>(?:[^\s\"'\\`“”‘’]|\\(?![n\"'\\]|r\\n)[^\s\"'])"
    r"(?:[^\s\"'\\“”‘’]|\\(?![n\"'\\]|r\\n)[^\s\"']|(?<=[a-z0-9])\\?\"(?=[a-z0-9])){0,511}))"
)
# `postgres://postgres:postgres@db`, `github://org:repo@sha`: a plain word in the password
# place is an example or a path syntax, not a credential.
_PLAIN_WORD = _rx(r"[a-z]+|[0-9]{1,4}")

# A label in prose or markdown, then the value in backticks or quotes within a few characters:
# "API key `…`", "**Secret Key**: `…`", "the user's provided key (`…`)", "token is '…'".
_LABEL_TAIL = (
    r"s?(?![a-z0-9_])(?:\*\*|__|`)?[ \t]*(?::|=|\bis\b|\bwas\b|\bto\b|->|→)?[ \t]*(?:\*\*)?[ \t]*\(?"
    r"(?:`(?P<l1>[^\s`]{8,512})`|\"(?P<l2>[^\s\"\\]{8,512})\"|'(?P<l3>[^\s'\\]{8,512})'"
    r"|“(?P<l4>[^\s”]{8,512})”|‘(?P<l5>[^\s’]{8,512})’)"
)

# A string literal in either quote, maybe JSON-escaped, with escapes inside, a quote doubled
# (SQL, PowerShell) or the shell's `'\''`: the quote is group ``q``, the value the next group.
_QUOTED = r"(?P<q>\\?[\"'])((?:\\\\\\[\"']|\\\\[\"']|(?!(?P=q))(?:[^\\\s]|\\[^\snr])|(?P=q)(?P=q)|'\\{1,2}'')LEN)(?P=q)"


def _quoted(n: int, most: int = 256) -> str:
    return _QUOTED.replace("LEN", f"{{{n},{most}}}")


_NAME_KEYWORDS = (
    "key",
    "secret",
    "token",
    "pass(?:w(?:or)?d|phrase)?",
    "pwd",
    "credential",
    "_auth",  # .npmrc `_auth=<base64 of user:password>`
    "_pat",  # `AZURE_DEVOPS_EXT_PAT=…`, `GITLAB_PAT: …`: a personal access token
)
# The eight name rules in one regex, tried only where a name starts (no two start at one
# place): compiling their long tail eight times cost every process ~45 M instructions.
_NAMES = _rx("(?:" + "|".join(_NAME_KEYWORDS) + ")(?:" + _ASSIGN_TAIL + "|" + _LABEL_TAIL + ")")

# A password or key named in plain prose, in the languages users write to agents in: the name,
# at most three words ("the API key for staging"), a verb or colon ("is", "est", "ist", "es",
# "é", "是", "は", "—", "는"…) or nothing, then the value up to whitespace or a character that
# is not ASCII (`パスワードは … です`). Matched on the lowercased text; the value must look
# generated (see `_prose_value`).
_PROSE_NAMES: tuple[str, ...] = (
    # English
    "password", "passphrase", "passwd", "api key", "api-key", "api token", "access token",
    "auth token", "access key", "secret key", "client secret", "private key", "token", "secret",
    # French
    "mot de passe", "clé api", "clé d'api", "clé de l'api", "clé secrète", "clé privée", "jeton",
    # German
    "passwort", "kennwort", "api-schlüssel", "api schlüssel", "schlüssel", "geheimnis",
    # Spanish
    "contraseña", "clave api", "clave de api", "clave de la api", "clave secreta",
    "clave privada", "clave",
    # Portuguese
    "senha", "chave api", "chave de api", "chave da api", "chave secreta", "chave privada",
    "segredo",
    # Chinese
    "密码", "口令", "密钥", "秘钥", "令牌", "私钥", "api密钥", "api 密钥", "api令牌",
    # Japanese
    "パスワード", "apiキー", "api キー", "apiトークン", "トークン", "秘密鍵", "シークレット",
    # Russian
    "пароль", "ключ api", "api-ключ", "api ключ", "токен", "секретный ключ", "приватный ключ",
    # Korean
    "비밀번호", "암호", "패스워드", "api 키", "api키", "토큰", "개인 키", "개인키", "시크릿",
    # Italian, Dutch, Polish, Turkish, Swedish, Arabic, Hindi
    "chiave api", "chiave segreta", "chiave privata", "wachtwoord", "api-sleutel",
    "api sleutel", "geheime sleutel", "hasło", "klucz api", "klucz prywatny", "tajny klucz",
    "şifre", "şifresi", "parola", "parolası", "api anahtarı", "gizli anahtar", "lösenord",
    "lösenordet",
    "api-nyckel", "hemlig nyckel", "كلمة المرور", "كلمة السر", "مفتاح api", "पासवर्ड",
    "एपीआई कुंजी",
    # Vietnamese, Indonesian and Malay, Thai, Hebrew, Greek, Czech, Ukrainian
    "mật khẩu", "khóa api", "khoá api", "khóa bí mật", "kata sandi", "kata sandinya",
    "kata laluan",
    "kunci api", "kunci rahasia", "รหัสผ่าน", "คีย์ api", "סיסמה", "סיסמא", "מפתח api",
    "κωδικός πρόσβασης", "κωδικός", "συνθηματικό", "κλειδί api", "heslo", "klíč api",
    "api klíč", "tajný klíč", "ключ api", "секретний ключ",
    # Danish, Norwegian, Finnish, Romanian, Hungarian, Catalan, Persian, Bengali
    "adgangskode", "adgangskoden", "passord", "passordet", "salasana", "jelszó", "jelszava",
    "contrasenya", "رمز عبور", "گذرواژه", "পাসওয়ার্ড",
)  # fmt: skip
# `to`, `je`, `er`, `on` are also English words (`the password to production is …`): the value
# after one of them must hold a digit or a password's punctuation, or the words go on to a verb
_PROSE_WEAK = r"(?:\bto\b|\bje\b|\ber\b|\bon\b)(?=[ \t]*[\"'`(]?[^\s\"'`]*[0-9!#$%&*+=?@^~|])"
_PROSE_VERBS = (
    r"\bis\b|\bwas\b|\best\b|\bétait\b|\bist\b|\blautet\b|\bwar\b|\bes\b|\bera\b|é"
    r"|это|是|为|為|は|が|는|은|이|가|:|：|->|→|—|–"
    r"|è|\bjest\b|är|هي|هو|है|là|\badalah\b|\bialah\b|คือ|היא|הוא|είναι|це|\beste\b|és"
    r"|است|" + _PROSE_WEAK
)
_PROSE = _rx(
    "(?<![a-z0-9_])(?:"
    + "|".join(map(re.escape, sorted(_PROSE_NAMES, key=len, reverse=True)))
    + ")(?![a-z0-9_])"
    r"(?:(?:[ \t]+[^\s\"'`\\{}\[\]<>=:]{1,24}){0,4}?[ \t]*(?P<verb>" + _PROSE_VERBS + r")[ \t]*"
    # `=` right after the name, or after words with a space before it: in `Passwort
    # jIX8Hu=j38a…` the `=` is the password's
    r"|(?P<eq>(?:(?:[ \t]+[^\s\"'`\\{}\[\]<>=:]{1,24}){1,4}?[ \t]+|[ \t]*)=)[ \t]*"
    r"|[ \t]+"
    # a word or two and no verb (`пароль от базы …`): only a generated mix is taken
    r"|(?P<words>(?:[ \t]+[^\s\"'`\\{}\[\]<>=:]{1,24}){1,2})[ \t]+)[\"'`(]?"
    # printable ASCII but quotes, backticks and backslashes (a JSON escape ends the value)
    r"(?P<p>[!#-&(-\[\]-_a-~]{8,256})"
)
# The ASCII ones are looked for with `in` before the regex runs; the others only in text
# that is not ASCII, and only when it holds one of their letters beyond ASCII (most text that
# is not ASCII has an arrow, a box-drawing line or an emoji in it, not a word of these names).
_PROSE_ASCII_TRIGGERS = ("pass", "key", "toke", "secr", "clave", "senha", "chave", "jeton",
                         "kennwort", "contrase", "segredo", "geheim", "wachtw", "chiav",
                         "sleutel", "klucz", "parola", "sandi", "laluan", "kunci", "heslo",
                         "adgangsk", "salasana", "anahtar", "nyckel", "jelsz")  # fmt: skip
_PROSE_OTHER_TRIGGERS = tuple(dict.fromkeys(n for n in _PROSE_NAMES if not n.isascii()))
_PROSE_OTHER_CHARS = _rx(
    "[" + "".join(sorted({c for n in _PROSE_OTHER_TRIGGERS for c in n if not c.isascii()})) + "]"
)


def _names_by_trigger() -> dict[str, tuple[tuple[str, int], ...]]:
    """ASCII trigger → (an ASCII name holding it, the trigger's offset in that name)."""
    out = {
        t: tuple((n, k) for n in _PROSE_NAMES if n.isascii() for k in _offsets(n, t))
        for t in _PROSE_ASCII_TRIGGERS
    }
    for n in _PROSE_NAMES:  # ASCII names are searched from the triggers: each holds one
        assert not n.isascii() or any(t in n for t in _PROSE_ASCII_TRIGGERS), n
    return {t: names for t, names in out.items() if names}


def _offsets(s: str, sub: str) -> Iterator[int]:
    k = s.find(sub)
    while k >= 0:
        yield k
        k = s.find(sub, k + 1)


_NAMES_BY_TRIGGER = _names_by_trigger()


_ASCII_BYTES = bytes(range(128))


def _prose_others(lowered: str) -> tuple[str, ...]:
    """The names beyond ASCII that ``lowered`` holds (none in ASCII text). Their letters are
    looked for among the text's characters beyond ASCII alone (its UTF-8 with the ASCII bytes
    dropped, what is left decoded): most text beyond ASCII holds a few arrows or box lines, and
    the regex reads those instead of every character (half the cost on eval-dev)."""
    if lowered.isascii():
        return ()
    beyond = lowered.encode("utf-8", "surrogatepass").translate(None, _ASCII_BYTES)
    if _PROSE_OTHER_CHARS.search(beyond.decode("utf-8", "surrogatepass")) is None:
        return ()
    return tuple(n for n in _PROSE_OTHER_TRIGGERS if n in lowered)


def _prose_matches(
    lowered: str, found: Mapping[str, list[int]], others: tuple[str, ...]
) -> Iterator[re.Match[str]]:
    """The prose rule's matches: the regex is tried only where a name starts — the ASCII
    names around each of their triggers (``found``: where `_found` found the words), the
    others (``others``, from `_prose_others`) where they are."""
    positions: set[int] = set()
    for t, names in _NAMES_BY_TRIGGER.items():
        at = found.get(t)
        if at is None:
            continue
        for j in at:
            for name, k in names:
                if j >= k and lowered.startswith(name, j - k):
                    positions.add(j - k)
    for name in others:
        positions.update(_offsets(lowered, name))
    end = -1
    for i in sorted(positions):
        if i < end:
            continue
        m = _PROSE.match(lowered, i)
        if m is not None:
            end = m.end()
            yield m


_PROSE_RULE = Rule(
    "labelled-value", _PROSE, _PROSE_ASCII_TRIGGERS, group="value", priority=45, lower=True
)


# The password hashes' starts (bcrypt, md5-crypt, Apache's, sha256/512-crypt, yescrypt, argon2,
# phpass, Django's pbkdf2)
_HASH_STARTS = (
    "$2", "$1$", "$apr1$", "$5$", "$6$", "$y$", "$gy$", "$7$", "$argon2", "$p$", "$h$",
    "pbkdf2_sha",
)  # fmt: skip

# A URL parameter named as a secret ends its name with one of these and its `=`
_URL_PARAM_TRIGGERS = (
    "key=", "token=", "secret=", "password=", "passwd=", "pwd=", "sig=", "signature="
)  # fmt: skip
_URL_PARAM_NAMES = (
    "api[_-]?key", "apikey", "key", "token", "access[_-]?token", "auth[_-]?token",
    "refresh[_-]?token", "id[_-]?token", "client[_-]?secret", "secret", "password", "passwd",
    "pwd", "sig", "signature", "x-amz-signature", "x-amz-security-token",
)  # fmt: skip


def _url_param_anchors() -> tuple[tuple[str, int], ...]:
    """Where a URL parameter's match starts, from where its trigger is: each name (with its
    `[_-]?` spelled every way) ends with a trigger less its `=`, and the separator is one
    character before the name."""
    out: dict[tuple[str, int], None] = {}
    for name in _URL_PARAM_NAMES:
        head, _, tail = name.partition("[_-]?")
        for spelled in (head + "_" + tail, head + tail) if tail else (name,):
            for t in _URL_PARAM_TRIGGERS:
                if (spelled + "=").endswith(t):
                    out[(t, len(t) - len(spelled) - 2)] = None
    return tuple(out)


_URL_PARAM_ANCHORS = _url_param_anchors()

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
        ("secr",),
        group=1,
        validate=random_token(3.5),
        priority=5,
        lower=True,
        anchors=(("secr", 0),),
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
    # Slack incoming webhooks (provider tokens are in funes.secrets.providers)
    Rule(
        "slack-webhook-url",
        _rx(
            r"(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{20,}"
        ),
        ("hooks.slack.com",),
        validate=lambda v: random_token()(v.rsplit("/", 1)[-1]),
    ),
    # Structured secrets
    Rule(
        "jwt",
        _rx(
            # the literal first (the engine skips from one `eyJ` to the next), then the
            # look-behind that it starts a token
            r"(eyJ(?:(?<![A-Za-z0-9_-]eyJ)|(?<=\\[nrt]eyJ))"
            r"[A-Za-z0-9_-]{8,}\.ey[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})" + _B64URL_END
        ),
        (".ey",),  # the gate's `.ey` branch put it in the hay
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
        anchors=(("://", 0),),
    ),
    *(
        Rule(
            "url-secret-param",
            _rx(
                re.escape(sep)
                + "(?:"
                + "|".join(_URL_PARAM_NAMES)
                + ")"
                + r"=([^&\s#\"'<>\\]{1,2048})"
            ),
            # the name's end and its `=`: every match holds one, and starts where it says
            _URL_PARAM_TRIGGERS,
            anchors=_URL_PARAM_ANCHORS,
            group=1,
            validate=lambda v: looks_secret(_unquote(v), 12),
            priority=20,
            lower=True,
        )
        # one rule per separator, each starting with its literal: the engine skips to it
        for sep in ("?", "&", ";")
    ),
    Rule(
        "bearer-token",
        _rx(r"bearer[ \t]+([a-z0-9_.~+/=-]{20,2048})"),
        ("bearer",),
        anchors=(("bearer", 0),),
        group=1,
        # a token after `Bearer` is a credential by place: letters alone will do
        validate=lambda v: looks_secret(v, 20, digitless_ok=True),
        priority=30,
        lower=True,
    ),
    Rule(  # Sidekiq Enterprise/Pro gem server credentials in a Bundler environment variable
        "sidekiq-secret",
        _rx(
            r"contribsys__com(?:\\?\")?[ \t]*[=:][ \t]*[\"']?([0-9a-f]{8}:[0-9a-f]{8})(?![0-9a-f])"
        ),
        ("contribsys",),
        anchors=(("contribsys", 0),),
        group=1,
        validate=_not_placeholder,
        priority=10,
        lower=True,
    ),
    # HTTP Basic credentials: base64 of `user:password`
    Rule(
        "http-basic-auth",
        _rx(r"basic(?<![a-z0-9_]basic)[ \t]+([a-z0-9+/]{8,}={0,2})(?![a-z0-9+/=])"),
        ("basic",),
        anchors=(("basic", 0),),
        group=1,
        validate=lambda v: _basic_credentials(v),
        priority=25,
        lower=True,
    ),
    Rule(  # docker's config.json: "auth": "<base64 of user:password>"
        "http-basic-auth",
        _rx(r"auths?\\?\"[ \t]*:[ \t]*\\?\"([a-z0-9+/]{8,}={0,2})\\?\""),
        ("auth",),
        anchors=(("auth", 0),),
        group=1,
        validate=lambda v: _basic_credentials(v),
        priority=25,
        lower=True,
    ),
    # passwords given on a command line
    Rule(
        "cli-password",
        _rx(
            r"docker[ \t]+login\b[^\n|;&]*?[ \t](?:-p|--password)(?:[ \t]+|=)"
            r"(?:\\?[\"'])?([^\s\"'\\]{4,256})"
        ),
        ("login",),
        anchors=(("docker", 0),),
        group=1,
        validate=lambda v: _cli_password(v),
        priority=25,
        lower=True,
    ),
    Rule(
        "cli-password",
        _rx(
            # `--password X`, `--db-password=X`: the literal first, so the engine skips to it
            # (`-pass X` only as a flag of its own: not `single-pass reconcile`)
            r"-pass(?:word|wd|(?<![^\s-]-pass))(?:[ \t]+|=)"
            r"(?:\\?[\"'])?([^\s\"'\\`]{4,256})"
        ),
        ("pass",),
        anchors=(("pass", -1),),  # `-pass`
        group=1,
        validate=lambda v: _cli_password(v),
        priority=25,
        lower=True,
    ),
    Rule(  # `--auth-token X`, `--api-key X`, `--secret X`: a generated value after such a flag
        "secret-assignment",
        _rx(
            r"-(?:(?:auth-?)?token|secret|(?:api|access|secret)-?key)[ \t]+(?:\\?[\"'])?"
            r"([^\s\"'\\`]{10,512})"
        ),
        ("toke", "secr", "key"),
        anchors=tuple((w, 0) for w in ("-token", "-auth", "-secret", "-api", "-access")),
        group=1,
        validate=lambda v: looks_secret(v),
        priority=30,
        lower=True,
    ),
    Rule(  # curl -u user:password, --user user:password
        "cli-password",
        _rx(
            r"curl\b[^\n|;&]*?[ \t](?:-[a-z]*u|--user)[ \t]*(?:\\?[\"'])?"
            r"[^\s:\"'\\]{1,128}:([^\s\"'\\]{4,256})"
        ),
        ("curl",),
        anchors=(("curl", 0),),
        group=1,
        # after `user:` a leading `-` is the password's, not the next option's
        validate=lambda v: _cli_password(v, option_may_follow=False),
        priority=25,
        lower=True,
    ),
    Rule(  # sshpass -p X
        "cli-password",
        _rx(r"sshpass[ \t]+-p[ \t]*(?:\\?[\"'])?([^\s\"'\\]{4,256})"),
        ("pass",),  # shared with the names ending in `pass…`
        anchors=(("pass", -3),),  # `sshpass`
        group=1,
        validate=lambda v: _cli_password(v),
        priority=25,
        lower=True,
    ),
    Rule(  # mysql -pX (no space: with one, -p asks for the password)
        "cli-password",
        _rx(r"mysql(?:dump|admin)?\b[^\n|;&]*?[ \t]-p(?:\\?[\"'])?([^\s\"'\\]{4,256})"),
        ("mysql",),
        anchors=(("mysql", 0),),
        group=1,
        validate=lambda v: _cli_password(v),
        priority=25,
        lower=True,
    ),
    *(
        Rule(
            "secret-assignment",
            _rx(keyword + "(?:" + _ASSIGN_TAIL + "|" + _LABEL_TAIL + ")"),
            # `_auth` is looked for as `auth`, a word every text is searched for anyway
            ("auth" if keyword == "_auth" else keyword[:4],),
            anchors=(("auth", -1),) if keyword == "_auth" else ((keyword[:4], 0),),
            shared=_NAMES,
            group="value",
            priority=40,
            lower=True,
        )
        for keyword in _NAME_KEYWORDS
    ),
    _PROSE_RULE,
    Rule(  # Okta API tokens: `Authorization: SSWS <token>`
        "okta-api-token",
        _rx(r"ssws[ \t]+([a-z0-9_-]{30,64})(?![a-z0-9_-])"),
        ("ssws",),
        anchors=(("ssws", 0),),
        group=1,
        validate=lambda v: looks_secret(v, 30, digitless_ok=True),
        priority=10,
        lower=True,
    ),
    Rule(  # Discord webhooks: the id and token of the URL
        "discord-webhook-url",
        _rx(r"discord(?:app)?\.com/api/webhooks/(\d{17,20}/[a-z0-9_-]{60,80})(?![a-z0-9_-])"),
        ("discord",),
        anchors=(("discord", 0),),
        group=1,
        validate=lambda v: random_token()(v.rsplit("/", 1)[-1]),
        priority=10,
        lower=True,
    ),
    Rule(  # a wallet key written as its bytes (Solana's keypair files): `…key = [12, 201, …]`
        "crypto-private-key",
        _rx(
            r"(?:key|secret|seed)[\w\"'\\]{0,30}[ \t]*(?::=|=|:)[ \t]*(?:\\?[\"'])?"
            r"(\[[ \t]*\d{1,3}(?:[ \t]*,[ \t]*\d{1,3}){31,63}[ \t]*\])"
        ),
        ("key", "secr", "seed"),
        anchors=(("key", 0), ("secr", 0), ("seed", 0)),
        group=1,
        validate=lambda v: _byte_array(v),
        priority=5,
        lower=True,
    ),
    Rule(  # .netrc: `machine HOST login USER password PASSWORD`, on one line or several
        "netrc-password",
        _rx(
            r"machine[ \t]+\S+(?:\s+(?:login|account)[ \t]+\S+)*\s+password[ \t]+"
            r"([^\s\"'\\]{4,256})"
        ),
        ("machine",),
        anchors=(("machine", 0),),
        group=1,
        validate=lambda v: _cli_password(v),
        priority=20,
        lower=True,
    ),
    Rule(  # .pgpass: `host:port:database:user:password`
        "pgpass-password",
        _rx(
            r"(?<![\w.:/-])[a-z0-9_.*-]+:(?:\d{1,5}|\*):[^\s:\"'\\]+:[^\s:\"'\\]+:"
            r"((?:[^\s\"'\\]|\\[:\\]){4,256})"
        ),
        ("pgpass", ":5432:", ":*:"),
        group=1,
        validate=lambda v: _pgpass_password(v),
        priority=20,
        lower=True,
    ),
    *(
        Rule(  # more command lines: `redis-cli -a X`, `ldapsearch -w X`, `az login … -p X`
            "cli-password",
            # each starts with its literal, so the engine skips from one to the next
            _rx(command + r"(?:[ \t]+|=)(?:\\?[\"'])?([^\s\"'\\]{4,256})"),
            (trigger,),
            anchors=((trigger, 0),) if trigger == "redis-cli" else (),
            group=1,
            validate=lambda v: _cli_password(v),
            priority=25,
            lower=True,
        )
        for command, trigger in (
            (r"redis-cli\b[^\n|;&]*?[ \t]-a", "redis-cli"),
            (r"ldap[a-z]*\b[^\n|;&]*?[ \t]-w", " -w"),
            (r"az[ \t]+login\b[^\n|;&]*?[ \t](?:-p|--password)", "login"),
        )
    ),
    *(
        Rule(  # XML: `<password>…</password>`, `<apiKey>…</apiKey>`
            "secret-assignment",
            # the element's name ends at the keyword, a literal the engine skips to; the
            # trigger is a word the text is searched for anyway
            _rx(keyword + r">([^<\s]{6,256})</"),
            (trigger,),
            anchors=((trigger, 0),),  # each keyword starts with its trigger
            group=1,
            validate=lambda v: _cli_password(v),
            priority=30,
            lower=True,
        )
        for keyword, trigger in (
            ("pass(?:w(?:or)?d|phrase)?", "pass"),
            ("pwd", "pwd"),
            ("secret", "secr"),
            ("token", "toke"),
            ("key", "key"),
        )
    ),
    Rule(  # .NET appSettings: `<add key="DbPassword" value="…" />`
        "secret-assignment",
        _rx(
            r"key=\\?\"[a-z0-9_.:-]*(?:pass(?:w(?:or)?d|phrase)?|secret|token|key|pwd)\\?\"[ \t]+"
            r"value=\\?\"((?:[^\"\s\\]|\\[^\s\"]){6,256})\\?\""
        ),
        ("value=",),
        anchors=(("key", 0),),
        group=1,
        validate=lambda v: looks_secret(v),
        priority=30,
        lower=True,
    ),
    Rule(  # a wallet's keypair file written bare (`cat ~/.config/solana/id.json`): 64 bytes
        "crypto-private-key",
        _rx(r"(\[[ \t]*\d{1,3}(?:[ \t]*,[ \t]*\d{1,3}){63}[ \t]*\])"),
        ("keypair", "wallet", "id.json"),
        group=1,
        validate=lambda v: _byte_array(v),
        priority=5,
        lower=True,
    ),
    Rule(  # a session cookie: `Cookie: sessionid=…; csrftoken=…`, `Set-Cookie: token=…`
        "secret-assignment",
        _rx(
            r"cookie:[^\n]{0,400}?(?<![a-z0-9_-])[a-z0-9_.-]*(?:sess|sid|token|auth|jwt)[a-z0-9_.-]*"
            r"=([^;\s\"'\\]{16,4096})"
        ),
        ("cookie",),
        anchors=(("cookie", 0),),
        group=1,
        validate=lambda v: looks_secret(v, 16, digitless_ok=True),
        priority=30,
        lower=True,
    ),
    Rule(  # PuTTY key files: the private lines after `Private-Lines: N`
        "private-key",
        _rx(
            r"private-lines:[ \t]*\d{1,3}[ \t]*(?:\r?\n|\\r?\\n)"
            r"((?:[a-z0-9+/=]{8,}(?:\r?\n|\\r?\\n))*[a-z0-9+/=]{8,})"
        ),
        ("private-lines",),
        anchors=(("private-lines", 0),),
        group=1,
        priority=1,
        lower=True,
    ),
    Rule(  # a Sentry DSN: `https://<32 hex key>@o123.ingest.sentry.io/456`
        "url-credentials",
        _rx(r"://([0-9a-f]{32})(?::[0-9a-f]{32})?@[a-z0-9.-]+/"),
        ("sentry", "dsn"),
        anchors=(("://", 0),),
        group=1,
        validate=random_token(3.0),
        priority=20,
        lower=True,
    ),
    Rule(  # a password hash (`/etc/shadow`, `.htpasswd`, a users table): cracked offline
        "password-hash",
        _rx(
            r"(?:\$(?:2[abxy]?\$\d\d\$[./a-z0-9]{53}"  # bcrypt
            r"|(?:1|apr1)\$[./a-z0-9]{1,8}\$[./a-z0-9]{22}"  # md5-crypt, Apache's
            r"|5\$(?:rounds=\d+\$)?[./a-z0-9]{1,16}\$[./a-z0-9]{43}"  # sha256-crypt
            r"|6\$(?:rounds=\d+\$)?[./a-z0-9]{1,16}\$[./a-z0-9]{86}"  # sha512-crypt
            r"|(?:y|gy|7)\$[./a-z0-9]{1,64}\$(?:[./a-z0-9]{1,86}\$)?[./a-z0-9]{43}"  # yescrypt
            r"|argon2(?:id|i|d)\$v=\d+\$m=\d+,t=\d+,p=\d+\$[a-z0-9+/]{8,}\$[a-z0-9+/]{16,}"
            r"|[ph]\$[./a-z0-9]{31})"  # phpass (WordPress, phpBB)
            r"|(?<![a-z0-9_])pbkdf2_sha\d+\$\d+\$[a-z0-9+/.]{8,}\$[a-z0-9+/]{32,}={0,2})"  # Django
            r"(?![./a-z0-9$])"
        ),
        # how each kind starts: `$` alone is in every shell line
        _HASH_STARTS,
        anchors=tuple((w, 0) for w in _HASH_STARTS),
        validate=lambda v: entropy(v.rsplit("$", 1)[-1]) >= 3.0,
        priority=10,
        lower=True,
    ),
    Rule(  # a credential pair in code: `auth=("svc", "…")`, `HTTPBasicAuth("u", "…")`,
        # `SetBasicAuth("u", "…")`, `smtp.login("me@acme.io", "…")`
        "secret-assignment",
        _rx(
            r"(?:auth|login|credentials?)[a-z_]*[ \t]*(?:=|:)?[ \t]*[(\[][ \t]*\\?[\"'][^\"'\\\s]{1,128}\\?[\"']"
            r"[ \t]*,[ \t]*" + _quoted(6)
        ),
        ("auth", "login", "cred"),
        anchors=(("auth", 0), ("login", 0), ("cred", 0)),
        group=2,
        validate=lambda v: (
            _cli_password(v) and (looks_secret(v, 8, digitless_ok=True) or _generated(v))
        ),
        priority=30,
        lower=True,
    ),
    Rule(  # Braintree and PayPal access tokens: `access_token$production$<id>$<32 hex>`
        "braintree-access-token",
        _rx(r"access_token\$(?:production|sandbox)\$[0-9a-z]{16}\$[0-9a-f]{32}(?![0-9a-f])"),
        ("$production$", "$sandbox$"),
        validate=lambda v: entropy(v.rsplit("$", 1)[-1]) >= 3.0,
        priority=10,
        lower=True,
    ),
    Rule(  # SQL: `IDENTIFIED BY '…'`, `WITH PASSWORD '…'`, `LOGIN PASSWORD '…'`,
        # `SET PASSWORD FOR 'u'@'h' = '…'`, `ALTER LOGIN x WITH PASSWORD = '…'`
        "secret-assignment",
        _rx(
            r"(?:identified[ \t]+(?:with[ \t]+\w+[ \t]+)?by(?:[ \t]+password)?"
            r"|password[ \t]+for[ \t]+\S{1,128}[ \t]*="
            r"|(?:with|login|encrypted)[ \t]+password(?:[ \t]*=)?|password[ \t]*\()[ \t]*"
            + _quoted(6)
        ),
        ("identified", "pass"),
        # where each branch starts (`password` at `pass`)
        anchors=tuple((w, 0) for w in ("identified", "pass", "with", "login", "encrypted")),
        group=2,
        validate=lambda v: _cli_password(v),
        priority=30,
        lower=True,
    ),
    Rule(  # PowerShell: `ConvertTo-SecureString '…' -AsPlainText`
        "secret-assignment",
        _rx(r"convertto-securestring[ \t]+(?:-string[ \t]+)?" + _quoted(6)),
        ("securestring",),
        anchors=(("securestring", -len("convertto-")),),
        group=2,
        validate=lambda v: _cli_password(v),
        priority=25,
        lower=True,
    ),
    Rule(  # `echo '…' | docker login -u ci --password-stdin`
        "cli-password",
        _rx(
            r"(?:echo|printf)[ \t]+(?:-n[ \t]+|'%s'[ \t]+|\"%s\"[ \t]+)?"
            r"(?:"
            + _quoted(6)
            + r"|(?P<bare>[^\s'\"\\|]{6,256}))[ \t]*\|[^\n|]{0,200}?--password-stdin"
        ),
        ("password-stdin",),
        group="either",
        validate=lambda v: _cli_password(v),
        priority=25,
        lower=True,
    ),
    Rule(  # a name and its value as two fields: Kubernetes' and ECS's `env` lists, Terraform
        # `{ name = "DB_PASSWORD", value = "…" }`
        "secret-assignment",
        _rx(
            r"name\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?[a-z0-9_.-]*"
            r"(?:key|secret|token|pass(?:w(?:or)?d|phrase)?|pwd|credentials?)\\?[\"']?[ \t]*,?"
            r"(?:[ \t]|\r?\n|(?:\\r)?\\n)*\\?[\"']?value\\?[\"']?[ \t]*[:=][ \t]*"
            r"(?:" + _quoted(6, 512) + r"|(?P<bare>[^\s\"'\\,}]{6,512}))"
        ),
        ("value",),
        anchors=(("name", 0),),
        group="pair",
        priority=40,
        lower=True,
    ),
    Rule(  # Terraform: `variable "db_password" { default = "…" }`
        "secret-assignment",
        _rx(
            r"variable[ \t]+\\?\"[a-z0-9_-]*(?:key|secret|token|pass\w*|pwd|credentials?)\\?\""
            r"[ \t]*\{[^}]{0,300}?default[ \t]*=[ \t]*" + _quoted(6, 512)
        ),
        ("variable",),
        anchors=(("variable", 0),),
        group=2,
        validate=lambda v: looks_secret(v, digitless_ok=len(v) >= 12),
        priority=30,
        lower=True,
    ),
    Rule(  # Go's MySQL DSN: `user:password@tcp(host:3306)/db`
        "url-credentials",
        _rx(r"(?<![\w.-])[a-z0-9_.-]{1,64}:([^\s@/\"'\\]{4,256})@(?:tcp|unix|udp)\("),
        ("@tcp(", "@unix(", "@udp("),
        group=1,
        validate=lambda v: _cli_password(v),
        priority=20,
        lower=True,
    ),
    Rule(  # a Telegram bot's token in its API URL: `api.telegram.org/bot<id>:<token>/getMe`
        "telegram-bot-token",
        _rx(r"telegram\.org/(?:file/)?bot(\d{5,16}:[a-z0-9_-]{30,50})(?![a-z0-9_-])"),
        ("telegram",),
        anchors=(("telegram", 0),),
        group=1,
        validate=random_token(3.0),
        priority=10,
        lower=True,
    ),
    Rule(  # Django's generated SECRET_KEY (50 characters of letters, digits and punctuation)
        "secret-assignment",
        _rx(r"django-insecure-([a-z0-9!@#$%^&*(\-_=+)]{40,60})"),
        ("django-insecure-",),
        anchors=(("django-insecure-", 0),),
        group=1,
        validate=random_token(3.5),
        priority=10,
        lower=True,
    ),
)

_PUBLIC_NAME = _rx(r"(?i)public|publishable|pubkey")
_PASSWORD_NAME = _rx(r"(?i)pass|pwd|secret")
# a name no public key or wallet address goes by
_PRIVATE_NAME = _rx(r"(?i)secret|private|pass|pwd|encrypt|signing|master|api.?key")
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
# A value written in prose after a label is held to a stricter standard than one assigned to
# a variable: prose puts names, paths and identifiers in backticks all the time.
LABELLED_MIN_LEN = 16
LABELLED_MIN_ENTROPY = 3.5  # 3.0 for hex, whose alphabet cannot reach more than 4 bits
_HEX = _rx(r"[0-9a-fA-F]+")
_IDENTIFIER = _rx(r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}|[0-9a-f]{40}")


def _assignment_value(text: str, m: re.Match[str]) -> tuple[int, int, str] | None:
    """The span and detector of the value a secret-ish name is given, or None."""
    found = _value_span(text, m)
    if found is None:
        return None
    g, kind, start, end = found
    i = m.start()
    while i > 0 and text[i - 1] in _NAME_CHARS:
        i -= 1
    if _PUBLIC_NAME.search(text, i, m.start() + 12):
        return None
    # escaped once or twice (`\\\\` in a JSON string of a JSON string) a backslash is one
    value = _BACKSLASHES.sub("\\\\", text[start:end])
    named = _named(text, max(text.rfind("\n", 0, i) + 1, i - 80), m.start() + 12, value)
    if named is not None:
        return start, end, named
    if kind == "v":
        ok = _assigned_secret(text, m, g, i, start, end, value)
        return (start, end, "secret-assignment") if ok else None
    ok = _labelled_secret(text, m, kind, start, end, value)
    return (start, end, "labelled-value") if ok else None


def _value_span(text: str, m: re.Match[str]) -> tuple[str, str, int, int] | None:
    """The group that holds the value, its kind (v: assigned, l: labelled, quoted after a
    label, p: plain prose) and its span, trimmed to the value; None when nothing is left."""
    groups = m.re.groupindex
    for g in ("v1", "v2", "v3", "v4", "v5", "l1", "l2", "l3", "l4", "l5", "p"):
        if g in groups and m.group(g) is not None:
            start, end = m.span(g)
            break
    else:  # pragma: no cover - the regex always sets one
        return None
    kind = g[0]  # v: assigned, l: labelled (quoted after a label), p: plain prose
    if g == "v5" and (m.group("sep") or "=").strip() not in ("=", ":="):
        kind = "l"  # ``token: `…` `` is markdown: a backticked value after a label
    if kind in "vp" and g not in ("v1", "v2", "v3", "v5"):
        # a two-column table's value ends its line: it has no next field
        table = "sep" in groups and m.group("sep") is not None and not m.group("sep").strip()
        trimmed = _trim_value(text, start, end, fields=not table)
        if trimmed is None:
            return None
        start, end = trimmed
    return g, kind, start, end


def _assigned_secret(
    text: str, m: re.Match[str], g: str, i: int, start: int, end: int, value: str
) -> bool:
    """Whether ``value``, assigned to the secret-ish name that starts at ``i``, is a secret."""
    if g == "v4" and _code(text, start, end, (m.group("sep") or "").strip()):
        return False
    if m.group("sep") is not None and not m.group("sep").strip():
        # a two-column table (`db_pass     …`): only a generated value, not a type name
        # (`RESTAWSAccountKeyConfig`) or a date (`2025-12-31T23:59:59Z`)
        return (
            len(value) >= MIN_VALUE_LEN and not is_placeholder(value) and _generated(value)
        ) or (looks_secret(value) and entropy(value) >= 3.5)
    if m.group("call") is not None and not (len(value) >= 16 or _generated(value)):
        return False  # a setter's argument: `shareWithKey('0x1234invalid')` is a test's
    # a long random mixed-case value needs no digit (`qrBpqDsoaQHuZcKMNAfRkuPN`); after a
    # password's or a secret's name, twelve characters will do (`sqMgLj*olXCwYjn`)
    password = _PASSWORD_NAME.match(text, m.start()) is not None
    return looks_secret(
        value,
        private=_PRIVATE_NAME.search(text, i, start) is not None,
        digitless_ok=len(value) >= (12 if password else 16)
        and not _DOTTED_NAME.fullmatch(value)
        and (
            _case_scattered(value)
            # a password's punctuation between letters of both cases (`xLMboG*EsBOy`)
            or (password and _PASSWORD_PUNCT.search(value, 1, len(value) - 1) is not None)
        ),
    )


def _labelled_secret(
    text: str, m: re.Match[str], kind: str, start: int, end: int, value: str
) -> bool:
    """Whether ``value``, quoted after a secret-ish label (``kind`` l) or given to one in prose
    (``kind`` p), is a secret."""
    if kind == "p" and (
        not _prose_value(value, m.group("verb") is not None or m.group("eq") is not None)
        or _code(text, start, end, "")
        or (m.group("words") is not None and not (_generated(value) or _long_mixed(value)))
    ):
        return False
    verb = kind == "p" and (m.group("verb") is not None or m.group("eq") is not None)
    scattered = verb and _case_scattered(value)
    return (
        # a prose value passed `_prose_value`'s length (12 after a verb); a quoted one needs 16
        looks_secret(
            value,
            PROSE_MIN_LEN if kind == "p" or _generated(value) else LABELLED_MIN_LEN,
            digitless_ok=scattered,
        )
        and entropy(value) >= (ENTROPY_THRESHOLD if scattered else _labelled_entropy(value))
        and not _DOTTED_NAME.fullmatch(value)
        and not _IDENTIFIER.fullmatch(value)  # a UUID or a commit: prose names them
        and not _HASH_REF.match(value)  # `sha256[:8]=ea46ca9a`: a digest quoted to name a key
    )


_BACKSLASHES = _rx(r"\\{2,}")


def _pair_value(text: str, m: re.Match[str]) -> tuple[int, int] | None:
    """The value of a `name: …KEY` / `value: …` pair, when it looks generated."""
    if m.group(2) is not None:
        start, end = m.span(2)
    else:
        trimmed = _trim_value(text, *m.span("bare"))
        if trimmed is None or _code(text, *trimmed, ":"):
            return None
        start, end = trimmed
    value = text[start:end]
    digitless = len(value) >= 12 and _case_scattered(value)
    return (start, end) if looks_secret(value, digitless_ok=digitless) else None


def _long_mixed(value: str) -> bool:
    """Sixteen characters or more of both cases and digits (`1NeakgFVIDpnvc2Xn`)."""
    return (
        len(value) >= 16
        and value.lower() != value
        and value.upper() != value
        and bool(_HAS_DIGIT.search(value))
    )


def _generated(value: str) -> bool:
    """A mix no name or word has: cases and a number not in a word (`T6k%Cwt62HB<BaN`), or a
    digit and a password's punctuation inside."""
    if _REGEX_SYNTAX.search(value):
        return False  # `tp-[a-z0-9]+`: a pattern
    return credential_mix(value) or bool(
        _HAS_DIGIT.search(value) and _PASSWORD_PUNCT.search(value, 1, len(value) - 1)
    )


_REGEX_SYNTAX = _rx(r"[A-Za-z0-9]-[A-Za-z0-9]\]|\\[dDwWsSb]|\{\d+(?:,\d*)?\}")


_OPENERS = {")": "(", "]": "[", "}": "{", ">": "<"}
_TRAILING = ".,;:!?&|'\"`"
# Where an unquoted value stops being one: the next field of a query string, a form body or a
# cookie (`&b=`, `;gt=`, `%26name%3D`).
_NEXT_FIELD = _rx(r"(?:[&;,|]|%26)[A-Za-z_][\w.-]{0,40}(?:=|:|%3[dD])")


def _in_query(text: str, start: int) -> bool:
    """The value at ``start`` is a field of a query string or a form (`?a=1&password=…`)."""
    i = start
    while i > 0 and text[i - 1] in "=: \t\"'":
        i -= 1
    while i > 0 and (text[i - 1].isalnum() or text[i - 1] in "_.-"):
        i -= 1
    return i > 0 and text[i - 1] in "?&"


def _trim_value(text: str, start: int, end: int, fields: bool = True) -> tuple[int, int] | None:
    """An unquoted value's span without what follows it: the next field, and trailing
    punctuation or closing brackets the value did not open (`f(key=abc123)`, `…abc123.`)."""
    field = _NEXT_FIELD.search(text, start, end) if fields else None
    if field is not None:
        head = text[start : field.start()]
        # `O2TCD*K;Rj=RUvTk`, `N60&fvV=S0Hd…`: a generated head too short to be a value on its
        # own runs on through what only looks like a next field
        # …and so does one cut at `;` or `,` when the whole is a generated mix
        # (`qgjn;L5OE7ueIz=H5SEG`); never at `&`, which joins a query string's fields
        whole = credential_mix(text[start:end]) and (
            text[field.start()] in ";,|" or not _in_query(text, start)
        )
        if not (len(head) < PROSE_MIN_LEN and (_generated(head) or whole)):
            end = field.start()
    while start < end and text[start] in "([{<`\"'":
        start += 1
    while end > start:
        c = text[end - 1]
        unopened = c in _OPENERS and text.count(c, start, end) > text.count(_OPENERS[c], start, end)
        if c not in _TRAILING and not unopened:
            break
        end -= 1
    return (start, end) if end > start else None


# A value written in prose with no quotes around it is held to a stricter standard still: prose
# says "the token is stored in config.yaml" and "the key is sha256:…".
PROSE_MIN_LEN = 12
PROSE_MIN_LEN_BARE = 16  # no verb between the name and the value


def _prose_value(value: str, verb: bool) -> bool:
    # with no verb, 16 characters — or 12 in a generated mix (`password K157ic@SPp#blA`)
    if len(value) < (PROSE_MIN_LEN if verb or _generated(value) else PROSE_MIN_LEN_BARE):
        return False
    # after a verb (`mật khẩu là tHWnsCGRlrwZbqca`) letters of both cases need no digit
    digitless_ok = verb and _case_scattered(value)
    if not looks_secret(value, PROSE_MIN_LEN, digitless_ok) or _DOTTED_NAME.fullmatch(value):
        return False
    if _IDENTIFIER.fullmatch(value) or _HASH_REF.match(value):
        return False
    field = _FIELD.match(value)
    if field is not None and not (
        _generated(value[field.end() :]) or _case_scattered(value[field.end() :])
    ):
        return False
    return entropy(value) >= min(_labelled_entropy(value), 3.2)


_FIELD = _rx(r"[a-z_]{2,}=")  # `method=password ip=192.168.1.100`: the next field


def _labelled_entropy(value: str) -> float:
    """The entropy a value labelled in prose needs: less for hex, whose alphabet cannot reach
    more than 4 bits, and for digits among letters of both cases, which prose's words and
    most names do not have (`das Passwort ist 33UaHcSV&aI3a6IY1`: 3.4 bits; a name like
    `HTTP2ServerConfig` is told by its words, see `_camel_words`)."""
    if _HEX.fullmatch(value):
        return 3.0
    if _HAS_DIGIT.search(value) and (
        (value.lower() != value and value.upper() != value)
        or _PASSWORD_PUNCT.search(value, 1, len(value) - 1)  # `f6jj7kkk>g7irckyt`
    ):
        return ENTROPY_THRESHOLD
    return LABELLED_MIN_ENTROPY


_PASSWORD_PUNCT = _rx(r"[#%&()\[\]{}<>!@$^*+=~?;,|]")


_HASH_REF = _rx(r"(?:sha|md5|blake|crc)\w*[:\[=]", re.I)


def _named(text: str, start: int, end: int, value: str) -> str | None:
    """The provider a named value belongs to: a keyword of a NAMED row in the name (or the
    words just before a label), and the value in that provider's shape."""
    kw, rows = _named_index()
    name = _SQUASH.sub("", text[start:end].lower())
    # `KEY=value|next`: the provider's shape may end at the punctuation the value runs on to
    shapes = (value, *(m.string[: m.start()] for m in _PUNCT.finditer(value, 1)))
    for k in dict.fromkeys(kw.findall(name)):
        for row, rx in rows[k]:
            for v in shapes:
                if rx.fullmatch(v):
                    if is_placeholder(v) or entropy(v) < 3.0:
                        return None
                    return row.detector
    return None


_PUNCT = _rx(r"[|,;&)\]}>]")


def _code(text: str, start: int, end: int, sep: str) -> bool:
    """Unquoted values that are code: `make_key(…)`, `x[…]`, `os.getenv(`; `_DEFAULT` unless
    written as `KEY=value` (a shell or .env file); `mod.attr` after ` = `, `:=` or `=>` only
    (after `: ` it may be a YAML value or an HTTP header). A bracket inside a random value
    (`Xk29fLq7(a1QvR8`) is a character of a password."""
    if sep == "=" and _ENV_LINE.fullmatch(text, text.rfind("\n", 0, start) + 1, start):
        return False  # `DB_PASSWORD=P1[3<Rl…` in a .env file or a shell: a value, not code
    call = _CALL.match(text, start, end)
    if call is not None and not _random_head(call.group(1)):
        # …unless what follows the bracket is random too (`boglhan0[SwEOl1q0`): arguments and
        # type parameters are names (`make_key(user`, `HashMap<i32`, `Vec<Uint8Array`)
        rest = text[call.end() : end]
        if (len(rest) < 6 or not credential_mix(rest)) and not _scrambled(text[start:end]):
            return True
    if text[end : end + 1] in ("(", "["):
        return True
    if sep == "=" and text[start - 1] == "=":
        return False
    if text[start] == "_" and not credential_mix(text[start:end]):
        return True
    # `a.b` is an attribute unless its parts are random (`QUFfz8.yN_lVFFGJ` in an INI file)
    return (
        sep != ":"
        and _DOTTED_NAME.fullmatch(text, start, end) is not None
        and not _case_scattered(text[start:end])
    )


_ENV_LINE = _rx(r"[ \t]*(?:export[ \t]+)?[A-Z][A-Z0-9_]*=")
# `f(`, `a.b::c[`, `Vec<`, a macro `dec!(`, optional chaining `apiKey?.substring(`
_CALL = _rx(r"([A-Za-z_$][\w$]*(?:(?:\.|::|\?\.)[A-Za-z_$][\w$]*)*)!?[(\[<]")


_BRACKET = _rx(r"[(\[{<)\]}>]")
_CLOSERS = {"(": ")", "[": "]", "{": "}", "<": ">"}


def _scrambled(value: str) -> bool:
    """Brackets no code writes, in a value of digits and both cases: one closed by another
    kind (`ZSWn(NuK}99K~xRS`), letters after the last closer (`yo(ABXvCGm|rvi1)cyoWy`), or one
    left open after a head that is no name and before a last letter or digit
    (`bPS(imuzwh(wbUa^l1`). Code cut at a space ends at a comma or after a name
    (`SigningKey::from_bytes(&[0u8;`, `Math.max(0,`, `HashMap<u32`)."""
    if not (_HAS_DIGIT.search(value) and value.lower() != value and value.upper() != value):
        return False
    stack: list[str] = []
    last = 0
    for m in _BRACKET.finditer(value):
        c = m.group()
        if c in _CLOSERS:
            stack.append(_CLOSERS[c])
        elif not stack or stack.pop() != c:
            return True
        last = m.end()
    if not stack:
        return any(c.isalnum() for c in value[last:])
    head = _CALL.match(value)
    return (
        value[-1].isalnum()
        and head is not None
        and not any(c in head.group(1) for c in ".:_")
        and not _camel_words(head.group(1))
        and not _NAME_WORDS.fullmatch(head.group(1))
    )


# `HashMap`, `getToken`, `Vec`, `sha256`: a head made of words of three letters or more
_NAME_WORDS = _rx(r"(?:[a-z]{3,}|[A-Z][a-z]{2,})(?:[A-Z][a-z]{2,})*\d*")


# `S8(Wz…`, `K7[Kew…`, `J0eC7l[y6…`: a capital and a digit start a generated value, not a name
_CAPITAL_DIGIT = _rx(r"[A-Z][0-9][A-Za-z0-9]{0,4}")


def _random_head(s: str) -> bool:
    """What precedes a bracket is generated, not a function or a type (`F6x3(`, `Xk29fLq7(`)."""
    return _random_run(s) or credential_mix(s) or _CAPITAL_DIGIT.fullmatch(s) is not None


def _random_run(s: str) -> bool:
    """A run that looks generated rather than named (`Xk29fLq7Pz`, not `os.getenv`)."""
    return (
        len(s) >= 6
        and "." not in s
        and ":" not in s
        and bool(_HAS_DIGIT.search(s) and _HAS_ALPHA.search(s))
        and not _WORD_NUMBER.fullmatch(s)  # sha256, base64, int32
        and entropy(s) >= 2.0
    )


_WORD_NUMBER = _rx(r"[a-z_]+\d+|[A-Z]?[a-z]+\d+")


def _basic_credentials(value: str) -> bool:
    """`Basic <base64>` whose payload is `user:password` (printable, a non-empty password)."""
    import base64
    import binascii

    try:
        raw = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
        decoded = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    _user, colon, password = decoded.partition(":")
    return bool(colon and password and decoded.isprintable()) and not is_placeholder(password)


def _pgpass_password(value: str) -> bool:
    """The last field of a .pgpass line: anything but a placeholder or a reference."""
    return len(value) >= 6 and not is_placeholder(value) and not _SHELL_REF.search(value)


def _byte_array(value: str) -> bool:
    """32 or 64 numbers, each a byte, not all alike: a private key or seed written out."""
    nums = [int(n) for n in re.findall(r"\d+", value)]
    return len(nums) in (32, 64) and max(nums) <= 255 and len(set(nums)) >= 16


# `$PASS`, `${PASS}`, `$(cat f)`, `%PASS%`, `{{ x }}`; inside a value a `$` not closing a
# `${…}` or `$(…)` is a character of a password (`E6QcxBd;$lpsh1O`, `WyayU$T7BR*K`)
_SHELL_REF = _rx(r"^[$%]|\$\{[^}\s]*\}|\$\([^)\s]*\)|%[A-Za-z_][A-Za-z0-9_]{2,}%|\{\{")


def _cli_password(value: str, option_may_follow: bool = True) -> bool:
    """A password given on a command line is a secret by place: anything but a reference to
    one (`$PASS`, `%PASS%`, `{{ secret }}`), a placeholder, or the next option (where one
    may stand: not after curl's `user:`)."""
    if (option_may_follow and value.startswith("-")) or _SHELL_REF.search(value):
        return False
    if len(value) < 6 or is_placeholder(value):
        return False
    word = value.rstrip(".,;:!?)]}*'\"`")
    if word.isalpha() and not _MIXED_CASE.search(word):
        return False  # `--password secret`, `--password File`, `two-pass processing:`: words
    return not _PATHLIKE.match(value) or _slash_base64(value)


# --- provider tokens: the table in funes.secrets.providers -----------------------------------
#
# One regex pass (the gate) finds the places where a provider token can be: a separator
# followed by a run of random-looking characters (`_`, `-`, `.`, `=`, `/` — every prefixed
# token has one), or one of the few prefixes with no separator. From each place the start of
# the token it sits in is found by walking back over token characters, and only the rows whose
# prefix begins there are tried (a dict lookup on the first characters). Clean text costs the
# gate pass and nothing else.

# Every top-level branch starts with a literal character: the regex engine then skips to the
# next possible first character in C instead of trying the pattern at every position. The
# branches are grouped by that character, the most frequent in transcripts first: branches with
# different first characters never compete for a place, so the order among them changes no
# match, only how many the engine tries before the right one.
_AN16 = "[A-Za-z0-9]{16}"
_GATE = _rx(
    "|".join(
        [
            r"-(?:[A-Za-z0-9]{16}|[A-Za-z0-9_-]{20}|us\d{1,2}(?![A-Za-z0-9]))",
            # `.ey…` is a JWT payload, `.slack.com/` a webhook; base64 bodies need not hold
            # 16 letters in a row
            r"\.(?:ey[A-Za-z0-9_-]{8}|slack\.com/|atlasv1\.|[A-Za-z0-9_+/=-]{20}"
            r"|[A-Za-z0-9]{16}|[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27})",
            "/" + _AN16,
            r":(?:AA[A-Za-z0-9_-]{33}|[A-Za-z0-9]{16})",
            # a separator, then a run that looks generated
            r"_(?:[A-Za-z0-9]{16}|[A-Za-z0-9_-]{20})",
            r"S(?:K[0-9a-fA-F]{32}|[A-Z2-7]{55})",
            "=" + _AN16,
            # AWS key ids (the old cased rules), then prefixes with no separator after them
            r"A(?:KIA|SIA|BIA|CCA|3T|Iza|T[AC]TT3|TBB|KCp|BSK|QVN|3-[A-Z0-9]{6}-|AAAAAAAAA)",
            r"E(?:Z[AT]K[A-Za-z0-9]{20}|AA[ACM][A-Za-z0-9_-]{20})",
            r"5[HJK][1-9A-HJ-NP-Za-km-z]{49}",
            r"L(?:TAI[A-Za-z0-9]{20}|[1-9A-HJ-NP-Za-km-z]{51})",
            r"PRIVATE KEY",
            r"\+" + _AN16,
            r"K[1-9A-HJ-NP-Za-km-z]{51}",
            r"GR1348941",
            r"YC[A-Za-z0-9_-]{38}",
            r"~[A-Za-z0-9_.-]{20}",
            r"Q~",
        ]
    )
)
# Prefixes that start with a lowercase letter and no separator are too common a first
# character for the gate; they are looked for with `in` on the lowered text.
_LOWER_PREFIXES = ("eyjrijoi", "dapi", "4b1d", "cmvmdgtu", "glc_", "prv", "tfp_", "fio-u-")

_TOKEN_CHAR_STR = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.~+/=:"
_START_AFTER = frozenset("./=+~:")  # a token may also start right after one of these
_MAX_BACK = 400


class _Row:
    """A provider row, its regex compiled the first time a token could be one (most never
    are: compiling them all would cost every short-lived command its start-up time)."""

    __slots__ = (
        "_regex", "detector", "min_entropy", "pattern", "prefixes", "priority", "validate"
    )  # fmt: skip

    def __init__(self, p: Provider) -> None:
        self.prefixes = p.prefixes  # the regex matches only where one of them is
        prefixes = "|".join(re.escape(x) for x in sorted(p.prefixes, key=len, reverse=True))
        self.pattern = f"(?:{prefixes})(?P<b>{p.body})(?!{p.tail})"
        self.detector = p.detector
        self.min_entropy = p.min_entropy
        self.priority = p.priority
        self.validate = _VALIDATORS.get(p.detector)
        self._regex: re.Pattern[str] | None = None

    @property
    def regex(self) -> re.Pattern[str]:
        if self._regex is None:
            self._regex = re.compile(self.pattern)
        return self._regex


def _row(p: Provider) -> _Row:
    return _Row(p)


_VALIDATORS: dict[str, Validator] = {
    "stellar-secret-seed": lambda v: crypto.stellar_seed(v),
    "bitcoin-private-key": lambda v: crypto.bitcoin_wif(v),
    "bip32-extended-private-key": lambda v: crypto.extended_private_key(v),
}

_CRYPTO: tuple[Provider, ...] = (
    Provider("stellar-secret-seed", "S", "[A-Z2-7]{55}", min_entropy=0.0),
    Provider(
        "bitcoin-private-key", ("5H", "5J", "5K"), "[1-9A-HJ-NP-Za-km-z]{49}", min_entropy=0.0
    ),
    Provider("bitcoin-private-key", ("K", "L"), "[1-9A-HJ-NP-Za-km-z]{51}", min_entropy=0.0),
    Provider(
        "bip32-extended-private-key",
        ("xprv", "tprv", "yprv", "zprv", "Yprv", "Zprv"),
        "[1-9A-HJ-NP-Za-km-z]{107}",
        min_entropy=0.0,
    ),
)


def _build() -> tuple[dict[str, list[_Row]], list[tuple[str, _Row]]]:
    by_prefix: dict[str, list[_Row]] = {}
    anywhere: list[tuple[str, _Row]] = []  # (marker in the token, row) for prefix-less rows
    markers = {
        "terraform-cloud-token": ".atlasv1.",
        "mailchimp-api-key": "-us",
        "dropbox-long-lived-token": "AAAAAAAAAA",
        "azure-ad-client-secret": "Q~",
    }
    for p in (*PROVIDERS, *_CRYPTO):
        row = _row(p)
        if not p.prefixes[0]:
            anywhere.append((markers[p.detector], row))
            continue
        for prefix in p.prefixes:
            by_prefix.setdefault(prefix[:2], []).append(row)
    return by_prefix, anywhere


_BY_PREFIX, _ANYWHERE = _build()


def _at_start() -> tuple[dict[str, tuple[_Row, ...]], dict[str, tuple[_Row, ...]]]:
    """The rows to try where a token starts, by its first two characters (the rows of that
    two-character prefix, then those of its one-character prefix), and by its first one
    alone (when no row's prefix starts with those two): one lookup per place, not two."""
    one = {k: tuple(rows) for k, rows in _BY_PREFIX.items() if len(k) == 1}
    two = {k: (*rows, *one.get(k[0], ())) for k, rows in _BY_PREFIX.items() if len(k) == 2}
    return two, one


_AT_TWO, _AT_ONE = _at_start()
_TELEGRAM = _rx(r"(?P<b>\d{8,10}:AA[A-Za-z0-9_-]{33})(?![A-Za-z0-9_-])")
_SQUASH = _rx(r"[^a-z0-9]")  # `new-york-times`, `NEW_YORK_TIMES`: one name
_NAMED_INDEX: list[tuple[re.Pattern[str], dict[str, list[tuple[Named, _Rx]]]]] = []


def _named_index() -> tuple[re.Pattern[str], dict[str, list[tuple[Named, _Rx]]]]:
    """(a regex of every NAMED keyword, keyword → its rows), built on first use; a row's value
    shape is compiled when a name holds one of its keywords."""
    if not _NAMED_INDEX:
        rows: dict[str, list[tuple[Named, _Rx]]] = {}
        for n in NAMED:
            rx = _rx(n.value)
            for k in n.keywords:
                rows.setdefault(_SQUASH.sub("", k), []).append((n, rx))
        kw = re.compile("|".join(sorted(map(re.escape, rows), key=len, reverse=True)))
        _NAMED_INDEX.append((kw, rows))
    return _NAMED_INDEX[0]


_SEPARATOR = _rx(r"[./=+~:]")
_TOKEN_RUN = _rx(r"[A-Za-z0-9_.~+/=:-]*")


def _providers(text: str, hits: list[int], cands: list[tuple[int, int, int, str]]) -> None:
    """Provider-table findings around the gate's hits (positions in ``text``)."""
    tried: set[int] = set()
    done = 0  # token characters before this were walked already
    at_two, at_one = _AT_TWO, _AT_ONE
    for p in hits:
        if p < done:
            continue
        lo = max(done, p - _MAX_BACK)
        s = lo + len(text[lo:p].rstrip(_TOKEN_CHAR_STR))  # back over token characters
        e = _TOKEN_RUN.match(text, p, p + _MAX_BACK).end()  # type: ignore[union-attr]
        done = e  # the whole token is handled now: later hits inside it are skipped
        starts = [s]
        starts += [m.end() for m in _SEPARATOR.finditer(text, s, e)]
        if s > 0 and text[s - 1] == "\\" and text[s : s + 1] in ("n", "r", "t"):
            starts.append(s + 1)  # right after a JSON-escaped newline
        for q in starts:
            rows = at_two.get(text[q : q + 2]) or at_one.get(text[q : q + 1])
            if rows and q not in tried and _token_start(text, q):
                tried.add(q)
                for row in rows:
                    if text.startswith(row.prefixes, q):  # (a row never matched is never compiled)
                        _try(row, text, q, cands)
        token = text[s:e]
        for marker, row in _ANYWHERE:
            if marker in token:
                for q in starts:
                    _try(row, text, q, cands)
        if ":AA" in token:
            # `https://api.telegram.org/bot<token>/getMe`: the token right after `bot`
            for q in (*starts, *(q + 3 for q in starts if text.startswith("bot", q))):
                m = _TELEGRAM.match(text, q)
                if m and entropy(m.group("b")) >= 3.0:
                    cands.append((m.start(), m.end(), 10, "telegram-bot-token"))


def _token_start(text: str, q: int) -> bool:
    """No identifier character before ``q`` (the ``n`` of an escaped ``\\n`` does not count)."""
    if q == 0:
        return True
    c = text[q - 1]
    if not (c.isascii() and (c.isalnum() or c == "_")):
        return True
    return c in "nrt" and q > 1 and text[q - 2] == "\\"


def _try(row: _Row, text: str, q: int, cands: list[tuple[int, int, int, str]]) -> None:
    if not text.startswith(row.prefixes, q):
        return  # (and a row that never matches is never compiled)
    m = row.regex.match(text, q)
    if m is None:
        return
    body = m.group("b")
    if row.validate is not None:
        if not row.validate(text[q : m.end()]):
            return
    elif (
        # a short body cannot reach much entropy, a hex one even less
        entropy(body)
        < min(row.min_entropy, (0.6 if _HEX.fullmatch(body) else 0.7) * math.log2(len(body) + 1))
        or "xxxx" in body.lower()
        or len(set(body)) <= 3
    ):
        return
    cands.append((q, m.end(), row.priority, row.detector))


# --- mnemonics ----------------------------------------------------------------------------

_MNEMONIC_LABELS = ("mnemonic", "seed", "phrase", "wallet")
_MNEMONIC_BEFORE, _MNEMONIC_AFTER = 200, 600


def _mnemonics(lowered: str, cands: list[tuple[int, int, int, str]]) -> None:
    """12–24 BIP39 words in a row near a word that says what they are (a seed phrase, a
    mnemonic, a wallet)."""
    spans: set[tuple[int, int]] = set()
    for label in _MNEMONIC_LABELS:
        i = lowered.find(label)
        n = 0
        while i >= 0 and n < 16:
            a, b = max(0, i - _MNEMONIC_BEFORE), i + _MNEMONIC_AFTER
            # the window's words looked up one by one: cheaper than a regex for twelve short
            # words in a row, which backtracks over every letter of a window of code
            spans.update(crypto.mnemonic_spans(lowered, a, b))
            i = lowered.find(label, b)
            n += 1
    cands.extend((s, e, 5, "bip39-mnemonic") for s, e in spans)


DETECTORS: tuple[str, ...] = tuple(
    dict.fromkeys(
        [r.detector for r in RULES]
        + ["labelled-value"]
        + [p.detector for p in PROVIDERS]
        + [p.detector for p in _CRYPTO]
        + ["telegram-bot-token", "bip39-mnemonic"]
        + [n.detector for n in NAMED]
    )
)


_BYTES_RULES = frozenset(id(r) for r in RULES if r.detector == "crypto-private-key")
_BYTE_ARRAY = _rx(r"\[[ \t]*\d{1,3}[ \t]*,")  # what the wallet-bytes rule's value starts with

_CASED = tuple(r for r in RULES if not r.lower)
_LOWERED = tuple(r for r in RULES if r.lower)


def _lower(text: str) -> str:
    """``text.lower()`` with the same length, so spans found in it apply to ``text``."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


_WINDOW_BEFORE, _WINDOW_AFTER, _MAX_WINDOWS = 64, 16, 64


def _gate(text: str) -> tuple[list[Rule], list[int]]:
    """One pass of the gate: the case-sensitive rules worth running on ``text`` (their
    triggers are looked for only near the hits — unless there are so many hits, a base64
    blob, that checking the whole text once is cheaper) and the hit positions."""
    # most texts have no hit: one search says so at a fifth of what starting finditer costs
    first = _GATE.search(text)
    if first is None:
        return [], []
    hits = [first.start(), *(m.start() for m in _GATE.finditer(text, first.end()))]
    if len(hits) > _MAX_WINDOWS:
        hay = text
    else:
        hay = "\0".join(text[max(0, p - _WINDOW_BEFORE) : p + _WINDOW_AFTER + 16] for p in hits)
    return _triggered(_CASED_T, hay), hits


_Indexed = tuple[tuple[str, ...], tuple[Rule, ...], dict[str, tuple[int, ...]]]


def _triggered(rules: _Indexed, hay: str, present: Collection[str] | None = None) -> list[Rule]:
    """Rules with a trigger in ``hay`` (or in ``present``, the words already found in it), in
    their order: each distinct trigger is looked for once, with a plain ``in``, and the rules
    are gathered from the few words found, not each rule's words tested."""
    triggers, ordered, by_word = rules
    if present is None:
        present = {t for t in triggers if t in hay}
    picked: set[int] = set()
    for w in present:
        picked.update(by_word.get(w, ()))
    return [ordered[k] for k in sorted(picked)]


def _indexed(rules: tuple[Rule, ...]) -> _Indexed:
    triggers = tuple(dict.fromkeys(t for r in rules for t in r.triggers))
    by_word = {t: tuple(k for k, r in enumerate(rules) if t in r.triggers) for t in triggers}
    return triggers, rules, by_word


_CASED_T = _indexed(_CASED)
_LOWERED_T = _indexed(_LOWERED)


Cand = tuple[int, int, int, str]  # start, end, priority, detector


def find(text: str) -> list[Finding]:
    """Every secret in ``text``: sorted, non-overlapping spans (overlaps merged).

    Besides the text as written, two views of it are checked, and what they find is redacted
    in the original: a token wrapped over two lines, joined (only around the places a token
    starts at the end of a line), and base64 runs decoded (only in text that mentions base64
    or a kubeconfig `*-data:` key).
    """
    cands: list[Cand] = []
    lowered = _lower(text)
    hits, found = _scan(text, lowered, cands)
    if hits:
        _wrapped(text, hits, cands)
    if found:  # (most texts hold none of the automaton's words)
        # `-----` in base64 at each of its alignments: a PEM's marker, maybe in a chunk of one
        if not found.keys().isdisjoint(_B64_HINTS) or (
            not found.keys().isdisjoint(_DASHES_B64_LOWER) and any(d in text for d in _DASHES_B64)
        ):
            _decoded(text, cands)
        if "---" in found and ("|-" in text or "| -" in text or "|:" in text or "-|" in text):
            _tables(text, cands)
    if len(hits) >= 3 and "\n" in text:
        # a key's base64 lines fire the gate again and again (`/` or `+` before 16 letters
        # and digits)
        _key_body(text, cands)
        if "-----END " in text:
            _key_tail(text, cands)
    if text.count(",") >= 63 and "[" in text:  # 64 numbers need 63 commas
        _bare_keypairs(text, cands)
    if not cands:
        return []
    if "\n" in text:
        cands = [_continued(text, c) for c in cands]
    return _merge(cands)


def _admitted(
    text: str, lowered: str, present: Collection[str], cased: list[Rule], others: tuple[str, ...]
) -> list[tuple[Rule, str]]:
    """The prefilter: the rules worth running on a text, each with the text it runs on (as
    written, or lowered). ``cased``: the gate's; ``present``: the words `_found` found; ``others``:
    `_prose_others`' names. A rule left out must be one that finds nothing there
    (tests/test_secrets_prefilter.py runs every rule on generated credentials to check)."""
    rules = [(r, text) for r in cased]
    triggered = _triggered(_LOWERED_T, lowered, present)
    if others and not any(r is _PROSE_RULE for r in triggered):
        triggered.append(_PROSE_RULE)
    for r in triggered:
        if id(r) in _BYTES_RULES and _BYTE_ARRAY.search(lowered) is None:
            continue  # its regex has no literal to skip to: look for what it needs first
        rules.append((r, lowered))
    return rules


def _candidate(rule: Rule, text: str, m: re.Match[str]) -> Cand | None:
    """What a rule's match finds in ``text``: its span, priority and detector, or None."""
    if rule.group == "value":
        found = _assignment_value(text, m)
        if found is None:
            return None
        s, e, detector = found
    elif rule.group == "either":  # a quoted value (group 2) or a bare one
        g = 2 if m.group(2) is not None else "bare"
        s, e = m.span(g)
        if rule.validate is not None and not rule.validate(text[s:e]):
            return None
        detector = rule.detector
    elif rule.group == "pair":
        pair = _pair_value(text, m)
        if pair is None:
            return None
        s, e = pair
        detector = rule.detector
    else:
        s, e = m.span(rule.group)
        if s >= e or (
            rule.validate is not None and not rule.validate(_BACKSLASHES.sub("\\\\", text[s:e]))
        ):
            return None
        detector = rule.detector
    return (s, e, rule.priority, detector)


def _scan(text: str, lowered: str, cands: list[Cand]) -> tuple[list[int], dict[str, list[int]]]:
    """Every rule over ``text`` as written; returns the gate's hits (where tokens may start)
    and where the words of the automaton (`_found`) are in the lowered text."""
    found = _found(lowered)
    cased, hits = _gate(text)  # in order
    if not found.keys().isdisjoint(_LOWER_PREFIXES):
        for pfx in _LOWER_PREFIXES:
            at = found.get(pfx)
            if at is not None:
                hits += [i - 1 for i in at] if pfx == "prv" else at  # xprv, tprv, …
        hits.sort()
    if hits:
        _providers(text, hits, cands)
    others = _prose_others(lowered)
    if found or others:
        admitted = _admitted(text, lowered, found, cased, others)
    else:  # none of the automaton's words, no name beyond ASCII: the gate's rules alone
        admitted = [(r, text) for r in cased]
    for rule, hay in admitted:
        for m in _rule_matches(rule, hay, found, others):
            c = _candidate(rule, text, m)
            if c is not None:
                cands.append(c)
    if found and not found.keys().isdisjoint(_MNEMONIC_LABELS):
        _mnemonics(lowered, cands)
    return hits, found


# An anchored rule is tried at its words' occurrences when they are this sparse (a character
# the regex engine skips over costs ~1 ns, a match tried from Python ~0.3 µs), else its regex
# runs over the whole text: the same matches either way.
_ANCHORED_SPACING = 256


def _rule_matches(
    rule: Rule, hay: str, found: Mapping[str, list[int]], others: tuple[str, ...]
) -> Iterator[re.Match[str]]:
    """What ``rule.regex.finditer(hay)`` finds, the regex tried only where a match can start:
    at its anchors (see `Rule`), or, for the prose rule, where a name is."""
    if rule is _PROSE_RULE:
        return _prose_matches(hay, found, others)
    if not rule.anchors:
        return rule.regex.finditer(hay)
    starts: list[int] = []
    for word, shift in rule.anchors:
        at = found.get(word)
        if at is not None:
            starts += [p + shift for p in at] if shift else at
    if rule.shared is not None:
        return _anchored_matches(rule.shared, hay, starts, len(rule.anchors) > 1)
    if len(starts) * _ANCHORED_SPACING > len(hay):
        return rule.regex.finditer(hay)
    return _anchored_matches(rule.regex, hay, starts, len(rule.anchors) > 1)


def _anchored_matches(
    regex: _Rx, hay: str, starts: list[int], unsorted: bool
) -> Iterator[re.Match[str]]:
    """``regex``'s matches tried at ``starts``, left to right and not overlapping, as
    `finditer` finds them."""
    end = 0
    match = regex.match
    for p in sorted(set(starts)) if unsorted else starts:
        if p < end:
            continue
        m = match(hay, p)
        if m is not None:
            end = m.end()
            yield m


def _merge(cands: list[Cand]) -> list[Finding]:
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


# --- markdown tables and bare key files -----------------------------------------------------

# A wallet's keypair file shown alone (the output of `cat ~/.config/solana/id.json`)
_BARE_KEYPAIR = _rx(r"\[[ \t]*\d{1,3}(?:[ \t]*,[ \t]*\d{1,3}){63}[ \t]*\]")
_TABLE_RULE = _rx(r"[ \t]*\|?(?:[ \t]*:?-{3,}:?[ \t]*\|)+(?:[ \t]*:?-{3,}:?[ \t]*)?")
_DASHES = _rx(r"-{3,}")


def _table_rules(text: str) -> Iterator[tuple[int, int]]:
    """The spans of a markdown table's rule lines (`|---|:--:|`), found from their dashes (a
    literal the engine skips to) rather than from every line's start."""
    pos = 0
    while (m := _DASHES.search(text, pos)) is not None:
        a = text.rfind("\n", 0, m.start()) + 1
        b = text.find("\n", m.end())
        b = len(text) if b < 0 else b
        if _TABLE_RULE.fullmatch(text, a, b):
            yield a, b
        pos = b + 1


_SECRET_CELL = _rx(r"(?i)pass(?:w(?:or)?d)?\b|passwd|secret|token|api[ _-]?key|\bkey\b|credential")
_NOT_VALUE_CELL = _rx(r"(?i)name|public|type|descr|purpose|where|env|var|format|prefix|scope")


# Lines of a key's base64 body with no BEGIN marker in sight: a chunk cut from the middle of
# a PEM or OpenSSH key (a memory written without redaction is split before it is pushed)
_B64_LINES = (
    r"(?:(?:[A-Za-z0-9+/]{64}(?:\r?\n|\\n)){3,}[A-Za-z0-9+/]{0,64}"
    r"|(?:[A-Za-z0-9+/]{70}(?:\r?\n|\\n)){3,}[A-Za-z0-9+/]{0,70})={0,2}"
)
_KEY_BODY = _rx(r"\n(" + _B64_LINES + ")")
_KEY_BODY_ESCAPED = _rx(r"\\n(" + _B64_LINES + ")")
_KEY_BODY_START = _rx(r"(?:[A-Za-z0-9+/]{1,70}(?:\r?\n|\\n))?(" + _B64_LINES + ")")


def _key_body(text: str, cands: list[Cand]) -> None:
    escaped = _KEY_BODY_ESCAPED.finditer(text) if "\\n" in text else ()
    for m in (_KEY_BODY_START.match(text), *_KEY_BODY.finditer(text), *escaped):
        if m is not None and credential_mix(m.group(1)):
            cands.append((m.start(), m.end(), 1, "private-key"))


_KEY_END = _rx(r"-----END " + _PEM_LABEL + r"-----")
_BODY_LINE = _rx(r"[A-Za-z0-9+/=]{8,}[ \t]*$")


def _key_tail(text: str, cands: list[Cand]) -> None:
    """The end of a key whose BEGIN line is not in the text (a chunk that starts inside it):
    the base64 lines before its END marker."""
    for m in _KEY_END.finditer(text):
        lines = re.split(r"\r?\n|\\n", text[max(0, m.start() - 20000) : m.start()])
        body = 0
        for line in reversed(lines[:-1] if lines and not lines[-1].strip() else lines):
            if not _BODY_LINE.match(line.strip()):
                break
            body += len(line.strip())
        if body >= 16:
            start = m.start()
            # back over the body: each line and its break
            seen = 0
            while start > 0 and seen < body:
                start -= 1
                seen += text[start] not in "\r\n \t\\" and not (
                    text[start] == "n" and start > 0 and text[start - 1] == "\\"
                )
            cands.append((start, m.end(), 1, "private-key"))


def _bare_keypairs(text: str, cands: list[Cand]) -> None:
    """A 64-byte array alone on its line (or after a chunk's `[tool_result …]` header)."""
    for m in _BARE_KEYPAIR.finditer(text):
        before = text[: m.start()].rstrip(" \t")
        after = text[m.end() :].lstrip(" \t")
        if (
            (not before or before[-1] == "\n" or before.endswith(("]", "\\n")))
            and (not after or after[0] in "\r\n" or after.startswith("\\n"))
            and _byte_array(m.group())
        ):
            cands.append((m.start(), m.end(), 5, "crypto-private-key"))


_BAR = _rx(r"\|")


def _cells(text: str, a: int, b: int) -> list[tuple[int, int]]:
    """The spans of a table row's cells (between pipes, spaces and backticks trimmed)."""
    line = text[a:b]
    bars = [m.start() for m in _BAR.finditer(line)]
    if line.strip()[:1] != "|":
        bars.insert(0, -1)
    if line.strip()[-1:] != "|":
        bars.append(len(line))
    out = []
    for x, y in itertools.pairwise(bars):
        cell = line[x + 1 : y]
        lead = len(cell) - len(cell.lstrip(" \t`"))
        out.append((a + x + 1 + lead, a + x + 1 + len(cell.rstrip(" \t`"))))
    return out


def _tables(text: str, cands: list[Cand]) -> None:
    """Markdown tables: a value in a column headed as a secret (`| service | password |`), or
    in the cell after one that names it (`| DB_PASSWORD | … |`)."""
    for rule_start, rule_end in _table_rules(text):
        h1 = text.rfind("\n", 0, max(rule_start - 1, 0)) + 1
        header = _cells(text, h1, max(rule_start - 1, h1))
        secret_cols = {
            k for k, (a, b) in enumerate(header)
            if _SECRET_CELL.search(text, a, b) and not _NOT_VALUE_CELL.search(text, a, b)
        }  # fmt: skip
        pos = rule_end + 1
        while pos < len(text):
            end = text.find("\n", pos)
            end = len(text) if end < 0 else end
            if text.find("|", pos, end) < 0:
                break
            if not secret_cols and _SECRET_CELL.search(text, pos, end) is None:
                pos = end + 1  # no column and no cell of this row names a secret
                continue
            row = _cells(text, pos, end)
            for k, (a, b) in enumerate(row):
                named = k in secret_cols or (
                    k > 0 and _SECRET_CELL.search(text, *row[k - 1])
                    and not _NOT_VALUE_CELL.search(text, *row[k - 1])
                )  # fmt: skip
                value = text[a:b]
                if (
                    named
                    and b - a >= 8
                    and value.split() == [value]
                    and not is_placeholder(value)
                    and (looks_secret(value) or _generated(value))
                ):
                    cands.append((a, b, 40, "secret-assignment"))
            pos = end + 1


# --- views: a token wrapped over two lines, base64 decoded -----------------------------------

# A line break inside a token: a newline (or the `\n` of JSON-escaped text) and indentation.
_BREAK = _rx(r"(?:\\?\r?\n|(?:\\\\)?\\r?\\n)[ \t]*")  # `…\` continues a shell line
_CONTINUATION = _rx(r"[A-Za-z0-9_+/=.~-]{4,512}")
_LINE_END = _rx(r"[ \t]*(?:$|\r?\n|\\[rn])")


def _next_line_run(
    text: str, e: int, whole: bool = True, any_case: bool = False
) -> tuple[int, int] | None:
    """The span of the token run that starts the next line when ``e`` ends a line (the rest
    of a wrapped token): 4+ token characters, a digit or mixed case (unless ``any_case``);
    with ``whole``, nothing else on that line."""
    brk = _BREAK.match(text, e)
    if brk is None:
        return None
    run = _CONTINUATION.match(text, brk.end())
    if run is None or (whole and _LINE_END.match(text, run.end()) is None):
        return None
    if not (any_case or _token_like(run.group())):
        return None
    return run.span()


def _token_like(r: str) -> bool:
    return bool(_HAS_DIGIT.search(r)) or (r.lower() != r and r.upper() != r)


def _continued(text: str, c: Cand) -> Cand:
    """A finding that ends a line followed by a line of one token run takes that run too."""
    s, e, p, d = c
    nxt = _next_line_run(text, e)
    return (s, nxt[1], p, d) if nxt is not None else c


def _wrapped(text: str, hits: list[int], cands: list[Cand]) -> None:
    """Tokens wrapped over two lines: where a token that may start at a gate hit runs to the
    end of its line and the next line is one token run, the two are joined and scanned."""
    done = -1
    for p in hits:
        if p < done:
            continue
        run = _TOKEN_RUN.match(text, p, p + _MAX_BACK)
        e = run.end() if run is not None else p
        done = e
        # the rest of a wrapped token may be letters of one case (`GOCSPX-…\nULNPFC`)
        nxt = _next_line_run(text, e, whole=False, any_case=True)
        if nxt is None:
            continue
        lo = max(0, p - _MAX_BACK)
        s = lo + len(text[lo:p].rstrip(_TOKEN_CHAR_STR))
        head, tail = text[s:e], text[nxt[0] : nxt[1]]
        whole: set[str] = set()
        if not _token_like(tail):
            # a word on the next line (`done`, `PASS`) continues only a provider's token that
            # is not whole without it (`GOCSPX-` and 28 characters)
            alone: list[Cand] = []
            _scan(head, _lower(head), alone)
            whole = {c[3] for c in alone if c[1] == len(head)} | _GENERIC
        joined: list[Cand] = []
        _scan(head + tail, _lower(head + tail), joined)
        for js, je, jp, jd in joined:
            if js < len(head) < je and jd not in whole:  # it takes both lines
                cands.append((s + js, nxt[0] + je - len(head), jp, jd))


# Detectors that take any random-looking value after a name, of any length
_GENERIC = frozenset(
    ("secret-assignment", "labelled-value", "bearer-token", "url-secret-param", "cli-password")
)


_B64_HINTS = ("base64", "b64", "-data", "decode", "atob")
_DASHES_B64 = ("LS0tLS", "0tLS0t", "tLS0tL")  # `-----` in base64, at its three alignments
_DASHES_B64_LOWER = tuple(d.lower() for d in _DASHES_B64)  # looked for in the lowered text first
_B64_RUN = _rx(r"[A-Za-z0-9+/_-]{20,}={0,2}")  # what `_b64_runs` finds, as a regex
# `_b64_runs`' view of a text: a base64 character is `a`, `=` is itself, anything else a space
_B64_ALPHABETS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-")
_B64_CLASSES = bytes(
    ord("a") if b in _B64_ALPHABETS else ord("=") if b == ord("=") else ord(" ") for b in range(256)
)
_B64_MIN = b"a" * 20
_NOT_B64 = re.compile(rb"[^a]")


def _b64_runs(text: str) -> Iterator[tuple[int, int]]:
    """The spans `_B64_RUN.finditer` finds: runs of 20 or more base64 characters (either
    alphabet) and up to two `=`. The regex tries a match at every letter of the text, ~200
    instructions a character; here the text is mapped to three classes in one pass (every
    character beyond ASCII becomes one `?` byte, so offsets stay), and the runs are found with
    `bytes.find`, which skips twenty bytes at a time."""
    view = text.encode("ascii", "replace").translate(_B64_CLASSES)
    pos = view.find(_B64_MIN)
    while pos >= 0:
        end = _NOT_B64.search(view, pos + 20)
        e = len(view) if end is None else end.start()
        for _ in range(2):  # `={0,2}`
            if view[e : e + 1] == b"=":
                e += 1
        yield pos, e
        pos = view.find(_B64_MIN, e)


# Every word `_scan` and `find` look for in the lowered text, each looked for once per text:
# the lowered rules' triggers, the prose names' triggers, the lowercase token prefixes, the
# mnemonic labels and the base64 hints. Most texts hold a few; the work after is for those.
_WORDS = tuple(
    dict.fromkeys(
        (*_LOWERED_T[0], *_PROSE_ASCII_TRIGGERS, *_LOWER_PREFIXES, *_MNEMONIC_LABELS, *_B64_HINTS)
    )
)

# The words are looked for in one pass over the lowered text: an Aho–Corasick automaton
# (pyahocorasick, in C) of every word reports where each occurs, whatever their number. Before
# it, one `in` per word read the whole text for each word it did not hold, and a regex found the
# words with a rare letter: ~0.09 s of eval-dev's 3.9 MB of block text, ~0.04 s now. Besides
# the triggers, it holds the literals the rules' regexes start with (`Rule.anchors`), so a
# rule's regex is tried only where its literal is. (The prose names beyond ASCII are looked for
# apart, and only in text beyond ASCII: `_prose_others`.)
_AUTOMATON_WORDS = tuple(
    dict.fromkeys(
        (
            *_WORDS,
            *(w for r in RULES for w, _ in r.anchors),
            # what `find` looks for before the views and tables (in the lowered text: a
            # superset of where the base64 dashes are, exactly where `---` is)
            *_DASHES_B64_LOWER,
            "---",
        )
    )
)
# The automaton looks a character up among the first characters of its words one by one, so
# they go in by how often transcripts hold them (lowered), the most frequent first.
_FIRST_BY_FREQUENCY = " etsniarcldmpg-f:bwkv_4j"


def _automaton(words: tuple[str, ...]) -> Any:
    auto = ahocorasick.Automaton()
    rank = {c: k for k, c in enumerate(_FIRST_BY_FREQUENCY)}
    for w in sorted(words, key=lambda w: rank.get(w[0], len(rank))):
        auto.add_word(w, (w, len(w) - 1))
    auto.make_automaton()
    return auto


_AUTOMATON = _automaton(_AUTOMATON_WORDS)


def _found(lowered: str) -> dict[str, list[int]]:
    """Where each word of the automaton starts in ``lowered``: every occurrence, in order
    (overlapping ones too, as `str.find` from the next character finds them)."""
    found: dict[str, list[int]] = {}
    for end, (w, k) in _AUTOMATON.iter(lowered):
        at = found.get(w)
        if at is None:
            found[w] = [end - k]
        else:
            at.append(end - k)
    return found


def _present(lowered: str) -> set[str]:
    """Which of `_WORDS` (and of the automaton's other words) ``lowered`` holds."""
    return set(_found(lowered))


def _b64_text(base64: Any, binascii: Any, run: str) -> str | None:
    """``run`` decoded, when it is text (at most 5 % of characters neither printable nor
    space), else None."""
    try:
        raw = base64.b64decode(run + "=" * (-len(run) % 4), altchars=b"-_", validate=False)
        inner: str = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    if not inner.isprintable() and (
        sum(c.isprintable() or c.isspace() for c in inner) < 0.95 * len(inner)
    ):
        return None
    return inner


def _decoded(text: str, cands: list[Cand]) -> None:
    """Base64 runs that decode to text holding a secret (`echo c2tfbGl2ZV8… | base64 -d`, a
    kubeconfig's `client-key-data:`): the whole run is redacted, named after what it hides."""
    import base64
    import binascii

    for start, end in _b64_runs(text):
        run = text[start:end]
        inner = _b64_text(base64, binascii, run)
        if inner is None and any(d in run for d in _DASHES_B64):
            # a run cut from the middle of a longer one (a chunk of a kubeconfig) is aligned
            # on another character
            for k in (1, 2, 3):
                part = run[k:]
                inner = _b64_text(base64, binascii, part[: len(part) // 4 * 4])
                if inner is not None:
                    break
        if inner is None:
            continue
        found: list[Cand] = []
        _scan(inner, _lower(inner), found)
        if "\n" in inner:
            _key_body(inner, found)
            if "-----END " in inner:
                _key_tail(inner, found)
        if found:
            p, d = min((c[2], c[3]) for c in found)
            cands.append((start, end, p, d))


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
