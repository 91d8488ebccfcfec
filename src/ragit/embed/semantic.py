"""Semantic vectors of chunks, computed on first use and kept by content forever.

The semantic re-ranking of ``retrieval.rerank`` (docs/embeddings.md) needs the
``local-minilm`` vector of a few candidate chunks per question, in a store built with
another profile. Each vector is computed the first time a chunk is a candidate and kept in
a per-user SQLite file keyed by the model's namespace and the text's content hash
(:func:`ragit.embed.cache.text_key`), so the next question that meets the chunk — in any
repository, at any commit — reads it back. The text is the one ingest embeds (the chunk's
``search_en``), and every text is encoded alone by a fixed engine (fp32: numpy; int8:
onnxruntime, one text per call), so a vector never depends on which other texts were
missing with it: the same chunk always gets the same vector, as a full ``local-minilm``
ingest would compute it.

The file lives in the user cache (``<user cache>/ragit/vectors/<namespaceId>.sqlite``),
never in a repository, so the read-only MCP server fills it too. It is a cache: an
unreadable or unwritable file means computing without keeping, never a failure.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragit.embed.base import ProviderOptions, Vector
from ragit.embed.cache import normalize_text, text_key
from ragit.embed.policy import create_provider
from ragit.embed.profile import EmbeddingProfile, resolve_profile
from ragit.workspace import user_cache_dir

# retrieval.rerank values -> the local-minilm model whose vectors re-rank.
RERANK_MODELS = {
    "local-minilm": "all-MiniLM-L6-v2",
    "local-minilm-int8": "all-MiniLM-L6-v2-int8",
}
_SCHEMA = "CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL)"
_BUSY_MS = 2000
_ENCODERS: dict[str, Any] = {}
_LOCK = threading.Lock()


def rerank_profile(name: str) -> EmbeddingProfile:
    """The embedding profile a ``retrieval.rerank`` value names.

    Raises:
        InputInvalid: an unknown value (the config's validation normally catches it first).
    """
    from ragit.contract.errors import InputInvalid

    model = RERANK_MODELS.get(name)
    if model is None:
        known = ", ".join(["off", *RERANK_MODELS])
        raise InputInvalid("retrieval.rerank", f"unknown value {name!r}; known: {known}")
    return resolve_profile({"provider": "local-minilm", "model": model})


def vectors_path(profile: EmbeddingProfile) -> Path:
    """Where the vectors of ``profile`` are kept (a user cache, never a repository)."""
    return user_cache_dir() / "vectors" / f"{profile.namespace_id}.sqlite"


class SemanticVectors:
    """The vectors of one local model for texts: cached ones read back, missing ones computed
    (one text per encoder call) and kept."""

    def __init__(self, profile: EmbeddingProfile) -> None:
        self.profile = profile
        self.computed = 0  # texts encoded by this object (cache misses)
        self._db: sqlite3.Connection | None = None
        self._db_failed = False

    # ------------------------------------------------------------ the encoder
    def _embedder(self) -> Any:
        with _LOCK:
            embedder = _ENCODERS.get(self.profile.namespace_id)
            if embedder is None:
                # numpy for the fp32 model whatever is installed: its vectors then never
                # depend on how many texts one call carries (docs/embeddings.md).
                options = ProviderOptions(env={"RAGIT_MINILM_ENGINE": "numpy"})
                embedder = create_provider(self.profile, options)
                _ENCODERS[self.profile.namespace_id] = embedder
        return embedder

    def question(self, text: str) -> Vector:
        """The vector of a question (never kept: computing it is cheaper than a lookup).

        Raises:
            EmbeddingModelInvalid, EmbeddingBackendUnavailable: the model cannot run here.
        """
        vectors: list[Vector] = self._embedder().embed([text])
        return vectors[0]

    # ------------------------------------------------------------ the cache
    def _connection(self) -> sqlite3.Connection | None:
        if self._db is not None or self._db_failed:
            return self._db
        path = vectors_path(self.profile)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(path, timeout=_BUSY_MS / 1000, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(_SCHEMA)
            db.commit()
        except (OSError, sqlite3.Error):
            self._db_failed = True
            return None
        self._db = db
        return db

    def _read(self, keys: list[str]) -> dict[str, Vector]:
        db = self._connection()
        if db is None or not keys:
            return {}
        out: dict[str, Vector] = {}
        dims = self.profile.dimensions
        try:
            for key in keys:  # point lookups by primary key: microseconds each
                row = db.execute("SELECT vector FROM vectors WHERE key = ?", (key,)).fetchone()
                if row is None:
                    continue
                values = array("f")
                values.frombytes(row[0])
                if len(values) == dims:
                    out[key] = values.tolist()
        except sqlite3.Error:
            return out
        return out

    def _write(self, items: list[tuple[str, Vector]]) -> None:
        db = self._connection()
        if db is None or not items:
            return
        with contextlib.suppress(sqlite3.Error):
            db.executemany(
                "INSERT OR IGNORE INTO vectors (key, vector) VALUES (?, ?)",
                [(key, array("f", vector).tobytes()) for key, vector in items],
            )
            db.commit()

    def texts(self, texts: Sequence[str]) -> list[Vector]:
        """One vector per text, in order: read from the cache, else computed and kept.

        Raises:
            EmbeddingModelInvalid, EmbeddingBackendUnavailable: a vector is missing and the
                model cannot run here.
        """
        keys = [text_key(text) for text in texts]
        found = self._read(sorted(set(keys)))
        missing: dict[str, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key not in found:
                missing.setdefault(key, normalize_text(text))
        if missing:
            order = list(missing)
            computed = self._embedder().embed([missing[key] for key in order])
            # Kept as float32, as the store keeps them: read back, they are the same numbers.
            rounded = [array("f", vector).tolist() for vector in computed]
            fresh = list(zip(order, rounded, strict=True))
            self.computed += len(fresh)
            self._write(fresh)
            found.update(fresh)
        return [found[key] for key in keys]

    def close(self) -> None:
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None
