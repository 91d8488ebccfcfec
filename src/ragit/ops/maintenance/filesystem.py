"""`doctor`'s ``ragit.filesystem`` check: can RAGit write where it keeps its state?

Reads only (``lstat``, ``access``, ``statvfs``): ``.ragit`` must be a directory this user may
read and write, on a writable file system with room for a store write (a new segment:
:func:`ragit.store.space.needed_bytes`), and none of the directories RAGit writes inside it
may be a symlink that leaves the repository (:meth:`Workspace.check_contained`). Each failure
is the condition ``FILESYSTEM_UNUSABLE`` names for a command that meets it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ragit.contract.fs_errors import FilesystemUnusable
from ragit.workspace import Workspace


@dataclass
class FilesystemCheck:
    """The outcome: ``ok``, what was found, the fix (a command, or None) and details."""

    ok: bool
    detail: str
    recovery: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _failed(error: FilesystemUnusable) -> FilesystemCheck:
    return FilesystemCheck(False, error.message, error.recovery, dict(error.details))


def check_filesystem(ws: Workspace) -> FilesystemCheck:
    """The ``ragit.filesystem`` check of ``ws`` (None of it writes)."""
    from ragit.store.space import free_bytes, needed_bytes

    ragit = ws.ragit_dir
    if (ragit.exists() or ragit.is_symlink()) and not ragit.is_dir():
        return _failed(
            FilesystemUnusable(".ragit", FilesystemUnusable.NOT_A_DIRECTORY, errno_name="ENOTDIR")
        )
    try:
        ws.check_contained()
    except FilesystemUnusable as exc:
        return _failed(exc)
    if not ragit.is_dir():
        return FilesystemCheck(True, "no .ragit yet (`ragit init` creates it)")
    try:
        flags = os.statvfs(ragit).f_flag
    except (OSError, AttributeError):
        flags = 0
    if flags & getattr(os, "ST_RDONLY", 1):
        return _failed(
            FilesystemUnusable(".ragit", FilesystemUnusable.READ_ONLY, errno_name="EROFS")
        )
    if not os.access(ragit, os.R_OK | os.W_OK | os.X_OK):
        return _failed(
            FilesystemUnusable(".ragit", FilesystemUnusable.PERMISSION_DENIED, errno_name="EACCES")
        )
    free = free_bytes(ws.store_dir)
    needed = needed_bytes()
    if free is not None and free < needed:
        return _failed(
            FilesystemUnusable(
                ws.relative(ws.store_dir),
                FilesystemUnusable.NO_SPACE,
                errno_name="ENOSPC",
                freeBytes=free,
                neededBytes=needed,
            )
        )
    room = f", {free / (1 << 20):.0f} MiB free" if free is not None else ""
    return FilesystemCheck(True, f".ragit is a writable directory{room}", extra={})
