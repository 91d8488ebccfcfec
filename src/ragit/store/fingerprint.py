"""The fingerprint of the canonical collection files, and whether they are settled (reads only).

:func:`ragit.store.publishing.publish` records :func:`canonical_digest` in ``meta.json``;
outside a write, files that differ from it were damaged or replaced behind RAGit's back
(``doctor``'s ``store.canonical-files``, and every writer refuses them first). A reader that
must make its copy of the published generation from the canonical files does so only when
they are :func:`canonical_settled` and as published: files an interrupted write left behind
(a journal that never completed, a half-done swap, a store found unopenable) may crash zvec
when opened, and a reader never opens what it cannot vouch for.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from ragit.store.copies import canonical_path
from ragit.store.journal_scan import scan_journals
from ragit.store.meta import next_dir, prev_dir, read_meta
from ragit.workspace import Workspace

__all__ = [
    "DIGEST_PREFIX",
    "canonical_changed",
    "canonical_digest",
    "canonical_settled",
]


# Files up to this size are hashed whole; larger ones (vector index, column files, large
# full-text tables) by their size and three sampled blocks (start, middle, end).
WHOLE_MAX = 1 << 20
DIGEST_PREFIX = "content:"
SAMPLE = 1 << 16


def _file_digest(path: Path, size: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as handle:
        if size <= WHOLE_MAX:
            h.update(handle.read())
        else:
            for offset in (0, size // 2 - SAMPLE // 2, size - SAMPLE):
                handle.seek(offset)
                h.update(handle.read(SAMPLE))
    return h.hexdigest()


def canonical_digest(ws: Workspace) -> str:
    """A fingerprint of the canonical collection files by content, as published.

    Each file counts with its path, its size and a hash of its content (whole up to
    :data:`WHOLE_MAX`, else three sampled blocks), never its modification time: a copy
    made without times (``cp -r``, CI caches, a clone) is the same store. Only writers
    change these files and every writer publishes, so outside a write a different
    fingerprint means the files were damaged or replaced behind RAGit's back (``doctor``
    check ``store.canonical-files``). Measured on the N=1000 generator store (44 files,
    66 MB): 5-13 ms, against 0.16 s for hashing every byte. The value carries the prefix
    :data:`DIGEST_PREFIX`; a fingerprint of the older (mtime) form is not compared.
    """
    root = canonical_path(ws)
    lines: list[str] = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.name != "LOCK":
            size = path.stat().st_size
            rel = path.relative_to(root).as_posix()
            lines.append(f"{rel}\0{size}\0{_file_digest(path, size)}")
    return DIGEST_PREFIX + hashlib.sha256("\n".join(lines).encode()).hexdigest()[:32]


def canonical_changed(ws: Workspace) -> bool | None:
    """Whether the canonical collection files differ from the fingerprint of the last publish.

    None when that cannot be judged: no fingerprint (nothing published yet, or published
    before fingerprints existed), no collection, an unfinished transaction journal or a
    half-done store replacement (recovering from those changes the files legitimately and
    publishes again). The caller decides whether a writer may be at work.
    """
    meta = read_meta(ws)
    expected = meta.extra.get("canonicalDigest") if meta is not None else None
    if not expected or not canonical_path(ws).is_dir():
        return None
    if not str(expected).startswith(DIGEST_PREFIX):
        return None  # an mtime fingerprint of an older RAGit: the next publish replaces it
    if next_dir(ws).exists() or prev_dir(ws).exists():
        return None
    if any(s.classification != "completed" for s in scan_journals(ws)):
        return None
    return bool(canonical_digest(ws) != expected)


def canonical_settled(ws: Workspace) -> bool:
    """Whether no interrupted write left work in the canonical files: every transaction
    journal completed (an unreadable one, which proves nothing, is ignored), no half-done
    store swap, no store a writer found unopenable."""
    if next_dir(ws).exists() or prev_dir(ws).exists() or ws.store_unopenable_path.exists():
        return False
    return all(s.classification in ("completed", "invalid") for s in scan_journals(ws))
