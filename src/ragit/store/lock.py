"""The single-writer lock ``.ragit/runtime/store-write.lock`` (contract §3, §6; UR §15).

The lock file is created exclusively *and* atomically with its content: the owner JSON is
written to a temp file, fsynced, then ``os.link``-ed to the lock path, so nobody ever reads an
empty or partial lock. Owner JSON::

    {"schemaVersion": 1, "token": "<uuid hex>", "pid": 123, "hostname": "box",
     "bootId": "<linux boot id>" | null, "processStartTime": "<ticks since boot>" | null,
     "startedAt": "<ISO instant>", "command": "ingest", "headSha": "<sha>" | null}

States (:func:`inspect_lock`):

- ``missing`` — no lock file.
- ``active`` — same host, the pid is alive and (where known) its start time and boot id match
  → :class:`StoreWriteBusy` (retryable).
- ``stale`` — same host, the process is gone (dead pid, zombie, pid reused by a process with
  another start time, or another boot) → reclaimed automatically by the next writer, which
  reports a warning for the envelope's ``warnings``.
- ``unknown`` — another host, or an owner that cannot be read → :class:`StoreWriteLockStale`
  (recovery ``ragit doctor``): RAGit cannot prove that owner dead.

The process start time is field 22 of ``/proc/<pid>/stat`` on Linux; elsewhere it is not
recorded and liveness falls back to ``kill(pid, 0)``.

Inspection, reclaim and creation run under a kernel ``flock`` on the sibling file
``store-write.lock.guard``. The guard is held for a few syscalls only (never across slow work)
and the kernel drops it when its process dies, so two writers reclaiming the same stale lock
cannot both win. Contention on the lock itself never waits: the loser fails fast. Release
removes the file only if it still carries the releasing owner's token.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import socket
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

from ragit.contract.errors import StoreWriteBusy, StoreWriteLockStale
from ragit.store.meta import now_iso
from ragit.workspace import Workspace

if TYPE_CHECKING:
    from ragit.store.journal import Transaction

LockState = Literal["missing", "active", "stale", "unknown"]
LOCK_SCHEMA_VERSION = 1
GUARD_SUFFIX = ".guard"
_PROC_STAT = sys.platform.startswith("linux") and Path("/proc/self/stat").exists()


@dataclass(frozen=True)
class LockInfo:
    """What :func:`inspect_lock` found."""

    state: LockState
    owner: dict[str, Any] | None
    path: Path


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


def _pid_alive(pid: int) -> bool:
    if _PROC_STAT:
        fields = _linux_stat(pid)
        if fields is None:
            return False
        return fields[0] not in ("Z", "X", "x")  # a zombie has already exited
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _owner_state(owner: dict[str, Any]) -> LockState:
    if owner.get("hostname") != socket.gethostname():
        return "unknown"
    pid = owner.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return "unknown"
    recorded_boot = owner.get("bootId")
    current_boot = boot_id()
    if recorded_boot and current_boot and recorded_boot != current_boot:
        return "stale"
    if not _pid_alive(pid):
        return "stale"
    recorded_start = owner.get("processStartTime")
    if recorded_start:
        current_start = process_start_time(pid)
        if current_start is not None and str(recorded_start) != current_start:
            return "stale"  # the pid now belongs to another process
    return "active"


def _parse_owner(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        owner = json.loads(text)
    except ValueError:
        return None
    if not isinstance(owner, dict) or not isinstance(owner.get("token"), str):
        return None
    return owner


def inspect_lock(ws: Workspace) -> LockInfo:
    """The state of the writer lock. Read-only: safe for status, doctor and readers."""
    path = ws.lock_path
    try:
        text: str | None = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return LockInfo("missing", None, path)
    except (OSError, UnicodeDecodeError):
        text = None
    owner = _parse_owner(text)
    if owner is None:
        return LockInfo("unknown", None, path)
    return LockInfo(_owner_state(owner), owner, path)


@contextlib.contextmanager
def _guard(ws: Workspace) -> Iterator[None]:
    ws.runtime_dir.mkdir(parents=True, exist_ok=True)
    guard = ws.lock_path.with_name(ws.lock_path.name + GUARD_SUFFIX)
    fd = os.open(guard, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing drops the flock


def _create_exclusive(path: Path, data: bytes, token: str) -> None:
    """Create ``path`` with ``data`` so that it never exists half-written."""
    tmp = path.with_name(f".{path.name}.{token}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(tmp, path)
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP):
                raise
            # No hard links on this filesystem: exclusive create; the guard still serializes.
            out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            with os.fdopen(out, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
    finally:
        tmp.unlink(missing_ok=True)


def _reclaim_warning(owner: dict[str, Any]) -> str:
    return (
        "reclaimed the store writer lock left by a process that is gone "
        f"(pid {owner.get('pid')}, command {owner.get('command')!r}, "
        f"started {owner.get('startedAt')})"
    )


@dataclass
class WriterLock:
    """A held writer lock; use as a context manager (released on exit)."""

    ws: Workspace
    token: str
    owner: dict[str, Any]
    warnings: tuple[str, ...] = ()
    released: bool = False
    transaction: Transaction | None = field(default=None, repr=False)

    @classmethod
    def acquire(cls, ws: Workspace, *, command: str, head_sha: str | None) -> WriterLock:
        """Take the lock or fail fast; a same-host lock whose process is gone is reclaimed.

        Raises:
            StoreWriteBusy: a live writer holds it.
            StoreWriteLockStale: the owner is on another host or unreadable.
        """
        token = uuid.uuid4().hex
        pid = os.getpid()
        owner: dict[str, Any] = {
            "schemaVersion": LOCK_SCHEMA_VERSION,
            "token": token,
            "pid": pid,
            "hostname": socket.gethostname(),
            "bootId": boot_id(),
            "processStartTime": process_start_time(pid),
            "startedAt": now_iso(),
            "command": command,
            "headSha": head_sha,
        }
        data = (json.dumps(owner, sort_keys=True) + "\n").encode("utf-8")
        warnings: list[str] = []
        with _guard(ws):
            info = inspect_lock(ws)
            if info.state == "active":
                raise StoreWriteBusy("active", info.owner)
            if info.state == "unknown":
                raise StoreWriteLockStale("unknown", info.owner, ws.relative(ws.lock_path))
            if info.state == "stale":
                assert info.owner is not None
                ws.lock_path.unlink(missing_ok=True)
                warnings.append(_reclaim_warning(info.owner))
            try:
                _create_exclusive(ws.lock_path, data, token)
            except FileExistsError as exc:  # only a writer that ignores the guard gets here
                again = inspect_lock(ws)
                raise StoreWriteBusy(again.state, again.owner) from exc
        return cls(ws=ws, token=token, owner=owner, warnings=tuple(warnings))

    def is_held(self) -> bool:
        """Whether the lock file still carries this owner's token."""
        if self.released:
            return False
        owner = _parse_owner(_read_text(self.ws.lock_path))
        return owner is not None and owner.get("token") == self.token

    def assert_held(self) -> None:
        """Fail unless this process still owns the lock (guards every store mutation).

        Raises:
            StoreWriteBusy: the lock was released, removed by hand, or taken over.
        """
        if not self.is_held():
            info = inspect_lock(self.ws)
            raise StoreWriteBusy(info.state, info.owner)

    def release(self) -> None:
        """Remove the lock file if it is still ours; idempotent."""
        if self.released:
            return
        self.released = True
        self.transaction = None
        with _guard(self.ws):
            owner = _parse_owner(_read_text(self.ws.lock_path))
            if owner is not None and owner.get("token") == self.token:
                self.ws.lock_path.unlink(missing_ok=True)

    def __enter__(self) -> WriterLock:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()
