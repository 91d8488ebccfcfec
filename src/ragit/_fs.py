"""Atomic file writes: readers see the old file or the new one, never a partial one.

:func:`atomic_write_bytes` is the one way RAGit writes a file atomically: the data goes to a
temp file beside the target (``.<name>.<random>.tmp``, created exclusively), is fsynced, then
renamed over the target (or hard-linked to it, for an exclusive create); the directory is
fsynced last. Callers whose files only save time (caches) skip both fsyncs.
"""

from __future__ import annotations

import errno
import os
import secrets
from pathlib import Path

from ragit import _faults as faults

_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
# Filesystems without hard links answer os.link with one of these.
_NO_LINKS = (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP)


def _open_temp(path: Path, mode: int) -> tuple[int, Path]:
    """Create a fresh temp file beside ``path`` (its directory is made when missing)."""
    made_dir = False
    for _ in range(100):
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(tmp, _TEMP_FLAGS, mode), tmp
        except FileExistsError:
            continue
        except FileNotFoundError:
            if made_dir:
                raise
            path.parent.mkdir(parents=True, exist_ok=True)
            made_dir = True
    raise FileExistsError(errno.EEXIST, "no unused temp file name", str(path.parent))


def _write_fd(fd: int, data: bytes, *, fsync: bool) -> None:
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        if fsync:
            os.fsync(handle.fileno())


def atomic_write_bytes(
    path: Path,
    data: bytes,
    *,
    fsync: bool = True,
    exclusive: bool = False,
    mode: int = 0o600,
) -> None:
    """Write ``data`` to a temp file beside ``path``, fsync it, then rename over ``path``.

    ``fsync=False`` skips the file and directory fsyncs (for caches: a torn file after a crash
    is a miss). ``exclusive=True`` never replaces an existing file: the temp file is hard-linked
    to ``path`` instead of renamed (where the filesystem has no hard links, ``path`` is created
    with ``O_EXCL`` and written in place). ``mode`` is the new file's permission bits before
    the umask (0o600 by default, as :func:`tempfile.mkstemp` creates them).

    Raises:
        FileExistsError: ``exclusive`` and ``path`` exists.
        OSError: the write failed (the temp file is removed); ENOSPC also under the test-only
            ``RAGIT_FAULT_ENOSPC`` injection.
    """
    faults.before_write()  # test-only disk-full injection (RAGIT_FAULT_ENOSPC), else a no-op
    fd, tmp = _open_temp(path, mode)
    try:
        _write_fd(fd, data, fsync=fsync)
        if not exclusive:
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)
            except OSError as exc:
                if exc.errno not in _NO_LINKS:
                    raise
                _write_fd(
                    os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode), data, fsync=fsync
                )
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if exclusive:
        tmp.unlink(missing_ok=True)
    if fsync:
        fsync_dir(path.parent)


def atomic_write_text(
    path: Path,
    text: str,
    *,
    fsync: bool = True,
    exclusive: bool = False,
    mode: int = 0o600,
) -> None:
    """UTF-8 text variant of :func:`atomic_write_bytes` (no newline translation)."""
    atomic_write_bytes(path, text.encode("utf-8"), fsync=fsync, exclusive=exclusive, mode=mode)


def fsync_dir(directory: Path) -> None:
    """Make a rename in ``directory`` durable (best effort where unsupported)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
