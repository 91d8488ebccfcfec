"""The memory writer lock (``.ragit/runtime/memory.lock``)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from ragit.artifacts.lock import inspect_memory_lock, memory_lock
from ragit.contract.errors import StoreWriteBusy
from ragit.ops.status.report import _memory_lock_block
from ragit.workspace import Workspace

HOLDER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from ragit.artifacts.lock import memory_lock
    from ragit.workspace import Workspace

    with memory_lock(Workspace(Path(sys.argv[1]))):
        print("held", flush=True)
        sys.stdin.read()
    """
)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    (tmp_path / ".ragit").mkdir()
    return Workspace(tmp_path)


def test_a_held_lock_makes_another_writer_busy_then_frees_on_exit(ws: Workspace) -> None:
    """Contract-mandated: writers are serialized; a busy lock is STORE_WRITE_BUSY (retryable)."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(ws.root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(StoreWriteBusy) as caught, memory_lock(ws, wait_s=0.0):
            pass
        assert caught.value.retryable is True
        assert caught.value.details["lockState"] == "memory-busy"
    finally:
        holder.communicate(timeout=60)
    with memory_lock(ws, wait_s=0.0):
        pass


def test_a_killed_holder_never_leaves_a_stale_lock(ws: Workspace) -> None:
    """Implementation choice: flock is released by the kernel when its holder dies."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(ws.root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "held"
    holder.kill()
    holder.communicate(timeout=60)
    with memory_lock(ws, wait_s=0.0):
        pass


def test_the_lock_is_reentrant_within_a_process(ws: Workspace) -> None:
    """Implementation choice: a command holding the lock may append events under it."""
    with memory_lock(ws, wait_s=0.0), memory_lock(ws, wait_s=0.0):
        pass
    with memory_lock(ws, wait_s=0.0):
        pass


def test_another_thread_of_the_process_waits_for_the_lock(ws: Workspace) -> None:
    """Contract-mandated: writers are serialized, threads of one process included; the lock
    is re-entrant only within the thread that holds it."""
    held = threading.Event()
    release = threading.Event()
    order: list[str] = []

    def holder() -> None:
        with memory_lock(ws, wait_s=0.0):
            order.append("holder in")
            held.set()
            release.wait(30)
            order.append("holder out")

    thread = threading.Thread(target=holder)
    thread.start()
    try:
        assert held.wait(30)
        with pytest.raises(StoreWriteBusy) as caught, memory_lock(ws, wait_s=0.1):
            pass
        assert caught.value.details["owner"]["threadId"] == thread.ident
        release.set()
        with memory_lock(ws, wait_s=30.0):
            order.append("waiter in")
    finally:
        release.set()
        thread.join(30)
    assert order == ["holder in", "holder out", "waiter in"]


def test_status_and_doctor_name_the_memory_lock_owner(ws: Workspace) -> None:
    """Implementation choice: like the store's writer lock, the memory lock's holder is
    visible (pid, command, start) while it holds the lock, and only then."""
    assert inspect_memory_lock(ws).state == "missing"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(ws.root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        info = inspect_memory_lock(ws)
        assert info.state == "active"
        assert info.owner is not None
        assert info.owner["pid"] == holder.pid
        assert {"token", "hostname", "bootId", "processStartTime", "startedAt", "command"} <= set(
            info.owner
        )
        block = _memory_lock_block(ws)
        assert block["state"] == "active" and block["owner"]["pid"] == holder.pid
        assert block["path"] == ".ragit/runtime/memory.lock"
        with pytest.raises(StoreWriteBusy) as caught, memory_lock(ws, wait_s=0.0):
            pass
        assert caught.value.details["owner"]["pid"] == holder.pid
    finally:
        holder.communicate(timeout=60)
    info = inspect_memory_lock(ws)
    assert info.state == "missing" and info.owner is None
