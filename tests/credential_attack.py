"""An attacker's generator of credential shapes: fresh values in the places and spellings a
detector written from the usual examples misses.

Written from how people and tools write credentials, not from funes' rules: a value after a
password's, a key's or a token's name in a dozen programming and configuration languages
(Python, JavaScript, Go, Rust, Java, C#, PHP, Ruby, YAML, TOML, INI, .env, HCL, shell,
PowerShell, SQL), in plain prose in some twenty human languages, wrapped and escaped the way a
transcript stores tool output (a JSON string: `\\"password\\": \\"…\\"`, lines joined by `\\n`,
escaped twice for a tool call's input), with every class of punctuation inside a password or
none at all, and provider formats a table may lack.

``cases(rng)`` returns ``(kind, text, frags)``: ``frags`` are pieces of the secret that must not
survive redaction (the value and each run of six or more letters and digits in it). Kinds named
``letters-…`` hold a value of letters alone with nothing but its look to tell it from a name:
those are told by their letter pairs, which miss about one in fifty (see
docs/secrets.md); the others must all be found.
``decoys(rng)`` returns ``(kind, text)`` of what looks like one but is code or a name, which
must come out unchanged.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
import string
from collections.abc import Callable

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
ALNUM = string.ascii_letters + DIGITS
B64URL = ALNUM + "-_"
HEX = "0123456789abcdef"
CRYPT = "./" + ALNUM

Case = tuple[str, str, list[str]]


def s(rng: random.Random, alphabet: str, n: int) -> str:
    """``n`` random characters; with a letter and a digit both when the alphabet has both, and
    no run a stand-in would have (`xxxx`, `aaaa`)."""
    while True:
        v = "".join(rng.choice(alphabet) for _ in range(n))
        if re.search(r"(?i)xxxx|(.)\1\1", v):
            continue
        both = set(alphabet) & set(DIGITS) and set(alphabet) & set(string.ascii_letters)
        if n < 8 or not both or (any(c.isdigit() for c in v) and any(c.isalpha() for c in v)):
            return v


def mixed(rng: random.Random, n: int) -> str:
    """Letters of both cases and no digit, as a password generator set to letters makes."""
    while True:
        v = s(rng, string.ascii_letters, n)
        if sum(c.isupper() for c in v) >= n // 4 and sum(c.islower() for c in v) >= n // 4:
            return v


def frags(value: str) -> list[str]:
    """The value, and each run of six or more letters and digits in it."""
    return sorted({value, *(r for r in re.findall(r"[A-Za-z0-9]{6,}", value))})


def digest(value: str) -> str:
    """A short name for a value (never the value), for messages."""
    return hashlib.sha256(value.encode()).hexdigest()[:8]


# --- the listed misses of the lead's probe (issue 24, second round) -----------------------------


def lead_probe(rng: random.Random) -> list[Case]:
    out: list[Case] = []
    pw = mixed(rng, rng.randint(12, 16))
    pw_punct = pw[:6] + rng.choice("*!#%^&") + pw[7:]
    out += [
        ("env-digitless", f"DB_PASSWORD={pw_punct}", frags(pw_punct)),
        ("assign-digitless", f"password = {pw_punct}", frags(pw_punct)),
        ("ini-digitless", f"[default]\npassword = {pw_punct}\n", frags(pw_punct)),
        ("letters-yaml", f"password: {pw}", frags(pw)),
    ]
    v = mixed(rng, 16)
    out.append(("letters-prose-vi", f"mật khẩu là {v}", frags(v)))
    v = s(rng, ALNUM, 16)
    out.append(("prose-vi", f"mật khẩu là {v}", frags(v)))
    v = s(rng, ALNUM, 6) + rng.choice("!#%*") + s(rng, ALNUM, 8)
    out.append(("auth-tuple", f'requests.get(url, auth=("svc", "{v}"))', frags(v)))
    v = f"dp.st.{rng.choice(['prod', 'dev', 'stg_api'])}.{s(rng, ALNUM, 40)}"
    out.append(("doppler-service-token", f"DOPPLER: {v}", frags(v.rsplit(".", 1)[1])))
    v = f"{rng.randint(10**8, 10**9)}:{s(rng, B64URL, 35)}"
    out.append(
        ("telegram-url", f"https://api.telegram.org/bot{v}/sendMessage", frags(v.split(":")[1]))
    )
    h = f"$apr1${s(rng, CRYPT, 8)}${s(rng, CRYPT, 22)}"
    out.append(("htpasswd", f"admin:{h}", frags(h.rsplit("$", 1)[1])))
    h = f"$2b$12${s(rng, CRYPT, 53)}"
    out.append(("bcrypt", f"INSERT INTO users VALUES ('ana', '{h}');", frags(h[7:])))
    h = f"$6${s(rng, CRYPT, 16)}${s(rng, CRYPT, 86)}"
    out.append(("shadow", f"root:{h}:19700:0:99999:7:::", frags(h.rsplit("$", 1)[1])))
    return out


KINDS: dict[str, Callable[[random.Random], list[Case]]] = {"lead-probe": lead_probe}


def cases(rng: random.Random) -> list[Case]:
    """Every generator's cases, with fresh random values."""
    return [c for make in KINDS.values() for c in make(rng)]


# --- what looks like one and is not -------------------------------------------------------------


def decoys(rng: random.Random) -> list[tuple[str, str]]:
    """Code and names after a secret's label: kept as they are."""
    name = rng.choice(["getApiKeyForModel", "resolvePasswordHash", "SecretManagerClient",
                       "kSecAttrAccessible", "NSURLCredential", "PasswordEncoderFactory"])  # fmt: skip
    return [
        ("identifier-after-colon", f"Resolve API key for a model. Default: {name}"),
        ("identifier-assigned", f"password = {name}"),
        ("call-assigned", f"password = {name}(user)"),
        ("attribute", f"secret: self.{name}"),
        ("env-lookup", 'password = os.environ["DB_PASSWORD"]'),
        ("optional-chaining", f"return {{\n  apiKey: cfg?.data_?.{name.upper()}_API_KEY,\n}}"),
        (
            "identifier-in-object",
            f"  baseUrl: localLlmBaseUrl,\n  apiKey: {rng.choice(['localLlmApiKey', 'openAiCompatKey', 'proxyAuthToken'])},\n",
        ),
        ("acronyms-in-prose", "- Invalid subject token: JWT/JWS/claim validation failed"),
        ("auth-tuple-variables", "requests.get(url, auth=(user, password))"),
        ("auth-tuple-plain", 'requests.get(url, auth=("admin", "admin"))'),
        ("prose-english-on", "the password on production is rotated weekly by the vault job"),
        ("prose-to", "the password to production is kept in the vault"),
        ("dollar-shell", "echo $1$2 and sed 's/a/$1$b/'"),
    ]


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def escaped(text: str) -> str:
    """``text`` as a transcript line or a tool's JSON output holds it: the inside of a JSON
    string, written as JavaScript and Rust write it (letters beyond ASCII as they are)."""
    return json.dumps(text, ensure_ascii=False)[1:-1]
