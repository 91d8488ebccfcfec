"""Atomic file writes: readers see the old file or the new one, never a partial one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ragit import _faults as faults


def atomic_write_bytes(path: Path, data: bytes, *, fsync: bool = True) -> None:
    """Write ``data`` to a temp file beside ``path``, fsync it, then rename over ``path``."""
    faults.before_write()  # test-only disk-full injection (RAGIT_FAULT_ENOSPC), else a no-op
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if fsync:
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if fsync:
        fsync_dir(path.parent)


def atomic_write_text(path: Path, text: str, *, fsync: bool = True) -> None:
    """UTF-8 text variant of :func:`atomic_write_bytes` (no newline translation)."""
    atomic_write_bytes(path, text.encode("utf-8"), fsync=fsync)


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
