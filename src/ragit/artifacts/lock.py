"""The memory writer lock ``.ragit/runtime/memory.lock``.

It serializes every memory, artifact and event-ledger write across processes
(and the control-plane rewrite of ``security purge``). It is an advisory
``flock`` on a file that stays in place: the kernel releases it when its holder
exits, however it exits, so a crashed writer never leaves a stale lock. A
writer waits for it at most :data:`LOCK_WAIT_S` seconds, then fails with
``STORE_WRITE_BUSY`` (``details.lockState: "memory-busy"``). Within one process
the lock is re-entrant, so a command can append events while it holds it.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

from ragit._lock import flocked
from ragit.contract.errors import StoreWriteBusy
from ragit.workspace import Workspace

LOCK_NAME = "memory.lock"
LOCK_WAIT_S = 10.0

_held: dict[str, int] = {}
_guard = threading.Lock()


def lock_path(ws: Workspace) -> Path:
    return ws.runtime_dir / LOCK_NAME


@contextlib.contextmanager
def memory_lock(ws: Workspace, *, wait_s: float = LOCK_WAIT_S) -> Iterator[None]:
    """Hold the exclusive memory writer lock (re-entrant within the process).

    Built on :func:`ragit._lock.flocked`, the lock primitive the store's writer lock uses too.

    Raises:
        StoreWriteBusy: another process kept it for ``wait_s`` seconds.
    """
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
    owner = {"pid": os.getpid(), "host": socket.gethostname()}
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(flocked(path, wait_s=wait_s, owner=owner))
        except TimeoutError:
            raise StoreWriteBusy("memory-busy", {"path": ws.relative(path)}) from None
        with _guard:
            _held[key] = 1
        try:
            yield
        finally:
            with _guard:
                _held.pop(key, None)
