"""Files of the memory layer: the writer lock, JSON records, no-clobber creation, input.

The lock ``.ragit/runtime/memory.lock`` serializes every memory, artifact and
event-ledger write across processes. It is an advisory ``flock`` on a file
that stays in place: the kernel releases it when its holder exits, however it
exits, so a crashed writer never leaves a stale lock. A writer waits for it at
most :data:`LOCK_WAIT_S` seconds, then fails with ``STORE_WRITE_BUSY``
(``details.lockState: "memory-busy"``). Within one process the lock is
re-entrant, so a command can append events while it holds it.

Records are written whole, atomically (temp file, fsync, rename): a reader sees
the previous or the next version, never a torn one. New documents are created
with :func:`create_exclusive`, which links a finished temp file to its name and
so never overwrites anything, even against a concurrent writer.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from ragit._fs import atomic_write_text, fsync_dir
from ragit.contract.errors import InputInvalid, NotInitialized, StoreWriteBusy

# Reading records lives in .records so readers (the MCP server) never load this module.
from ragit.memory.records import read_record as read_record  # noqa: PLC0414
from ragit.workspace import Workspace

LOCK_NAME = "memory.lock"
LOCK_WAIT_S = 10.0
_POLL_S = 0.02

_held: dict[str, int] = {}
_held_files: dict[str, IO[bytes]] = {}
_guard = threading.Lock()


def lock_path(ws: Workspace) -> Path:
    return ws.runtime_dir / LOCK_NAME


@contextlib.contextmanager
def memory_lock(ws: Workspace, *, wait_s: float = LOCK_WAIT_S) -> Iterator[None]:
    """Hold the exclusive memory writer lock (re-entrant within the process).

    Raises:
        StoreWriteBusy: another process kept it for ``wait_s`` seconds.
    """
    import fcntl

    path = lock_path(ws)
    key = str(path)
    with _guard:
        if _held.get(key):
            _held[key] += 1
            reentered = True
        else:
            reentered = False
    if reentered:
        try:
            yield
        finally:
            with _guard:
                _held[key] -= 1
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "a+b")  # noqa: SIM115 - held across the yield
    deadline = time.monotonic() + wait_s
    try:
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise StoreWriteBusy("memory-busy", {"path": ws.relative(path)}) from None
                time.sleep(_POLL_S)
        owner = json.dumps({"pid": os.getpid(), "host": socket.gethostname()})
        handle.seek(0)
        handle.truncate()
        handle.write(owner.encode("utf-8"))
        handle.flush()
        with _guard:
            _held[key] = 1
            _held_files[key] = handle
        try:
            yield
        finally:
            with _guard:
                _held.pop(key, None)
                _held_files.pop(key, None)
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    finally:
        handle.close()


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
    link), and an existing file is never replaced.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        fsync_dir(path.parent)
        return True
    finally:
        Path(tmp).unlink(missing_ok=True)


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


# ---------------------------------------------------------------- --input


def _reject_constant(token: str) -> float:
    raise ValueError(f"non-standard JSON constant {token}")


def _first_surrogate(value: Any, path: str = "") -> str | None:
    if isinstance(value, str):
        return (path or "<root>") if any(0xD800 <= ord(c) <= 0xDFFF for c in value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            sub = f"{path}.{key}" if path else str(key)
            found = _first_surrogate(key, sub) or _first_surrogate(item, sub)
            if found:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _first_surrogate(item, f"{path}[{index}]")
            if found:
                return found
    return None


def load_input(source: str, root: Path, stdin: IO[bytes], *, allow_array: bool = False) -> Any:
    """Read ``--input <path|->`` with the rules of contract §4.

    Besides the shared rules (inside the repository, 16 MiB, UTF-8 JSON, no
    control characters) it rejects lone surrogates, which cannot be written as
    UTF-8, and accepts a top-level array where ``allow_array`` says so
    (``memory promote``).

    Raises:
        InputInvalid: any violation, naming the field (never echoing a value).
    """
    from ragit.contract.inputs import (
        MAX_INPUT_BYTES,
        find_control_chars,
        has_control_chars,
        resolve_inside,
    )

    if source == "-":
        raw = stdin.read(MAX_INPUT_BYTES + 1)
    else:
        if not source or has_control_chars(source):
            raise InputInvalid("input", "a file path or - is required")
        path = resolve_inside(root, source, "input")
        if not path.is_file():
            raise InputInvalid("input", "file not found")
        try:
            if path.stat().st_size > MAX_INPUT_BYTES:
                raise InputInvalid("input", f"payload larger than {MAX_INPUT_BYTES} bytes")
            raw = path.read_bytes()
        except OSError as exc:
            raise InputInvalid("input", f"file is not readable ({exc.strerror})") from exc
    if len(raw) > MAX_INPUT_BYTES:
        raise InputInvalid("input", f"payload larger than {MAX_INPUT_BYTES} bytes")
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise InputInvalid("input", "payload is not valid UTF-8") from exc
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except (json.JSONDecodeError, ValueError, RecursionError) as exc:
        raise InputInvalid("input", f"payload is not valid JSON ({type(exc).__name__})") from exc
    if not isinstance(value, dict) and not (allow_array and isinstance(value, list)):
        expected = "a JSON object or array" if allow_array else "a JSON object"
        raise InputInvalid("input", f"payload must be {expected}")
    try:
        bad = find_control_chars(value)
        if bad:
            raise InputInvalid(bad, "control characters are not allowed")
        bad = _first_surrogate(value)
    except RecursionError:
        raise InputInvalid("input", "payload is nested too deeply") from None
    if bad:
        raise InputInvalid(bad, "lone surrogate code points are not allowed")
    return value
