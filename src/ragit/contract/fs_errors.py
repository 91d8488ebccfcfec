"""``FILESYSTEM_UNUSABLE``: the operating system refused a path RAGit uses, typed.

A full disk, a permission denied, a read-only file system, a file where a directory belongs
or a failing device is a condition of the machine, not of RAGit's data: it is not
``corrupt_or_incompatible`` and not ``transient`` (retrying does not help until someone acts).
:func:`filesystem_error` maps an ``OSError`` (by errno) or an SQLite error (by message) to it;
the CLI, the hook runner and the MCP server use it for whatever escapes a command, and the
modules that read RAGit's files use it instead of calling a file they cannot read corrupt.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

from ragit.contract.errors import NotReadyError

__all__ = ["FilesystemUnusable", "filesystem_error", "shown_path"]


class FilesystemUnusable(NotReadyError):
    """A path RAGit reads or writes in the repository cannot be used: the disk is full, access
    is denied, the file system is read-only, a file stands where a directory belongs, the
    device fails, or a symlink leads outside the repository (docs/contract.md, "Error codes
    added to the catalog"). Nothing half-written is left: the previous state stays readable.

    ``details``: ``{path, reason, errno}`` (``errno`` the symbolic name, or null), plus
    ``freeBytes``/``neededBytes`` for a disk RAGit found too full before writing, and
    ``target`` for a symlink that leaves the repository.
    """

    code = "FILESYSTEM_UNUSABLE"

    NO_SPACE = "no-space"
    PERMISSION_DENIED = "permission-denied"
    READ_ONLY = "read-only-filesystem"
    NOT_A_DIRECTORY = "not-a-directory"
    IO_ERROR = "io-error"
    OUTSIDE_REPOSITORY = "outside-repository"

    def __init__(
        self,
        path: str | None,
        reason: str,
        *,
        errno_name: str | None = None,
        **extra: Any,
    ) -> None:
        where = path or "the repository"
        # A path shown absolute lies outside the repository (the user cache, say).
        outside = path is not None and os.path.isabs(path)
        messages = {
            self.NO_SPACE: f"no space left on the device that holds {where}: free some space, "
            "then run the command again (the previous snapshot stays readable)",
            self.PERMISSION_DENIED: f"permission denied on {where}: "
            + (
                "give this user read and write access to it"
                if outside
                else "run RAGit as the user who owns the repository's .ragit directory, or "
                "give this user read and write access"
            ),
            self.READ_ONLY: f"{where} is on a read-only file system: RAGit needs to write "
            + ("there" if outside else "under .ragit"),
            self.NOT_A_DIRECTORY: f"{where}: a file stands where RAGit keeps a directory"
            + ("" if outside else " (.ragit and the directories inside it must be directories)"),
            self.IO_ERROR: f"input/output error on {where}: check the device",
            self.OUTSIDE_REPOSITORY: f"{where} is a symlink that leads outside the repository"
            + (f" ({extra['target']})" if extra.get("target") else "")
            + ": RAGit never writes through it (replace it with a directory)",
        }
        recovery = None
        if reason == self.NOT_A_DIRECTORY and path == ".ragit":
            recovery = "mv .ragit .ragit.bak && ragit init --yes"
        super().__init__(
            messages.get(reason, f"{where} cannot be used ({reason})"),
            details={"path": path, "reason": reason, "errno": errno_name, **extra},
            recovery=recovery,
        )


_ERRNO_REASONS = {
    errno.ENOSPC: FilesystemUnusable.NO_SPACE,
    errno.EDQUOT: FilesystemUnusable.NO_SPACE,
    errno.EACCES: FilesystemUnusable.PERMISSION_DENIED,
    errno.EPERM: FilesystemUnusable.PERMISSION_DENIED,
    errno.EROFS: FilesystemUnusable.READ_ONLY,
    errno.ENOTDIR: FilesystemUnusable.NOT_A_DIRECTORY,
    errno.EIO: FilesystemUnusable.IO_ERROR,
}
# SQLite reports the same conditions as messages (the keyword index is an SQLite file).
_SQLITE_REASONS = {
    "database or disk is full": FilesystemUnusable.NO_SPACE,
    "attempt to write a readonly database": FilesystemUnusable.READ_ONLY,
    "disk i/o error": FilesystemUnusable.IO_ERROR,
}


def shown_path(path: str | os.PathLike[str] | None, root: Path | None) -> str | None:
    """``path`` repo-relative (POSIX) when it lies inside ``root``, else as given."""
    if path is None:
        return None
    raw = Path(os.fsdecode(path))
    if root is not None:
        try:
            return raw.relative_to(root).as_posix() or "."
        except ValueError:
            pass
    return str(raw)


def _blocking_file(path: Path) -> Path:
    """For ENOTDIR on ``path``: the first of its parents that exists and is not a directory
    (the file standing where a directory belongs), else ``path``."""
    for parent in reversed(path.parents):
        try:
            if parent.exists() and not parent.is_dir():
                return parent
        except OSError:
            break
    return path


def filesystem_error(exc: BaseException, root: Path | None = None) -> FilesystemUnusable | None:
    """The typed error for an OS-level failure (``OSError`` by errno, SQLite's by message),
    or None when ``exc`` is not one of the conditions :class:`FilesystemUnusable` names."""
    if isinstance(exc, FilesystemUnusable):
        return exc
    if isinstance(exc, OSError) and exc.errno in _ERRNO_REASONS:
        where = exc.filename
        if exc.errno == errno.ENOTDIR and where is not None:
            where = _blocking_file(Path(os.fsdecode(where)))
        return FilesystemUnusable(
            shown_path(where, root),
            _ERRNO_REASONS[exc.errno],
            errno_name=errno.errorcode.get(exc.errno),
        )
    if type(exc).__module__ == "sqlite3":
        text = str(exc).lower()
        for needle, reason in _SQLITE_REASONS.items():
            if needle in text:
                name = "ENOSPC" if reason == FilesystemUnusable.NO_SPACE else None
                return FilesystemUnusable(None, reason, errno_name=name)
    return None
