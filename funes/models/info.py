"""What this install's models are, where their files came from, and whether they check out.

Cheap: hashes the files but loads no model (`funes models` must not trigger a derivation).
"""

from __future__ import annotations

from typing import Any

from funes.models import derive
from funes.models.embedder import source_file, tokenizer_file, verified_source
from funes.models.pair import model_dir as pair_model_dir
from funes.models.pins import (
    EMBEDDER_PIN,
    ENV_PAIR_MODEL,
    ENV_RERANKER,
    ENV_THREADS,
    PAIR_PIN,
    RERANKER_PIN,
    ModelError,
    cache_dir,
    sha256_file,
    threads,
)
from funes.models.reranker import fetched_dir, find_reranker


def describe() -> dict[str, Any]:
    """{"embedder": {...}, "pair": {...}, "reranker": {...}, "ok": bool} — ok is False when a
    check failed."""
    emb = describe_embedder()
    pair = describe_pair()
    rr = describe_reranker()
    return {"embedder": emb, "pair": pair, "reranker": rr,
            "ok": emb["ok"] and pair["ok"] and rr["ok"]}  # fmt: skip


def describe_embedder() -> dict[str, Any]:
    d: dict[str, Any] = {
        "name": EMBEDDER_PIN.name,
        "dim": EMBEDDER_PIN.dim,
        "max_tokens": EMBEDDER_PIN.max_length,
        "package": EMBEDDER_PIN.package,
        "sha256_pinned": EMBEDDER_PIN.sha256,
        "cache_dir": str(cache_dir()),
    }
    try:
        d["threads"] = threads()
    except ModelError as e:
        d["threads"] = None
        d["threads_error"] = str(e)
    problems: list[str] = []
    try:
        path, origin = source_file()
        d["file"], d["origin"] = str(path), origin
        d["sha256"] = _sha(path)
        if d["sha256"] != EMBEDDER_PIN.sha256:
            verified_source()  # raises with the message that says what to do
    except ModelError as e:
        problems.append(str(e))
    tok = tokenizer_file()
    d["tokenizer"] = str(tok)
    d["tokenizer_sha256"] = _sha(tok)
    if d["tokenizer_sha256"] != EMBEDDER_PIN.tokenizer_sha256:
        problems.append(f"the vendored tokenizer {tok} is missing or damaged; reinstall funes")
    rec = derive.read_record(EMBEDDER_PIN.sha256)
    if rec is None:
        d["graph"] = {"state": "not derived yet"}
    elif rec.get("accepted"):
        graph = derive.record_path(EMBEDDER_PIN.sha256).parent / str(rec.get("file"))
        d["graph"] = {
            "state": "int8 per-channel",
            "file": str(graph),
            "min_cosine": rec.get("min_cosine"),
            "derived_at": rec.get("derived_at"),
            "intact": graph.is_file() and _sha(graph) == rec.get("sha256"),
        }
    else:
        d["graph"] = {"state": "fp32 (int8 rejected)", "min_cosine": rec.get("min_cosine")}
    d["problems"] = problems
    d["ok"] = not problems
    return d


def describe_pair() -> dict[str, Any]:
    """funes' own pair model: its files, their size and a sha256 check against the pin."""
    d, origin = pair_model_dir()
    files = []
    problems = []
    fix = (
        f"point {ENV_PAIR_MODEL} at an intact copy or unset it"
        if origin.startswith("$")
        else "reinstall funes (pip install --force-reinstall funes)"
    )
    for name, pinned in PAIR_PIN.files:
        path = d / name
        sha = _sha(path)
        size = path.stat().st_size if sha is not None else None
        files.append({"file": str(path), "bytes": size, "sha256": sha, "sha256_pinned": pinned})
        if sha is None:
            problems.append(f"the pair model file {path} is missing; {fix}")
        elif sha != pinned:
            problems.append(f"the pair model file {path} does not match its pinned sha256; {fix}")
    return {
        "name": PAIR_PIN.name,
        "base": PAIR_PIN.base,
        "origin": origin,
        "dir": str(d),
        "max_tokens": PAIR_PIN.max_length,
        "files": files,
        "bytes": sum(f["bytes"] or 0 for f in files),
        "problems": problems,
        "ok": not problems,
    }


def describe_reranker() -> dict[str, Any]:
    d: dict[str, Any] = {
        "pin": {
            "name": RERANKER_PIN.name,
            "repo": RERANKER_PIN.repo,
            "revision": RERANKER_PIN.revision,
            "file": RERANKER_PIN.file,
            "fetch_dir": str(fetched_dir()),
        },
    }
    try:
        files = find_reranker()
    except ModelError as e:
        d.update(installed=False, ok=False, problems=[str(e)])
        return d
    if files is None:
        d.update(installed=False, ok=True, problems=[])
        return d
    sha = _sha(files.model)
    problems = []
    if files.expected_sha256 is not None and sha != files.expected_sha256:
        problems.append(
            f"{files.model} no longer matches the sha256 recorded at download; delete "
            f"{files.model.parent} and run `funes models fetch` again"
        )
    d.update(
        installed=True,
        name=files.name,
        origin=files.origin,
        file=str(files.model),
        tokenizer=str(files.tokenizer),
        sha256=sha,
        sha256_recorded=files.expected_sha256,
        problems=problems,
        ok=not problems,
    )
    return d


def hints() -> dict[str, str]:
    return {
        "threads": ENV_THREADS,
        "reranker": f"`funes models fetch` downloads {RERANKER_PIN.name} at revision "
        f"{RERANKER_PIN.revision[:12]} from the Hugging Face Hub; or set {ENV_RERANKER} "
        "to a directory holding model.onnx and tokenizer.json",
    }


def _sha(path: Any) -> str | None:
    try:
        return sha256_file(path)
    except OSError:
        return None
