"""The lexical index: BM25 over the code-aware tokens, in append-only segments.

Why not one bm25s index: bm25s bakes the corpus statistics (document count, each term's document
frequency, the average length) into its score matrix when it indexes, and it cannot add
documents. A main index plus small bm25s delta indexes would score a freshly appended session
with the idf of a 200-chunk corpus — exactly the session a hook-fed memory is asked about next.
So each segment here stores raw term frequencies and document lengths, and a query computes
bm25s's scores (its default ``lucene`` variant, k1 = 1.5, b = 0.75) with statistics summed over
all live documents of all segments. Results are therefore identical to a bm25s index rebuilt
from scratch over the same tokens — before and after compaction (a test pins this against
bm25s itself). Merging only makes queries faster.

Layout under ``<memory>/lexical/``::

    manifest.json          the commit point: segments, their deletion masks, and the Lance
                           table version the index was last reconciled with
    s000001/…              one segment: terms.npy (sorted uint64 term hashes), indptr.npy,
                           docs.npy, tfs.npy (postings by term), dl.npy (doc lengths),
                           ids.npy (chunk ids, bytes)
    s000001/del-000007.npy a deletion mask (bool per doc), replaced, never edited

Every file is written under a temporary name and renamed; the manifest is replaced last, so a
crash leaves either the old index or the new one. Segments are never modified after they are
written. Terms are stored as 64-bit BLAKE2b hashes (no vocabulary to load: a query looks its
terms up with a binary search in memory-mapped arrays).

Terms come from redacted text only: the writer (:mod:`funes.store.memory`) masks every
document block by block with the built-in detectors before it reaches this index, whatever its
source (a `funes-write` of unredacted chunks, a copied memory, a catch-up from the table). An
unsalted hash of a token would otherwise let anyone holding the index confirm a guessed secret.
Masking redacted text changes nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import mmap
import os
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from funes.store.tokenize import query_tokens, tokenize

K1 = 1.5
B = 0.75
FORMAT = 1
MANIFEST = "manifest.json"
# Tiered merging: a new segment is merged into its predecessor while the predecessor holds
# fewer than MERGE_FACTOR times its documents, so there are O(log n) segments and each
# document is rewritten O(log n) times.
MERGE_FACTOR = 4
# Only the head of a longer text is tokenized. funes-chunk's pieces are ≤ 1,200 characters; a
# hand-made chunk of 48 MB would otherwise cost gigabytes of tokens at write and query time.
MAX_DOC_CHARS = 65_536
# A merge of more postings than this is written to disk a range of term hashes at a time
# (:func:`merge_to`), so its temporaries do not grow with the index: merged whole in memory, the
# tiered merges of a 58k-chunk index run raised its peak RSS from 375 MB to 587 MB.
MERGE_STEP = 1 << 20
# A query term's postings are searched for each candidate (a binary search) rather than read
# whole when there are this many postings or more per candidate.
LOOKUP_COST = 32


def _head(text: str) -> str:
    """The first :data:`MAX_DOC_CHARS` characters of ``text``, backed off to a whitespace so no
    word (a secret included) is cut in two before it is redacted."""
    if len(text) <= MAX_DOC_CHARS:
        return text
    head = text[:MAX_DOC_CHARS]
    cut = max(head.rfind(" "), head.rfind("\n"), head.rfind("\t"))
    return head[:cut] if cut > 0 else head


def term_hash(term: str) -> int:
    return int.from_bytes(hashlib.blake2b(term.encode("utf-8"), digest_size=8).digest(), "little")


@dataclass
class Segment:
    terms: np.ndarray  # uint64, sorted, unique
    indptr: np.ndarray  # uint32 (int64 past 2^32 postings), len(terms) + 1
    docs: np.ndarray  # local doc index per posting (uint16, or int32 past 65,536 docs)
    tfs: np.ndarray  # term frequency per posting (uint8, or uint16 saturated at 65535)
    dl: np.ndarray  # float32 doc length (tokens) per doc
    ids: np.ndarray  # bytes chunk id per doc
    deleted: np.ndarray | None = None  # bool per doc
    name: str | None = None  # directory name once saved
    deleted_file: str | None = None
    # the ids sorted, and where each sits: built on the second locate (a warm reader keeps it)
    by_id: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False, compare=False)
    located: bool = field(default=False, repr=False, compare=False)  # locate was called once
    # (the deletion mask they were counted under, live documents, their summed length): every
    # query needs both, and summing a million lengths each time grew a query with the index
    counted: tuple[object, int, float] | None = field(default=None, repr=False, compare=False)

    @property
    def n_docs(self) -> int:
        return len(self.ids)

    def live(self) -> np.ndarray:
        if self.deleted is None:
            return np.ones(self.n_docs, dtype=bool)
        return ~self.deleted

    def n_live(self) -> int:
        return self._counted()[1]

    def live_length(self) -> float:
        return self._counted()[2]

    def _counted(self) -> tuple[object, int, float]:
        if self.counted is None or self.counted[0] is not self.deleted:
            if self.deleted is None:
                n, length = self.n_docs, float(self.dl.sum(dtype=np.float64))
            else:
                n = self.n_docs - int(self.deleted.sum())
                length = float(self.dl[~self.deleted].sum(dtype=np.float64))
            self.counted = (self.deleted, n, length)
        return self.counted

    def live_ids(self) -> np.ndarray:
        return self.ids if self.deleted is None else self.ids[~self.deleted]

    def locate(self, ids: np.ndarray) -> np.ndarray:
        """Each of ``ids``' (bytes) local document index here (the first, when it holds one
        twice), -1 where this segment holds no live document of that id. The first call is one
        pass over the segment's ids against the few asked (:func:`_matches`: a cold recall
        asks once, where sorting 979k ids cost 0.22 s of CPU); from the second on, a binary
        search per id in the ids sorted once (a warm reader keeps them)."""
        out = np.full(len(ids), -1, dtype=np.int64)
        if not self.n_docs or not len(ids):
            return out
        width = max(ids.dtype.itemsize, self.ids.dtype.itemsize)
        q = ids.astype(f"S{width}")
        if self.by_id is None and not self.located:
            self.located = True
            asked = np.unique(q)
            docs, at = _matches(np.asarray(self.ids), asked)
            held, first = np.unique(at, return_index=True)  # docs ascending: the first of each
            doc_of = np.full(len(asked), -1, dtype=np.int64)
            doc_of[held] = docs[first]
            out = doc_of[np.searchsorted(asked, q)]
        else:
            if self.by_id is None:
                order = np.argsort(np.asarray(self.ids), kind="stable")
                self.by_id = (order, np.asarray(self.ids)[order])
            order, sorted_ids = self.by_id
            keys = sorted_ids.astype(f"S{width}", copy=False)
            pos = np.minimum(np.searchsorted(keys, q), len(keys) - 1)
            hit = keys[pos] == q
            out[hit] = order[pos[hit]]
        if self.deleted is not None:
            out[(out >= 0) & self.deleted[np.maximum(out, 0)]] = -1
        return out

    def span(self, h: np.uint64) -> tuple[int, int]:
        """Where term ``h``'s postings sit in ``docs`` and ``tfs`` (empty when absent)."""
        i = int(np.searchsorted(self.terms, h))
        if i >= len(self.terms) or self.terms[i] != h:
            return 0, 0
        return int(self.indptr[i]), int(self.indptr[i + 1])

    def df(self, span: tuple[int, int]) -> int:
        """Live documents among the postings of ``span`` (read only when some are deleted)."""
        a, b = span
        if self.deleted is None or a == b:
            return b - a
        return int((~self.deleted[self.docs[a:b]]).sum())

    def postings(self, h: np.uint64) -> tuple[np.ndarray, np.ndarray]:
        a, b = self.span(h)
        if a == b:
            return _EMPTY_I, _EMPTY_TF
        docs, tfs = self.docs[a:b], self.tfs[a:b]
        if self.deleted is not None:
            keep = ~self.deleted[docs]
            docs, tfs = docs[keep], tfs[keep]
        return docs, tfs

    # ------------------------------------------------------------------ build / merge / io

    @classmethod
    def build(cls, ids: Sequence[str], token_lists: Sequence[list[str]]) -> Segment:
        vocab: dict[str, int] = {}
        flat = [vocab.setdefault(t, len(vocab)) for toks in token_lists for t in toks]
        lengths = np.fromiter((len(t) for t in token_lists), dtype=np.int64, count=len(ids))
        doc_of = np.repeat(np.arange(len(ids), dtype=np.int64), lengths)
        hashes = np.fromiter((term_hash(t) for t in vocab), dtype=np.uint64, count=len(vocab))
        return _from_postings(
            hashes[np.asarray(flat, dtype=np.int64)] if flat else np.empty(0, np.uint64),
            doc_of,
            np.ones(len(flat), dtype=np.uint32),
            lengths.astype(np.float32),
            _ids_array(ids),
        )

    @classmethod
    def load(cls, path: Path, deleted_file: str | None = None) -> Segment:
        def arr(name: str) -> np.ndarray:
            return np.load(path / f"{name}.npy", mmap_mode="r")

        deleted = np.load(path / deleted_file) if deleted_file else None
        return cls(
            arr("terms"), arr("indptr"), arr("docs"), arr("tfs"), arr("dl"),
            arr("ids"), deleted, path.name, deleted_file,
        )  # fmt: skip

    def save(self, root: Path, name: str) -> None:
        tmp = root / f".tmp-{uuid.uuid4().hex}"
        tmp.mkdir(parents=True)
        for key in ("terms", "indptr", "docs", "tfs", "dl", "ids"):
            np.save(tmp / f"{key}.npy", np.ascontiguousarray(getattr(self, key)))
        os.replace(tmp, root / name)
        self.name = name


# Ids of a segment compared at a time by the first lookup (:func:`_matches`): its temporaries
# stay a few MB whatever the segment's size.
MATCH_BLOCK = 1 << 16
# The first lookup's filter: a flag per hash of an id's first 8 bytes (2^20 flags, 1 MB), so
# an id not asked passes it with odds of (ids asked) / 2^20.
_FILTER_BITS = 20
_MIX = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: the high bits of word × this


def _matches(ids: np.ndarray, asked: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The documents whose id (``ids``: a segment's, bytes) is one of ``asked`` (sorted,
    unique, bytes at least as wide), ascending, and where each id sits in ``asked``.

    Ids of a width in whole 8-byte words pass a filter on a hash of their first word first —
    a pass of integer arithmetic over the segment, a few ms at 979k ids where comparing them
    whole as bytes cost 85 ms of CPU — and only those that pass are compared whole."""
    width = asked.dtype.itemsize
    whole_words = ids.dtype.itemsize % 8 == 0 and ids.flags.c_contiguous
    words = ids.dtype.itemsize // 8 if whole_words else 0
    shift = np.uint64(64 - _FILTER_BITS)
    if words:
        head = np.ascontiguousarray(asked.view(np.uint8).reshape(len(asked), width)[:, :8])
        flags = np.zeros(1 << _FILTER_BITS, dtype=bool)
        flags[(head.view(np.uint64).ravel() * _MIX) >> shift] = True
        first_words = ids.view(np.uint64)[::words]
    docs, at = [], []
    for start in range(0, len(ids), MATCH_BLOCK):
        if words:
            h = first_words[start : start + MATCH_BLOCK]
            maybe = np.flatnonzero(flags[(h * _MIX) >> shift]) + start
            keys = ids[maybe].astype(f"S{width}")
        else:
            maybe = np.arange(start, min(start + MATCH_BLOCK, len(ids)))
            keys = np.asarray(ids[start : start + MATCH_BLOCK]).astype(f"S{width}", copy=False)
        pos = np.minimum(np.searchsorted(asked, keys), len(asked) - 1)
        hit = asked[pos] == keys
        docs.append(maybe[hit])
        at.append(pos[hit])
    if not docs:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    return np.concatenate(docs).astype(np.int64), np.concatenate(at).astype(np.int64)


_EMPTY_I = np.empty(0, dtype=np.int32)
_EMPTY_TF = np.empty(0, dtype=np.uint16)


@dataclass
class SearchStats:
    """What one :meth:`LexicalIndex.search` read: postings read whole, candidates looked up in
    the postings of the terms it did not read whole, terms read whole, candidates scored."""

    read: int = 0
    looked_up: int = 0
    terms_read: int = 0
    candidates: int = 0


def _top_k(
    parts: list[_Candidates], cands: list[np.ndarray], n_terms: int, k: int
) -> list[tuple[str, float]]:
    """The ``k`` best of the candidates (id, score), best first; ties by id."""
    sc_parts, id_parts = [], []
    for part, c in zip(parts, cands, strict=True):
        sc = part.scores(c, n_terms)
        if len(sc) > k:
            # every document tied with the k-th best stays: the id breaks ties below
            keep = sc >= np.partition(sc, len(sc) - k)[len(sc) - k]
            c, sc = c[keep], sc[keep]
        sc_parts.append(sc)
        id_parts.append(np.asarray(part.seg.ids[c]))
    sc = np.concatenate(sc_parts)
    width = max(a.dtype.itemsize for a in id_parts)
    ids = np.concatenate([a.astype(f"S{width}") for a in id_parts])
    top = np.lexsort((ids, -sc))[:k]
    return [(ids[i].decode("utf-8"), float(sc[i])) for i in top]


class _Candidates:
    """One segment's documents found by a query so far (a flag per document) and the BM25
    part of each question term read for them, kept per term so the final score sums them in
    question order."""

    def __init__(
        self, seg: Segment, avgdl: float, allow: Callable[[np.ndarray], np.ndarray] | None
    ) -> None:
        self.seg = seg
        self.avgdl = avgdl
        self.allow = allow
        self.seen = np.zeros(seg.n_docs, dtype=bool)
        self.partial = np.zeros(seg.n_docs, dtype=np.float64)  # summed in reading order
        self.parts: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # term → (docs, its part)

    def _part(self, w: float, docs: np.ndarray, tfs: np.ndarray) -> np.ndarray:
        # the very expression (and dtypes) of a scan of every posting: the same floats
        tf = tfs.astype(np.float64)
        norm = K1 * (1 - B + B * np.asarray(self.seg.dl)[docs] / self.avgdl)
        return w * (tf / (tf + norm))

    def read(self, j: int, w: float, span: tuple[int, int]) -> int:
        """Term ``j``'s postings read whole: its documents join the candidates."""
        a, b = span
        if a == b:
            return 0
        docs, tfs = self.seg.docs[a:b], self.seg.tfs[a:b]
        if self.seg.deleted is not None:
            keep = ~self.seg.deleted[docs]
            docs, tfs = docs[keep], tfs[keep]
        part = self._part(w, docs, tfs)
        self.parts[j] = (docs, part)
        self.seen[docs] = True
        self.partial[docs] += part
        return b - a

    def candidates(self) -> np.ndarray:
        """The documents found so far that ``allow`` admits."""
        docs = np.flatnonzero(self.seen)
        if self.allow is not None and len(docs):
            docs = docs[self.allow(np.asarray(self.seg.ids[docs]))]
        return docs

    def look_up(
        self, j: int, w: float, span: tuple[int, int], docs: np.ndarray, member: np.ndarray
    ) -> tuple[int, int]:
        """Term ``j``'s part for the candidates ``docs`` only (``member``: a flag per document
        of this segment, set for them): a binary search of each in its postings (sorted by
        document) when they are few beside them, else one pass over the postings. Returns
        (postings read whole, candidates looked up)."""
        a, b = span
        if a == b or not len(docs):
            return 0, 0
        if len(docs) * LOOKUP_COST < b - a:
            col = self.seg.docs[a:b]
            q = docs.astype(col.dtype)  # the postings' own dtype: no converted copy of them
            pos = np.minimum(np.searchsorted(col, q), b - a - 1)
            hit = np.asarray(col[pos]) == q
            if hit.any():
                tfs = np.asarray(self.seg.tfs[a + pos[hit]])
                self.parts[j] = (docs[hit], self._part(w, docs[hit], tfs))
            return 0, len(q)
        found = np.asarray(self.seg.docs[a:b])
        keep = member[found]
        found, tfs = found[keep], np.asarray(self.seg.tfs[a:b])[keep]
        self.parts[j] = (found, self._part(w, found, tfs))
        return b - a, 0

    def scores(self, docs: np.ndarray, n_terms: int) -> np.ndarray:
        """The scores of ``docs``: each term's part added in question order, as a scan of
        every posting adds them (the same floats)."""
        total = np.zeros(self.seg.n_docs, dtype=np.float64)
        for j in range(n_terms):
            if j in self.parts:
                d, part = self.parts[j]
                total[d] += part
        return total[docs]


def _ids_array(ids: Sequence[str]) -> np.ndarray:
    if not len(ids):
        return np.empty(0, dtype="S16")
    return np.array([i.encode("utf-8") for i in ids])


def _from_postings(
    hashes: np.ndarray, doc_of: np.ndarray, tf: np.ndarray, dl: np.ndarray, ids: np.ndarray
) -> Segment:
    """A segment from one (term hash, doc, tf) row per occurrence or posting, any order."""
    order = np.lexsort((doc_of, hashes))
    hashes, doc_of, tf = hashes[order], doc_of[order], tf[order]
    if len(hashes):
        new = np.empty(len(hashes), dtype=bool)
        new[0] = True
        new[1:] = (hashes[1:] != hashes[:-1]) | (doc_of[1:] != doc_of[:-1])
        starts = np.flatnonzero(new)
        tfs = np.minimum(np.add.reduceat(tf, starts), 65535).astype(np.uint16)
        hashes, doc_of = hashes[starts], doc_of[starts]
        tstart = np.flatnonzero(np.r_[True, hashes[1:] != hashes[:-1]])
        terms = hashes[tstart]
        indptr = np.r_[tstart, len(hashes)].astype(np.uint32 if len(hashes) < 1 << 32 else np.int64)
    else:
        terms, indptr, tfs = np.empty(0, np.uint64), np.zeros(1, np.int64), _EMPTY_TF
    # The narrowest exact dtypes: most segments have < 65,536 documents and no term repeated
    # 256 times in a chunk, which halves the postings on disk (and in the page cache).
    docs = doc_of.astype(np.uint16 if len(ids) <= 1 << 16 else np.int32)
    if len(tfs) and int(tfs.max()) <= 255:
        tfs = tfs.astype(np.uint8)
    return Segment(terms, indptr, docs, tfs, dl.astype(np.float32), ids)


def merge(segments: Sequence[Segment]) -> Segment:
    """One segment holding the live documents of ``segments``, in order; deletions dropped."""
    hs, ds, ts, dls, idss = [], [], [], [], []
    offset = 0
    for seg in segments:
        live = seg.live()
        new_index = np.cumsum(live) - 1 + offset  # old local doc -> merged doc index
        counts = np.diff(np.asarray(seg.indptr))
        h = np.repeat(np.asarray(seg.terms), counts)
        docs = np.asarray(seg.docs)
        keep = live[docs]
        hs.append(h[keep])
        ds.append(new_index[docs[keep]])
        ts.append(np.asarray(seg.tfs)[keep].astype(np.uint32))
        dls.append(np.asarray(seg.dl)[live])
        idss.append(np.asarray(seg.ids)[live])
        offset += int(live.sum())
    if not segments:
        return Segment.build([], [])
    width = max((a.dtype.itemsize for a in idss), default=16)
    return _from_postings(
        np.concatenate(hs),
        np.concatenate(ds).astype(np.int64),
        np.concatenate(ts),
        np.concatenate(dls),
        np.concatenate([a.astype(f"S{width}") for a in idss]),
    )


def merge_to(segments: Sequence[Segment], root: Path, name: str) -> Segment:
    """:func:`merge` of ``segments``, saved as ``root/name`` and read back memory-mapped.

    A merge of more than :data:`MERGE_STEP` postings never holds them all: the term-hash space
    is cut into ranges of about that many postings, and each range's postings are gathered from
    every segment (each segment's terms are sorted, so a range is one slice of it), sorted, and
    appended to the new segment's files. The pages of the inputs read for a range are let go
    after it, so the process's memory stays bounded by one range. The result is the segment
    :func:`merge` gives (the same terms, postings and documents in the same order).
    """
    total = sum(len(s.docs) for s in segments)
    if total <= MERGE_STEP:
        merged = merge(segments)
        merged.save(root, name)
    else:
        _merge_streaming(segments, root, name, total)
    return Segment.load(root / name)


def _merge_streaming(segments: Sequence[Segment], root: Path, name: str, total: int) -> None:
    lives = [s.live() for s in segments]
    n_live = sum(int(live.sum()) for live in lives)
    remaps, offset = [], 0
    for live in lives:
        remaps.append(np.cumsum(live, dtype=np.int64) - 1 + offset)
        offset += int(live.sum())
    doc_dtype = np.uint16 if n_live <= 1 << 16 else np.int32
    tf_max = max((_max_tf(s) for s in segments), default=0)
    tf_dtype = np.uint8 if tf_max <= 255 else np.uint16
    ptr_dtype = np.uint32 if total < 1 << 32 else np.int64
    tmp = root / f".tmp-{uuid.uuid4().hex}"
    tmp.mkdir(parents=True)
    files = contextlib.ExitStack()
    parts = {k: files.enter_context((tmp / f"{k}.raw").open("wb")) for k in _POSTINGS}
    try:
        parts["indptr"].write(np.zeros(1, ptr_dtype).tobytes())
        n_terms, n_post = 0, 0
        steps = -(-total // MERGE_STEP)
        for r in range(steps):
            lo, hi = (r << 64) // steps, ((r + 1) << 64) // steps
            step = _step_postings(segments, lives, remaps, lo, None if r == steps - 1 else hi)
            if step is None:
                continue
            h, d, t = step
            del step
            order = np.lexsort((d, h))
            h, d, t = h[order], d[order], t[order]
            del order
            starts = np.flatnonzero(np.r_[True, h[1:] != h[:-1]])
            parts["terms"].write(h[starts].tobytes())
            ends = np.r_[starts[1:], len(h)] + n_post
            parts["indptr"].write(ends.astype(ptr_dtype).tobytes())
            parts["docs"].write(d.astype(doc_dtype).tobytes())
            parts["tfs"].write(t.astype(tf_dtype).tobytes())
            n_terms += len(starts)
            n_post += len(h)
        files.close()
        shapes = {"terms": (n_terms, np.uint64), "indptr": (n_terms + 1, ptr_dtype),
                  "docs": (n_post, doc_dtype), "tfs": (n_post, tf_dtype)}  # fmt: skip
        if not n_post:  # what merge() gives for no postings
            shapes["indptr"], shapes["tfs"] = (1, np.int64), (0, np.uint16)
            (tmp / "indptr.raw").write_bytes(np.zeros(1, np.int64).tobytes())
        for key, (n, dtype) in shapes.items():
            _raw_to_npy(tmp / f"{key}.raw", tmp / f"{key}.npy", n, np.dtype(dtype))
        _save_documents(tmp, segments, lives)
        os.replace(tmp, root / name)
    except BaseException:
        files.close()
        # lazy: shutil (with zlib, bz2, lzma) is for writes only; a reading command skips it
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _step_postings(
    segments: Sequence[Segment],
    lives: list[np.ndarray],
    remaps: list[np.ndarray],
    lo: int,
    hi: int | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """One step of :func:`_merge_streaming`: the live postings of every segment whose term hash
    is in [``lo``, ``hi``) (``hi`` None: to the end) as (hashes, merged doc numbers, tfs),
    unsorted; None when there are none."""
    hs, ds, ts = [], [], []
    for seg, live, remap in zip(segments, lives, remaps, strict=True):
        terms = seg.terms
        a = int(np.searchsorted(terms, np.uint64(lo)))
        b = len(terms) if hi is None else int(np.searchsorted(terms, np.uint64(hi)))
        if a == b:
            continue
        ptr = np.asarray(seg.indptr[a : b + 1], dtype=np.int64)
        docs = np.asarray(seg.docs[ptr[0] : ptr[-1]])
        keep = live[docs]
        hs.append(np.repeat(np.asarray(terms[a:b]), np.diff(ptr))[keep])
        ds.append(remap[docs[keep]])
        ts.append(np.asarray(seg.tfs[ptr[0] : ptr[-1]])[keep])
        _drop_pages(seg)
    if not hs:
        return None
    h, d, t = np.concatenate(hs), np.concatenate(ds), np.concatenate(ts)
    del hs, ds, ts
    return (h, d, t) if len(h) else None


def _save_documents(tmp: Path, segments: Sequence[Segment], lives: list[np.ndarray]) -> None:
    """The merged segment's live documents: their lengths and ids, in merged order."""
    dl = np.concatenate([np.asarray(s.dl)[live] for s, live in zip(segments, lives, strict=True)])
    idss = [np.asarray(s.ids)[live] for s, live in zip(segments, lives, strict=True)]
    width = max((a.dtype.itemsize for a in idss), default=16)
    np.save(tmp / "dl.npy", dl.astype(np.float32))
    np.save(tmp / "ids.npy", np.concatenate([a.astype(f"S{width}") for a in idss]))


_POSTINGS = ("terms", "indptr", "docs", "tfs")


def _max_tf(seg: Segment) -> int:
    """The largest term frequency a segment stores (read in steps; a uint8 one needs none)."""
    tfs = seg.tfs
    if not len(tfs):
        return 0
    if tfs.dtype == np.uint8:
        return 255  # fits the narrow dtype whatever it holds
    top = max(
        int(np.asarray(tfs[i : i + MERGE_STEP]).max()) for i in range(0, len(tfs), MERGE_STEP)
    )
    _drop_pages(seg)
    return top


def _drop_pages(seg: Segment) -> None:
    """Let go of the pages of ``seg``'s memory-mapped postings read so far (they are clean
    file pages: read again from the page cache or the disk if needed)."""
    for arr in (seg.terms, seg.indptr, seg.docs, seg.tfs):
        m = getattr(arr, "_mmap", None)
        if m is not None and hasattr(mmap, "MADV_DONTNEED"):
            with contextlib.suppress(OSError, ValueError):
                m.madvise(mmap.MADV_DONTNEED)


def _raw_to_npy(raw: Path, npy: Path, n: int, dtype: np.dtype) -> None:
    """``raw`` (n values of ``dtype``, native order) as the .npy file ``npy``; ``raw`` removed."""
    import shutil  # lazy: as in merge_to

    with open(npy, "wb") as out, open(raw, "rb") as src:
        header = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False,
                  "shape": (n,)}  # fmt: skip
        np.lib.format.write_array_header_1_0(out, header)
        shutil.copyfileobj(src, out, 1 << 20)
    raw.unlink()


# ---------------------------------------------------------------------------- the index


class LexicalIndex:
    """The segments of one memory, as of one manifest.

    Reading needs no lock. The mutating methods (:meth:`append`, :meth:`delete`,
    :meth:`compact`, :meth:`commit`) must be called under the memory's writer lock.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.segments: list[Segment] = []
        self.lance_version: int | None = None
        self.next = 1
        self.pending: list[Segment] = []  # in-memory segments not yet saved (readers' catch-up)
        self.stats = SearchStats()  # what the last search read

    # ------------------------------------------------------------------ reading

    @classmethod
    def open(cls, root: Path) -> LexicalIndex:
        idx = cls(root)
        for attempt in range(5):
            try:
                idx._load()
                return idx
            except FileNotFoundError:
                # A writer compacted between our manifest read and a segment read; retry.
                if attempt == 4:
                    raise
        return idx

    def _load(self) -> None:
        self.segments, self.lance_version, self.next = [], None, 1
        try:
            m = json.loads((self.root / MANIFEST).read_text())
        except FileNotFoundError:
            return
        except (OSError, ValueError):
            # A corrupt manifest is rebuilt from the table like a missing one.
            return
        if m.get("format") != FORMAT:
            return
        self.lance_version = m.get("lance_version")
        self.next = int(m.get("next", 1))
        self.segments = [
            Segment.load(self.root / s["name"], s.get("deleted")) for s in m["segments"]
        ]

    def all_segments(self) -> list[Segment]:
        return self.segments + self.pending

    def n_docs(self) -> int:
        return sum(s.n_live() for s in self.all_segments())

    def ids(self) -> np.ndarray:
        parts = [s.live_ids() for s in self.all_segments()]
        if not parts:
            return np.empty(0, dtype="S16")
        width = max(p.dtype.itemsize for p in parts)
        return np.concatenate([p.astype(f"S{width}") for p in parts])

    def search(
        self, query: str, k: int = 30, allow: Callable[[np.ndarray], np.ndarray] | None = None
    ) -> list[tuple[str, float]]:
        """Top ``k`` (chunk id, BM25 score), best first; ties broken by id.

        ``allow`` maps a segment's id array to a bool mask of documents that may be returned
        (a prefilter: statistics still cover the whole corpus, like a filtered bm25s query).
        """
        return self.search_tokens(query_tokens(query), k, allow)

    def search_tokens(
        self,
        tokens: Sequence[str],
        k: int = 30,
        allow: Callable[[np.ndarray], np.ndarray] | None = None,
    ) -> list[tuple[str, float]]:
        """:meth:`search` of query tokens already made.

        Exact top ``k`` without reading every posting of a common term (MaxScore, term at a
        time): terms are read rarest first, whole, while a document none of them holds could
        still reach the ``k`` best; once the terms left weigh less, together, than the ``k``-th
        best score so far, a document none of the read terms holds cannot enter the top ``k``,
        and the terms left are only looked up (a binary search in their postings) for the
        candidates already found. A term's BM25 part is below its idf (``tf / (tf + norm)`` is
        below 1), which is the bound. Scores are summed in the question's term order, so they
        are the very floats a scan of every posting gives; ``stats`` says what was read.
        """
        segs = [s for s in self.all_segments() if s.n_docs]
        self.stats = SearchStats()
        n = sum(s.n_live() for s in segs)
        if not tokens or n == 0 or k <= 0:
            return []
        avgdl = sum(s.live_length() for s in segs) / n
        hashes = [np.uint64(term_hash(t)) for t in dict.fromkeys(tokens)]
        spans = [[s.span(h) for h in hashes] for s in segs]
        df = [sum(s.df(sp[j]) for s, sp in zip(segs, spans, strict=True))
              for j in range(len(hashes))]  # fmt: skip
        idf = [float(np.log(1 + (n - d + 0.5) / (d + 0.5))) for d in df]
        # rarest first (ties: question order); bound[i] = what the terms after the i-th can add
        order = sorted((j for j in range(len(hashes)) if df[j]), key=lambda j: (-idf[j], j))
        bound = [sum(idf[j] for j in order[i + 1 :]) for i in range(len(order))]
        parts = [_Candidates(seg, avgdl, allow) for seg in segs]
        cands = self._read_terms(parts, spans, order, bound, idf, k)
        self.stats.candidates = sum(len(c) for c in cands)
        if not self.stats.candidates:
            return []
        return _top_k(parts, cands, len(hashes), k)

    def _read_terms(
        self,
        parts: list[_Candidates],
        spans: list[list[tuple[int, int]]],
        order: list[int],
        bound: list[float],
        idf: list[float],
        k: int,
    ) -> list[np.ndarray]:
        """:meth:`search_tokens`' MaxScore pass: the terms in ``order`` read whole while a new
        document could still win, then only looked up for the candidates found; returns the
        candidates of each segment."""
        read, mass = 0, 0.0  # terms read whole, and their summed idf (a bound on any score)
        cands: list[np.ndarray] | None = None  # the candidates, once no new one can win
        members: list[np.ndarray] = []  # a flag per document for them, by segment
        for i, j in enumerate(order):
            left = bound[i - 1] * (1 + 1e-9) if i else math.inf
            # the k-th best so far is below what was read: look at it only when that can win
            if cands is None and read and left < mass:
                now = [p.candidates() for p in parts]
                partial = np.concatenate([p.partial[c] for p, c in zip(parts, now, strict=True)])
                if len(partial) >= k and left < np.partition(partial, len(partial) - k)[-k]:
                    cands = now
                    members = [np.zeros(p.seg.n_docs, dtype=bool) for p in parts]
                    for m, c in zip(members, cands, strict=True):
                        m[c] = True
            if cands is not None:
                for part, sp, c, m in zip(parts, spans, cands, members, strict=True):
                    whole, probes = part.look_up(j, idf[j], sp[j], c, m)
                    self.stats.read += whole
                    self.stats.looked_up += probes
                continue
            for part, sp in zip(parts, spans, strict=True):
                self.stats.read += part.read(j, idf[j], sp[j])
            read += 1
            mass += idf[j]
        self.stats.terms_read = read
        return [p.candidates() for p in parts] if cands is None else cands

    # ------------------------------------------------------------------ writing (locked)

    def add_pending(self, ids: Sequence[str], texts: Iterable[str]) -> None:
        """Index documents in memory only (a reader catching up with the table)."""
        if len(ids):
            self.pending.append(Segment.build(ids, [tokenize(_head(t)) for t in texts]))

    def append(self, ids: Sequence[str], texts: Iterable[str]) -> None:
        """Add documents as a new segment (merged per the tiered policy); not yet committed."""
        self.add_pending(ids, texts)
        self._flush_pending()

    def delete(self, ids: Iterable[str], persist: bool = True) -> int:
        """Mask documents out of every segment; returns how many were live.

        ``persist=False`` masks in memory only (a reader hiding rows the table no longer has).
        """
        want = np.array([i.encode("utf-8") for i in ids])
        if not len(want):
            return 0
        hit = 0
        for seg in self.all_segments():
            mask = np.isin(np.asarray(seg.ids), want.astype(seg.ids.dtype))
            if seg.deleted is not None:
                mask &= ~seg.deleted
            if not mask.any():
                continue
            hit += int(mask.sum())
            seg.deleted = mask if seg.deleted is None else (seg.deleted | mask)
            if persist and seg.name is not None:
                name = f"del-{self._take()}.npy"
                _atomic_save(self.root / seg.name / name, seg.deleted)
                seg.deleted_file = name
        return hit

    def compact(self) -> None:
        """Merge everything into one segment (off the hot path: `funes optimize`)."""
        import shutil  # lazy: as in merge_to

        self._flush_pending()
        if len(self.segments) > 1 or any(s.deleted is not None for s in self.segments):
            name = self._seg_name()
            merged = merge_to(self.segments, self.root, name)
            self.segments = [merged] if merged.n_docs else []
            if not merged.n_docs:
                shutil.rmtree(self.root / name, ignore_errors=True)

    def commit(self, lance_version: int | None) -> None:
        """Write the manifest (the commit point) and remove files it no longer names."""
        self._flush_pending()
        self.lance_version = lance_version
        self.root.mkdir(parents=True, exist_ok=True)
        m = {
            "format": FORMAT,
            "lance_version": lance_version,
            "next": self.next,
            "segments": [
                {"name": s.name, "docs": s.n_docs, "deleted": s.deleted_file} for s in self.segments
            ],
        }
        _atomic_write(self.root / MANIFEST, json.dumps(m, indent=1) + "\n")
        self.gc()

    def gc(self) -> None:
        """Remove segment dirs, deletion masks and temp files the manifest does not name."""
        import shutil  # lazy: as in merge_to

        if not self.root.is_dir():
            return
        named = {s.name: s.deleted_file for s in self.segments}
        for entry in self.root.iterdir():
            if entry.name == MANIFEST:
                continue
            if entry.is_dir() and entry.name in named:
                for f in entry.iterdir():
                    if f.name.startswith("del-") and f.name != named[entry.name]:
                        f.unlink(missing_ok=True)
            elif entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)
            elif entry.name.startswith(".tmp") or entry.name.startswith(MANIFEST + "."):
                entry.unlink(missing_ok=True)

    def _flush_pending(self) -> None:
        for seg in self.pending:
            if seg.deleted is not None:
                seg = merge([seg])
            if not seg.n_docs:
                continue
            # The predecessors it is merged into (one merge of them all, not one per step).
            group, live = [seg], seg.n_live()
            while self.segments and self.segments[-1].n_live() < MERGE_FACTOR * live:
                group.insert(0, self.segments.pop())
                live += group[0].n_live()
            name = self._seg_name()
            # Read back memory-mapped: a writer appending a huge session must not keep every
            # merged segment's postings in memory (nor gather them all to merge, merge_to).
            if len(group) == 1:
                seg.save(self.root, name)
                self.segments.append(Segment.load(self.root / name))
            else:
                self.segments.append(merge_to(group, self.root, name))
        self.pending = []

    def _take(self) -> str:
        n = self.next
        self.next += 1
        return f"{n:06d}"

    def _seg_name(self) -> str:
        self.root.mkdir(parents=True, exist_ok=True)
        return f"s{self._take()}"


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _atomic_save(path: Path, arr: np.ndarray) -> None:
    tmp = path.with_name(f".tmp-{uuid.uuid4().hex}.npy")
    np.save(tmp, arr)
    os.replace(tmp, path)
