"""A process-wide refusal of filesystem writes inside the served repository.

``ragit-mcp`` is read-only by construction (it imports no writer module; see
``tests/mcp/test_mcp_import_graph.py``) and by proof (every tool call in the
test suite is checked to leave every file's bytes and mtime unchanged). This
guard is the third layer: a :func:`sys.addaudithook` hook that raises
:class:`PermissionError` for any Python-level operation that would create,
modify, rename, delete, truncate, chmod or touch a path inside the repository
(``.git`` included). A tool call that trips it fails with
``MCP_INTERNAL_ERROR`` and the blocked path on stderr; :mod:`importlib`
silently skips a ``__pycache__`` write it refuses.

Native code (zvec, libgit2) does not raise audit events; it is kept away from
the repository by design instead: zvec only opens reader copies in the user
cache, and libgit2 only reads. Audit hooks cannot be removed, so only the
server's ``main()`` installs it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

# Audit event -> indexes of its path arguments that a write would change.
_PATH_EVENTS: dict[str, tuple[int, ...]] = {
    "os.rename": (0, 1),
    "os.remove": (0,),
    "os.rmdir": (0,),
    "os.mkdir": (0,),
    "os.mkfifo": (0,),
    "os.mknod": (0,),
    "os.symlink": (1,),
    "os.link": (1,),
    "os.truncate": (0,),
    "os.chmod": (0,),
    "os.chown": (0,),
    "os.chflags": (0,),
    "os.lchflags": (0,),
    "os.utime": (0,),
    "os.setxattr": (0,),
    "os.removexattr": (0,),
    "shutil.rmtree": (0,),
    "shutil.copyfile": (1,),
    "shutil.copymode": (1,),
    "shutil.copystat": (1,),
    "shutil.copytree": (1,),
    "shutil.move": (0, 1),
}


def _as_path(value: object) -> str | None:
    if isinstance(value, (str, bytes, os.PathLike)):
        try:
            return os.path.abspath(os.fsdecode(value))
        except (TypeError, ValueError):
            return None
    return None


def _is_write_open(args: tuple[Any, ...]) -> bool:
    mode = args[1] if len(args) > 1 else None
    flags = args[2] if len(args) > 2 else 0
    if isinstance(mode, str) and any(c in mode for c in "wax+"):
        return True
    return isinstance(flags, int) and bool(flags & _WRITE_FLAGS)


def make_hook(root: Path) -> Callable[[str, tuple[Any, ...]], None]:
    """The audit hook refusing writes below ``root`` (exposed for tests)."""
    roots = {os.path.abspath(root), os.path.realpath(root)}
    prefixes = tuple(r.rstrip(os.sep) + os.sep for r in roots)

    def inside(path: str | None) -> bool:
        return path is not None and (path in roots or path.startswith(prefixes))

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "open":
            if args and _is_write_open(args) and inside(_as_path(args[0])):
                raise PermissionError(f"ragit-mcp is read-only: refused to write {args[0]!s}")
            return
        indexes = _PATH_EVENTS.get(event)
        if indexes is None:
            return
        for i in indexes:
            if i < len(args) and inside(_as_path(args[i])):
                raise PermissionError(f"ragit-mcp is read-only: refused {event} on {args[i]!s}")

    return hook


def install(root: Path) -> None:
    """Refuse every Python-level write below ``root`` for the rest of this process."""
    sys.addaudithook(make_hook(root))
