"""RAGit's own store metadata, ``.ragit/store/meta.json`` (never opens zvec), and the store's
paths and limits that every store module shares (:func:`next_dir`, :func:`prev_dir`,
:func:`inline_limit`).

``status``, ``doctor`` and every reader learn what they need about the store from this file:
which store (``storeId``, a new uuid per created store), which published generation readers
should use (``generation``; 0 = created but never published), the embedding profile, and the
row count at the last publication. ``revision`` is bumped (atomically, before zvec is opened)
every time a writer opens the canonical collection, so a reader that copied the canonical
files can tell that nobody touched them while it copied.

On disk (camelCase like every RAGit file)::

    {"schemaVersion": 1, "backend": "zvec", "collection": "chunks", "storeId": "<32 hex>",
     "generation": 3, "revision": 7, "embedding": {"namespaceId", "provider", "model",
     "dimensions", "version"}, "chunkCount": 17780, "createdAt": "...", "updatedAt": "...",
     "publishedAt": "..." | null}

Errors (contract §2: a corrupt or future store is exit 4): unreadable or malformed →
:class:`SnapshotManifestInvalid` with ``path`` = ``.ragit/store/meta.json`` and the reason
(the catalog has no store-specific "corrupt" code; this one has the right category, exit code
and recovery); ``schemaVersion`` newer than :data:`SCHEMA_VERSION` →
:class:`SnapshotSchemaUnsupported` (its ``indexVersion`` detail carries the store's version).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ragit import _json
from ragit._fs import atomic_write_text
from ragit.contract.errors import SnapshotManifestInvalid, SnapshotSchemaUnsupported
from ragit.workspace import Workspace

SCHEMA_VERSION = 1
COLLECTION_DIR = "chunks"
META_NAME = "meta.json"
_HEX32 = re.compile(r"^[0-9a-f]{32}$")
# Stores of at most this many rows merge their segments inline on every write (see
# ragit.store.compact). No score depends on segments (the keyword index keeps per-snapshot
# statistics), so merging is for speed only: 0, none.
INLINE_MAX_ROWS = 0
# Stores of more rows are merged by the background compactor after a write; smaller ones keep
# their few segments (nothing measurable at that size) until merges are overdue.
BACKGROUND_MIN_ROWS = 4000
# A larger store merges inline anyway once this many segments piled up (see ragit.store.compact).
OVERDUE_SEGMENTS = 8


def next_dir(ws: Workspace) -> Path:
    """Where a replacement store is built before it is swapped in (:mod:`.replace`)."""
    return ws.ragit_dir / "store.next"


def prev_dir(ws: Workspace) -> Path:
    """Where the live store waits while a replacement is swapped in (:mod:`.replace`)."""
    return ws.ragit_dir / "store.prev"


def inline_limit() -> int:
    """Rows up to which merging happens inline (``RAGIT_COMPACT_INLINE_ROWS``, test-only)."""
    raw = os.environ.get("RAGIT_COMPACT_INLINE_ROWS")
    return int(raw) if raw and raw.isdigit() else INLINE_MAX_ROWS


def background_min_rows() -> int:
    """Rows above which a writer hands merging to the background compactor
    (``RAGIT_COMPACT_BACKGROUND_ROWS``, test-only)."""
    raw = os.environ.get("RAGIT_COMPACT_BACKGROUND_ROWS")
    return int(raw) if raw and raw.isdigit() else BACKGROUND_MIN_ROWS


def overdue_segments() -> int:
    """Segments at which a writer merges inline whatever the store's size: the background
    compactor fell behind (``RAGIT_COMPACT_OVERDUE_SEGMENTS``, test-only)."""
    raw = os.environ.get("RAGIT_COMPACT_OVERDUE_SEGMENTS")
    return int(raw) if raw and raw.isdigit() else OVERDUE_SEGMENTS


def now_iso() -> str:
    """UTC instant with millisecond precision, ``Z`` suffix."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class StoreMeta:
    """The parsed ``meta.json``."""

    schema_version: int
    store_id: str
    generation: int
    embedding: dict[str, Any]
    chunk_count: int
    created_at: str
    updated_at: str
    published_at: str | None
    revision: int = 0
    backend: str = "zvec"
    collection: str = COLLECTION_DIR
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def dimensions(self) -> int:
        """The vector dimensions of the store (from the embedding profile)."""
        return int(self.embedding.get("dimensions", 0))

    @property
    def stamp(self) -> tuple[str, int, int]:
        """What identifies the canonical files' state: (store id, generation, revision)."""
        return (self.store_id, self.generation, self.revision)

    def to_wire(self) -> dict[str, Any]:
        """The JSON object written to ``meta.json``."""
        return {
            **self.extra,
            "schemaVersion": self.schema_version,
            "backend": self.backend,
            "collection": self.collection,
            "storeId": self.store_id,
            "generation": self.generation,
            "revision": self.revision,
            "embedding": dict(self.embedding),
            "chunkCount": self.chunk_count,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
            "publishedAt": self.published_at,
        }

    def evolve(self, **changes: Any) -> StoreMeta:
        """A copy with ``changes`` applied."""
        return replace(self, **changes)


def meta_path(ws: Workspace) -> str:
    """Repo-relative path of ``meta.json`` (for error details)."""
    return f"{ws.relative(ws.store_dir)}/{META_NAME}"


def _invalid(ws: Workspace, reason: str) -> SnapshotManifestInvalid:
    return SnapshotManifestInvalid(None, meta_path(ws), reason)


def _int(raw: dict[str, Any], key: str, ws: Workspace, *, minimum: int = 0) -> int:
    value = raw.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise _invalid(ws, f"{key} must be an integer >= {minimum}")
    return value


def _str(raw: dict[str, Any], key: str, ws: Workspace, *, nullable: bool = False) -> str | None:
    value = raw.get(key)
    if value is None and nullable:
        return None
    if not isinstance(value, str) or not value:
        raise _invalid(ws, f"{key} must be a non-empty string")
    return value


def parse_meta(ws: Workspace, text: str) -> StoreMeta:
    """Validate the text of ``meta.json``.

    Raises:
        SnapshotManifestInvalid: malformed.
        SnapshotSchemaUnsupported: written by a newer RAGit.
    """
    try:
        raw = _json.loads(text)
    except ValueError as exc:
        raise _invalid(ws, f"not valid JSON ({exc.__class__.__name__})") from exc
    if not isinstance(raw, dict):
        raise _invalid(ws, "not a JSON object")
    version = raw.get("schemaVersion")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _invalid(ws, "schemaVersion must be a positive integer")
    if version > SCHEMA_VERSION:
        raise SnapshotSchemaUnsupported(meta_path(ws), version, SCHEMA_VERSION)
    if raw.get("backend", "zvec") != "zvec":
        raise _invalid(ws, f"unknown backend {raw.get('backend')!r}")
    store_id = _str(raw, "storeId", ws)
    if store_id is None or not _HEX32.match(store_id):
        raise _invalid(ws, "storeId must be 32 lowercase hex digits")
    embedding = raw.get("embedding")
    if not isinstance(embedding, dict):
        raise _invalid(ws, "embedding must be an object")
    dims = embedding.get("dimensions")
    if not isinstance(dims, int) or isinstance(dims, bool) or dims < 1:
        raise _invalid(ws, "embedding.dimensions must be a positive integer")
    collection = _str(raw, "collection", ws) if "collection" in raw else COLLECTION_DIR
    if collection != COLLECTION_DIR:
        raise _invalid(ws, f"unknown collection {collection!r}")
    known = {
        "schemaVersion",
        "backend",
        "collection",
        "storeId",
        "generation",
        "revision",
        "embedding",
        "chunkCount",
        "createdAt",
        "updatedAt",
        "publishedAt",
    }
    return StoreMeta(
        schema_version=version,
        store_id=store_id,
        generation=_int(raw, "generation", ws),
        revision=_int(raw, "revision", ws) if "revision" in raw else 0,
        embedding=dict(embedding),
        chunk_count=_int(raw, "chunkCount", ws),
        created_at=str(_str(raw, "createdAt", ws)),
        updated_at=str(_str(raw, "updatedAt", ws)),
        published_at=_str(raw, "publishedAt", ws, nullable=True),
        extra={k: v for k, v in raw.items() if k not in known},
    )


def read_meta(ws: Workspace) -> StoreMeta | None:
    """The store metadata, or ``None`` when no store has been created. Reads one file only.

    Raises:
        SnapshotManifestInvalid: ``meta.json`` is unreadable or malformed.
        SnapshotSchemaUnsupported: it was written by a newer RAGit.
    """
    path = ws.store_dir / META_NAME
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        from ragit.contract.fs_errors import filesystem_error

        typed = filesystem_error(exc, ws.root)
        if typed is not None:  # no permission, a failing disk: not a corrupt file
            raise typed from exc
        raise _invalid(ws, f"unreadable ({exc.__class__.__name__})") from exc
    except UnicodeDecodeError as exc:
        raise _invalid(ws, f"unreadable ({exc.__class__.__name__})") from exc
    return parse_meta(ws, text)


def write_meta(ws: Workspace, meta: StoreMeta) -> None:
    """Replace ``meta.json`` atomically (temp file, fsync, rename, fsync of the directory)."""
    text = json.dumps(meta.to_wire(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    atomic_write_text(ws.store_dir / META_NAME, text)


REFERENCED_NAME = "referenced.ids"


def read_referenced(store_dir: Path) -> set[str]:
    """Chunk ids that retained manifests name, as recorded beside the store (empty: none
    recorded, e.g. a store of an older RAGit). Written by :mod:`.publishing`; read here, in a
    module that imports no engine, by ingest planning and ``doctor`` too."""
    try:
        text = (store_dir / REFERENCED_NAME).read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError):
        return set()
    return set(text.split())
