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
import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from ragit.contract.errors import StoreWriteBusy
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
