"""Writing the JSON records of the control plane: whole-file writes, no-clobber creation, appends.

Records are written whole, atomically (:func:`ragit._fs.atomic_write_text`:
temp file, fsync, rename): a reader sees the previous or the next version,
never a torn one. New documents are created with :func:`create_exclusive`,
which links a finished temp file to its name and so never overwrites anything,
even against a concurrent writer. Ledger lines are appended with one ``write``.
Callers hold the memory writer lock (:mod:`ragit.artifacts.lock`).

Reading records lives in :mod:`ragit.artifacts.records`, so readers (the
read-only MCP server) never load this module.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ragit._fs import atomic_write_text
from ragit.contract.errors import InputInvalid, NotInitialized
from ragit.workspace import Workspace


def require_initialized(ws: Workspace) -> None:
    """Memory writes need ``ragit init`` (it git-ignores ``.ragit/memory`` and friends).

    Raises:
        NotInitialized: no ``.ragit/config.toml``.
    """
    if not ws.is_initialized():
        raise NotInitialized(str(ws.root))


# ---------------------------------------------------------------- JSON records


def dumps_record(record: Any) -> str:
    """The on-disk form of a record: indented UTF-8 JSON and a final newline."""
    return json.dumps(record, ensure_ascii=False, indent=2) + "\n"


def write_record(path: Path, record: Any) -> None:
    """Write a JSON record atomically."""
    atomic_write_text(path, dumps_record(record))


def create_exclusive(path: Path, text: str) -> bool:
    """Create ``path`` with ``text`` unless it exists; True when created.

    The content is complete on disk before the name appears (temp file + hard
    link, :func:`ragit._fs.atomic_write_text` with ``exclusive``), and an existing
    file is never replaced.
    """
    try:
        atomic_write_text(path, text, exclusive=True)
    except FileExistsError:
        return False
    return True


def append_line(path: Path, line: str) -> None:
    """Append one JSON line with a single ``write`` (callers hold the memory lock)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = (line.rstrip("\n") + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def inside(ws: Workspace, path: Path, field: str) -> Path:
    """``path`` with symlinks resolved, required to stay inside the repository.

    Raises:
        InputInvalid: it escapes (a symlinked directory pointing outside).
    """
    resolved = path.resolve()
    root = ws.root.resolve()
    if resolved != root and root not in resolved.parents:
        raise InputInvalid(field, "path must lie inside the repository")
    return resolved
