"""The single-writer lock ``.ragit/runtime/store-write.lock`` (contract §3, §6; docs/store.md).

Built on the file-lock primitive :mod:`ragit._lock`, which creates the lock file exclusively
and atomically with its owner JSON, tells a live owner from one that is gone, and serializes
inspection, reclaim and creation with an ``flock`` on ``store-write.lock.guard``. Owner JSON::

    {"schemaVersion": 1, "token": "<uuid hex>", "pid": 123, "hostname": "box",
     "bootId": "<linux boot id>" | null, "processStartTime": "<ticks since boot>" | null,
     "startedAt": "<ISO instant>", "command": "ingest", "headSha": "<sha>" | null}

States (:func:`inspect_lock`) and what a writer does about them:

- ``missing`` — no lock file: acquire succeeds.
- ``active`` — same host, the pid is alive and (where known) its start time and boot id match
  → :class:`StoreWriteBusy` (retryable).
- ``stale`` — same host, the process is gone (dead pid, zombie, pid reused by a process with
  another start time, or another boot) → reclaimed automatically by the next writer, which
  reports a warning for the envelope's ``warnings``.
- ``unknown`` — another host, or an owner that cannot be read → :class:`StoreWriteLockStale`
  (recovery ``ragit doctor``): RAGit cannot prove that owner dead.

Contention between writers never waits: the loser fails fast. The one exception is RAGit's own
background compactor (owner ``command`` :data:`COMPACTOR_COMMAND`, started by the previous
ingest, :mod:`ragit.store.compact`): it holds the lock only to copy the store, to swap the merged
copy in, and on its last attempt for the whole merge, so a writer that finds it the owner waits
for it — bounded by :func:`compactor_wait_s`, then :class:`StoreWriteBusy` as before — instead
of failing a user's ingest over housekeeping nobody asked for. Release removes the file only if
it still carries the releasing owner's token.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Protocol

from ragit import _lock
from ragit._lock import LockInfo, LockState
from ragit.contract.errors import StoreWriteBusy, StoreWriteLockStale
from ragit.store.meta import now_iso
from ragit.workspace import Workspace

__all__ = ["COMPACTOR_COMMAND", "LockInfo", "LockState", "WriterLock", "inspect_lock"]

COMPACTOR_COMMAND = "store-compact"  # the owner command of the background compactor
COMPACTOR_WAIT_SECONDS = 60.0  # how long a writer waits for the compactor to release the lock
_COMPACTOR_POLL_SECONDS = 0.05


def compactor_wait_s() -> float:
    """How long a writer waits for the background compactor's lock
    (``RAGIT_COMPACT_WAIT_SECONDS``, test-only; default :data:`COMPACTOR_WAIT_SECONDS`)."""
    raw = os.environ.get("RAGIT_COMPACT_WAIT_SECONDS")
    try:
        return max(0.0, float(raw)) if raw is not None else COMPACTOR_WAIT_SECONDS
    except ValueError:
        return COMPACTOR_WAIT_SECONDS


class InsertRecorder(Protocol):
    """What a held lock's active transaction does for the writer (a journal
    :class:`~ragit.store.journal.Transaction`): record row ids before they are inserted."""

    def record_inserted(self, ids: Iterable[str]) -> None: ...


def inspect_lock(ws: Workspace) -> LockInfo:
    """The state of the writer lock. Read-only: safe for status, doctor and readers."""
    return _lock.inspect(ws.lock_path)


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
    transaction: InsertRecorder | None = field(default=None, repr=False)
    # Set once the canonical collection opened under this lock (a writer probes a collection
    # an interrupted write left behind only before its first open).
    vouched: bool = False

    def note(self, warning: str) -> None:
        """Add a warning for the command that holds the lock (it reports them)."""
        self.warnings = (*self.warnings, warning)

    @classmethod
    def acquire(
        cls,
        ws: Workspace,
        *,
        command: str,
        head_sha: str | None,
        on_wait: Callable[[dict[str, Any]], None] | None = None,
    ) -> WriterLock:
        """Take the lock or fail fast; a same-host lock whose process is gone is reclaimed.

        A live background compactor (:data:`COMPACTOR_COMMAND`) is waited for, at most
        :func:`compactor_wait_s` seconds; ``on_wait`` is called once with its owner record
        when the wait begins. The compactor itself never waits here (it has its own loop).

        Raises:
            StoreWriteBusy: a live writer holds it (a compactor: still, after the wait).
            StoreWriteLockStale: the owner is on another host or unreadable.
            FilesystemUnusable: a directory the writer uses is a symlink that leaves the
                repository (nothing is created there).
        """
        ws.check_contained()
        if command == COMPACTOR_COMMAND:
            return cls._take(ws, command=command, head_sha=head_sha)
        deadline: float | None = None
        while True:
            try:
                return cls._take(ws, command=command, head_sha=head_sha)
            except StoreWriteBusy as busy:
                owner = busy.details.get("owner") or {}
                if busy.details.get("lockState") != "active" or (
                    owner.get("command") != COMPACTOR_COMMAND
                ):
                    raise
                now = time.monotonic()
                if deadline is None:
                    deadline = now + compactor_wait_s()
                    if on_wait is not None:
                        on_wait(owner)
                if now >= deadline:
                    busy.message += (
                        " (the background segment merge still held it after "
                        f"{compactor_wait_s():.0f} s)"
                    )
                    raise
                time.sleep(_COMPACTOR_POLL_SECONDS)

    @classmethod
    def _take(cls, ws: Workspace, *, command: str, head_sha: str | None) -> WriterLock:
        token = uuid.uuid4().hex
        owner = _lock.owner_record(
            token=token, command=command, started_at=now_iso(), headSha=head_sha
        )
        warnings: list[str] = []
        try:
            found = _lock.take(ws.lock_path, owner)
        except _lock.LockHeld as held:
            info = held.info
            if info.state == "unknown" and not held.raced:
                raise StoreWriteLockStale(
                    "unknown", info.owner, ws.relative(ws.lock_path)
                ) from None
            raise StoreWriteBusy(info.state, info.owner) from held.__cause__
        if found.state == "stale":
            assert found.owner is not None
            warnings.append(_reclaim_warning(found.owner))
        return cls(ws=ws, token=token, owner=owner, warnings=tuple(warnings))

    def is_held(self) -> bool:
        """Whether the lock file still carries this owner's token."""
        if self.released:
            return False
        owner = _lock.read_owner(self.ws.lock_path)
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
        _lock.release(self.ws.lock_path, self.token)

    def __enter__(self) -> WriterLock:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()
