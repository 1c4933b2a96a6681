"""Secret detection: a seeded corpus, and per-detector recall and precision.

    .venv/bin/python bench/secret_detection.py [--per-detector 40] [--seed 7] [--scanner]

Generates, deterministically, fake-but-realistic credentials of every type funes.secrets
detects (random characters of each provider's alphabet and length — never real keys), embeds
them in transcript-like text (prose, shell commands, JSON-escaped tool input, tool output,
config files, and straddling the 1,200-character chunk split point), and measures:

- recall per detector: the share of seeded secrets removed from the redacted text *and*
  attributed to the right detector (``removed`` counts removal under any label);
- precision per detector: findings overlapping a seeded secret / all findings, over the seeded
  corpus plus a clean synthetic corpus of near-misses (placeholders, hashes, UUIDs, code);
- false positives on the eval-dev transcripts (``../shared/eval-dev``, read at run time);
- redaction throughput on the eval-dev block text, in MB/s.

``--corpus DIR…`` instead lists every finding in those transcripts, with the 40 characters
before it and the value's shape only, to count false redactions (eval-dev has no live secret:
every finding there is one; in bench/labelled/corpus each is judged by its context).

``--scanner`` also runs the external scanner (funes.secrets.scanner) over the seeded corpus and
reports its recall by seeded type. Nothing here prints a secret value, seeded or found.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import re
import string
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Run as a script, this file's directory would shadow the stdlib `secrets` module.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

REPO = _HERE.parent
EVAL_DEV = REPO.parent / "shared" / "eval-dev"

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
HEX = "0123456789abcdef"


def _s(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


# --- fake credentials, by the detector that should name them --------------------------------


def _jwt(rng: random.Random) -> str:
    header = {"alg": rng.choice(["HS256", "RS256"]), "typ": "JWT"}
    payload = {
        "sub": _s(rng, HEX, 12),
        "iat": rng.randrange(1_600_000_000, 1_800_000_000),
        "role": rng.choice(["service_role", "authenticated", "admin"]),
    }
    sig = rng.randbytes(32 if header["alg"] == "HS256" else 64)
    return ".".join(
        [_b64url(json.dumps(header).encode()), _b64url(json.dumps(payload).encode()), _b64url(sig)]
    )


def _pem(rng: random.Random) -> str:
    label = rng.choice(["RSA PRIVATE KEY", "OPENSSH PRIVATE KEY", "EC PRIVATE KEY", "PRIVATE KEY"])
    body = base64.b64encode(rng.randbytes(rng.choice([121, 400, 1190]))).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    return f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----"


def _password(rng: random.Random, n: int) -> str:
    # URL- and JSON-safe, so the seeded value is the same string in every context.
    while True:
        v = _s(rng, ALNUM + "-_.~!*", n)
        if any(c.isdigit() for c in v) and any(c.isalpha() for c in v):
            return v


def _assignment_value(rng: random.Random) -> str:
    kind = rng.choice(["hex32", "hex64", "b64", "alnum", "password"])
    if kind == "hex32":
        return _s(rng, HEX, 32)
    if kind == "hex64":
        return _s(rng, HEX, 64)
    if kind == "b64":
        return base64.b64encode(rng.randbytes(rng.choice([24, 30, 33]))).decode()
    if kind == "alnum":
        return _s(rng, ALNUM, rng.choice([20, 24, 32, 40]))
    return _password(rng, rng.choice([14, 18, 24]))


@dataclass(frozen=True)
class Kind:
    """A seeded secret type: how to make a value, and the names a config would give it."""

    detector: str
    make: Callable[[random.Random], str]
    names: tuple[str, ...]  # variable names it would be assigned to
    named_only: bool = False  # a secret only by the name it is given (no shape of its own)


KINDS: tuple[Kind, ...] = (
    Kind(
        "aws-access-key-id",
        lambda r: r.choice(["AKIA", "ASIA"]) + _s(r, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
        ("AWS_ACCESS_KEY_ID", "aws_access_key_id"),
    ),
    Kind(
        "aws-secret-access-key",
        lambda r: _s(r, B64, 40),
        ("AWS_SECRET_ACCESS_KEY", "aws_secret_access_key", "SecretAccessKey"),
    ),
    Kind("github-pat", lambda r: "ghp_" + _s(r, ALNUM, 36), ("GITHUB_TOKEN", "GH_TOKEN")),
    Kind("github-oauth", lambda r: "gho_" + _s(r, ALNUM, 36), ("GITHUB_OAUTH_TOKEN",)),
    Kind(
        "github-app-token",
        lambda r: r.choice(["ghu_", "ghs_"]) + _s(r, ALNUM, 36),
        ("GITHUB_APP_TOKEN", "INSTALLATION_TOKEN"),
    ),
    Kind("github-refresh-token", lambda r: "ghr_" + _s(r, ALNUM, 76), ("GITHUB_REFRESH_TOKEN",)),
    Kind(
        "github-fine-grained-pat",
        lambda r: "github_pat_" + _s(r, ALNUM, 22) + "_" + _s(r, ALNUM, 59),
        ("GITHUB_PAT", "GH_TOKEN"),
    ),
    Kind("gitlab-pat", lambda r: "glpat-" + _s(r, B64URL, 20), ("GITLAB_TOKEN", "CI_JOB_TOKEN")),
    Kind(
        "slack-token",
        lambda r: r.choice(
            [
                "xoxb-"
                + _s(r, "0123456789", 11)
                + "-"
                + _s(r, "0123456789", 13)
                + "-"
                + _s(r, ALNUM, 24),
                "xoxp-"
                + "-".join(_s(r, "0123456789", 11) for _ in range(3))
                + "-"
                + _s(r, HEX, 32),
                "xoxa-2-" + _s(r, "0123456789", 12) + "-" + _s(r, ALNUM, 40),
                "xoxr-" + _s(r, "0123456789", 12) + "-" + _s(r, ALNUM, 30),
            ]
        ),
        ("SLACK_BOT_TOKEN", "SLACK_TOKEN"),
    ),
    Kind(
        "slack-webhook-url",
        lambda r: (
            "https://hooks.slack.com/services/T"
            + _s(r, UPPER_DIGITS, 8)
            + "/B"
            + _s(r, UPPER_DIGITS, 10)
            + "/"
            + _s(r, ALNUM, 24)
        ),
        ("SLACK_WEBHOOK_URL",),
    ),
    Kind(
        "stripe-key",
        lambda r: (
            r.choice(["sk_live_", "rk_live_", "sk_test_", "rk_test_"])
            + _s(r, ALNUM, r.choice([24, 99]))
        ),
        ("STRIPE_SECRET_KEY", "STRIPE_API_KEY"),
    ),
    Kind(
        "openai-api-key",
        lambda r: r.choice(
            [
                "sk-" + _s(r, ALNUM, 20) + "T3BlbkFJ" + _s(r, ALNUM, 20),
                "sk-proj-" + _s(r, B64URL, 74) + "T3BlbkFJ" + _s(r, B64URL, 74),
                "sk-svcacct-" + _s(r, B64URL, 74) + "T3BlbkFJ" + _s(r, B64URL, 74),
            ]
        ),
        ("OPENAI_API_KEY",),
    ),
    Kind(
        "anthropic-api-key",
        lambda r: "sk-ant-" + r.choice(["api03", "admin01"]) + "-" + _s(r, B64URL, 93) + "AA",
        ("ANTHROPIC_API_KEY",),
    ),
    Kind("openrouter-api-key", lambda r: "sk-or-v1-" + _s(r, HEX, 64), ("OPENROUTER_API_KEY",)),
    Kind(
        "huggingface-token",
        lambda r: "hf_" + _s(r, string.ascii_letters, 34),
        ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"),
    ),
    Kind(
        "google-api-key", lambda r: "AIza" + _s(r, B64URL, 35), ("GOOGLE_API_KEY", "GEMINI_API_KEY")
    ),
    Kind("linear-api-key", lambda r: "lin_api_" + _s(r, ALNUM, 40), ("LINEAR_API_KEY",)),
    Kind("npm-token", lambda r: "npm_" + _s(r, ALNUM, 36), ("NPM_TOKEN",)),
    Kind(
        "pypi-token",
        lambda r: "pypi-AgEIcHlwaS5vcmc" + _s(r, B64URL, r.choice([70, 120, 160])),
        ("PYPI_TOKEN", "TWINE_PASSWORD"),
    ),
    Kind("jwt", _jwt, ("SUPABASE_SERVICE_ROLE_KEY", "ID_TOKEN", "access_token")),
    Kind("private-key", _pem, ("PRIVATE_KEY", "SSH_PRIVATE_KEY")),
    Kind("url-credentials", lambda r: _password(r, r.choice([12, 16, 24])), ("DATABASE_URL",)),
    Kind("url-secret-param", lambda r: _s(r, r.choice([HEX, ALNUM]), 32), ("WEBHOOK_URL",)),
    Kind("bearer-token", lambda r: _s(r, B64URL, r.choice([32, 43, 64])), ("AUTH_HEADER",)),
    Kind(
        "secret-assignment",
        _assignment_value,
        (
            "DB_PASSWORD",
            "SECRET_KEY",
            "client_secret",
            "apiKey",
            "JWT_SECRET",
            "REDIS_PASSWORD",
            "webhook_secret",
            "ENCRYPTION_KEY",
            "auth_token",
            "x-api-key",
        ),
    ),
)
# --- the provider table: fakes sampled from each row's own pattern ---------------------------


def sample(pattern: str, rng: random.Random) -> str:
    """A random string the regex ``pattern`` matches (the subset the provider table uses:
    literals, classes, repeats, groups, alternation; lookarounds are ignored)."""
    import re._constants as c
    import re._parser as sp

    def chars(items: list[Any]) -> list[str]:
        out: list[str] = []
        for op, av in items:
            if op is c.LITERAL:
                out.append(chr(av))
            elif op is c.RANGE:
                out.extend(chr(x) for x in range(av[0], av[1] + 1))
            elif op is c.CATEGORY and av is c.CATEGORY_DIGIT:
                out.extend(string.digits)
            elif op is c.CATEGORY and av is c.CATEGORY_WORD:
                out.extend(ALNUM + "_")
            elif op is c.CATEGORY and av is c.CATEGORY_SPACE:
                out.append(" ")
        return out

    def walk(seq: Any) -> str:
        out = []
        for op, av in seq:
            if op is c.LITERAL:
                out.append(chr(av))
            elif op is c.IN:
                out.append(rng.choice(chars(av)))
            elif op is c.ANY:
                out.append(rng.choice(ALNUM))
            elif op in (c.MAX_REPEAT, c.MIN_REPEAT):
                lo, hi, sub = av
                hi = lo + 12 if hi is c.MAXREPEAT else hi
                out.extend(walk(sub) for _ in range(rng.randint(lo, min(hi, lo + 12))))
            elif op is c.SUBPATTERN:
                out.append(walk(av[3]))
            elif op is c.BRANCH:
                out.append(walk(rng.choice(av[1])))
        return "".join(out)

    return walk(sp.parse(pattern))


def _b58(raw: bytes) -> str:
    n = int.from_bytes(raw, "big")
    out = ""
    while n:
        n, r = divmod(n, 58)
        out = _B58[r] + out
    return "1" * (len(raw) - len(raw.lstrip(b"\0"))) + out


_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def _b58check(payload: bytes) -> str:
    import hashlib

    return _b58(payload + hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4])


def _stellar_seed(rng: random.Random) -> str:
    from funes.secrets.crypto import _crc16_xmodem

    raw = bytes([18 << 3]) + rng.randbytes(32)
    return base64.b32encode(raw + _crc16_xmodem(raw).to_bytes(2, "little")).decode()


def _mnemonic(rng: random.Random) -> str:
    from funes.secrets.crypto import bip39_words

    words = sorted(bip39_words())
    return " ".join(rng.choice(words) for _ in range(rng.choice([12, 24])))


def _telegram(rng: random.Random) -> str:
    return _s(rng, "0123456789", rng.choice([9, 10])) + ":AA" + _s(rng, B64URL, 33)


CRYPT = "./" + ALNUM


def _password_hash(rng: random.Random) -> str:
    """A crypt(3) or framework password hash: bcrypt, md5-crypt (Apache's too), sha512-crypt,
    yescrypt, Argon2, Django's PBKDF2."""
    salt = _s(rng, CRYPT, rng.choice([8, 16]))
    return rng.choice(
        [
            lambda: f"$2{rng.choice('aby')}${rng.choice(['10', '12'])}${_s(rng, CRYPT, 53)}",
            lambda: f"${rng.choice(['1', 'apr1'])}${salt[:8]}${_s(rng, CRYPT, 22)}",
            lambda: f"$6${salt}${_s(rng, CRYPT, 86)}",
            lambda: f"$y$j9T${salt}${_s(rng, CRYPT, 43)}",
            lambda: f"$argon2id$v=19$m=65536,t=3,p=4${_s(rng, B64, 22)}${_s(rng, B64, 43)}",
            lambda: f"pbkdf2_sha256$600000${_s(rng, ALNUM, 22)}${_s(rng, B64, 43)}=",
        ]
    )()


def _basic(rng: random.Random) -> str:
    user = rng.choice(["admin", "deploy", "ci-bot", "ana@example.com"])
    return base64.b64encode(f"{user}:{_password(rng, rng.choice([10, 16]))}".encode()).decode()


def _named_name(detector: str, keyword: str) -> str:
    stem = "".join(ch if ch.isalnum() else "_" for ch in keyword.upper()).strip("_")
    for end, suffix in (("token", "_TOKEN"), ("secret", "_SECRET"), ("key", "_API_KEY")):
        if detector.endswith(end) or detector.endswith(end + "s"):
            return stem + suffix
    return stem + "_SECRET_KEY"


def _table_kinds() -> list[Kind]:
    from funes.secrets.providers import NAMED, PROVIDERS

    have = {k.detector for k in KINDS}
    rows: dict[str, list[Any]] = {}
    for p in PROVIDERS:
        if p.detector not in have:
            rows.setdefault(p.detector, []).append(p)

    def maker(ps: list[Any]) -> Callable[[random.Random], str]:
        def make(r: random.Random) -> str:
            while True:
                p = r.choice(ps)
                prefix = r.choice(p.prefixes)
                value = (prefix + sample(p.body, r)) if prefix else sample(p.body, r)
                if "xxxx" not in value.lower():
                    return value

        return make

    out = [Kind(d, maker(ps), (d.upper().replace("-", "_"),)) for d, ps in rows.items()]
    named: dict[str, list[Any]] = {}
    for n in NAMED:
        if n.detector not in have and n.detector not in rows:
            named.setdefault(n.detector, []).append(n)
    for d, ns in named.items():
        names = tuple(_named_name(d, k) for n in ns for k in n.keywords)
        out.append(Kind(d, _named_maker(ns), names, named_only=True))
    return out


def _named_maker(ns: list[Any]) -> Callable[[random.Random], str]:
    from funes.secrets.detectors import entropy

    def make(r: random.Random) -> str:
        while True:
            value = sample(r.choice(ns).value, r)
            if entropy(value) >= 3.2 and "xxx" not in value.lower():
                return value

    return make


KINDS = (
    *KINDS,
    Kind("stellar-secret-seed", _stellar_seed, ("STELLAR_SECRET", "WALLET_SEED")),
    Kind(
        "bitcoin-private-key",
        lambda r: _b58check(b"\x80" + r.randbytes(32) + r.choice([b"", b"\x01"])),
        ("BTC_PRIVATE_KEY", "WIF"),
    ),
    Kind(
        "bip32-extended-private-key",
        lambda r: _b58check(bytes.fromhex("0488ade4") + r.randbytes(74)),
        ("XPRV", "HD_WALLET_XPRV"),
    ),
    Kind("bip39-mnemonic", _mnemonic, ("MNEMONIC", "SEED_PHRASE", "WALLET_MNEMONIC")),
    Kind("telegram-bot-token", _telegram, ("TELEGRAM_BOT_TOKEN", "TG_TOKEN")),
    Kind("http-basic-auth", _basic, ("AUTH_HEADER",)),
    Kind("password-hash", _password_hash, ("PASSWORD_HASH", "admin_hash", "HTPASSWD")),
    Kind("cli-password", lambda r: _password(r, r.choice([10, 14, 20])), ("DB_PASSWORD",)),
    Kind("netrc-password", lambda r: _password(r, r.choice([12, 18])), ("NETRC",)),
    Kind("pgpass-password", lambda r: _password(r, r.choice([12, 18])), ("PGPASS_LINE",)),
    Kind("okta-api-token", lambda r: "00" + _s(r, B64URL, 40), ("OKTA_API_TOKEN",)),
    Kind(
        "discord-webhook-url",
        lambda r: (
            f"https://{r.choice(['discord.com', 'discordapp.com'])}/api/webhooks/"
            + _s(r, "0123456789", 19)
            + "/"
            + _s(r, B64URL, 68)
        ),
        ("DISCORD_WEBHOOK_URL",),
    ),
    Kind(
        "crypto-private-key",
        lambda r: json.dumps(list(r.randbytes(64))),
        ("SOLANA_PRIVATE_KEY", "WALLET_SECRET_KEY", "signer_keypair_seed"),
        named_only=True,
    ),
    Kind(
        "labelled-value",
        lambda r: _s(r, r.choice([ALNUM, B64URL]), r.choice([24, 32, 40])),
        ("API key", "Secret Key", "access token"),
        named_only=True,
    ),
    Kind(
        "sidekiq-secret",
        lambda r: _s(r, HEX, 8) + ":" + _s(r, HEX, 8),
        ("BUNDLE_ENTERPRISE__CONTRIBSYS__COM", "BUNDLE_GEMS__CONTRIBSYS__COM"),
        named_only=True,
    ),
)
KINDS = (
    *KINDS,
    *_table_kinds(),
    Kind(
        "braintree-access-token",
        lambda r: (
            f"access_token$production${_s(r, string.ascii_lowercase + string.digits, 16)}"
            f"${_s(r, HEX, 32)}"
        ),
        ("BRAINTREE_ACCESS_TOKEN", "PAYPAL_TOKEN"),
    ),
)

KIND_BY_DETECTOR = {k.detector: k for k in KINDS}


# --- where a secret shows up in a transcript ----------------------------------------------


def _embed_url(kind: Kind, value: str, rng: random.Random) -> str | None:
    """The URL-shaped kinds only exist inside a URL or header."""
    if kind.detector == "url-credentials":
        scheme, port = rng.choice(
            [
                ("postgres", 5432),
                ("postgresql", 5432),
                ("mysql", 3306),
                ("redis", 6379),
                ("mongodb+srv", None),
                ("amqp", 5672),
                ("https", None),
            ]
        )
        host = rng.choice(["db.internal", "prod-db.example.net", "cluster0.ab12c.mongodb.net"])
        user = rng.choice(["app", "admin", "svc_reader", "deploy"])
        hostport = f"{host}:{port}" if port else host
        return f"{scheme}://{user}:{value}@{hostport}/{rng.choice(['app', 'main', 'jobs'])}"
    if kind.detector == "url-secret-param":
        param = rng.choice(["api_key", "apikey", "key", "token", "access_token", "api-key"])
        host = rng.choice(["api.weather.example.com", "maps.example.org", "hooks.example.io"])
        return f"https://{host}/v2/forecast?city=lisbon&{param}={value}&units=metric"
    if kind.detector == "bearer-token":
        return f"Authorization: Bearer {value}"
    if kind.detector == "http-basic-auth":
        return f"Authorization: Basic {value}"
    if kind.detector == "okta-api-token":
        return f"Authorization: SSWS {value}"
    if kind.detector == "netrc-password":
        return rng.choice(
            [
                f"machine api.example.com login deploy password {value}",
                f"machine git.example.org\n  login ci\n  password {value}",
            ]
        )
    if kind.detector == "pgpass-password":
        return f"db.internal:5432:app_prod:deploy:{value}"
    if kind.detector == "cli-password":
        return rng.choice(
            [
                f"docker login -u ci-bot -p {value} registry.example.com",
                f"mysql -h db.internal -u app --password={value} app_prod",
                f"curl -su admin:{value} https://jenkins.example.com/api/json",
                f"sshpass -p {value} ssh deploy@10.0.0.7",
            ]
        )
    return None


HEADERS = ("bearer-token", "http-basic-auth", "okta-api-token")
LINES = ("cli-password", "netrc-password", "pgpass-password")  # a command or a config line
# Secrets only by what is written around them: a labelled value, a mnemonic's label.
PROSE = {
    "labelled-value": ("API key `{v}`", "**Secret Key**: `{v}`", "the provided token (`{v}`)"),
    "bip39-mnemonic": ("wallet recovery phrase: {v}", 'seed phrase "{v}"'),
}


def _contexts(kind: Kind, value: str, rng: random.Random) -> list[tuple[str, str]]:
    """(context name, block text) pairs that each carry ``value`` once."""
    name = rng.choice(kind.names)
    url = _embed_url(kind, value, rng)
    carried = url if url is not None else value
    if kind.detector in PROSE:
        inline = rng.choice(PROSE[kind.detector]).format(v=value)
        assign = f'{name.upper().replace(" ", "_")}="{value}"'
        if kind.detector == "labelled-value":
            assign = inline
    elif kind.detector in (*HEADERS, "private-key", *LINES):
        inline, assign = carried, f'{name}="{carried}"'  # a header, a command, many lines
    elif kind.named_only or kind.detector in ("aws-secret-access-key", "secret-assignment"):
        # only secrets by their name: always give them one
        inline = assign = f"{name}={carried}"
    else:
        inline, assign = carried, f"{name}={carried}"
    pem = kind.detector == "private-key"
    out = [
        (
            "prose",
            f"I checked the deploy logs and the config has {inline} — rotate it after the "
            "demo, it was pasted into the ticket too.",
        ),
        ("shell", f"$ export {assign}\n$ npm run deploy -- --env staging\nDeploying… done."),
        (
            "tool_input_json",
            json.dumps(
                {
                    "command": f"cat > .env <<'EOF'\n{assign}\nNODE_ENV=production\nEOF",
                    "timeout": 30,
                }
            ),
        ),
        (
            "tool_output",
            "PATH=/usr/local/bin:/usr/bin\nHOME=/home/ana\nLANG=en_US.UTF-8\n"
            f"{assign}\nTERM=xterm-256color\nPWD=/home/ana/proj",
        ),
        ("yaml", _yaml(kind, name, inline if kind.detector in PROSE else carried)),
        ("json_config", _json_config(kind, name, inline if kind.detector in PROSE else carried)),
    ]
    if not pem:
        out.append(("curl", _curl(kind, inline if kind.detector in PROSE else carried, rng)))
    out.append(("straddle", _straddle(inline, rng)))
    return out


def _yaml(kind: Kind, name: str, carried: str) -> str:
    if kind.detector == "private-key":
        body = "\n".join("    " + line for line in carried.splitlines())
        return f"tls:\n  {name.lower()}: |\n{body}\n  verify: true"
    if kind.detector in HEADERS:
        return f"headers:\n  {carried}\n  Accept: application/json"
    if kind.detector in PROSE:
        return f"notes: |\n  {carried}\n  owner: ana"
    return f'services:\n  api:\n    environment:\n      {name.lower()}: "{carried}"\n      region: eu-west-1'


def _json_config(kind: Kind, name: str, carried: str) -> str:
    if kind.detector in HEADERS:
        key, val = carried.split(": ", 1)
        return json.dumps({"headers": {key: val}}, indent=2)
    if kind.detector in PROSE or kind.detector in LINES:
        return json.dumps({"notes": carried, "LOG_LEVEL": "debug"}, indent=2)
    return json.dumps({"env": {name: carried, "LOG_LEVEL": "debug"}}, indent=2)


def _curl(kind: Kind, carried: str, rng: random.Random) -> str:
    if kind.detector in HEADERS:
        return f'curl -s -H "{carried}" https://api.example.com/v1/me | jq .'
    if kind.detector in LINES:
        return f"$ {carried}\nLogin Succeeded"
    if kind.detector in PROSE:
        return f"curl -s https://notes.example.com -d '{json.dumps({'text': carried})}'"
    if kind.detector in (
        "url-credentials",
        "url-secret-param",
        "slack-webhook-url",
        "discord-webhook-url",
    ):
        return f"curl -fsS '{carried}' -d '{{\"text\":\"deploy finished\"}}'"
    if kind.detector == "aws-secret-access-key":
        return f"aws configure set aws_secret_access_key {carried} --profile prod"
    if kind.detector == "secret-assignment":
        return f'curl -s https://api.example.com/v1 -H "X-Api-Key: {carried}"'
    if kind.named_only:
        return f'curl -s https://api.example.com/v1 -H "{rng.choice(kind.names)}: {carried}"'
    return f'curl -s -H "Authorization: token {carried}" https://api.example.com/v1/me'


def _straddle(inline: str, rng: random.Random) -> str:
    """A long unbroken line with the secret across the 1,200-character split point.

    With no space or newline in the first 1,200 characters the splitter cuts exactly there,
    so unredacted, piece 0 would end with the head of the secret.
    """
    pad = "".join(rng.choice("abcdef0123456789") for _ in range(1200))
    head = "[build-log]" + pad[: 1200 - 11 - min(len(inline) // 2, 200)]
    return head + "|" + inline + "|" + pad[:400] + "\nbuild finished"


@dataclass(frozen=True)
class Seed:
    detector: str
    context: str
    value: str
    text: str


def seeded_corpus(per_detector: int = 40, seed: int = 7) -> list[Seed]:
    """``per_detector`` values of every kind, each in every context."""
    rng = random.Random(seed)
    out = []
    for kind in KINDS:
        for _ in range(per_detector):
            value = kind.make(rng)
            for ctx, text in _contexts(kind, value, rng):
                out.append(Seed(kind.detector, ctx, value, text))
    return out


def fragments(value: str) -> list[str]:
    """What must not survive redaction: the value, or for a PEM block each body line."""
    if value.startswith("-----BEGIN"):
        return [ln for ln in value.splitlines()[1:-1] if len(ln) >= 16]
    return [value]


def leaked(value: str, text: str) -> bool:
    """Does ``text`` still carry ``value`` (or its JSON-escaped form)?"""
    return any(frag in text or json.dumps(frag)[1:-1] in text for frag in fragments(value))


# --- clean text: near-misses that must not be flagged ---------------------------------------


def clean_corpus(n: int = 400, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    templates: list[Callable[[], str]] = [
        lambda: (
            f"export OPENAI_API_KEY={rng.choice(['sk-...', '<your-key>', '${OPENAI_KEY}', 'xxx', 'changeme', '***'])}"
        ),
        lambda: (
            f"GITHUB_TOKEN={rng.choice(['${{ secrets.GITHUB_TOKEN }}', '$GH_TOKEN', 'ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx', '<token>'])}"
        ),
        lambda: 'api_key = os.environ["OPENAI_API_KEY"]\nclient = OpenAI(api_key=api_key)',
        lambda: "token = tokenizer.encode(text, add_special_tokens=False)",
        lambda: (
            f"commit {_s(rng, HEX, 40)}\nAuthor: Ana <ana@example.com>\n\n    fix: retry on 429"
        ),
        lambda: f"request_id={_uuid(rng)} status=200 elapsed_ms={rng.randrange(5, 900)}",
        lambda: f"sha256:{_s(rng, HEX, 64)}  dist/funes-0.1.0-py3-none-any.whl",
        lambda: f'"integrity": "sha512-{base64.b64encode(rng.randbytes(64)).decode()}"',
        lambda: "max_tokens: 4096\ntemperature: 0.2\nkey: value",
        lambda: "password: ${DB_PASSWORD}\nusername: ${DB_USER}",
        lambda: "git clone git@github.com:huggingface/funes.git && cd funes",
        lambda: f"https://github.com/org/repo/blob/{_s(rng, HEX, 40)}/README.md?plain=1#L20",
        lambda: "pip install scikit-learn && python -m sk-learn-demo --task-runner-config=default",
        lambda: (
            "from huggingface_hub import hf_hub_download\npath = hf_hub_download(repo_id='x/y', filename='model.onnx')"
        ),
        lambda: "npm_config_cache=/tmp/.npm npm ci --no-audit",
        lambda: "Keys start with AKIA for long-term credentials and ASIA for temporary ones.",
        lambda: "-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----",
        lambda: "postgres://postgres:postgres@localhost:5432/app_dev",
        lambda: "DATABASE_URL=postgres://user:password@localhost/db",
        lambda: (
            "const primaryKey = 'id'; const sortKeys = true; const keyPath = '/etc/ssl/key.pem';"
        ),
        lambda: 'cache_key: v1-deps-{{ checksum "package-lock.json" }}\nrestore_keys: v1-deps-',
        lambda: "Authorization: Bearer <token>\nAuthorization: Bearer ${TOKEN}",
        lambda: "curl https://api.example.com/search?q=secret+key&page=2&token=",
        lambda: f"session_id: {_uuid(rng)}\nturn_uuid: {_uuid(rng)}",
        lambda: "The token budget was exceeded; the key insight is that passwords must be hashed.",
        lambda: f"data:image/png;base64,[elided] and {_s(rng, HEX, 12)}",
        lambda: (
            "def get_secret(name: str) -> str:\n    return vault.read(f'secret/{name}')['value']"
        ),
        lambda: (
            "SECRET_KEY = get_random_secret_key()\nPASSWORD_HASHERS = ['django.contrib.auth.hashers.Argon2PasswordHasher']"
        ),
        lambda: "eyJ is how base64 JSON starts; a JWT is header.payload.signature",
        lambda: "kubectl get secret app-credentials -o jsonpath='{.data.password}' | base64 -d",
    ]
    return [rng.choice(templates)() for _ in range(n)]


def _uuid(rng: random.Random) -> str:
    h = _s(rng, HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


# --- the hostile transcript: the kinds issue 17's probe found leaking -----------------------


def _hex_s(rng: random.Random, n: int) -> str:
    return _s(rng, HEX, n)


def hostile_values(rng: random.Random) -> dict[str, str]:
    """{kind: fake value} for the kinds the probe found leaking, and their prose forms."""
    from funes.secrets.crypto import bip39_words

    words = sorted(bip39_words() - {"seed", "phrase", "wallet"})
    sas = base64.b64encode(rng.randbytes(32)).decode()
    return {
        "sendgrid": f"SG.{_s(rng, B64URL, 22)}.{_s(rng, B64URL, 43)}",
        "mailgun": f"key-{_hex_s(rng, 32)}",
        "digitalocean": f"dop_v1_{_hex_s(rng, 64)}",
        "shopify": f"shpat_{_hex_s(rng, 32)}",
        "discord": f"MT{_s(rng, ALNUM, 24)}.{_s(rng, B64URL, 6)}.{_s(rng, B64URL, 38)}",
        "telegram": f"{rng.randrange(10**8, 10**10)}:AA{_s(rng, B64URL, 33)}",
        "twilio-sk": f"SK{_hex_s(rng, 32)}",
        "twilio-auth": _hex_s(rng, 32),
        "basic": base64.b64encode(f"deploy:{_s(rng, ALNUM, 18)}".encode()).decode(),
        "docker-p": _s(rng, ALNUM, 16),
        "sas-sig": sas.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D"),
        "stellar": _stellar_seed(rng),
        "mnemonic": " ".join(rng.choice(words) for _ in range(12)),
        "labelled-backticks": _s(rng, ALNUM, 32),
        "labelled-bold": _s(rng, ALNUM, 40),
        "labelled-parens": _s(rng, B64URL, 32),
        "bitcoin-wif": _b58check(b"\x80" + rng.randbytes(32) + b"\x01"),
        "xprv": _b58check(bytes.fromhex("0488ade4") + rng.randbytes(74)),
        "password-flag": _s(rng, ALNUM, 14),
        "curl-user": _s(rng, ALNUM, 15),
        "anthropic": f"sk-ant-api03-{_s(rng, B64URL, 93)}AA",
    }


_SHAPED_HOSTILE = ("sendgrid", "mailgun", "digitalocean", "shopify", "discord", "telegram")
_SHAPED_HOSTILE += ("twilio-sk", "bitcoin-wif", "xprv", "anthropic")
# How each hostile kind is written in each of the five places (`{v}` is the value).
_HOSTILE_FORMS: dict[str, tuple[str, str, str, str, str]] = {
    # prose, tool input, env dump, config file, curl output
    **{
        k: (
            f"the {k} token for staging is {{v}} — rotate it later",
            "deploy --token {v} --env staging",
            f"{k.upper().replace('-', '_')}_TOKEN={{v}}",
            f'{k.replace("-", "_")}:\n  token: "{{v}}"',
            f'{{"ok": true, "{k}_token": "{{v}}"}}',
        )
        for k in _SHAPED_HOSTILE
    },
    "twilio-auth": (
        "Twilio auth token is `{v}`",
        "twilio api:core:messages:create --auth-token {v}",
        "TWILIO_AUTH_TOKEN={v}",
        "twilio:\n  auth_token: {v}",
        '{"twilio_auth_token": "{v}"}',
    ),
    "basic": (
        "the header was Authorization: Basic {v}",
        'curl -H "Authorization: Basic {v}" https://api.example.com',
        "HTTP_AUTHORIZATION=Basic {v}",
        '{"auths": {"registry.example.com": {"auth": "{v}"}}}',
        "> Authorization: Basic {v}\n< HTTP/1.1 200 OK",
    ),
    "docker-p": (
        "log in with docker login -u ci -p {v} registry.example.com",
        "docker login -u ci -p {v} registry.example.com",
        "LOGIN_CMD=docker login -u ci -p {v} ghcr.io",
        "steps:\n  - run: docker login -u ci -p {v} ghcr.io",
        "$ docker login -u ci -p {v} ghcr.io\nLogin Succeeded",
    ),
    "password-flag": (
        "run it as mysql -u app --password={v} app_prod",
        "pg_dump --password {v} --host db main",
        "MYSQL_CMD=mysql -u app --password={v}",
        "command: mysql -u app --password={v}",
        "$ mysql -u app --password={v} -e 'select 1'\n1",
    ),
    "curl-user": (
        "try curl -u admin:{v} https://jenkins.example.com",
        "curl -su admin:{v} https://jenkins.example.com/api/json",
        "CURL_CMD=curl -u admin:{v} https://x.example.com",
        "healthcheck: curl -u admin:{v} http://localhost:8080",
        '$ curl -u admin:{v} https://x.example.com\n{{"ok": true}}',
    ),
    "sas-sig": (
        "the SAS URL is https://acct.blob.core.windows.net/c?sv=2022-11-02&sp=r&sig={v}",
        "azcopy copy 'https://acct.blob.core.windows.net/c?sv=2022-11-02&sig={v}' .",
        "AZURE_SAS=sv=2022-11-02&ss=b&srt=sco&sp=rl&sig={v}",
        "storage:\n  sas: sv=2022-11-02&sr=b&sig={v}",
        '{"url": "https://acct.blob.core.windows.net/c?sv=2022-11-02&sig={v}"}',
    ),
    "stellar": (
        "my Stellar seed is {v}, keep it safe",
        "stellar keys add main --secret-key {v}",
        "STELLAR_SEED={v}",
        "wallet:\n  seed: {v}",
        '{"account": "main", "seed": "{v}"}',
    ),
    "mnemonic": (
        "the wallet seed phrase is {v} — don't lose it",
        "wallet restore --mnemonic '{v}'",
        "MNEMONIC={v}",
        'wallet:\n  mnemonic: "{v}"',
        '{"mnemonic": "{v}"}',
    ),
    "labelled-backticks": (
        "I'll use the API key `{v}` for the storefront.",
        "echo 'API key `{v}`' >> NOTES.md",
        "NOTE=API key `{v}`",
        "notes: |\n  API key `{v}`",
        '{"note": "API key `{v}`"}',
    ),
    "labelled-bold": (
        "**Secret Key**: `{v}`",
        "printf '**Secret Key**: `{v}`\\n' > creds.md",
        "CREDS=**Secret Key**: `{v}`",
        "readme: |\n  **Secret Key**: `{v}`",
        '{"body": "**Secret Key**: `{v}`"}',
    ),
    "labelled-parens": (
        "and the user's provided key (`{v}`) for the webhook",
        'echo "the provided key (`{v}`)"',
        "MSG=the provided key (`{v}`)",
        "comment: the provided key (`{v}`)",
        '{"msg": "the provided key (`{v}`)"}',
    ),
}
HOSTILE_PLACES = ("prose", "tool input", "env dump", "config file", "curl output")


def hostile_corpus(seed: int = 17) -> list[tuple[str, str, str, str]]:
    """(kind, place, text, value): every hostile kind in each of the five places."""
    values = hostile_values(random.Random(seed))
    return [
        (kind, place, form.replace("{v}", value), value)
        for kind, value in values.items()
        for place, form in zip(HOSTILE_PLACES, _HOSTILE_FORMS[kind], strict=True)
    ]


def hostile_recall(seed: int = 17) -> dict[str, dict[str, bool]]:
    """{kind: {place: redacted}} over the hostile corpus."""
    from funes.secrets import redact

    out: dict[str, dict[str, bool]] = defaultdict(dict)
    for kind, place, text, value in hostile_corpus(seed):
        out[kind][place] = value not in redact(text)
    return dict(out)


# --- precision on eval-dev ------------------------------------------------------------------

_SHA_OR_UUID = re.compile(
    r"(?<![0-9a-fA-F])(?:[0-9a-f]{40}|[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12})"
    r"(?![0-9a-fA-F])"
)


def eval_dev_precision(blocks: list[str]) -> dict[str, Any]:
    """Findings per MB on eval-dev (every one a false positive: the corpus holds no live
    secret), each listed by detector and block (never the text), and how many of its git
    SHAs and UUIDs a finding touched."""
    from funes.secrets import find

    mb = sum(len(t.encode("utf-8")) for t in blocks) / 1e6
    fps = []
    ids = touched = 0
    for i, t in enumerate(blocks):
        found = find(t)
        spans = [m.span() for m in _SHA_OR_UUID.finditer(t)]
        ids += len(spans)
        touched += sum(1 for s, e in spans if any(f.start < e and s < f.end for f in found))
        fps.extend({"detector": f.detector, "block": i, "chars": f.end - f.start} for f in found)
    return {
        "mb": round(mb, 2),
        "findings": len(fps),
        "findings_per_mb": round(len(fps) / mb, 3) if mb else None,
        "false_positives": fps,
        "shas_and_uuids": ids,
        "shas_and_uuids_redacted": touched,
    }


# --- eval-dev ------------------------------------------------------------------------------


def eval_dev_blocks(root: Path = EVAL_DEV) -> list[str]:
    """The block text of every eval-dev transcript, as the chunk stage would see it."""
    from funes import sources
    from funes.chunking import elide_data_uris

    corpus = root / "corpus"
    if not corpus.is_dir():
        return []
    return [elide_data_uris(b.text) for t in sources.parse([corpus]) for b in t.blocks]


# --- scoring ------------------------------------------------------------------------------


@dataclass
class Row:
    seeded: int = 0
    found: int = 0  # removed and named by the right detector
    removed: int = 0  # removed under any name
    flagged: int = 0  # findings with this name, anywhere
    correct: int = 0  # …of which overlap a seeded secret


def score(seeds: list[Seed], clean: list[str]) -> dict[str, Row]:
    from funes.secrets import find, redact

    rows: dict[str, Row] = defaultdict(Row)
    for s in seeds:
        row = rows[s.detector]
        row.seeded += 1
        spans = _seed_spans(s)
        found = find(s.text)
        removed = not leaked(s.value, redact(s.text))
        row.removed += removed
        named = any(f.detector == s.detector for f in found if _overlaps(f, spans))
        row.found += removed and named
        for f in found:
            rows[f.detector].flagged += 1
            # a finding on the secret counts as correct for the detector that named it
            rows[f.detector].correct += _overlaps(f, spans)
    for text in clean:
        for f in find(text):
            rows[f.detector].flagged += 1
    return rows


def _seed_spans(s: Seed) -> list[tuple[int, int]]:
    spans = []
    for frag in fragments(s.value):
        for form in (frag, json.dumps(frag)[1:-1]):
            i = s.text.find(form)
            while i >= 0:
                spans.append((i, i + len(form)))
                i = s.text.find(form, i + 1)
    return spans


def _overlaps(f: object, spans: list[tuple[int, int]]) -> bool:
    return any(f.start < e and s < f.end for s, e in spans)  # type: ignore[attr-defined]


def throughput(texts: list[str], repeat: int = 5) -> float:
    """MB/s of ``redact`` over ``texts`` (UTF-8 bytes), best of ``repeat``, in CPU time (the
    machine is shared; wall time would measure the neighbours)."""
    from funes.secrets import redact

    size = sum(len(t.encode("utf-8")) for t in texts)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        for t in texts:
            redact(t)
        best = min(best, time.process_time() - t0)
    return size / 1e6 / best


def chunk_overhead(repeat: int = 5) -> float:
    """Extra CPU time of `chunk_turns(..., redact=redact)` over no redaction, on eval-dev."""
    from funes import sources
    from funes.chunking import chunk_turns
    from funes.records import dumps
    from funes.secrets import redact

    turns = list(sources.parse([EVAL_DEV / "corpus"]))

    def cost(r: Callable[[str], str] | None) -> float:
        best = float("inf")
        for _ in range(repeat):
            t0 = time.process_time()
            for c in chunk_turns(turns, redact=r):
                dumps(c)
            best = min(best, time.process_time() - t0)
        return best

    plain = cost(None)
    return cost(redact) / plain - 1


def scanner_recall(seeds: list[Seed]) -> dict[str, tuple[int, int]]:
    """Per seeded type: (seeds the external scanner found, seeds), one scan for all texts."""
    from funes.secrets.scanner import scan_texts

    texts = {str(i): s.text for i, s in enumerate(seeds)}
    hits = {int(f.key) for f in scan_texts(texts)}
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for i, s in enumerate(seeds):
        out[s.detector][1] += 1
        out[s.detector][0] += i in hits
    return {k: (v[0], v[1]) for k, v in out.items()}


def _table(rows: dict[str, Row]) -> Iterator[str]:
    yield f"| {'detector':26} | seeded | recall | removed | precision | flagged |"
    yield f"|{'-' * 28}|-------:|-------:|--------:|----------:|--------:|"
    order = [k.detector for k in KINDS] + sorted(set(rows) - set(KIND_BY_DETECTOR))
    for d in order:
        r = rows.get(d, Row())
        rec = f"{r.found / r.seeded:.3f}" if r.seeded else "—"
        rem = f"{r.removed / r.seeded:.3f}" if r.seeded else "—"
        prec = f"{r.correct / r.flagged:.3f}" if r.flagged else "—"
        yield f"| {d:26} | {r.seeded:6} | {rec:>6} | {rem:>7} | {prec:>9} | {r.flagged:7} |"


def run(ctx: Any) -> dict[str, Any]:
    """The `secrets` suite of `python -m bench`: the detection table (seeded recall, precision
    with the clean corpus), eval-dev findings, redaction throughput."""
    from funes.secrets import find

    seeds = seeded_corpus(10 if ctx.quick else 40, 7)
    clean = clean_corpus()
    rows = score(seeds, clean)
    order = [k.detector for k in KINDS] + sorted(set(rows) - set(KIND_BY_DETECTOR))
    table = {
        d: {"seeded": r.seeded, "found": r.found, "removed": r.removed, "flagged": r.flagged,
            "correct": r.correct}
        for d in order
        if (r := rows.get(d, Row())) is not None
    }  # fmt: skip
    total = sum(r.seeded for r in rows.values())
    out: dict[str, Any] = {
        "seeded": len(seeds),
        "types": len(KINDS),
        "clean_texts": len(clean),
        "recall": round(sum(r.found for r in rows.values()) / total, 4),
        "removed": round(sum(r.removed for r in rows.values()) / total, 4),
        "clean_findings": sum(len(find(t)) for t in clean),
        "detectors": table,
    }
    hostile = hostile_recall()
    out["hostile"] = {
        "kinds": len(hostile),
        "texts": sum(len(p) for p in hostile.values()),
        "redacted": sum(sum(p.values()) for p in hostile.values()),
        "per_kind": {k: f"{sum(p.values())}/{len(p)}" for k, p in hostile.items()},
        "missed": [
            f"{k}: {place}" for k, p in hostile.items() for place, ok in p.items() if not ok
        ],
    }
    blocks = eval_dev_blocks()
    if blocks:
        prec = eval_dev_precision(blocks)
        fps = Counter(f["detector"] for f in prec["false_positives"])
        out["eval_dev"] = {
            "blocks": len(blocks),
            **prec,
            "findings_by_detector": dict(sorted(fps.items())),
            "redact_mb_per_s_cpu": round(throughput(blocks, 2 if ctx.quick else 5), 1),
            "chunk_cpu_overhead_of_redaction": round(chunk_overhead(2 if ctx.quick else 5), 3),
        }
    return out


def _shape(value: str) -> str:
    """A value's shape with no character of it: `Aa9#` classes and the length."""
    classes = "".join(
        c for c, test in (("A", str.isupper), ("a", str.islower), ("9", str.isdigit))
        if any(test(ch) for ch in value)
    )  # fmt: skip
    if any(not ch.isalnum() for ch in value):
        classes += "#"
    return f"<{classes}×{len(value)}>"


def corpus_findings(roots: list[Path]) -> int:
    """Every finding over the transcripts under ``roots``, one line each — file, detector, the
    40 characters before it (already redacted) and the value's shape — to be judged a
    credential or a false redaction by whoever reads them. Returns the count."""
    from funes import sources
    from funes.chunking import elide_data_uris
    from funes.secrets import find

    n = 0
    by: Counter[str] = Counter()
    for turn in sources.parse(roots):
        for block in turn.blocks:
            text = elide_data_uris(block.text)
            found = find(text)
            for f in found:
                before = redact_prefix(text, found, f.start)[-40:]
                print(f"{Path(turn.source_path or '').name[:48]:48} {f.detector:26} "
                      f"{json.dumps(before)[1:-1]} {_shape(text[f.start : f.end])}")  # fmt: skip
                by[f.detector] += 1
                n += 1
    print(f"\n{n} findings: {dict(by.most_common())}")
    return n


def redact_prefix(text: str, found: list[Any], end: int) -> str:
    """``text[:end]`` with the findings before ``end`` replaced by their markers."""
    parts, pos = [], 0
    for f in found:
        if f.end > end:
            break
        parts += [text[pos : f.start], f"[REDACTED:{f.detector}]"]
        pos = f.end
    return "".join(parts) + text[pos:end]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--per-detector", type=int, default=40)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--scanner", action="store_true", help="also measure the external scanner")
    ap.add_argument(
        "--corpus",
        nargs="+",
        type=Path,
        metavar="DIR",
        help="list every finding in these transcripts (no value printed) to count false "
        "redactions, e.g. ../shared/eval-dev/corpus bench/labelled/corpus",
    )
    args = ap.parse_args(argv)
    if args.corpus:
        corpus_findings(args.corpus)
        return 0

    from funes.secrets import find

    seeds = seeded_corpus(args.per_detector, args.seed)
    clean = clean_corpus()
    rows = score(seeds, clean)
    print(f"seeded corpus: {len(seeds)} texts, {len(KINDS)} types; clean corpus: {len(clean)}\n")
    print("\n".join(_table(rows)))
    total = sum(r.seeded for r in rows.values())
    print(
        f"\noverall recall {sum(r.found for r in rows.values()) / total:.4f}, "
        f"removed {sum(r.removed for r in rows.values()) / total:.4f}, "
        f"clean-corpus findings {sum(len(find(t)) for t in clean)}"
    )

    hostile = hostile_recall()
    print("\nhostile transcript (issue 17's probe kinds, five places each):")
    for kind, places in hostile.items():
        missed = [p for p, ok in places.items() if not ok]
        print(f"  {kind:20} {sum(places.values())}/{len(places)}"
              + (f"  missed in: {', '.join(missed)}" if missed else ""))  # fmt: skip

    blocks = eval_dev_blocks()
    if blocks:
        prec = eval_dev_precision(blocks)
        fps = Counter(f["detector"] for f in prec["false_positives"])
        mb = prec["mb"]
        print(
            f"\neval-dev: {len(blocks)} blocks, {mb:.2f} MB; findings: "
            f"{prec['findings']} ({prec['findings_per_mb']}/MB) {dict(fps) if fps else ''}"
        )
        for fp in prec["false_positives"]:
            print(
                f"  false positive: {fp['detector']} in block {fp['block']} ({fp['chars']} chars)"
            )
        print(
            f"git SHAs and UUIDs in eval-dev: {prec['shas_and_uuids']}, "
            f"redacted: {prec['shas_and_uuids_redacted']}"
        )
        print(f"redact throughput on eval-dev blocks: {throughput(blocks):.1f} MB/s (CPU time)")
        print(f"chunk stage on the same turns: {chunk_overhead():.0%} more CPU with redaction")
    else:
        print(f"\neval-dev not found at {EVAL_DEV}; skipped")

    if args.scanner:
        from funes.secrets.scanner import ScannerError, available_scanner

        name = available_scanner()
        print(f"\nexternal scanner: {name or 'none'}")
        if name:
            try:
                for det, (hit, n) in sorted(scanner_recall(seeds).items()):
                    print(f"  {det:26} {hit:4}/{n:<4} {hit / n:.3f}")
            except ScannerError as e:
                print(f"  scanner failed: {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
