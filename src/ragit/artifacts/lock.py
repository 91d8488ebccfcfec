"""The memory writer lock ``.ragit/runtime/memory.lock``.

It serializes every memory, artifact and event-ledger write across processes and threads
(and the control-plane rewrite of ``security purge``). It is an advisory ``flock`` on a file
that stays in place: the kernel releases it when its holder exits, however it exits, so a
crashed writer never leaves a stale lock. A writer waits for it at most :data:`LOCK_WAIT_S`
seconds, then fails with ``STORE_WRITE_BUSY`` (``details.lockState: "memory-busy"``,
``details.owner``: the holder's record). Within one thread the lock is re-entrant, so a
command can append events while it holds it; another thread of the same process waits like
another process does (each holder opens the file anew, and ``flock`` locks of separate opens
exclude each other).

The holder writes its owner record (:func:`ragit._lock.owner_record`, the fields the store's
writer lock carries) into the file; :func:`inspect_memory_lock` reports it for ``status``.
"""

from __future__ import annotations

import contextlib
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

from ragit import _lock
from ragit._lock import LockInfo, flocked
from ragit.contract.errors import StoreWriteBusy
from ragit.store.meta import now_iso
from ragit.workspace import Workspace

LOCK_NAME = "memory.lock"  # Workspace.memory_lock_path
LOCK_WAIT_S = 10.0

# Per thread: how deep each lock path is held by this thread.
_held = threading.local()


def lock_path(ws: Workspace) -> Path:
    return ws.memory_lock_path


def _depths() -> dict[str, int]:
    depths: dict[str, int] | None = getattr(_held, "depths", None)
    if depths is None:
        depths = _held.depths = {}
    return depths


def inspect_memory_lock(ws: Workspace) -> LockInfo:
    """Whether a writer holds the memory lock (``active``, with its owner record) or not
    (``missing``). Read-only (:func:`ragit._lock.inspect_flocked`)."""
    return _lock.inspect_flocked(lock_path(ws))


@contextlib.contextmanager
def memory_lock(
    ws: Workspace, *, wait_s: float = LOCK_WAIT_S, command: str = "memory"
) -> Iterator[None]:
    """Hold the exclusive memory writer lock (re-entrant within the thread).

    Built on :func:`ragit._lock.flocked`, the lock primitive the store's writer lock uses too.

    Raises:
        StoreWriteBusy: another process or thread kept it for ``wait_s`` seconds.
    """
    path = lock_path(ws)
    key = str(path)
    depths = _depths()
    if depths.get(key):
        depths[key] += 1
        try:
            yield
        finally:
            depths[key] -= 1
        return
    owner = _lock.owner_record(
        token=uuid.uuid4().hex,
        command=command,
        started_at=now_iso(),
        threadId=threading.get_ident(),
    )
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(flocked(path, wait_s=wait_s, owner=owner))
        except TimeoutError:
            holder = _lock.read_owner(path)
            raise StoreWriteBusy(
                "memory-busy", {"path": ws.relative(path), **(holder or {})}
            ) from None
        depths[key] = 1
        try:
            yield
        finally:
            depths.pop(key, None)
