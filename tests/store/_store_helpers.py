"""Helpers shared by the store tests and writer_proc.py (imported by name; not a test)."""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Sequence
from pathlib import Path

from ragit.store.lock import WriterLock
from ragit.store.meta import StoreMeta
from ragit.store.publishing import publish
from ragit.store.rows import ChunkRow
from ragit.store.writer import StoreWriter
from ragit.workspace import Workspace

DIMS = 8
PROFILE = {
    "namespaceId": "test-ns",
    "provider": "local-placeholder",
    "model": "test",
    "dimensions": DIMS,
    "version": 1,
}
WRITER_PROC = Path(__file__).with_name("writer_proc.py")


def vector_for(key: str, dims: int = DIMS) -> list[float]:
    """A deterministic unit vector derived from ``key``."""
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    raw = [(digest[i % len(digest)] - 127.5) / 127.5 for i in range(dims)]
    norm = math.sqrt(sum(x * x for x in raw)) or 1.0
    return [x / norm for x in raw]


def row(chunk_id: str, text: str | None = None, *, cjk: str = "", dims: int = DIMS) -> ChunkRow:
    body = text if text is not None else f"chunk {chunk_id} body text"
    return ChunkRow(
        chunk_id=chunk_id,
        text=body,
        search_en=body,
        search_cjk=cjk,
        section_title=f"Section {chunk_id}",
        heading_path=f"Doc > Section {chunk_id}",
        token_count=len(body.split()),
        vector=vector_for(chunk_id, dims),
    )


def rows(prefix: str, n: int) -> list[ChunkRow]:
    return [row(f"{prefix}-{i:05d}") for i in range(n)]


def write_and_publish(ws: Workspace, new_rows: Sequence[ChunkRow]) -> StoreMeta:
    """Insert ``new_rows`` and publish, the way a writer does it."""
    with WriterLock.acquire(ws, command="test", head_sha=None) as lock:
        with StoreWriter.open(ws, lock, embedding=PROFILE, dimensions=DIMS) as writer:
            writer.insert(new_rows)
        return publish(ws, lock)


def tree_state(root: Path) -> dict[str, tuple[str, int]]:
    """sha256 and mtime_ns of every regular file under ``root``."""
    out: dict[str, tuple[str, int]] = {}
    for base, _dirs, files in os.walk(root):
        for name in files:
            path = Path(base) / name
            st = path.lstat()
            out[path.relative_to(root).as_posix()] = (
                hashlib.sha256(path.read_bytes()).hexdigest(),
                st.st_mtime_ns,
            )
    return out
