"""File locks that name their owner, and tell a live owner from one that is gone.

A lock is a file whose content is its owner's JSON record (:func:`owner_record`)::

    {"schemaVersion": 1, "token": "<uuid hex>", "pid": 123, "hostname": "box",
     "bootId": "<linux boot id>" | null, "processStartTime": "<ticks since boot>" | null,
     "startedAt": "<ISO instant>", "command": "ingest", ...caller fields}

It is created exclusively *and* atomically with that content (temp file, fsync, ``os.link``:
:func:`ragit._fs.atomic_write_bytes` with ``exclusive=True``), so nobody ever reads an empty
or partial lock.

States (:func:`inspect`):

- ``missing`` — no lock file.
- ``active`` — same host, the pid is alive and (where known) its start time and boot id match.
- ``stale`` — same host, the process is provably gone (no such pid, zombie, pid reused by a
  process with another start time, or another boot): :func:`take` reclaims it. A pid whose
  ``/proc`` entry cannot be read (``hidepid``, another user) but that ``kill(pid, 0)`` finds
  is alive: unknown is never taken for dead.
- ``unknown`` — another host, or an owner that cannot be read: nobody can prove that owner dead.

The process start time is field 22 of ``/proc/<pid>/stat`` on Linux; elsewhere it is not
recorded and liveness falls back to ``kill(pid, 0)``.

:func:`take` and :func:`release` run under a kernel ``flock`` on the sibling file
``<lock>.guard`` (:func:`guard`). The guard is held for a few syscalls only (never across slow
work) and the kernel drops it when its process dies, so two processes reclaiming the same
stale lock cannot both win. Contention on the lock itself never waits: the loser fails fast.
Release removes the file only if it still carries the releasing owner's token.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ragit import _json
from ragit._fs import atomic_write_bytes

_POLL_S = 0.02  # how often a bounded wait for a flock retries

LockState = Literal["missing", "active", "stale", "unknown"]
OWNER_SCHEMA_VERSION = 1
GUARD_SUFFIX = ".guard"
_PROC_STAT = sys.platform.startswith("linux") and Path("/proc/self/stat").exists()


@dataclass(frozen=True)
class LockInfo:
    """What :func:`inspect` found."""

    state: LockState
    owner: dict[str, Any] | None
    path: Path


class LockHeld(Exception):
    """:func:`take` found the lock ``active`` or ``unknown``, or lost a race for it.

    ``info`` is the lock as found (after a lost race: as found again, in any state);
    ``raced`` is true when another process created the lock file under :func:`take`'s nose
    (only a process that ignores the guard can).
    """

    def __init__(self, info: LockInfo, *, raced: bool = False) -> None:
        super().__init__(info.state)
        self.info = info
        self.raced = raced


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return None


def _linux_stat(pid: int) -> list[str] | None:
    """Fields 3.. of ``/proc/<pid>/stat`` (after the parenthesized command name)."""
    raw = _read_text(Path(f"/proc/{pid}/stat"))
    if raw is None or ")" not in raw:
        return None
    return raw.rsplit(")", 1)[1].split()


def process_start_time(pid: int) -> str | None:
    """The start time of ``pid`` in clock ticks since boot (Linux), else ``None``."""
    fields = _linux_stat(pid)
    if fields is None or len(fields) < 20:
        return None
    return fields[19]  # field 22 overall: fields[0] is field 3 (state)


def boot_id() -> str | None:
    """This boot's id (Linux), so a pid from a previous boot is never taken for alive."""
    raw = _read_text(Path("/proc/sys/kernel/random/boot_id"))
    return raw.strip() if raw else None


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` is a running process; ``True`` unless it is provably gone.

    An unreadable ``/proc/<pid>/stat`` proves nothing: a ``hidepid`` mount hides other
    users' processes (``ENOENT`` or ``EACCES``), so ``kill(pid, 0)`` decides then, and
    ``EPERM`` (a process of another user) means alive.
    """
    if _PROC_STAT:
        fields = _linux_stat(pid)
        if fields is not None:
            return fields[0] not in ("Z", "X", "x")  # a zombie has already exited
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def owner_record(*, token: str, command: str, started_at: str, **fields: Any) -> dict[str, Any]:
    """The owner JSON of a lock this process is about to take; ``fields`` are added as given."""
    pid = os.getpid()
    return {
        "schemaVersion": OWNER_SCHEMA_VERSION,
        "token": token,
        "pid": pid,
        "hostname": socket.gethostname(),
        "bootId": boot_id(),
        "processStartTime": process_start_time(pid),
        "startedAt": started_at,
        "command": command,
        **fields,
    }


def owner_state(owner: dict[str, Any]) -> LockState:
    """Whether the process named by ``owner`` is alive (``active``), provably gone (``stale``)
    or beyond this host's knowledge (``unknown``)."""
    if owner.get("hostname") != socket.gethostname():
        return "unknown"
    pid = owner.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return "unknown"
    recorded_boot = owner.get("bootId")
    current_boot = boot_id()
    if recorded_boot and current_boot and recorded_boot != current_boot:
        return "stale"
    if not pid_alive(pid):
        return "stale"
    recorded_start = owner.get("processStartTime")
    if recorded_start:
        current_start = process_start_time(pid)
        if current_start is not None and str(recorded_start) != current_start:
            return "stale"  # the pid now belongs to another process
    return "active"


def parse_owner(text: str | None) -> dict[str, Any] | None:
    """The owner record in ``text``, or ``None`` when it is not one (no string ``token``)."""
    if text is None:
        return None
    try:
        owner = _json.loads(text)
    except ValueError:
        return None
    if not isinstance(owner, dict) or not isinstance(owner.get("token"), str):
        return None
    return owner


def read_owner(path: Path) -> dict[str, Any] | None:
    """The owner record of the lock at ``path``, or ``None`` (missing or unreadable)."""
    return parse_owner(_read_text(path))


def inspect(path: Path) -> LockInfo:
    """The state of the lock at ``path``. Read-only."""
    try:
        text: str | None = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return LockInfo("missing", None, path)
    except (OSError, UnicodeDecodeError):
        text = None
    owner = parse_owner(text)
    if owner is None:
        return LockInfo("unknown", None, path)
    return LockInfo(owner_state(owner), owner, path)


def inspect_flocked(path: Path) -> LockInfo:
    """Whether a :func:`flocked` holder holds ``path`` (``active``, with the owner it wrote)
    or nobody does (``missing``). Read-only: a non-blocking shared ``flock`` probe, dropped
    at once; ``unknown`` when the file cannot be opened."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return LockInfo("missing", None, path)
    except OSError:
        return LockInfo("unknown", None, path)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return LockInfo("active", read_owner(path), path)
        return LockInfo("missing", None, path)
    finally:
        os.close(fd)  # closing drops the probe


@contextlib.contextmanager
def flocked(
    path: Path, *, wait_s: float | None = None, owner: dict[str, Any] | None = None
) -> Iterator[None]:
    """Hold an exclusive kernel ``flock`` on ``path`` (created, with its directory, if missing).

    The one lock primitive: the kernel drops the lock when its holder exits, however it
    exits, so it can never be left stale. ``wait_s=None`` blocks until the lock is free;
    otherwise it polls every 20 ms and raises :class:`TimeoutError` after ``wait_s`` seconds.
    ``owner``, if given, is written into the file once the lock is held (for diagnostics).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if wait_s is None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        else:
            deadline = time.monotonic() + wait_s
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise TimeoutError(str(path)) from None
                    time.sleep(_POLL_S)
        if owner is not None:
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(owner).encode("utf-8"), 0)
        yield
    finally:
        os.close(fd)  # closing drops the flock


@contextlib.contextmanager
def guard(path: Path) -> Iterator[None]:
    """Hold the ``flock`` on ``<path>.guard`` (creating the directory and the guard file)."""
    with flocked(path.with_name(path.name + GUARD_SUFFIX)):
        yield


def take(path: Path, owner: dict[str, Any]) -> LockInfo:
    """Create the lock at ``path`` carrying ``owner``, under the guard; never waits.

    A ``stale`` lock is removed first. Returns the lock as found before (``missing`` or
    ``stale``: the caller may report a reclaimed owner).

    Raises:
        LockHeld: the lock is ``active`` or ``unknown``, or another process created it
            meanwhile.
    """
    data = (json.dumps(owner, sort_keys=True) + "\n").encode("utf-8")
    with guard(path):
        found = inspect(path)
        if found.state in ("active", "unknown"):
            raise LockHeld(found)
        if found.state == "stale":
            path.unlink(missing_ok=True)
        try:
            atomic_write_bytes(path, data, exclusive=True, mode=0o644)
        except FileExistsError as exc:  # only a process that ignores the guard gets here
            raise LockHeld(inspect(path), raced=True) from exc
    return found


def release(path: Path, token: str) -> None:
    """Remove the lock at ``path`` if it still carries ``token`` (under the guard)."""
    with guard(path):
        owner = read_owner(path)
        if owner is not None and owner.get("token") == token:
            path.unlink(missing_ok=True)
