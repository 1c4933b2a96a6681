"""Issue 24's probe, regenerated: fake credentials of many kinds in many contexts — env
assignments, quotes, JSON, YAML, plain prose in nine languages, wrapped over two lines, base64'd,
with every punctuation character inside a password — written into transcripts of all four agents
(Claude Code, Codex, pi, Hermes), indexed with the real `funes index`; then no byte of the
memory directory and no output of recall, get, funes-query or the MCP tools holds any of them;
`funes scrub` cleans a memory written before the fix; the push gate keeps them home."""

from __future__ import annotations

import base64
import json
import random
import re
import sqlite3
import string
from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import run_cli, write_jsonl
from hubserver.helpers import Machine, hub
from hubserver.server import HubServer
from hypothesis import given, settings
from hypothesis import strategies as st

from funes.secrets import RULES_VERSION, redact

__all__ = ["hub"]

ALNUM = string.ascii_letters + string.digits
B64URL = ALNUM + "-_"
HEX = "0123456789abcdef"
B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
PUNCT = "#%([&),;|]{}<>"

# How a password, an API key, a token or a secret is named in prose, in each of the nine
# languages; `{v}` is the value
PROSE = {
    "en": ("the password is {v}", "the API key for staging is {v}", "the secret is {v}",
           "my access token: {v}"),
    "fr": ("le mot de passe est {v}", "la clé API est {v}", "le jeton est {v}",
           "la clé secrète est {v}"),
    "de": ("das Passwort ist {v}", "der API-Schlüssel lautet {v}", "das Kennwort ist {v}",
           "der Token ist {v}"),
    "es": ("la contraseña es {v}", "la clave de API es {v}", "el token es {v}",
           "la clave secreta es {v}"),
    "pt": ("a senha é {v}", "a chave da API é {v}", "o token é {v}", "a chave secreta é {v}"),
    "zh": ("密码是 {v}", "API密钥是{v}", "令牌是 {v}", "私钥为 {v}"),
    "ja": ("パスワードは {v} です", "APIキーは{v}です", "トークンは {v} です", "シークレットは {v}"),
    "ru": ("пароль: {v}", "API-ключ {v}", "токен: {v}", "секретный ключ — {v}"),
    "ko": ("비밀번호는 {v} 입니다", "API 키는 {v}입니다", "토큰은 {v} 입니다", "시크릿: {v}"),
}  # fmt: skip


def _s(rng: random.Random, alphabet: str, n: int) -> str:
    """Random characters of ``alphabet``; letters and digits both, when it has both."""
    mixed = any(c.isdigit() for c in alphabet) and any(c.isalpha() for c in alphabet)
    while True:
        v = "".join(rng.choice(alphabet) for _ in range(n))
        if not mixed or (any(c.isdigit() for c in v) and any(c.isalpha() for c in v)):
            return v


def password(rng: random.Random, punct: str | None = None) -> str:
    """A generated password with one punctuation character inside it."""
    return _s(rng, ALNUM, rng.randint(8, 11)) + (punct or rng.choice(PUNCT)) + _s(rng, ALNUM, 8)


def shaped(rng: random.Random) -> tuple[str, str]:
    """A provider token: (its prefix, its body of the provider's alphabet)."""
    return rng.choice(
        [
            lambda: ("ghp_", _s(rng, ALNUM, 36)),
            lambda: ("sk_live_", _s(rng, ALNUM, 32)),
            lambda: ("npm_", _s(rng, ALNUM, 36)),
            lambda: ("GOCSPX-", _s(rng, B64URL, 28)),
            lambda: ("xoxb-", _s(rng, string.digits, 12) + "-" + _s(rng, ALNUM, 24)),
            lambda: ("sk-ant-api03-", _s(rng, B64URL, 93) + "AA"),
        ]
    )()


def wrap(rng: random.Random) -> tuple[str, int]:
    """A provider token and where a terminal wraps it: past the prefix and 20 characters."""
    prefix, body = shaped(rng)
    return prefix + body, len(prefix) + rng.randint(20, len(body) - 6)


def probe(seed: int) -> list[tuple[str, str, list[str]]]:
    """(kind, text, fragments that must not survive) — one fresh value per context."""
    rng = random.Random(seed)
    out: list[tuple[str, str, list[str]]] = []

    def add(kind: str, text: str, value: str, *more: str) -> None:
        parts = [p for p in re.split(r"[^A-Za-z0-9_-]", value) if len(p) >= 6]
        out.append((kind, text, [value, *parts, *more]))

    for p in PUNCT:  # every punctuation character inside a password, in each place
        for ctx, form in (
            ("env", "DB_PASSWORD={v}"),
            ("quoted", 'DB_PASSWORD="{v}"'),
            ("json", None),
            ("yaml", "database:\n  password: {v}\n  host: db.internal"),
        ):
            v = password(rng, p)
            text = json.dumps({"password": v}) if form is None else form.format(v=v)
            add(f"password-{ctx}", text, v)
    v = password(rng, "#")
    add("docker-login", f"docker login -u deploy -p {v} registry.acme.io", v)
    for lang, labels in PROSE.items():  # each label, with a password or a generated key
        for n, label in enumerate(labels):
            v = rng.choice([password(rng), _s(rng, ALNUM, rng.choice([16, 20, 24, 32]))])
            add(f"prose-{lang}-{n}", label.format(v=v), v)
    v = _s(rng, HEX, 32)
    add("twilio-prose", f"the Twilio auth token is {v}", v)
    v = "00" + _s(rng, B64URL, 40)
    add("okta", f"curl -H 'Authorization: SSWS {v}' https://acme.okta.com/api/v1/users", v)
    v = "GOCSPX-" + _s(rng, B64URL, 28)
    add("gocspx", f"client_id: 123.apps.googleusercontent.com, secret {v}", v)
    hook = _s(rng, string.digits, 19) + "/" + _s(rng, B64URL, 68)
    add("discord-webhook", f"POST https://discord.com/api/webhooks/{hook}", hook)
    v = "0x" + _s(rng, HEX, 64)
    add("ethereum-key", f"my ethereum private key is {v}", v[2:])
    v = _s(rng, B58, 88)
    add("solana-key", f"Solana private key: {v}", v)
    arr = json.dumps(list(rng.randbytes(64)))
    add("solana-bytes", f"SOLANA_PRIVATE_KEY={arr}", arr, arr[1:40])
    for indent in ("", "    "):  # a token wrapped over two lines
        v, cut = wrap(rng)
        add("wrapped", f"here it is: {v[:cut]}\n{indent}{v[cut:]} — rotate it", v, v[:cut], v[cut:])
        v, cut = wrap(rng)
        add("wrapped-env", f"export API_TOKEN={v[:cut]}\n{indent}{v[cut:]}\n", v, v[cut:])
    v = password(rng)
    add("netrc", f"machine api.acme.io login deploy password {v}", v)
    v = password(rng, "#")
    add("netrc-lines", f"machine git.acme.io\n  login ci\n  password {v}\n", v)
    v = password(rng, "#")
    add("pgpass", f"$ cat ~/.pgpass\ndb.acme.io:5432:appdb:app:{v}", v)
    v = password(rng, "#")
    enc = v.replace("#", "%23")
    add("urlencoded", f'data = "grant_type=client_credentials&client_secret={enc}"', enc, v)
    v = _s(rng, ALNUM, 20)
    add("urlencoded-form", f"body: grant_type%3Dclient_credentials%26client_secret%3D{v}", v)
    v = "".join(shaped(rng))
    b = base64.b64encode(v.encode()).decode()
    add("base64", f"echo {b} | base64 -d", v, b)
    pem = (
        "-----BEGIN RSA PRIVATE KEY-----\n"
        + base64.b64encode(rng.randbytes(600)).decode()
        + "\n-----END RSA PRIVATE KEY-----\n"
    )
    b = base64.b64encode(pem.encode()).decode()
    add("kubeconfig", f"users:\n- name: admin\n  user:\n    client-key-data: {b}\n", b, b[:60])
    return out


def leaks(data: bytes, frags: list[str]) -> bool:
    return any(
        f.encode() in data or json.dumps(f)[1:-1].encode() in data or json.dumps(f).encode() in data
        for f in frags
    )


# --- the detectors, on every generated shape ------------------------------------------------


# derandomize: the same 25 seeds every run. Random draws (`derandomize=False` and
# `--hypothesis-seed`) still miss about 1 value in 10,000: a placeholder word inside a random
# value (`…YourSNb2t…`, `…XXXX…`), a value that reads as run-together words with one number
# (`hmavUof9Dkiawzou`), entropy under 3 bits, a token of no fixed length wrapped before a line
# of letters of one case (`sk_live_…\nlkjtlf`, a word or the token's end).
@given(st.integers(0, 2**32 - 1))
@settings(max_examples=25, deadline=None, derandomize=True)
def test_redaction_removes_every_generated_credential(seed: int) -> None:
    missed = [kind for kind, text, frags in probe(seed) if leaks(redact(text).encode(), frags)]
    assert missed == []


# Values a random draw once found spared: too little entropy for the prose rule's old 3.5 bits
# (seed 536), words-run-together or a call (`boglhan0[`) in a random value, a fixed-length token
# wrapped before a line of one case.
@pytest.mark.parametrize(
    "value", ["33UaHcSV&aI3a6IY1", "Acamxn0ElmnnG17YepnJ", "GENkt7EAHatE6RARGsaN"]
)
@pytest.mark.parametrize("label", [lb for labels in PROSE.values() for lb in labels])
def test_a_value_labelled_in_prose_with_a_credentials_mix_is_redacted(
    label: str, value: str
) -> None:
    text = label.format(v=value)
    out = redact(text)
    assert value not in out and "[REDACTED:" in out
    assert out.replace(out[out.index("[REDACTED:") : out.index("]") + 1], value) == text


@pytest.mark.parametrize(
    "text, value",
    [
        ("DB_PASSWORD=boglhan0[SwEOl1q0", "SwEOl1q0"),
        ('DB_PASSWORD="4esmn4wuzst)v2RSYogh"', "4esmn4wuzst"),
        ("password: rxmsito9<Zl2UTUr1", "Zl2UTUr1"),
        ("export API_TOKEN=GOCSPX-I34yXFlikHBPeTWlUHQINd\n    ULNPFC\n", "ULNPFC"),
        ("here it is: npm_UuHBLEpx5RAjyQPMZyPIhyfwFlYaB6\nGZRIIB — rotate it", "GZRIIB"),
    ],
)
def test_random_values_that_once_passed_for_code_or_words_are_redacted(
    text: str, value: str
) -> None:
    assert value not in redact(text)


def test_a_word_on_the_line_after_a_whole_token_is_kept() -> None:
    token = "ghp_" + _s(random.Random(5), ALNUM, 36)
    for word in ("done", "PASS", "ok_go"):
        assert redact(f"{token}\n{word}\n") == f"[REDACTED:github-pat]\n{word}\n"


def test_the_probe_texts_carry_their_values_before_redaction() -> None:
    for kind, text, frags in probe(7):
        assert leaks(text.encode(), frags), kind


# --- four agents' transcripts, indexed and served -------------------------------------------

NOTE = "deploy notes for the acme staging cluster"


def write_transcripts(home: Path, texts: list[str]) -> list[Path]:
    """The texts dealt round-robin into a Claude Code, a Codex, a pi and a Hermes session."""
    dealt = [texts[i::4] for i in range(4)]
    ts = "2026-11-30T10:{:02d}:00.000Z"
    claude, recs, parent = "7e1f0d4c-0000-4000-8000-000000000024", [], None
    for n, t in enumerate(dealt[0]):
        uuid = f"7e1f0d4c-turn-{n:04d}"
        role = "user" if n % 2 == 0 else "assistant"
        content = t if role == "user" else [{"type": "text", "text": t}]
        recs.append({"type": role, "uuid": uuid, "parentUuid": parent, "sessionId": claude,
                     "timestamp": ts.format(n), "cwd": "/home/ana/acme",
                     "message": {"role": role, "content": content}})  # fmt: skip
        parent = uuid
    recs.append('{"type": "assistant", "truncated')  # a malformed last line
    paths = [write_jsonl(home / ".claude/projects/-home-ana-acme" / f"{claude}.jsonl", recs)]
    codex = [{"timestamp": ts.format(0), "type": "session_meta",
              "payload": {"id": "0190aa-24", "cwd": "/home/ana/acme", "cli_version": "0.141.0"}}]  # fmt: skip
    for n, t in enumerate(dealt[1]):
        codex.append({"timestamp": ts.format(n + 1), "type": "response_item",
                      "payload": {"type": "message", "role": "user" if n % 2 else "assistant",
                                  "content": [{"type": "input_text", "text": t}]}})  # fmt: skip
    paths.append(write_jsonl(home / ".codex/sessions/2026/11/30/rollout-24.jsonl", codex))
    pi = [{"type": "session", "version": 3, "id": "pi-24", "timestamp": ts.format(0),
           "cwd": "/home/ana/acme"}]  # fmt: skip
    prev = None
    for n, t in enumerate(dealt[2]):
        pi.append({"type": "message", "id": f"p{n}", "parentId": prev, "timestamp": ts.format(n),
                   "message": {"role": "user" if n % 2 == 0 else "assistant",
                               "content": [{"type": "text", "text": t}]}})  # fmt: skip
        prev = f"p{n}"
    paths.append(write_jsonl(home / ".pi/agent/sessions/--home-ana-acme--/pi-24.jsonl", pi))
    db = home / ".hermes" / "state.db"
    db.parent.mkdir(parents=True)
    conn = sqlite3.connect(db)
    schema = (Path(__file__).parent / "fixtures" / "hermes" / "schema.sql").read_text()
    conn.executescript(schema)
    conn.execute("INSERT INTO sessions (id, cwd) VALUES ('20261130_100000_h24', '/home/ana/acme')")
    for n, t in enumerate(dealt[3]):
        when = datetime(2026, 11, 30, 10, n, tzinfo=UTC).timestamp()
        conn.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
            ("20261130_100000_h24", "user" if n % 2 == 0 else "assistant", t, when),
        )
    conn.commit()
    conn.close()
    paths.append(db)
    return paths


def dir_leaks(root: Path, frags: list[str]) -> list[str]:
    return [
        str(f.relative_to(root))
        for f in sorted(root.rglob("*"))
        if f.is_file() and leaks(f.read_bytes(), frags)
    ]


QUERIES = ("password api key", "deploy notes acme staging", "token secret", "machine login",
           "docker login registry", "base64 client-key-data", "private key wallet")  # fmt: skip


def served(mem: Path) -> bytes:
    """Everything a user or an agent can be shown: recall (agent and JSON), funes-query, get on
    every session (agent and human), and the MCP tools."""
    from funes import mcp_server

    out: list[bytes] = []
    turns: set[tuple[str, str]] = set()
    for q in QUERIES[:3]:
        for extra in ((), ("--json",)):
            r = run_cli("funes", "recall", q, "-k", "40", "--memory", mem, *extra)
            assert r.returncode == 0, r.stderr
            out.append(r.stdout + r.stderr)
    batch = "".join(json.dumps({"query": q, "k": 60, "neighbors": 2}) + "\n" for q in QUERIES)
    r = run_cli("funes-query", "--memory", mem, input=batch)
    assert r.returncode == 0, r.stderr
    out.append(r.stdout + r.stderr)
    for line in r.stdout.decode().splitlines():
        hit = json.loads(line)
        if hit.get("session_id"):
            turns.add((hit["session_id"], hit["turn_uuid"]))
    sessions = {s: t for s, t in sorted(turns)}
    assert len(sessions) == 4, sessions  # every agent's session is in the memory
    memories = mcp_server.Memories(str(mem))
    for sid, tid in sessions.items():
        for fmt in ("agent", "human"):
            g = run_cli("funes", "get", sid, tid, "--window", "500", "--format", fmt,
                        "--memory", mem)  # fmt: skip
            assert g.returncode == 0, g.stderr
            out.append(g.stdout + g.stderr)
        out.append(mcp_server.get(memories, sid, tid, 500).encode())
    for q in QUERIES:
        out.append(mcp_server.recall(memories, q, k=30).encode())
    return b"\n".join(out)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Path], list[str], list[str]]:
    home = tmp_path_factory.mktemp("probe-home")
    cases = probe(24)
    texts = [f"{NOTE} ({kind}): {text}" for kind, text, _ in cases]
    frags = [f for _, _, fs in cases for f in fs]
    return write_transcripts(home, texts), texts, frags


@pytest.mark.slow
def test_indexed_probe_leaves_no_value_on_disk_or_in_any_output(
    corpus: tuple[list[Path], list[str], list[str]], tmp_path: Path, private_home: Path
) -> None:
    paths, _, frags = corpus
    mem = tmp_path / "mem"
    r = run_cli("funes", "index", *paths, "--yes", "--no-embed", "--memory", mem)
    assert r.returncode == 0, r.stderr
    assert not leaks(r.stdout + r.stderr, frags)
    assert dir_leaks(mem, frags) == []  # LanceDB files, lexical index, stamp: raw bytes
    out = served(mem)
    assert b"[REDACTED:" in out and NOTE.encode() in out
    assert not leaks(out, frags)


@pytest.mark.slow
def test_scrub_cleans_a_memory_written_before_the_fix(
    corpus: tuple[list[Path], list[str], list[str]], tmp_path: Path, private_home: Path
) -> None:
    paths, _, frags = corpus
    mem = tmp_path / "old"
    parsed = run_cli("funes-parse", *paths)
    chunks = run_cli("funes-chunk", "--no-redact", input=parsed.stdout)
    assert run_cli("funes-write", "--memory", mem, input=chunks.stdout).returncode == 0
    # the stamp an index by the previous rules would have left
    stamp = {"format": 1, "ingest": {"detectors": "builtin", "rules": str(int(RULES_VERSION) - 1)}}
    (mem / "redaction.json").write_text(json.dumps(stamp))
    stored = b"".join(f.read_bytes() for f in (mem / "chunks.lance").rglob("*") if f.is_file())
    assert leaks(stored, frags)  # the old memory holds them
    assert not leaks(served(mem), frags)  # masked when served meanwhile
    r = run_cli("funes", "scrub", "--builtin-only", "--memory", mem)
    assert r.returncode == 0, r.stderr
    assert not leaks(r.stdout + r.stderr, frags)
    assert dir_leaks(mem, frags) == []
    assert json.loads((mem / "redaction.json").read_text())["scrub"]["rules"] == RULES_VERSION


@pytest.mark.slow
@pytest.mark.needs_scanner
def test_the_push_gate_keeps_every_probe_value_home(
    corpus: tuple[list[Path], list[str], list[str]], hub: HubServer, tmp_path: Path
) -> None:
    paths, _, frags = corpus
    ana = Machine(tmp_path / "ana", hub)
    parsed = ana.run("funes-parse", *paths)
    turns = [json.loads(line) for line in parsed.stdout.decode().splitlines()]
    clean = dict(turns[0], turn_uuid="clean-1", seq=999, blocks=[
        {"type": "text", "text": "a clean note: the lemur cache keeps 256 entries"}])  # fmt: skip
    ana.index([*turns, clean])
    r = ana.funes("push", "ana/kb", "--create")
    assert r.returncode == 0, r.stderr
    assert "held back" in r.stdout
    blob = b"\n".join(hub.files("ana/kb").values())
    assert not leaks(blob, frags)
    assert not leaks((r.stdout + r.stderr).encode(), frags)
