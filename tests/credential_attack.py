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


# --- values, names and the languages that carry them ---------------------------------------------

# Punctuation by class: a generated password holds one or two of a class somewhere inside
PUNCT_CLASSES = {
    "brackets": "()[]{}<>",
    "quotes": "'\"`",
    "backslash": "\\",
    "separators": ",;:|",
    "operators": "+=-*/%",
    "marks": "!?@#$^&~",
    "word": "._-",
}


def punct_password(rng: random.Random, cls: str) -> str:
    """A password with letters of both cases, digits and one or two characters of a class."""
    while True:
        chars = list(s(rng, ALNUM, rng.randint(14, 22)))
        for _ in range(rng.randint(1, 2)):
            chars[rng.randint(3, len(chars) - 4)] = rng.choice(PUNCT_CLASSES[cls])
        v = "".join(chars)
        if (
            any(c.isupper() for c in v)
            and any(c.islower() for c in v)
            and any(c.isdigit() for c in v)
        ):
            return v


def value(rng: random.Random) -> tuple[str, str]:
    """(what it is, a fresh secret value)."""
    what = rng.choice(["punct", "punct", "punct", "alnum", "hex", "base64"])
    if what == "punct":
        cls = rng.choice(sorted(PUNCT_CLASSES))
        return f"punct-{cls}", punct_password(rng, cls)
    if what == "alnum":
        return what, s(rng, ALNUM, rng.choice([20, 24, 32, 40]))
    if what == "hex":
        return what, s(rng, HEX, rng.choice([32, 40, 64]))
    return what, b64(rng.randbytes(rng.choice([24, 30, 33, 48])))


LABELS = (
    ("password",), ("db", "password"), ("api", "key"), ("secret",), ("client", "secret"),
    ("auth", "token"), ("access", "token"), ("private", "key"), ("passphrase",),
    ("secret", "key"), ("api", "token"), ("pwd",), ("passwd",), ("master", "key"),
    ("signing", "secret"), ("webhook", "secret"), ("encryption", "key"), ("admin", "password"),
    ("smtp", "password"), ("redis", "password"), ("jwt", "secret"), ("app", "secret"),
)  # fmt: skip


class Name:
    """A label in every spelling code uses: snake, UPPER, camel, Pascal, kebab, dotted."""

    def __init__(self, words: tuple[str, ...]) -> None:
        self.snake = "_".join(words)
        self.upper = self.snake.upper()
        self.camel = words[0] + "".join(w.capitalize() for w in words[1:])
        self.pascal = "".join(w.capitalize() for w in words)
        self.kebab = "-".join(words)
        self.header = "X-" + "-".join(w.capitalize() for w in words)
        self.dotted = "app." + ".".join(words)


def dq(v: str) -> str:
    """A double-quoted string literal of C-family languages, JSON, TOML, HCL, YAML."""
    return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'


def sq(v: str) -> str:
    """A single-quoted literal with backslash escapes (Python, JavaScript, PHP, Ruby)."""
    return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"


def sql(v: str) -> str:
    """A single-quoted literal where a quote is doubled (SQL, PowerShell, YAML)."""
    return "'" + v.replace("'", "''") + "'"


def shq(v: str) -> str:
    """A shell word that keeps the value as it is."""
    return "'" + v.replace("'", "'\\''") + "'"


Carrier = Callable[[Name, str], str | None]


def _plain(v: str, bad: str = "") -> bool:
    """The value can stand unquoted: no space, quote or backslash, none of ``bad``."""
    return not any(c in v for c in " \t'\"`\\" + bad)


CODE: dict[str, tuple[Carrier, ...]] = {
    "python": (
        lambda n, v: f"{n.snake} = {dq(v)}",
        lambda n, v: f"{n.upper} = {sq(v)}",
        lambda n, v: f"config = {{{dq(n.snake)}: {dq(v)}, 'timeout': 30}}",
        lambda n, v: f"client = Client(host='db.internal', {n.snake}={dq(v)})",
        lambda n, v: f"os.environ[{dq(n.upper)}] = {dq(v)}",
        lambda n, v: f"os.environ.setdefault({sq(n.upper)}, {sq(v)})",
        lambda n, v: f"settings.{n.upper} = {sq(v)}",
    ),
    "javascript": (
        lambda n, v: f"const {n.camel} = {dq(v)};",
        lambda n, v: f"let {n.camel} = {sq(v)};",
        lambda n, v: f"const {n.camel} = `{v}`;" if "`" not in v and "${" not in v else None,
        lambda n, v: f"const cfg = {{ {n.camel}: {dq(v)}, retries: 3 }};",
        lambda n, v: f"fetch(url, {{ headers: {{ {dq(n.header)}: {dq(v)} }} }})",
        lambda n, v: f"process.env.{n.upper} = {sq(v)};",
        lambda n, v: f"export const {n.upper} = {dq(v)};",
    ),
    "go": (
        lambda n, v: f"{n.camel} := {dq(v)}",
        lambda n, v: f"{n.camel} := `{v}`" if "`" not in v else None,
        lambda n, v: f"const {n.pascal} = {dq(v)}",
        lambda n, v: f"cfg := Config{{\n\tHost: \"db\",\n\t{n.pascal}: {dq(v)},\n}}",
        lambda n, v: f"os.Setenv({dq(n.upper)}, {dq(v)})",
    ),
    "rust": (
        lambda n, v: f"let {n.snake} = {dq(v)};",
        lambda n, v: f"const {n.upper}: &str = {dq(v)};",
        lambda n, v: f"let {n.snake} = String::from({dq(v)});",
        lambda n, v: f"std::env::set_var({dq(n.upper)}, {dq(v)});",
        lambda n, v: f"let client = Client::builder().{n.snake}({dq(v)}).build()?;",
    ),
    "java": (
        lambda n, v: f"String {n.camel} = {dq(v)};",
        lambda n, v: f"private static final String {n.upper} = {dq(v)};",
        lambda n, v: f"props.setProperty({dq(n.dotted)}, {dq(v)});",
        lambda n, v: f"val {n.camel} = {dq(v)}",
        lambda n, v: f"var {n.camel} = {dq(v)};",
    ),
    "csharp": (
        lambda n, v: f"var cred = new NetworkCredential(\"svc\", {dq(v)});",
        lambda n, v: f"public const string {n.pascal} = {dq(v)};",
    ),
    "php": (
        lambda n, v: f"${n.snake} = {sq(v)};",
        lambda n, v: f"define({sq(n.upper)}, {sq(v)});",
        lambda n, v: f"return [\n    {sq(n.snake)} => {sq(v)},\n];",
    ),
    "ruby": (
        lambda n, v: f"config.{n.snake} = {dq(v)}",
        lambda n, v: f"{{ {n.snake}: {dq(v)} }}",
        lambda n, v: f"{{ :{n.snake} => {sq(v)} }}",
        lambda n, v: f"ENV[{dq(n.upper)}] = {dq(v)}",
    ),
    "yaml": (
        lambda n, v: f"{n.snake}: {v}" if _plain(v, "#:,[]{}&*!|>%@") else None,
        lambda n, v: f"{n.snake}: {dq(v)}",
        lambda n, v: f"{n.snake}: {sql(v)}",
        lambda n, v: f"database:\n  host: db\n  {n.snake}: {dq(v)}\n",
        lambda n, v: f"env:\n  - name: {n.upper}\n    value: {dq(v)}\n",
        lambda n, v: f"environment:\n  - {n.upper}={v}\n" if _plain(v, "#") else None,
    ),
    "toml": (
        lambda n, v: f"[database]\n{n.snake} = {dq(v)}\n",
        lambda n, v: f"{n.snake} = {sql(v)}" if "'" not in v else None,
    ),
    "ini": (
        lambda n, v: f"[client]\n{n.snake} = {v}\n" if _plain(v, ";#") else None,
        lambda n, v: f"{n.snake}={v}" if _plain(v, ";#") else None,
    ),
    "dotenv": (
        lambda n, v: f"{n.upper}={v}" if _plain(v, "#$") else None,
        lambda n, v: f"{n.upper}={dq(v)}" if "$" not in v else None,
        lambda n, v: f"{n.upper}={shq(v)}",
        lambda n, v: f"export {n.upper}={shq(v)}",
    ),
    "hcl": (
        lambda n, v: f"  {n.snake} = {dq(v)}",
        lambda n, v: f'variable "{n.snake}" {{\n  type    = string\n  default = {dq(v)}\n}}',
    ),
    "shell": (
        lambda n, v: f"{n.upper}={shq(v)} ./deploy.sh",
        # (a quote inside a header's value, `'…'\\''…'`, is a known gap)
        lambda n, v: f"curl -sS -H {shq(n.header + ': ' + v)} https://api.acme.io/v1/me"
        if "'" not in v else None,
        lambda n, v: f"echo {shq(v)} | docker login -u ci --password-stdin registry.acme.io",
        lambda n, v: f"env {n.upper}={shq(v)} make deploy",
        lambda n, v: f"kubectl create secret generic app --from-literal={n.snake}={shq(v)}",
    ),
    "powershell": (
        lambda n, v: f"$env:{n.upper} = {sql(v)}",
        lambda n, v: f"${n.camel} = {sql(v)}",
        lambda n, v: f"$sec = ConvertTo-SecureString {sql(v)} -AsPlainText -Force",
        lambda n, v: f"[Environment]::SetEnvironmentVariable({dq(n.upper)}, {sql(v)}, 'User')",
    ),
    "sql": (
        lambda n, v: f"CREATE USER app IDENTIFIED BY {sql(v)};",
        lambda n, v: f"ALTER USER app WITH PASSWORD {sql(v)};",
        lambda n, v: f"CREATE ROLE reporter LOGIN PASSWORD {sql(v)};",
        lambda n, v: f"SET PASSWORD FOR 'app'@'%' = {sql(v)};",
        lambda n, v: f"ALTER LOGIN app WITH PASSWORD = {sql(v)};",
    ),
    "xml": (
        lambda n, v: f"<{n.camel}>{v}</{n.camel}>" if not any(c in v for c in "<&") else None,
        lambda n, v: f'<add key="{n.pascal}" value="{v}" />' if not any(c in v for c in '"<&') else None,
    ),
    "connection-string": (
        lambda n, v: f"Server=tcp:db.acme.io,1433;Database=app;User ID=sa;Password={v};"
        if _plain(v, ";") else None,
        lambda n, v: f"jdbc:postgresql://db:5432/app?user=app&password={v}"
        if _plain(v, "&#?/") else None,
        lambda n, v: f'dsn := "app:{v}@tcp(db:3306)/app?parseTime=true"'
        if _plain(v, "@/") else None,
    ),
}  # fmt: skip


def code_cases(rng: random.Random) -> list[Case]:
    """Each carrier of each language, a fresh value and label."""
    out: list[Case] = []
    for lang, carriers in CODE.items():
        for k, carry in enumerate(carriers):
            for _ in range(4):  # a value the carrier can hold
                what, v = value(rng)
                text = carry(Name(rng.choice(LABELS)), v)
                if text is not None:
                    out.append((f"code-{lang}-{k}-{what}", text, frags(v)))
                    break
    return out


# "The password is X" as people write it, in twenty-odd languages
PROSE = {
    "it": ("la password è {v}", "la chiave API è {v}"),
    "nl": ("het wachtwoord is {v}", "de API-sleutel is {v}"),
    "pl": ("hasło to {v}", "hasło do bazy: {v}"),
    "tr": ("şifre: {v}", "veritabanı şifresi: {v}"),
    "sv": ("lösenordet är {v}",),
    "ar": ("كلمة المرور هي {v}",),
    "hi": ("पासवर्ड है {v}",),
    "vi": ("mật khẩu là {v}", "mật khẩu: {v}"),
    "id": ("kata sandi adalah {v}", "kata sandinya: {v}"),
    "ms": ("kata laluan ialah {v}",),
    "th": ("รหัสผ่านคือ {v}", "รหัสผ่าน: {v}"),
    "he": ("הסיסמה היא {v}", "הסיסמה: {v}"),
    "el": ("ο κωδικός πρόσβασης είναι {v}", "κωδικός: {v}"),
    "cs": ("heslo je {v}", "heslo: {v}"),
    "uk": ("пароль: {v}", "пароль — {v}"),
    "da": ("adgangskoden er {v}",),
    "no": ("passordet er {v}",),
    "fi": ("salasana on {v}",),
    "ro": ("parola este {v}",),
    "hu": ("a jelszó: {v}",),
    "ca": ("la contrasenya és {v}",),
    "fa": ("رمز عبور: {v}",),
    "en": ("the password for the staging box is {v}", "use this password: {v}",
           "DB password -> {v}"),
}  # fmt: skip


def prose_cases(rng: random.Random) -> list[Case]:
    out: list[Case] = []
    for lang, forms in PROSE.items():
        for k, form in enumerate(forms):
            what, v = rng.choice(
                [("alnum", lambda: s(rng, ALNUM, rng.choice([14, 16, 20, 24]))),
                 # (`;x:`, `,x:` inside a value in prose read as its next field: a known gap)
                 ("punct", lambda: punct_password(rng, rng.choice(["brackets", "marks",
                                                                   "operators"])))]
            )  # fmt: skip
            v = v()
            out.append((f"prose-{lang}-{k}-{what}", form.format(v=v), frags(v)))
    return out


# Provider formats from their documentation, with random bodies
PROVIDERS: dict[str, Callable[[random.Random], str]] = {
    "supabase-pat": lambda r: "sbp_" + s(r, HEX, 40),
    "langsmith": lambda r: f"lsv2_{r.choice(['pt', 'sk'])}_{s(r, HEX, 32)}_{s(r, HEX, 10)}",
    "pinecone": lambda r: f"pcsk_{s(r, ALNUM, 6)}_{s(r, ALNUM, 60)}",
    "tavily": lambda r: "tvly-" + r.choice(["", "dev-", "prod-"]) + s(r, ALNUM, 32),
    "firecrawl": lambda r: "fc-" + s(r, HEX, 32),
    "circleci": lambda r: f"CCIPAT_{s(r, ALNUM, 22)}_{s(r, HEX, 40)}",
    "mailersend": lambda r: "mlsn." + s(r, HEX, 64),
    "posthog-personal": lambda r: "phx_" + s(r, ALNUM, 47),
    "contentful": lambda r: "CFPAT-" + s(r, B64URL, 43),
    "deno-deploy": lambda r: "ddp_" + s(r, ALNUM, 36),
    "cerebras": lambda r: "csk-" + s(r, LOWER + DIGITS, 48),
    "honeycomb": lambda r: "hcaik_" + s(r, LOWER + DIGITS, 58),
    "braintree": lambda r: f"access_token$production${s(r, LOWER + DIGITS, 16)}${s(r, HEX, 32)}",
    "neon": lambda r: "napi_" + s(r, LOWER + DIGITS, 64),
}


def provider_cases(rng: random.Random) -> list[Case]:
    out: list[Case] = []
    for name, make in PROVIDERS.items():
        v = make(rng)
        place = rng.choice(["here is the new key {v} for the bot", "curl -H 'X-Key: {v}' $URL",
                            "{v}", '{{"k": "{v}"}}'])  # fmt: skip
        body = max(re.split(r"[-_.$]", v), key=len)
        out.append((f"provider-{name}", place.format(v=v), sorted({v, body})))
    return out


KINDS: dict[str, Callable[[random.Random], list[Case]]] = {
    "lead-probe": lead_probe,
    "code": code_cases,
    "prose": prose_cases,
    "providers": provider_cases,
}


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
