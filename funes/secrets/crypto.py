"""Wallet secrets: checks that tell a private key or seed from a public address of the same look.

Each check decodes the candidate and verifies the checksum its format carries, so a random
string of the right alphabet and length is not taken for a key (and a public address — a
Stellar ``G…`` account, a Bitcoin address — never is: their version bytes differ).

- Stellar secret seeds: ``S`` + 55 base32 characters; version byte 18 << 3, CRC16-XModem.
- Bitcoin WIF private keys (``5…``, ``K…``, ``L…``) and BIP32 extended private keys
  (``xprv``/``tprv``/``yprv``/``zprv``…): Base58Check (double SHA-256).
- BIP39 mnemonics: a run of 12–24 words of the BIP39 English list (the list ships with funes:
  ``bip39_english.txt``, from trezor/python-mnemonic 0.21, MIT, identical to BIP-0039's
  ``english.txt``, sha256 2f5eed53…dbda).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from functools import cache
from pathlib import Path

# --- Stellar -------------------------------------------------------------------------------

_STELLAR_SEED_VERSION = 18 << 3


def _crc16_xmodem(data: bytes) -> int:
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def stellar_seed(value: str) -> bool:
    """``value`` is a Stellar secret seed (``S…``, 56 characters) with a valid checksum."""
    if len(value) != 56 or value[0] != "S":
        return False
    try:
        raw = base64.b32decode(value)
    except (binascii.Error, ValueError):
        return False
    if len(raw) != 35 or raw[0] != _STELLAR_SEED_VERSION:
        return False
    return _crc16_xmodem(raw[:-2]) == int.from_bytes(raw[-2:], "little")


# --- Base58Check ----------------------------------------------------------------------------

_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_B58_INDEX = {c: i for i, c in enumerate(_B58)}


def b58decode_check(value: str) -> bytes | None:
    """The payload of a Base58Check string, or None when it is not one."""
    n = 0
    for c in value:
        i = _B58_INDEX.get(c)
        if i is None:
            return None
        n = n * 58 + i
    raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
    raw = b"\0" * (len(value) - len(value.lstrip("1"))) + raw
    if len(raw) < 5:
        return None
    payload, check = raw[:-4], raw[-4:]
    if hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4] != check:
        return None
    return payload


def bitcoin_wif(value: str) -> bool:
    """A Wallet Import Format private key (mainnet 0x80 or testnet 0xEF)."""
    payload = b58decode_check(value)
    if payload is None or payload[0] not in (0x80, 0xEF):
        return False
    return len(payload) == 33 or (len(payload) == 34 and payload[-1] == 1)


_XPRV_VERSIONS = {
    bytes.fromhex(h)
    for h in ("0488ade4", "04358394", "049d7878", "04b2430c", "0295b005", "02575048")
}


def extended_private_key(value: str) -> bool:
    """A BIP32 extended private key (xprv, tprv, yprv, zprv, Yprv, Zprv)."""
    payload = b58decode_check(value)
    return payload is not None and len(payload) == 78 and payload[:4] in _XPRV_VERSIONS


# --- BIP39 ------------------------------------------------------------------------------------


@cache
def bip39_words() -> frozenset[str]:
    # Read beside this file (package data, installed as a file): importlib.resources would
    # pull zipfile, shutil, lzma, bz2 and tempfile into `funes get`, which masks a memory
    # stamped with older rules through these detectors.
    text = Path(__file__).with_name("bip39_english.txt").read_text("utf-8")
    words = frozenset(text.split())
    assert len(words) == 2048, "the BIP39 English list has 2,048 words"
    return words


MNEMONIC_LENGTHS = (12, 15, 18, 21, 24)
_RUN_OF_SHORTEST = b"\x01" * MNEMONIC_LENGTHS[0]
_WORD = re.compile(r"[a-z]+")
# What may stand between two words of a written-out mnemonic: spaces, commas, line breaks,
# quotes, list numbering (`1. abandon 2. ability`), JSON escapes of a newline.
_GAP = re.compile(r"(?:[\s,;\"'`|*\-]|\\[nrt]|\d{1,2}[.):]?)*")


def mnemonic_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Spans of ``text[start:end]`` (lowercased text) holding 12 or more BIP39 words in a row,
    with nothing but separators and numbering between them."""
    words = bip39_words()
    end = len(text) if end is None else end
    # a run is that many words in a row of the list: one byte per word, 1 for a BIP39 word
    if _RUN_OF_SHORTEST not in bytes(map(words.__contains__, _WORD.findall(text, start, end))):
        return []
    spans: list[tuple[int, int]] = []
    shortest = MNEMONIC_LENGTHS[0]
    n = first = last = 0  # the current run: its words, its first's start, its last's end
    for m in _WORD.finditer(text, start, end):
        if m.group() not in words:
            if n >= shortest:
                spans.append((first, last))
            n = 0
            continue
        s, e = m.span()
        if n and _GAP.fullmatch(text, last, s) is not None:
            n += 1
        else:
            if n >= shortest:
                spans.append((first, last))
            n, first = 1, s
        last = e
    if n >= shortest:
        spans.append((first, last))
    return spans
