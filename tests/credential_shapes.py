"""A seeded generator of fake credentials, shaped after providers' public documentation.

Written as an outside probe would write it, without the detectors' rules in view: each kind is
the token or secret a provider issues (its documented prefix, alphabet and length, random
characters in between — never a real key), placed where a coding agent meets it: an env dump,
a config file in one of a dozen syntaxes, a CLI flag, an HTTP header, a connection URL, a tool's
output (`env`, `cat ~/.aws/credentials`, `kubectl get secret -o yaml`, `docker inspect`), prose
in a dozen languages, base64-wrapped or line-wrapped, in a markdown table or a code fence.

``cases(rng)`` returns ``(kind, text, frags)`` triples: ``frags`` are pieces of the secret that
must not survive redaction anywhere (the whole value, its head and tail, each run between
punctuation, each line of a wrapped value, and the decoded value of a base64'd one).
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
import string
import urllib.parse
from collections.abc import Callable
from pathlib import Path

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
ALNUM = string.ascii_letters + DIGITS
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
HEX = "0123456789abcdef"
B32 = UPPER + "234567"
B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
PUNCT = "#%()[]&,;|{}<>!@$^*+=~?:'\"`\\/.-_"

Case = tuple[str, str, list[str]]
KINDS: dict[str, Callable[[random.Random], tuple[str, list[str]]]] = {}


def kind(name: str) -> Callable[[Callable[[random.Random], tuple[str, list[str]]]], Callable]:
    def reg(fn: Callable[[random.Random], tuple[str, list[str]]]) -> Callable:
        KINDS[name] = fn
        return fn

    return reg


def s(rng: random.Random, alphabet: str, n: int) -> str:
    """n random characters of an alphabet, with at least one digit and one letter when the
    alphabet has both (as real generated tokens almost always do)."""
    while True:
        v = "".join(rng.choice(alphabet) for _ in range(n))
        if re.search(r"(?i)xxxx|(.)\1\1\1", v):
            continue  # a stand-in's run (`XXXX`, `aaaa`), which real tokens hardly hold
        if n < 8 or not (set(alphabet) & set(DIGITS)) or any(c.isdigit() for c in v):
            if n < 8 or not (set(alphabet) & set(string.ascii_letters)):
                return v
            if any(c.isalpha() for c in v):
                return v


def password(
    rng: random.Random, n: int | None = None, punct: str = "#%&!@$*()[]{}^,;|<>~?+="
) -> str:
    """A password a generator or a person makes: letters, digits, and two or three punctuation
    characters not at the ends."""
    n = n or rng.randint(12, 22)
    while True:
        chars = [rng.choice(ALNUM) for _ in range(n)]
        for _ in range(rng.randint(1, 3)):
            chars[rng.randint(2, n - 3)] = rng.choice(punct)
        v = "".join(chars)
        classes = (UPPER, LOWER, DIGITS)
        # `***` between characters is how a masked value looks, not a password
        if all(any(c in cls for c in v) for cls in classes) and "**" not in v:
            return v


# the fixed words of documented prefixes, which are not secret on their own
FIXED = {"github", "access", "production", "django", "insecure", "atlasv1", "admin01", "api03",
         "secret", "SECRET"}  # fmt: skip


def frags(value: str) -> list[str]:
    """What of a value must not survive: the value, its first and last 10 characters, and each
    run of 6+ characters between punctuation or line breaks."""
    out = {value}
    if len(value) > 14:
        out |= {x for x in (value[:10], value[-10:]) if not re.fullmatch(r"[A-Za-z_-]+", x)}
    run = ""
    for c in value + "\n":
        if c.isalnum():
            run += c
        else:
            if len(run) >= 6 and run not in FIXED:
                out.add(run)
            run = ""
    return sorted(out)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def pem_body(rng: random.Random, nbytes: int, width: int = 64) -> tuple[str, list[str]]:
    raw = b64(bytes(rng.getrandbits(8) for _ in range(nbytes)))
    lines = [raw[i : i + width] for i in range(0, len(raw), width)]
    return "\n".join(lines), [ln for ln in lines if len(ln) >= 12]


def jwt(rng: random.Random, claims: dict[str, object] | None = None) -> str:
    def seg(obj: object) -> str:
        return (
            base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode())
            .decode()
            .rstrip("=")
        )

    head = {"alg": rng.choice(["HS256", "RS256", "ES256"]), "typ": "JWT"}
    body = claims or {
        "sub": s(rng, DIGITS, 10),
        "name": rng.choice(["Ana Silva", "Jo Lee", "svc-deploy"]),
        "iat": rng.randint(1_600_000_000, 1_800_000_000),
        "jti": s(rng, HEX, 16),
    }
    return f"{seg(head)}.{seg(body)}.{s(rng, B64URL, rng.choice([43, 86, 342]))}"


# --- cloud ------------------------------------------------------------------------------------


@kind("aws-credentials-file")
def _(rng: random.Random) -> tuple[str, list[str]]:
    kid, sec = "AKIA" + s(rng, B32, 16), s(rng, B64, 40)
    text = (
        "$ cat ~/.aws/credentials\n[default]\n"
        f"aws_access_key_id = {kid}\naws_secret_access_key = {sec}\nregion = eu-west-1\n"
    )
    return text, [kid, *frags(sec)]


@kind("aws-sts-json")
def _(rng: random.Random) -> tuple[str, list[str]]:
    kid, sec = "ASIA" + s(rng, B32, 16), s(rng, B64, 40)
    tok = "IQoJb3JpZ2luX2VjE" + s(rng, B64, rng.randint(300, 420))
    text = json.dumps(
        {"Credentials": {"AccessKeyId": kid, "SecretAccessKey": sec, "SessionToken": tok,
                         "Expiration": "2026-12-01T12:00:00+00:00"}}, indent=4)  # fmt: skip
    return "$ aws sts get-session-token --duration-seconds 3600\n" + text, [
        *frags(sec),
        *frags(tok),
    ]


@kind("aws-env-export")
def _(rng: random.Random) -> tuple[str, list[str]]:
    sec = s(rng, B64, 40)
    return (
        f"export AWS_ACCESS_KEY_ID=AKIA{s(rng, B32, 16)}\nexport AWS_SECRET_ACCESS_KEY='{sec}'",
        frags(sec),
    )


@kind("gcp-service-account-json")
def _(rng: random.Random) -> tuple[str, list[str]]:
    body, lines = pem_body(rng, 1190)
    pkid = s(rng, HEX, 40)
    key = f"-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\n"
    doc = {"type": "service_account", "project_id": "acme-prod-291", "private_key_id": pkid,
           "private_key": key, "client_email": "deployer@acme-prod-291.iam.gserviceaccount.com",
           "client_id": s(rng, DIGITS, 21), "token_uri": "https://oauth2.googleapis.com/token"}  # fmt: skip
    return "$ cat sa.json\n" + json.dumps(doc, indent=2), lines  # the key id is no secret


@kind("gcp-api-key")
def _(rng: random.Random) -> tuple[str, list[str]]:
    k = "AIza" + s(rng, B64URL, 35)
    return (
        f"curl 'https://maps.googleapis.com/maps/api/geocode/json?address=Lisbon&key={k}'",
        frags(k),
    )


@kind("google-oauth-client-secret")
def _(rng: random.Random) -> tuple[str, list[str]]:
    v = "GOCSPX-" + s(rng, B64URL, 28)
    doc = {"installed": {"client_id": f"{s(rng, DIGITS, 12)}-{s(rng, LOWER + DIGITS, 32)}.apps.googleusercontent.com",
                         "client_secret": v, "redirect_uris": ["http://localhost"]}}  # fmt: skip
    return json.dumps(doc), frags(v)


@kind("google-oauth-tokens")
def _(rng: random.Random) -> tuple[str, list[str]]:
    at = "ya29." + s(rng, B64URL, 160)
    rt = "1//0" + s(rng, B64URL, 99)
    return f"$ gcloud auth print-access-token\n{at}\nrefresh_token: {rt}", [*frags(at), *frags(rt)]


@kind("azure-storage-connection-string")
def _(rng: random.Random) -> tuple[str, list[str]]:
    k = b64(bytes(rng.getrandbits(8) for _ in range(64)))
    return (
        "AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=acmeprod;"
        f"AccountKey={k};EndpointSuffix=core.windows.net"
    ), frags(k)


@kind("azure-sas-token")
def _(rng: random.Random) -> tuple[str, list[str]]:
    sig = urllib.parse.quote(b64(bytes(rng.getrandbits(8) for _ in range(32))), safe="")
    url = (
        "https://acmeprod.blob.core.windows.net/backups/db.bak?sv=2022-11-02&ss=bfqt&srt=sco"
        f"&sp=rwdlacupiytfx&se=2026-12-31T00:00:00Z&st=2026-11-01T00:00:00Z&spr=https&sig={sig}"
    )
    return f"azcopy copy ./db.bak '{url}'", frags(sig)


@kind("azure-servicebus-connection-string")
def _(rng: random.Random) -> tuple[str, list[str]]:
    k = b64(bytes(rng.getrandbits(8) for _ in range(32)))
    return (
        '"ServiceBusConnection": "Endpoint=sb://acme.servicebus.windows.net/;'
        f'SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={k}"'
    ), frags(k)


@kind("azure-ad-client-secret")
def _(rng: random.Random) -> tuple[str, list[str]]:
    v = s(rng, ALNUM, 3) + rng.choice("78") + "Q~" + s(rng, ALNUM + "_.~-", 34)
    return (
        f"az login --service-principal -u {s(rng, HEX, 8)}-1f2e-4d3c-9b8a-{s(rng, HEX, 12)} -p {v} --tenant acme.onmicrosoft.com",
        frags(v),
    )


@kind("azure-devops-pat")
def _(rng: random.Random) -> tuple[str, list[str]]:
    v = s(rng, LOWER + "234567", 52)
    return f"AZURE_DEVOPS_EXT_PAT={v} az devops project list", frags(v)


@kind("alibaba-access-key")
def _(rng: random.Random) -> tuple[str, list[str]]:
    sec = s(rng, ALNUM, 30)
    return (
        f"aliyun configure set --access-key-id LTAI{s(rng, ALNUM, 20)} --access-key-secret {sec}",
        frags(sec),
    )


@kind("digitalocean-token")
def _(rng: random.Random) -> tuple[str, list[str]]:
    v = "dop_v1_" + s(rng, HEX, 64)
    return f"doctl auth init --access-token {v}", frags(v)


@kind("heroku-api-key")
def _(rng: random.Random) -> tuple[str, list[str]]:
    v = "HRKU-AA" + s(rng, B64URL, 58)
    return f"$ heroku authorizations:create\nToken: {v}\nScope: global", frags(v)


@kind("cloudflare-tokens")
def _(rng: random.Random) -> tuple[str, list[str]]:
    tok, gk = s(rng, B64URL, 40), s(rng, HEX, 37)
    text = (
        f"export CLOUDFLARE_API_TOKEN={tok}\n"
        f"curl -H 'X-Auth-Email: ops@acme.io' -H 'X-Auth-Key: {gk}' https://api.cloudflare.com/client/v4/zones"
    )
    return text, [*frags(tok), *frags(gk)]


@kind("vault-token")
def _(rng: random.Random) -> tuple[str, list[str]]:
    v = "hvs." + s(rng, B64URL, 91)
    return (
        f"$ vault login\nToken (will be hidden):\nKey    Value\ntoken  {v}\ntoken_accessor  {s(rng, ALNUM, 24)}",
        frags(v),
    )


@kind("terraform-cloud-token")
def _(rng: random.Random) -> tuple[str, list[str]]:
    v = s(rng, ALNUM, 14) + ".atlasv1." + s(rng, ALNUM, 67)
    return 'credentials "app.terraform.io" {\n  token = "' + v + '"\n}', frags(v)


# --- SaaS tokens ------------------------------------------------------------------------------


@kind("stripe-keys")
def _(rng: random.Random) -> tuple[str, list[str]]:
    sk = "sk_live_" + s(rng, ALNUM, rng.choice([24, 99]))
    rk = "rk_live_" + s(rng, ALNUM, 99)
    wh = "whsec_" + s(rng, ALNUM, 32)
    text = f"STRIPE_SECRET_KEY={sk}\nSTRIPE_RESTRICTED={rk}\nSTRIPE_WEBHOOK_SECRET={wh}"
    return text, [*frags(sk), *frags(rk), *frags(wh)]


@kind("slack-tokens")
def _(rng: random.Random) -> tuple[str, list[str]]:
    bot = f"xoxb-{s(rng, DIGITS, 12)}-{s(rng, DIGITS, 13)}-{s(rng, ALNUM, 24)}"
    app = f"xapp-1-A{s(rng, UPPER + DIGITS, 10)}-{s(rng, DIGITS, 13)}-{s(rng, HEX, 64)}"
    hook = f"https://hooks.slack.com/services/T{s(rng, UPPER + DIGITS, 10)}/B{s(rng, UPPER + DIGITS, 10)}/{s(rng, ALNUM, 24)}"
    text = f'SLACK_BOT_TOKEN={bot}\nSLACK_APP_TOKEN={app}\ncurl -X POST -d \'{{"text":"deployed"}}\' {hook}'
    return text, [*frags(bot), *frags(app), hook.rsplit("/", 1)[1]]


@kind("github-tokens")
def _(rng: random.Random) -> tuple[str, list[str]]:
    fg = "github_pat_" + s(rng, ALNUM, 22) + "_" + s(rng, ALNUM, 59)
    cl = rng.choice(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]) + s(rng, ALNUM, 36)
    text = f"echo {fg} | gh auth login --with-token\ngit remote set-url origin https://x-access-token:{cl}@github.com/acme/api.git"
    return text, [*frags(fg), *frags(cl)]


@kind("gitlab-tokens")
def _(rng: random.Random) -> tuple[str, list[str]]:
    pat = "glpat-" + s(rng, B64URL, 20)
    rt = "glrt-" + s(rng, B64URL, 20)
    trig = "glptt-" + s(rng, HEX, 40)
    text = (f"curl --header 'PRIVATE-TOKEN: {pat}' https://gitlab.acme.io/api/v4/projects\n"
            f"gitlab-runner register --token {rt}\ncurl -X POST -F token={trig} -F ref=main https://gitlab.acme.io/api/v4/projects/7/trigger/pipeline")  # fmt: skip
    return text, [*frags(pat), *frags(rt), *frags(trig)]


@kind("npm-token")
def _(rng: random.Random) -> tuple[str, list[str]]:
    v = "npm_" + s(rng, ALNUM, 36)
    return f"$ cat ~/.npmrc\n//registry.npmjs.org/:_authToken={v}\nsave-exact=true", frags(v)


@kind("npmrc-legacy-auth")
def _(rng: random.Random) -> tuple[str, list[str]]:
    pw = password(rng, punct="!@#$%^&*")
    auth = b64(f"deploy:{pw}".encode())
    return f"registry=https://npm.acme.io/\n//npm.acme.io/:_auth={auth}\nalways-auth=true", [
        *frags(auth),
        *frags(pw),
    ]


@kind("pypi-token")
def _(rng: random.Random) -> tuple[str, list[str]]:
    v = "pypi-AgEIcHlwaS5vcmc" + s(rng, B64URL, rng.randint(140, 200))
    return f"[pypi]\n  username = __token__\n  password = {v}\n", frags(v)


@kind("twilio")
def _(rng: random.Random) -> tuple[str, list[str]]:
    tok = s(rng, HEX, 32)
    sk = "SK" + s(rng, HEX, 32)
    text = (f"curl -X POST https://api.twilio.com/2010-04-01/Accounts/AC{s(rng, HEX, 32)}/Messages.json "
            f"-u AC{s(rng, HEX, 32)}:{tok}\nTWILIO_API_KEY={sk}")  # fmt: skip
    return text, [*frags(tok), *frags(sk)]


@kind("twilio-auth-token-prose")
def _(rng: random.Random) -> tuple[str, list[str]]:
    tok = s(rng, HEX, 32)
    return f"The Twilio auth token for the SMS account is {tok} and the SID starts with AC.", frags(
        tok
    )


@kind("sendgrid")
def _(rng: random.Random) -> tuple[str, list[str]]:
    v = "SG." + s(rng, B64URL, 22) + "." + s(rng, B64URL, 43)
    return f'curl -H "Authorization: Bearer {v}" https://api.sendgrid.com/v3/mail/send', frags(v)


@kind("mailgun")
def _(rng: random.Random) -> tuple[str, list[str]]:
    old = "key-" + s(rng, HEX, 32)
    new = f"{s(rng, HEX, 32)}-{s(rng, HEX, 8)}-{s(rng, HEX, 8)}"
    text = f"curl -s --user 'api:{old}' https://api.mailgun.net/v3/mg.acme.io/messages\nMAILGUN_API_KEY={new}"
    return text, [*frags(old), *frags(new)]


@kind("mailchimp")
def _(rng: random.Random) -> tuple[str, list[str]]:
    v = s(rng, HEX, 32) + "-us" + str(rng.randint(1, 21))
    return f"mailchimp:\n  api_key: {v}\n  list: newsletter", frags(v)


@kind("datadog")
def _(rng: random.Random) -> tuple[str, list[str]]:
    api, app = s(rng, HEX, 32), s(rng, HEX, 40)
    text = (f"DD_API_KEY={api} DD_SITE=datadoghq.eu ./install.sh\n"
            f"curl -H 'DD-API-KEY: {api}' -H 'DD-APPLICATION-KEY: {app}' https://api.datadoghq.eu/api/v1/validate")  # fmt: skip
    return text, [*frags(api), *frags(app)]


@kind("sentry")
def _(rng: random.Random) -> tuple[str, list[str]]:
    key = s(rng, HEX, 32)
    dsn = f"https://{key}@o{s(rng, DIGITS, 6)}.ingest.us.sentry.io/{s(rng, DIGITS, 16)}"
    tok = "sntryu_" + s(rng, HEX, 64)
    return f"SENTRY_DSN={dsn}\nSENTRY_AUTH_TOKEN={tok}", [*frags(key), *frags(tok)]


@kind("shopify")
def _(rng: random.Random) -> tuple[str, list[str]]:
    v = rng.choice(["shpat_", "shpss_", "shpca_", "shppa_"]) + s(rng, HEX, 32)
    return (
        f"curl -H 'X-Shopify-Access-Token: {v}' https://acme.myshopify.com/admin/api/2024-10/shop.json",
        frags(v),
    )


@kind("atlassian-api-token")
def _(rng: random.Random) -> tuple[str, list[str]]:
    v = "ATATT3xFfGF0" + s(rng, B64URL, 171) + "=" + s(rng, HEX.upper(), 8)
    return f"curl -u ana@acme.io:{v} https://acme.atlassian.net/rest/api/3/myself", frags(v)


@kind("bitbucket-app-password")
def _(rng: random.Random) -> tuple[str, list[str]]:
    v = "ATBB" + s(rng, ALNUM, 32)
    return f"git clone https://ana:{v}@bitbucket.org/acme/infra.git", frags(v)


@kind("linear")
def _(rng: random.Random) -> tuple[str, list[str]]:
    v = "lin_api_" + s(rng, ALNUM, 40)
    return f'{{"mcpServers": {{"linear": {{"env": {{"LINEAR_API_KEY": "{v}"}}}}}}}}', frags(v)


@kind("notion")
def _(rng: random.Random) -> tuple[str, list[str]]:
    a = "secret_" + s(rng, ALNUM, 43)
    b = "ntn_" + s(rng, DIGITS, 11) + s(rng, ALNUM, 35)
    return f"NOTION_TOKEN={a}\n# rotated 2026-11: {b}", [*frags(a), *frags(b)]


@kind("openai")
def _(rng: random.Random) -> tuple[str, list[str]]:
    proj = "sk-proj-" + s(rng, B64URL, 74) + "T3BlbkFJ" + s(rng, B64URL, 74)
    legacy = "sk-" + s(rng, ALNUM, 20) + "T3BlbkFJ" + s(rng, ALNUM, 20)
    return f'client = OpenAI(api_key="{proj}")\n# old: {legacy}', [*frags(proj), *frags(legacy)]


@kind("anthropic")
def _(rng: random.Random) -> tuple[str, list[str]]:
    v = "sk-ant-api03-" + s(rng, B64URL, 93) + "AA"
    adm = "sk-ant-admin01-" + s(rng, B64URL, 93) + "AA"
    return f"ANTHROPIC_API_KEY={v} claude -p hi\nx-api-key: {adm}", [*frags(v), *frags(adm)]


@kind("huggingface")
def _(rng: random.Random) -> tuple[str, list[str]]:
    v = "hf_" + s(rng, string.ascii_letters, 34)
    return f"huggingface-cli login --token {v} --add-to-git-credential", frags(v)


@kind("llm-provider-keys")
def _(rng: random.Random) -> tuple[str, list[str]]:
    keys = ["gsk_" + s(rng, ALNUM, 52), "pplx-" + s(rng, ALNUM, 48), "sk-or-v1-" + s(rng, HEX, 64),
            "xai-" + s(rng, ALNUM, 80), "r8_" + s(rng, ALNUM, 37)]  # fmt: skip
    names = [
        "GROQ_API_KEY",
        "PERPLEXITY_API_KEY",
        "OPENROUTER_API_KEY",
        "XAI_API_KEY",
        "REPLICATE_API_TOKEN",
    ]
    text = "\n".join(f"{n}={k}" for n, k in zip(names, keys, strict=True))
    return text, [f for k in keys for f in frags(k)]


@kind("mistral-cohere-unprefixed")
def _(rng: random.Random) -> tuple[str, list[str]]:
    m, c = s(rng, ALNUM, 32), s(rng, ALNUM, 40)
    return f'MISTRAL_API_KEY={m}\nexport CO_API_KEY="{c}"', [*frags(m), *frags(c)]


@kind("okta-ssws")
def _(rng: random.Random) -> tuple[str, list[str]]:
    v = "00" + s(rng, B64URL, 40)
    return (
        f"curl -H 'Accept: application/json' -H 'Authorization: SSWS {v}' https://acme.okta.com/api/v1/users",
        frags(v),
    )


@kind("auth0")
def _(rng: random.Random) -> tuple[str, list[str]]:
    v = s(rng, B64URL, 64)
    tok = jwt(rng, {"iss": "https://acme.eu.auth0.com/", "aud": "https://acme.eu.auth0.com/api/v2/",
                    "scope": "read:users", "gty": "client-credentials"})  # fmt: skip
    text = f"AUTH0_DOMAIN=acme.eu.auth0.com\nAUTH0_CLIENT_ID={s(rng, ALNUM, 32)}\nAUTH0_CLIENT_SECRET={v}\nMGMT_TOKEN={tok}"
    return text, [*frags(v), *frags(tok.rsplit(".", 1)[1])]


@kind("discord")
def _(rng: random.Random) -> tuple[str, list[str]]:
    hook_tok = s(rng, B64URL, 68)
    hook = f"https://discord.com/api/webhooks/{s(rng, DIGITS, 19)}/{hook_tok}"
    bot = f"M{s(rng, ALNUM, 25)}.{s(rng, B64URL, 6)}.{s(rng, B64URL, 38)}"
    return f"webhook_url = \"{hook}\"\nclient.run('{bot}')", [*frags(hook_tok), *frags(bot)]


@kind("telegram-bot")
def _(rng: random.Random) -> tuple[str, list[str]]:
    v = f"{s(rng, DIGITS, 10)}:AA{s(rng, B64URL, 33)}"
    return f"curl https://api.telegram.org/bot{v}/getUpdates", frags(v.split(":", 1)[1])


@kind("postman")
def _(rng: random.Random) -> tuple[str, list[str]]:
    v = f"PMAK-{s(rng, HEX, 24)}-{s(rng, HEX, 34)}"
    return f"newman run coll.json --postman-api-key {v}", frags(v)


@kind("grafana-newrelic")
def _(rng: random.Random) -> tuple[str, list[str]]:
    g = f"glsa_{s(rng, ALNUM, 32)}_{s(rng, HEX, 8)}"
    n = "NRAK-" + s(rng, UPPER + DIGITS, 27)
    return f"GRAFANA_SA_TOKEN: {g}\nNEW_RELIC_API_KEY: {n}", [*frags(g), *frags(n)]


@kind("square-paypal")
def _(rng: random.Random) -> tuple[str, list[str]]:
    sq = "EAAA" + s(rng, B64URL, 60)
    bt = f"access_token$production${s(rng, ALNUM, 16)}${s(rng, HEX, 32)}"
    return f"SQUARE_ACCESS_TOKEN={sq}\nBRAINTREE_TOKEN='{bt}'", [*frags(sq), *frags(bt)]


@kind("supabase-netlify-vercel")
def _(rng: random.Random) -> tuple[str, list[str]]:
    sb, nf, vc = "sbp_" + s(rng, HEX, 40), "nfp_" + s(rng, ALNUM, 36), s(rng, ALNUM, 24)
    text = f"supabase login --token {sb}\nnetlify deploy --auth {nf}\nvercel deploy --token={vc} --prod"
    return text, [*frags(sb), *frags(nf), *frags(vc)]


@kind("docker-hub-pat")
def _(rng: random.Random) -> tuple[str, list[str]]:
    v = "dckr_pat_" + s(rng, B64URL, 27)
    return f"echo '{v}' | docker login -u acmebot --password-stdin", frags(v)


@kind("ci-tokens")
def _(rng: random.Random) -> tuple[str, list[str]]:
    keys = ["bkua_" + s(rng, HEX, 40), "squ_" + s(rng, HEX, 40), "sgp_" + s(rng, HEX, 40),
            "pul-" + s(rng, HEX, 40), "dapi" + s(rng, HEX, 32)]  # fmt: skip
    text = "\n".join(
        f"  - {n}: {k}"
        for n, k in zip(["BUILDKITE", "SONAR", "SRC", "PULUMI", "DATABRICKS"], keys, strict=True)
    )
    return "ci secrets:\n" + text, [f for k in keys for f in frags(k)]


@kind("tailscale-ngrok")
def _(rng: random.Random) -> tuple[str, list[str]]:
    ts = f"tskey-auth-k{s(rng, ALNUM, 10)}CNTRL-{s(rng, ALNUM, 33)}"
    ng = f"{s(rng, ALNUM, 27)}_{s(rng, ALNUM, 21)}"
    return f"tailscale up --authkey={ts}\nngrok config add-authtoken {ng}", [*frags(ts), *frags(ng)]


@kind("airtable-figma-contentful")
def _(rng: random.Random) -> tuple[str, list[str]]:
    keys = [
        f"pat{s(rng, ALNUM, 14)}.{s(rng, HEX, 64)}",
        "figd_" + s(rng, B64URL, 40),
        "CFPAT-" + s(rng, B64URL, 43),
    ]
    return "\n".join(f"token: {k}" for k in keys), [f for k in keys for f in frags(k)]


@kind("firebase-fcm-server-key")
def _(rng: random.Random) -> tuple[str, list[str]]:
    v = f"AAAA{s(rng, B64URL, 7)}:APA91b{s(rng, B64URL, 134)}"
    return f"curl -H 'Authorization: key={v}' https://fcm.googleapis.com/fcm/send", frags(v)


@kind("age-secret-key")
def _(rng: random.Random) -> tuple[str, list[str]]:
    v = "AGE-SECRET-KEY-1" + s(rng, BECH32, 58).upper()
    return f"# created: 2026-11-30T10:00:00Z\n# public key: age1{s(rng, BECH32, 58)}\n{v}", frags(v)


@kind("wireguard-private-key")
def _(rng: random.Random) -> tuple[str, list[str]]:
    v = b64(bytes(rng.getrandbits(8) for _ in range(32)))
    return f"[Interface]\nPrivateKey = {v}\nAddress = 10.8.0.2/32\n", frags(v)


@kind("app-framework-secrets")
def _(rng: random.Random) -> tuple[str, list[str]]:
    dj = "django-insecure-" + s(rng, LOWER + DIGITS + "!@#$%^&*(-_=+)", 50)
    lv = "base64:" + b64(bytes(rng.getrandbits(8) for _ in range(32)))
    rb = s(rng, HEX, 128)
    text = f"SECRET_KEY = '{dj}'\nAPP_KEY={lv}\nsecret_key_base: {rb}"
    return text, [*frags(dj[16:]), *frags(lv[7:]), *frags(rb)]


@kind("cloudinary-url")
def _(rng: random.Random) -> tuple[str, list[str]]:
    sec = s(rng, B64URL, 27)
    return f"CLOUDINARY_URL=cloudinary://{s(rng, DIGITS, 15)}:{sec}@acme", frags(sec)


# --- JWTs and keys ----------------------------------------------------------------------------


@kind("jwt-bearer")
def _(rng: random.Random) -> tuple[str, list[str]]:
    t = jwt(rng)
    return f"curl -sS https://api.acme.io/v1/me -H 'Authorization: Bearer {t}'", frags(
        t.rsplit(".", 1)[1]
    )


@kind("jwt-in-cookie")
def _(rng: random.Random) -> tuple[str, list[str]]:
    t = jwt(rng)
    sid = s(rng, B64URL, 32)
    return f"Set-Cookie: access_token={t}; Path=/; HttpOnly\nCookie: sessionid={sid}; csrftoken=x", [
        *frags(t.rsplit(".", 1)[1]), *frags(sid)]  # fmt: skip


@kind("pem-rsa")
def _(rng: random.Random) -> tuple[str, list[str]]:
    body, lines = pem_body(rng, 1190)
    return (
        f"$ cat deploy.pem\n-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----",
        lines,
    )


@kind("pem-ec-escaped-in-json")
def _(rng: random.Random) -> tuple[str, list[str]]:
    body, lines = pem_body(rng, 121)
    key = f"-----BEGIN EC PRIVATE KEY-----\n{body}\n-----END EC PRIVATE KEY-----\n"
    return json.dumps({"tls": {"cert": "cert.pem", "key": key}}), lines


@kind("pem-encrypted-pkcs8")
def _(rng: random.Random) -> tuple[str, list[str]]:
    body, lines = pem_body(rng, 1250)
    return (
        f"-----BEGIN ENCRYPTED PRIVATE KEY-----\n{body}\n-----END ENCRYPTED PRIVATE KEY-----",
        lines,
    )


@kind("openssh-private-key")
def _(rng: random.Random) -> tuple[str, list[str]]:
    raw = b"openssh-key-v1\x00" + bytes(rng.getrandbits(8) for _ in range(380))
    enc = b64(raw)
    lines = [enc[i : i + 70] for i in range(0, len(enc), 70)]
    body = "\n".join(lines)
    return f"$ cat ~/.ssh/id_ed25519\n-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----", [
        ln for ln in lines[1:] if len(ln) >= 12]  # fmt: skip


@kind("pgp-private-key")
def _(rng: random.Random) -> tuple[str, list[str]]:
    body, lines = pem_body(rng, 900)
    crc = "=" + s(rng, B64, 4)
    return (f"-----BEGIN PGP PRIVATE KEY BLOCK-----\nComment: ana@acme.io\n\n{body}\n{crc}\n"
            "-----END PGP PRIVATE KEY BLOCK-----"), lines  # fmt: skip


@kind("putty-private-key")
def _(rng: random.Random) -> tuple[str, list[str]]:
    pub, _ = pem_body(rng, 51)
    priv, lines = pem_body(rng, 240)
    return (f"PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: ana@laptop\nPublic-Lines: 2\n{pub}\n"
            f"Private-Lines: {len(lines)}\n{priv}\nPrivate-MAC: {s(rng, HEX, 64)}"), lines  # fmt: skip


@kind("ethereum-private-key")
def _(rng: random.Random) -> tuple[str, list[str]]:
    v = s(rng, HEX, 64)
    return f"PRIVATE_KEY=0x{v} npx hardhat run scripts/deploy.ts --network mainnet", frags(v)


@kind("ethereum-key-prose")
def _(rng: random.Random) -> tuple[str, list[str]]:
    v = "0x" + s(rng, HEX, 64)
    return f"The deployer wallet's private key is {v}, fund it before the migration.", frags(v[2:])


@kind("solana-keypair-json")
def _(rng: random.Random) -> tuple[str, list[str]]:
    nums = [rng.randint(0, 255) for _ in range(64)]
    arr = json.dumps(nums, separators=(",", ":"))
    return f"$ cat ~/.config/solana/id.json\n{arr}", [arr[1:40], arr[-40:-1]]


@kind("solana-base58-key")
def _(rng: random.Random) -> tuple[str, list[str]]:
    v = s(rng, B58, 88)
    return f"my Solana wallet secret key: {v}", frags(v)


@kind("bitcoin-wif")
def _(rng: random.Random) -> tuple[str, list[str]]:
    v = wif(rng)
    return f'bitcoin-cli importprivkey {v} "cold" false', frags(v)


@kind("bip39-mnemonic")
def _(rng: random.Random) -> tuple[str, list[str]]:
    words = (Path(__file__).parents[1] / "funes/secrets/bip39_english.txt").read_text().split()
    phrase = " ".join(rng.choice(words) for _ in range(rng.choice([12, 24])))
    return f"seed phrase for the treasury wallet:\n{phrase}", [phrase]


def b58check(payload: bytes) -> str:
    data = payload + hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4]
    n, out = int.from_bytes(data, "big"), ""
    while n:
        n, r = divmod(n, 58)
        out = B58[r] + out
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + out


def wif(rng: random.Random) -> str:
    """A compressed-key WIF (K or L…, 52 characters) with a valid checksum, as wallets export."""
    return b58check(b"\x80" + bytes(rng.getrandbits(8) for _ in range(32)) + b"\x01")


# --- connection URLs --------------------------------------------------------------------------

URL_PUNCT = "!$*()~-_."  # no '@', ':' or '/': a URL user writes them percent-encoded


@kind("connection-urls")
def _(rng: random.Random) -> tuple[str, list[str]]:
    lines, out = [], []
    for tpl in ("postgresql://app:{p}@db.acme.internal:5432/orders?sslmode=require",
                "postgres+psycopg2://app:{p}@10.0.3.7/orders",
                "mysql://root:{p}@127.0.0.1:3306/shop",
                "mongodb+srv://admin:{p}@cluster0.ab1cd.mongodb.net/?retryWrites=true&w=majority",
                "redis://:{p}@cache.acme.internal:6379/0",
                "rediss://default:{p}@eu1-relevant-ox-31.upstash.io:6379",
                "amqp://guest:{p}@rabbit.acme.internal:5672/%2F",
                "amqps://svc:{p}@b-1234.mq.eu-west-1.amazonaws.com:5671",
                "smtp://mailer:{p}@smtp.acme.io:587",
                "snowflake://etl:{p}@acme-xy12345/analytics/public"):  # fmt: skip
        p = password(rng, punct=URL_PUNCT)
        if rng.random() < 0.3:
            p = urllib.parse.quote(password(rng), safe="")
        lines.append(tpl.format(p=p))
        out += frags(p)
    return "\n".join(rng.sample(lines, len(lines))), out


@kind("jdbc-and-ado-strings")
def _(rng: random.Random) -> tuple[str, list[str]]:
    a, b, c = password(rng), password(rng), password(rng)
    text = (f"jdbc:postgresql://db:5432/app?user=app&password={a}&ssl=true\n"
            f"Server=tcp:acme.database.windows.net,1433;Database=app;User ID=sa;Password={b};Encrypt=True;\n"
            f"spring.datasource.password={c}")  # fmt: skip
    return text, [*frags(a), *frags(b), *frags(c)]


@kind("git-credentials")
def _(rng: random.Random) -> tuple[str, list[str]]:
    t = "glpat-" + s(rng, B64URL, 20)
    p = password(rng, punct=URL_PUNCT)
    return (
        f"$ cat ~/.git-credentials\nhttps://oauth2:{t}@gitlab.com\nhttps://ana:{p}@git.acme.io",
        [*frags(t), *frags(p)],
    )


@kind("kafka-jaas")
def _(rng: random.Random) -> tuple[str, list[str]]:
    p = password(rng, punct="#%&!@$*()[]{}^,;|<>~?+=")
    return (f'sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required '
            f'username="svc-orders" password="{p}";'), frags(p)  # fmt: skip


# --- assignments in config syntaxes -----------------------------------------------------------


@kind("dotenv-odd-punctuation")
def _(rng: random.Random) -> tuple[str, list[str]]:
    vals = [password(rng) for _ in range(4)]
    text = (f"DB_PASSWORD={vals[0]}\nREDIS_PASS=\"{vals[1]}\"\nexport SMTP_PASSWORD='{vals[2]}'\n"
            f"ADMIN_PASSWD = {vals[3]}  # rotate monthly")  # fmt: skip
    return text, [f for v in vals for f in frags(v)]


@kind("yaml-secrets")
def _(rng: random.Random) -> tuple[str, list[str]]:
    a, b, c = password(rng), password(rng), s(rng, ALNUM, 32)
    text = (f"database:\n  user: app\n  password: {a}\nsmtp:\n  password: '{b}'\n"
            f"api:\n  client_secret: \"{c}\"\n")  # fmt: skip
    return text, [*frags(a), *frags(b), *frags(c)]


@kind("toml-secrets")
def _(rng: random.Random) -> tuple[str, list[str]]:
    a, b = password(rng), s(rng, B64URL, 40)
    return f'[database]\nurl = "postgres://db/app"\npassword = \'{a}\'\n\n[api]\ntoken = "{b}"', [
        *frags(a),
        *frags(b),
    ]


@kind("json-secrets-escaped")
def _(rng: random.Random) -> tuple[str, list[str]]:
    a = password(rng, punct='"\\#%&!')
    b = s(rng, ALNUM, 36)
    return json.dumps({"db": {"password": a}, "apiKey": b, "secret_access_key": s(rng, B64, 40)}), [
        *frags(a),
        *frags(b),
    ]


@kind("ini-secrets")
def _(rng: random.Random) -> tuple[str, list[str]]:
    a, b = password(rng), password(rng)
    return f"[client]\nuser=root\npassword={a}\n\n[mysqldump]\npass = {b}\n", [*frags(a), *frags(b)]


@kind("xml-secrets")
def _(rng: random.Random) -> tuple[str, list[str]]:
    a = password(rng, punct="#%!@$*()[]{}^,;|~?+=")
    b = s(rng, ALNUM, 32)
    return (f"<server>\n  <id>nexus</id>\n  <username>deploy</username>\n  <password>{a}</password>\n</server>\n"
            f'<add key="ApiKey" value="{b}" />'), [*frags(a), *frags(b)]  # fmt: skip


@kind("code-assignments")
def _(rng: random.Random) -> tuple[str, list[str]]:
    a, b, c, d = password(rng), password(rng), s(rng, ALNUM, 40), password(rng)
    text = (f"define('DB_PASSWORD', '{a}');\nconst dbPassword = \"{b}\";\nclient = Client(api_key='{c}')\n"
            f"os.environ[\"PG_PASSWORD\"] = \"{d}\"")  # fmt: skip
    return text, [*frags(a), *frags(b), *frags(c), *frags(d)]


@kind("compose-and-hcl")
def _(rng: random.Random) -> tuple[str, list[str]]:
    a, b = password(rng), password(rng)
    text = (f"services:\n  db:\n    environment:\n      - POSTGRES_PASSWORD={a}\n"
            f'resource "aws_db_instance" "main" {{\n  password = "{b}"\n}}')  # fmt: skip
    return text, [*frags(a), *frags(b)]


@kind("netrc-pgpass")
def _(rng: random.Random) -> tuple[str, list[str]]:
    a, b = (
        password(rng, punct="#%&!@$*()[]{}^,;|<>~?+="),
        password(rng, punct="#%&!@$*()[]{}^,;|<>~?+="),
    )
    text = f"machine api.heroku.com\n  login ana@acme.io\n  password {a}\ndb.acme.internal:5432:orders:app:{b}"
    return text, [*frags(a), *frags(b)]


@kind("docker-config-auth")
def _(rng: random.Random) -> tuple[str, list[str]]:
    pw = password(rng)
    auth = b64(f"acmebot:{pw}".encode())
    return json.dumps({"auths": {"registry.acme.io": {"auth": auth}}}, indent=2), [
        *frags(auth),
        *frags(pw),
    ]


# --- CLI flags and headers --------------------------------------------------------------------


@kind("cli-password-flags")
def _(rng: random.Random) -> tuple[str, list[str]]:
    ps = [password(rng, punct="#%&!@$*()[]{}^,;|<>~?+=") for _ in range(7)]
    cmds = [f"mysql -h db -u root -p'{ps[0]}' shop",
            f"docker login -u deploy -p {ps[1]} registry.acme.io",
            f"mongosh --username admin --password '{ps[2]}' mongodb://db",
            f"redis-cli -h cache -a '{ps[3]}' ping",
            f"sshpass -p '{ps[4]}' ssh root@10.0.0.4",
            f"openssl pkcs12 -export -in c.pem -out c.p12 -passout pass:{ps[5]}",
            f"ldapsearch -x -D cn=admin,dc=acme -w '{ps[6]}' -b dc=acme"]  # fmt: skip
    return "\n".join(cmds), [f for p in ps for f in frags(p)]


@kind("cli-long-options")
def _(rng: random.Random) -> tuple[str, list[str]]:
    a, b, c = password(rng), s(rng, B64URL, 40), s(rng, ALNUM, 32)
    text = (f"./deploy --user admin --password={a} --region eu\n"
            f"acme-cli sync --token {b} --verbose\n"
            f"wget --user=ana --password {c} https://files.acme.io/dump.sql.gz")  # fmt: skip
    return text, [*frags(a), *frags(b), *frags(c)]


@kind("curl-user-pass")
def _(rng: random.Random) -> tuple[str, list[str]]:
    p = password(rng, punct="#%!$*()[]{}^,;|<>~?+=")
    return f"curl -u admin:{p} https://jenkins.acme.io/api/json", frags(p)


@kind("curl-headers")
def _(rng: random.Random) -> tuple[str, list[str]]:
    a, b, c = s(rng, ALNUM, 40), s(rng, B64URL, 48), s(rng, HEX, 40)
    text = (f"curl -H \"X-API-Key: {a}\" https://api.acme.io/v2/items\n"
            f"curl -H 'Authorization: Token {b}' https://api.acme.io/v1/\n"
            f"http GET api.acme.io/v1 'X-Vault-Token:{c}'")  # fmt: skip
    return text, [*frags(a), *frags(b), *frags(c)]


@kind("basic-auth-header")
def _(rng: random.Random) -> tuple[str, list[str]]:
    pw = password(rng)
    enc = b64(f"ana:{pw}".encode())
    return f"> GET /api HTTP/1.1\n> Host: acme.io\n> Authorization: Basic {enc}\n", [
        *frags(enc),
        *frags(pw),
    ]


@kind("json-login-body")
def _(rng: random.Random) -> tuple[str, list[str]]:
    pw = password(rng)
    body = json.dumps({"username": "ana", "password": pw})
    return (
        f"curl -X POST https://api.acme.io/login -H 'Content-Type: application/json' -d '{body}'",
        frags(pw),
    )


@kind("form-client-secret-urlencoded")
def _(rng: random.Random) -> tuple[str, list[str]]:
    cs = password(rng, punct="+/=~!*")
    enc = urllib.parse.quote(cs, safe="")
    return (
        f"POST /oauth/token\ngrant_type=client_credentials&client_id=acme-web&client_secret={enc}"
    ), frags(enc) + frags(cs)


@kind("kubectl-create-secret")
def _(rng: random.Random) -> tuple[str, list[str]]:
    p = password(rng)
    return (
        f"kubectl create secret generic db --from-literal=username=app --from-literal=password='{p}'",
        frags(p),
    )


# --- tool output ------------------------------------------------------------------------------


@kind("env-dump")
def _(rng: random.Random) -> tuple[str, list[str]]:
    vals = {"DATABASE_PASSWORD": password(rng), "SECRET_KEY": s(rng, B64URL, 50),
            "GITHUB_TOKEN": "ghs_" + s(rng, ALNUM, 36), "API_SECRET": s(rng, HEX, 48),
            "SESSION_SECRET": s(rng, ALNUM, 32), "JWT_SECRET": s(rng, B64, 44)}  # fmt: skip
    lines = ["$ env | sort", "HOME=/home/ana", "LANG=C.UTF-8", "PATH=/usr/local/bin:/usr/bin",
             *[f"{k}={v}" for k, v in vals.items()], "TERM=xterm-256color"]  # fmt: skip
    return "\n".join(lines), [f for v in vals.values() for f in frags(v)]


@kind("kubectl-get-secret-yaml")
def _(rng: random.Random) -> tuple[str, list[str]]:
    pw, tok = password(rng), s(rng, ALNUM, 40)
    d_pw, d_tok = b64(pw.encode()), b64(tok.encode())
    text = ("$ kubectl get secret app -o yaml\napiVersion: v1\ndata:\n"
            f"  password: {d_pw}\n  api-token: {d_tok}\n  username: YXBw\nkind: Secret\n"
            "metadata:\n  name: app\n  namespace: prod\ntype: Opaque")  # fmt: skip
    return text, [*frags(d_pw), *frags(d_tok), *frags(pw), *frags(tok)]


@kind("kubeconfig-client-key-data")
def _(rng: random.Random) -> tuple[str, list[str]]:
    body, lines = pem_body(rng, 1190)
    pem = f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----\n"
    enc = b64(pem.encode())
    tok = jwt(rng)
    text = ("users:\n- name: admin\n  user:\n    client-certificate-data: LS0tLS1CRUdJTi\n"
            f"    client-key-data: {enc}\n- name: sa\n  user:\n    token: {tok}")  # fmt: skip
    return text, [enc[40:80], enc[-60:-20], *lines[:2], *frags(tok.rsplit(".", 1)[1])]


@kind("docker-inspect-env")
def _(rng: random.Random) -> tuple[str, list[str]]:
    a, b = password(rng), s(rng, ALNUM, 40)
    doc = [{"Id": s(rng, HEX, 64), "Config": {"Env": [f"POSTGRES_PASSWORD={a}", f"API_KEY={b}",
                                                       "PATH=/usr/local/sbin:/usr/local/bin"]}}]  # fmt: skip
    return "$ docker inspect db\n" + json.dumps(doc, indent=4), [*frags(a), *frags(b)]


@kind("heroku-config-table")
def _(rng: random.Random) -> tuple[str, list[str]]:
    a, b = password(rng), s(rng, HEX, 64)
    return (f"$ heroku config -a acme\n=== acme Config Vars\nDATABASE_PASSWORD: {a}\n"
            f"SECRET_KEY_BASE:   {b}\nWEB_CONCURRENCY:   2"), [*frags(a), *frags(b)]  # fmt: skip


@kind("vault-kv-get-table")
def _(rng: random.Random) -> tuple[str, list[str]]:
    a, b = password(rng), s(rng, ALNUM, 32)
    return (f"$ vault kv get secret/app\n====== Data ======\nKey         Value\n---         -----\n"
            f"db_pass     {a}\napi_key     {b}"), [*frags(a), *frags(b)]  # fmt: skip


@kind("az-access-token-json")
def _(rng: random.Random) -> tuple[str, list[str]]:
    t = jwt(rng)
    doc = {
        "accessToken": t,
        "expiresOn": "2026-12-01 12:00:00.000000",
        "subscription": "x",
        "tokenType": "Bearer",
    }
    return "$ az account get-access-token\n" + json.dumps(doc, indent=2), frags(t.rsplit(".", 1)[1])


@kind("base64-pipe")
def _(rng: random.Random) -> tuple[str, list[str]]:
    sk = "sk_live_" + s(rng, ALNUM, 24)
    enc = b64(sk.encode())
    return f"echo {enc} | base64 -d > /tmp/key", [*frags(enc), *frags(sk)]


# --- prose, tables, fences, wrapping ----------------------------------------------------------

PROSE = [
    "the password is {v}", "use password {v} for the admin login", "our API key is {v}",
    "the token you need: {v}", "Here is the db password {v} — please keep it private",
    "le mot de passe de la base est {v}", "voici la clé d'API : {v}",
    "das Passwort lautet {v}", "Zugangsdaten: Benutzer admin, Passwort {v}",
    "la contraseña del servidor es {v}", "mi token de acceso es {v}",
    "a senha do banco é {v}", "o token de acesso é {v}",
    "数据库密码是{v}", "管理员密码：{v}", "API 密钥为 {v}",
    "パスワードは{v}です", "APIトークン：{v}",
    "пароль от базы {v}", "API ключ: {v}",
    "비밀번호는 {v} 입니다", "API 키: {v}",
    "la password è {v}", "het wachtwoord is {v}", "hasło to {v}", "şifre: {v}",
    "lösenordet är {v}", "كلمة المرور هي {v}", "पासवर्ड है {v}",
]  # fmt: skip


@kind("prose-password")
def _(rng: random.Random) -> tuple[str, list[str]]:
    lines, out = [], []
    for tpl in PROSE:
        v = s(rng, ALNUM, rng.randint(16, 24)) if rng.random() < 0.5 else password(rng)
        lines.append(tpl.format(v=v))
        out += frags(v)
    return "\n".join(lines), out


@kind("markdown-table")
def _(rng: random.Random) -> tuple[str, list[str]]:
    a, b, c = (
        password(rng, punct="#%&!@$*()[]{}^,;<>~?+="),
        "sk_live_" + s(rng, ALNUM, 24),
        s(rng, HEX, 32),
    )
    text = ("| service | user | secret |\n|---|---|---|\n"
            f"| postgres | app | {a} |\n| stripe | - | {b} |\n| datadog | - | `{c}` |")  # fmt: skip
    return text, [*frags(a), *frags(b), *frags(c)]


@kind("code-fence")
def _(rng: random.Random) -> tuple[str, list[str]]:
    a, b = password(rng), "ghp_" + s(rng, ALNUM, 36)
    return f"Put this in `.env`:\n\n```dotenv\nPOSTGRES_PASSWORD={a}\nGH_TOKEN={b}\n```\n", [
        *frags(a),
        *frags(b),
    ]


@kind("line-wrapped-token")
def _(rng: random.Random) -> tuple[str, list[str]]:
    v = "github_pat_" + s(rng, ALNUM, 22) + "_" + s(rng, ALNUM, 59)
    cut = rng.randint(30, len(v) - 20)
    return f"export GH_TOKEN={v[:cut]}\\\n{v[cut:]}\n", [v[:cut][-12:], v[cut:][:12], v[cut:][-10:]]


@kind("terminal-wrapped-key")
def _(rng: random.Random) -> tuple[str, list[str]]:
    v = "sk-ant-api03-" + s(rng, B64URL, 93) + "AA"
    w = 80 - len("ANTHROPIC_API_KEY=")
    return f"ANTHROPIC_API_KEY={v[:w]}\n{v[w:]}\n", [v[:w][-12:], v[w:][:12], v[w:][-12:]]


@kind("quoted-in-reply")
def _(rng: random.Random) -> tuple[str, list[str]]:
    v = password(rng)
    return f"> I set `DB_PASS` to `{v}` yesterday\nThat explains the auth failure.", frags(v)


def cases(rng: random.Random) -> list[Case]:
    """One case of every kind, with fresh random values."""
    out = []
    for name, fn in KINDS.items():
        text, fr = fn(rng)
        out.append((name, text, sorted(set(fr))))
    return out


def digest(value: str) -> str:
    """A short name for a value (never the value), for messages."""
    return hashlib.sha256(value.encode()).hexdigest()[:8]
