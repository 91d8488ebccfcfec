"""Free space for a store write, checked before zvec opens anything (docs/faults.md).

zvec maps the vector file of a new writing segment (about 5 MiB at 256 dimensions) when it
opens a collection read-write and fills it as rows arrive; on a file system that cannot back
those pages the process dies with SIGBUS inside the open, and a write that runs out of space
half-way can leave the collection's own manifest empty. So every store write first checks
that the file system holding ``.ragit/store`` has room for what zvec writes in place — a new
segment (:data:`FLOOR`) and the new rows — and otherwise fails with ``FILESYSTEM_UNUSABLE``
(``no-space``) before a canonical file changes. Copies (an inline merge's, a rebuild's
``store.next``, a restore's) are not counted: one that runs out of space fails cleanly, the
canonical files untouched; counting them refused the very recovery a nearly full disk needs.
"""

from __future__ import annotations

import os
from pathlib import Path

from ragit.contract.fs_errors import FilesystemUnusable
from ragit.workspace import Workspace

MIB = 1 << 20
# A new writing segment's vector file (~5 MiB at 256 dims), its column and WAL files, the
# journal and the keyword index's growth.
FLOOR = 8 * MIB
# A stored row beside its vector: text, search fields, id map and keyword postings (the
# N=1000 store holds 17.8k rows of 256 dims in 66 MB: ~3.7 KiB a row).
ROW_BYTES = 4096


def free_bytes(path: Path) -> int | None:
    """Bytes an unprivileged writer may still use on the file system of ``path`` (its nearest
    existing ancestor); None where the platform cannot tell."""
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        stats = os.statvfs(probe)
    except (OSError, AttributeError):
        return None
    return stats.f_bavail * stats.f_frsize


def needed_bytes(rows: int = 0, dimensions: int = 0) -> int:
    """What zvec may write in place for ``rows`` new rows of ``dimensions``: :data:`FLOOR`,
    and :data:`ROW_BYTES` plus twice its vector for each row."""
    return FLOOR + rows * (ROW_BYTES + 8 * dimensions)


def require_space(ws: Workspace, rows: int = 0, dimensions: int = 0) -> None:
    """Fail before a store write (of ``rows`` new rows of ``dimensions``) that the file system
    of ``.ragit/store`` cannot hold.

    Raises:
        FilesystemUnusable: ``no-space``, with ``freeBytes`` and ``neededBytes``.
    """
    free = free_bytes(ws.store_dir)
    if free is None:
        return
    needed = needed_bytes(rows, dimensions)
    if free < needed:
        raise FilesystemUnusable(
            ws.relative(ws.store_dir),
            FilesystemUnusable.NO_SPACE,
            errno_name="ENOSPC",
            freeBytes=free,
            neededBytes=needed,
        )


def nearly_full(path: Path) -> bool:
    """Whether the file system of ``path`` has less than :data:`FLOOR` left (a zvec failure
    there is the disk's, not the store's)."""
    free = free_bytes(path)
    return free is not None and free < FLOOR
