"""The provider table and the detectors issue 17 asked for: every row found where it shows
up and not on its near misses, the gitleaks default rule set covered, wallet secrets told from
public addresses, credentials on command lines and in prose found, public identifiers left
alone."""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
from pathlib import Path

import pytest
from conftest import REPO, load_bench_secrets

from funes.secrets import DETECTORS, find, redact
from funes.secrets.providers import (
    GITLEAKS_DEFAULT,
    NAMED,
    PROVIDERS,
    Named,
    Provider,
    gitleaks_coverage,
)

bench = load_bench_secrets()
RNG = random.Random(17)


def names(text: str) -> list[str]:
    return [f.detector for f in find(text)]


def minimal(pattern: str) -> str:
    """The shortest string ``pattern`` matches, letters drawn at random (repeats at their
    minimum)."""
    import re._constants as c
    import re._parser as sp

    rng = random.Random(3)

    def walk(seq: object) -> str:
        out = []
        for op, av in seq:  # type: ignore[attr-defined]
            if op is c.LITERAL:
                out.append(chr(av))
            elif op is c.IN:
                out.append(bench.sample(_class(av), rng))
            elif op in (c.MAX_REPEAT, c.MIN_REPEAT):
                out.extend(walk(av[2]) for _ in range(av[0]))
            elif op is c.SUBPATTERN:
                out.append(walk(av[3]))
            elif op is c.BRANCH:
                out.append(walk(av[1][0]))
        return "".join(out)

    return walk(sp.parse(pattern))


def _class(items: object) -> str:
    """A regex of one character class, rebuilt from its parsed items."""
    import re._constants as c

    parts = []
    for op, av in items:  # type: ignore[attr-defined]
        if op is c.LITERAL:
            parts.append(re.escape(chr(av)))
        elif op is c.RANGE:
            parts.append(f"{re.escape(chr(av[0]))}-{re.escape(chr(av[1]))}")
        elif op is c.CATEGORY:
            parts.append(r"\d" if av is c.CATEGORY_DIGIT else r"\w")
    return "[" + "".join(parts) + "]"


def positive(row: Provider, rng: random.Random = RNG) -> str:
    while True:
        value = rng.choice(row.prefixes) + bench.sample(row.body, rng)
        if "xxx" not in value.lower():
            return value


# --- the table: every row, positives and near misses ---------------------------------------


def _rows() -> list[Provider]:
    return [p for p in PROVIDERS if p.prefixes[0]]  # prefix-less rows are checked below


@pytest.mark.parametrize("row", _rows(), ids=lambda p: f"{p.detector}:{p.prefixes[0]}")
def test_provider_row_finds_its_token_in_prose_assignment_and_escaped_json(row: Provider) -> None:
    value = positive(row)
    for text in (
        f"the token is {value} — rotate it",
        f"export {row.detector.upper().replace('-', '_')}={value}",
        json.dumps({"command": f"echo ok\n{value}\n"}),
    ):
        found = find(text)
        assert row.detector in [f.detector for f in found], (row.detector, text[:20])
        assert value not in redact(text)


@pytest.mark.parametrize("row", _rows(), ids=lambda p: f"{p.detector}:{p.prefixes[0]}")
def test_provider_row_near_misses_are_not_its_token(row: Provider) -> None:
    prefix = row.prefixes[0]
    body = minimal(row.body)
    short = prefix + body[:-1]  # one character short of the shortest token
    placeholder = prefix + "x" * len(body)
    bare_prefix = f"tokens of this kind start with {prefix} and then random characters"
    siblings = [
        r for r in PROVIDERS if r.detector == row.detector and r is not row and r.prefixes[0]
    ]
    if not any(re.search(f"(?:{'|'.join(map(re.escape, r.prefixes))}){r.body}", short)
               for r in siblings):  # fmt: skip
        assert row.detector not in names(f"the token is {short} — rotate it"), short[:12]
    assert row.detector not in names(f"the token is {placeholder}.")
    assert row.detector not in names(bare_prefix)


def _named_value(row: Named, rng: random.Random = RNG) -> str:
    from funes.secrets.detectors import entropy

    while True:
        v = bench.sample(row.value, rng)
        if entropy(v) >= 3.2 and "xxx" not in v.lower():
            return v


@pytest.mark.parametrize("row", NAMED, ids=lambda n: n.detector)
def test_named_row_takes_its_name_from_the_keyword_and_leaves_unnamed_values_alone(
    row: Named,
) -> None:
    value = _named_value(row)
    key = bench._named_name(row.detector, row.keywords[0])
    for text in (f"{key}={value}", f'"{key.lower()}": "{value}"', f"export {key}='{value}'"):
        assert row.detector in names(text), (row.detector, text[:30])
    # the same value under a name that says nothing, and a placeholder under the right name
    assert names(f"BUILD_NUMBER={value}") == []
    assert names(f"{key}={'x' * len(value)}") == []


def test_prefix_less_rows_are_found_by_their_inner_marker() -> None:
    mailchimp = "".join(RNG.choice("0123456789abcdef") for _ in range(32)) + "-us14"
    terraform = "abcdefgh123456.atlasv1." + "".join(
        RNG.choice("ABCdef0123456789") for _ in range(64)
    )
    dropbox = (
        "Ab3dE5fG7hJ" + "A" * 10 + "".join(RNG.choice("ABCdef0123456789-_") for _ in range(43))
    )
    for value, detector in (
        (mailchimp, "mailchimp-api-key"),
        (terraform, "terraform-cloud-token"),
        (dropbox, "dropbox-long-lived-token"),
    ):
        assert names(f"the key is {value} here") == [detector]
    assert names("a hash abc123def4567890abc123def4567890-us1x") == []  # not `-usN` at the end


def test_every_detector_has_a_fake_of_its_kind_in_the_bench() -> None:
    assert {k.detector for k in bench.KINDS} == set(DETECTORS)
    assert len(DETECTORS) >= 150


def test_the_table_covers_every_gitleaks_default_rule_or_says_why_not() -> None:
    coverage = gitleaks_coverage()
    assert len(GITLEAKS_DEFAULT) == 222 and set(coverage) == set(GITLEAKS_DEFAULT)
    assert [rule for rule, how in coverage.items() if not how] == []
    covered = [how for how in coverage.values() if not how.startswith("left alone")]
    assert set(covered) <= set(DETECTORS)
    assert len(covered) >= 200


def test_no_table_row_copies_gitleaks_pattern_text() -> None:
    # A reminder of the licence line: our bodies are written from the token formats. Their
    # patterns use classes like `[A-Za-z0-9]`, gitleaks' use `(?i)` and `\b…(?:[\x60'"\s;]|\\[nr]|$)`.
    for row in PROVIDERS:
        assert "(?i)" not in row.body and "\\x60" not in row.body


# --- the kinds issue 17 found leaking --------------------------------------------------------


def test_http_basic_credentials_are_found_and_other_basic_words_are_not() -> None:
    cred = base64.b64encode(b"deploy:S3cr3t-Passw0rd").decode()
    assert names(f"Authorization: Basic {cred}") == ["http-basic-auth"]
    assert names(f'curl -H "authorization: basic {cred}" https://x') == ["http-basic-auth"]
    not_a_pair = base64.b64encode(b"just some bytes here").decode()
    for text in (
        f"Authorization: Basic {not_a_pair}",
        'WWW-Authenticate: Basic realm="registry"',
        "Basic authentication is enabled on the staging server",
        "basic usage: funes recall QUERY",
    ):
        assert names(text) == [], text


@pytest.mark.parametrize(
    "line",
    [
        "docker login -u ci-bot -p Zq8rT2vLw9Kx registry.example.com",
        "docker login --username ci --password Zq8rT2vLw9Kx ghcr.io",
        "mysql -h db -u app --password=Zq8rT2vLw9Kx app_prod",
        "pg_dump --db-password 'Zq8rT2vLw9Kx' main",
        "curl -su admin:Zq8rT2vLw9Kx https://jenkins.example.com/api/json",
        "sshpass -p Zq8rT2vLw9Kx ssh deploy@10.0.0.7",
        "mysql -u root -pZq8rT2vLw9Kx -e 'select 1'",
    ],
)
def test_passwords_on_a_command_line_are_redacted(line: str) -> None:
    assert "cli-password" in names(line)
    assert "Zq8rT2vLw9Kx" not in redact(line)


@pytest.mark.parametrize(
    "line",
    [
        "echo $TOKEN | docker login -u ci --password-stdin ghcr.io",
        "docker run -p 8080:80 nginx",
        'docker login -u ci -p "$REGISTRY_PASSWORD" ghcr.io',
        "mysql -u root -p app   # prompts for the password",
        "git push -u origin main",
        "curl -u $USER:$PASS https://x",
        "--password secret",
        "use --password-file ~/.pgpass instead",
    ],
)
def test_password_flags_without_a_literal_password_are_left_alone(line: str) -> None:
    assert names(line) == [], line


def test_azure_sas_signature_is_redacted_with_and_without_a_question_mark() -> None:
    sig = "k2Xb9%2BqL8vT4mN7pR1sW3yZ6aC0dE5fG8hJ2kL4nP7Q%3D"
    url = f"https://acct.blob.core.windows.net/c/f.txt?sv=2022-11-02&ss=b&sp=r&sig={sig}"
    conn = f"BlobEndpoint=https://acct.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&ss=b&sig={sig}"
    for text in (url, conn, f"the SAS token is sv=2022-11-02&sr=b&sig={sig}"):
        assert sig not in redact(text), text[:40]


def _stellar_seed(rng: random.Random) -> str:
    return bench._stellar_seed(rng)


def test_stellar_secret_seed_is_found_and_its_public_key_and_a_bad_checksum_are_not() -> None:
    seed = _stellar_seed(random.Random(1))
    assert names(f"stellar seed {seed} — keep it safe") == ["stellar-secret-seed"]
    assert names(f"STELLAR_SECRET={seed}") == ["stellar-secret-seed"]
    broken = seed[:-1] + ("A" if seed[-1] != "A" else "B")
    public = "G" + seed[1:]  # right alphabet and length, not a seed
    assert names(f"stellar seed {broken} — keep it safe") == []
    assert names(f"account {public} received 10 XLM") == []


def test_bitcoin_private_keys_are_found_and_addresses_are_not() -> None:
    rng = random.Random(2)
    wif = bench._b58check(b"\x80" + rng.randbytes(32) + b"\x01")
    xprv = bench._b58check(bytes.fromhex("0488ade4") + rng.randbytes(74))
    xpub = bench._b58check(bytes.fromhex("0488b21e") + rng.randbytes(74))
    assert names(f"import the key {wif} into the wallet") == ["bitcoin-private-key"]
    assert names(f"the master key {xprv} derives all") == ["bip32-extended-private-key"]
    assert names(f"watch-only {xpub}") == []
    corrupt = wif[:-2] + ("11" if wif[-2:] != "11" else "22")
    assert names(f"import the key {corrupt} into the wallet") == []


def test_a_bip39_mnemonic_near_its_label_is_redacted_whole() -> None:
    from funes.secrets.crypto import bip39_words

    words = sorted(bip39_words() - {"seed", "phrase", "wallet"})  # no label inside the phrase
    rng = random.Random(3)
    phrase = " ".join(rng.choice(words) for _ in range(12))
    numbered = "\n".join(f"{i}. {w}" for i, w in enumerate(phrase.split(), 1))
    for text in (
        f"my seed phrase is {phrase}, please keep it",
        f"Wallet recovery words:\n{numbered}\n",
        json.dumps({"mnemonic": phrase}),
    ):
        out = redact(text)
        assert "[REDACTED:bip39-mnemonic]" in out, text[:30]
        assert not any(w in out.split() for w in phrase.split()[1:-1] if len(w) > 5)
    eleven = " ".join(phrase.split()[:11])
    assert names(f"my seed phrase is {eleven} — do not share it") == []
    # the same words with nothing saying they are a seed: ordinary text
    assert names(f"notes: {phrase}") == []


@pytest.mark.parametrize(
    "text",
    [
        "API key `a8F3kL9mQ2xR7tY4wZ1bC6dE0gH5jN8p` from the dashboard",
        "**Secret Key**: `Zm9vYmFyMTIzNDU2Nzg5MGFiY2RlZmdo`",
        "the user's provided key (`k9Qm2XrT7vB4nL8wZ3pF6hJ1sD5gA0cE`)",
        "token is 'Tq3vW8zX1bN6mK4pL9sR2yH7cF5gD0aJ'",
        "her password: “Xk2p9Qv7Lr4Tz8Wm3Ns6”",
    ],
)
def test_a_labelled_value_in_prose_is_redacted(text: str) -> None:
    assert names(text) == ["labelled-value"], text
    value = re.findall(r"[A-Za-z0-9]{20,}", text)[0]
    assert value not in redact(text)


@pytest.mark.parametrize(
    "text",
    [
        "the key `MAX_CHARS` sets the split length",
        "key `src/funes/store/lexical.py` holds the index",
        "the token `chunk_id_v2` is deprecated",
        "the secret (`os.environ['API_KEY']`) is read at start",
        "password: `<your-password>`",
        "the key `test_kill_9_during_scrub_leaves_nothing` is long",
        "API key `sk-...` goes here",
    ],
)
def test_labelled_names_paths_and_placeholders_are_left_alone(text: str) -> None:
    assert names(text) == [], text


# --- precision: public identifiers ---------------------------------------------------------


def _public_identifiers(rng: random.Random) -> list[str]:
    hexs = lambda n: "".join(rng.choice("0123456789abcdef") for _ in range(n))  # noqa: E731
    b58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
    sha = hexs(40)
    uuid = f"{hexs(8)}-{hexs(4)}-4{hexs(3)}-a{hexs(3)}-{hexs(12)}"
    btc_legacy = bench._b58check(b"\x00" + rng.randbytes(20))
    btc_p2sh = bench._b58check(b"\x05" + rng.randbytes(20))
    eth = "0x" + hexs(40)
    sol = "".join(rng.choice(b58) for _ in range(44))
    stellar_pub = "G" + _stellar_seed(rng)[1:]
    bech32 = "bc1q" + "".join(rng.choice("qpzry9x8gf2tvdw0s3jn54khce6mua7l") for _ in range(38))
    return [
        f"commit {sha}\nAuthor: Ana <ana@example.com>",
        f"git checkout {sha[:12]} && git cherry-pick {sha}",
        f"the fix landed in `{sha}`",
        f"session_id: {uuid}\nrequest {uuid} took 20 ms",
        f"the session key `{uuid}` identifies the run",
        f"send 0.1 BTC to {btc_legacy} or {btc_p2sh} or {bech32}",
        f"wallet address: `{eth}`",
        f"ETH_ADDRESS={eth}",
        f"the Solana account {sol} holds the mint authority",
        f"public key: {sol}",
        f"Stellar account {stellar_pub}",
        f"sha256:{hexs(64)}  dist/funes-0.1.0-py3-none-any.whl",
        f"docker pull python@sha256:{hexs(64)}",
        f"integrity sha512-{base64.b64encode(rng.randbytes(64)).decode()}",
        f'etag W/"{hexs(32)}"',
        "https://github.com/org/repo/pull/1234/files#diff-" + hexs(64),
        f"{hashlib.md5(b'x').hexdigest()}  file.tar.gz",
    ]


def test_git_shas_uuids_hashes_and_public_wallet_addresses_are_never_redacted() -> None:
    rng = random.Random(9)
    for _ in range(20):
        for text in _public_identifiers(rng):
            assert names(text) == [], text


def test_the_bip39_word_list_is_the_published_one() -> None:
    data = (Path(REPO) / "funes" / "secrets" / "bip39_english.txt").read_bytes()
    assert hashlib.sha256(data).hexdigest() == (
        "2f5eed53a4727b4bf8880d8f3f199efc90e58503646d9ff8eff3a2ed3b24dbda"
    )
