"""Copying a collection directory: reflink where the filesystem can, a kernel copy otherwise.

A reflink (``FICLONE`` ioctl: btrfs, XFS, bcachefs, overlay on those) shares extents and costs
almost nothing; elsewhere ``os.copy_file_range`` copies inside the kernel, and
``shutil.copyfile`` is the portable fallback (macOS, old kernels, cross-device copies). Files
the caller names as immutable are hard-linked instead, when source and copy share a file
system (a link shares the inode: only for files no process ever changes in place).
"""

from __future__ import annotations

import errno
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

_FICLONE = 0x40049409  # _IOW(0x94, 9, int) on Linux
_NO_CLONE = {
    errno.EOPNOTSUPP,
    errno.ENOTSUP,
    errno.EXDEV,
    errno.EINVAL,
    errno.ENOTTY,
    errno.EBADF,
    errno.ENOSYS,
    errno.EPERM,
}
_NO_LINK = {errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EACCES}
_state = {"reflink": sys.platform.startswith("linux"), "copy_range": hasattr(os, "copy_file_range")}


def _reflink(src_fd: int, dst_fd: int) -> bool:
    if not _state["reflink"]:
        return False
    import fcntl

    try:
        fcntl.ioctl(dst_fd, _FICLONE, src_fd)
    except OSError as exc:
        if exc.errno in _NO_CLONE:
            return False
        raise
    return True


def _copy_range(src_fd: int, dst_fd: int, size: int) -> bool:
    if not _state["copy_range"]:
        return False
    done = 0
    try:
        while done < size:
            n = os.copy_file_range(src_fd, dst_fd, size - done)
            if n == 0:
                break
            done += n
    except OSError as exc:
        if exc.errno in _NO_CLONE and done == 0:
            _state["copy_range"] = False
            return False
        raise
    return done == size


def copy_file(src: Path, dst: Path) -> str:
    """Copy one regular file; returns the method used (``reflink``, ``copy_range``, ``copy``)."""
    with open(src, "rb") as fin:
        size = os.fstat(fin.fileno()).st_size
        with open(dst, "xb") as fout:
            if size and _reflink(fin.fileno(), fout.fileno()):
                return "reflink"
            if size and _copy_range(fin.fileno(), fout.fileno(), size):
                return "copy_range"
            fout.seek(0)
            fout.truncate()
            fin.seek(0)
            shutil.copyfileobj(fin, fout, 1 << 20)
            return "copy"


def link_file(src: Path, dst: Path) -> str:
    """Hard-link ``src`` as ``dst`` (``link``); a file system that cannot (another device,
    no hard links) gets a copy (:func:`copy_file`)."""
    try:
        os.link(src, dst)
    except OSError as exc:
        if exc.errno not in _NO_LINK:
            raise
        return copy_file(src, dst)
    return "link"


def own_inode(path: Path, scratch: Path) -> bool:
    """Give ``path`` an inode of its own when hard links share it (``st_nlink`` > 1): its
    bytes copied to a temp file in ``scratch`` (same file system, outside the directory
    being fingerprinted), fsynced and renamed over ``path``. Run before a file shared with
    reader copies is changed in place, so that no copy ever sees it change. Returns whether
    it copied.

    Raises:
        OSError: the copy failed (``path`` is left as it was).
    """
    try:
        if os.stat(path).st_nlink <= 1:
            return False
    except FileNotFoundError:
        return False
    for stale in scratch.glob(".own-*.tmp"):  # left by an interrupted copy (under the lock)
        stale.unlink(missing_ok=True)
    tmp = scratch / f".own-{os.getpid()}-{path.name}.tmp"
    try:
        copy_file(path, tmp)
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return True


def copy_tree(
    src: Path,
    dst: Path,
    *,
    skip: frozenset[str] = frozenset(),
    shared: Callable[[str], bool] | None = None,
) -> dict[str, int]:
    """Copy the directory ``src`` to the new directory ``dst``; counts files per method.

    Every file is copied, whatever its name, except entries of ``src`` itself named in
    ``skip`` (top level only). Files whose path relative to ``src`` (POSIX form) ``shared``
    accepts are hard-linked instead (:func:`link_file`): only files nothing changes in place.

    Raises:
        FileNotFoundError: ``src`` or one of its files vanished.
        OSError: the copy failed (disk full, permissions).
    """
    methods: dict[str, int] = {}
    dst.mkdir(parents=True)
    for root, dirs, files in os.walk(src):
        rel = Path(root).relative_to(src)
        top = root == str(src)
        if top and skip:
            dirs[:] = [name for name in dirs if name not in skip]
        for name in dirs:
            (dst / rel / name).mkdir()
        for name in files:
            if top and name in skip:
                continue
            source, target = Path(root) / name, dst / rel / name
            if shared is not None and shared((rel / name).as_posix()):
                method = link_file(source, target)
            else:
                method = copy_file(source, target)
            methods[method] = methods.get(method, 0) + 1
    return methods


def remove_tree(path: Path) -> None:
    """Remove a directory tree, ignoring a concurrent removal."""
    shutil.rmtree(path, ignore_errors=True)
