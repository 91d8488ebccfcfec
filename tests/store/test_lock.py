"""Writer lock: exclusive atomic creation, liveness, reclaim and the typed failures."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragit._lock import boot_id, process_start_time
from ragit.contract.errors import StoreWriteBusy, StoreWriteLockStale
from ragit.store.lock import WriterLock, inspect_lock
from ragit.workspace import Workspace


def _write_owner(ws: Workspace, **fields: Any) -> None:
    owner = {
        "schemaVersion": 1,
        "token": "f" * 32,
        "pid": os.getpid(),
        "hostname": socket.gethostname(),
        "bootId": boot_id(),
        "processStartTime": process_start_time(os.getpid()),
        "startedAt": "2026-01-01T00:00:00.000Z",
        "command": "ingest",
        "headSha": None,
    }
    owner.update(fields)
    ws.runtime_dir.mkdir(parents=True, exist_ok=True)
    ws.lock_path.write_text(json.dumps(owner), encoding="utf-8")


def _dead_pid() -> int:
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(proc.stdout)


def test_acquire_writes_complete_owner_and_release_removes_it(ws: Workspace) -> None:
    """Contract §6 / docs/store.md: the lock file carries the owner JSON; release deletes it."""
    with WriterLock.acquire(ws, command="ingest", head_sha="a" * 40) as lock:
        owner = json.loads(ws.lock_path.read_text(encoding="utf-8"))
        assert owner["token"] == lock.token
        assert owner["pid"] == os.getpid()
        assert owner["hostname"] == socket.gethostname()
        assert owner["command"] == "ingest"
        assert owner["headSha"] == "a" * 40
        assert owner["schemaVersion"] == 1
        assert "startedAt" in owner and "processStartTime" in owner
        assert inspect_lock(ws).state == "active"
        assert lock.warnings == ()
        leftovers = [p.name for p in ws.runtime_dir.iterdir() if p.name.endswith(".tmp")]
        assert leftovers == []
    assert not ws.lock_path.exists()
    assert inspect_lock(ws).state == "missing"


def test_second_acquire_while_held_is_busy_and_names_the_owner(ws: Workspace) -> None:
    """Contract §3: contention fails fast with STORE_WRITE_BUSY carrying the owner."""
    with WriterLock.acquire(ws, command="ingest", head_sha=None) as lock:
        with pytest.raises(StoreWriteBusy) as info:
            WriterLock.acquire(ws, command="ingest", head_sha=None)
        assert info.value.details["lockState"] == "active"
        assert info.value.details["owner"]["token"] == lock.token
        assert info.value.retryable is True


def test_lock_held_by_another_live_process_is_busy(
    ws: Workspace, run_writer: Callable[..., subprocess.Popen[str]]
) -> None:
    """Contract §3: a live writer in another process makes acquire fail with STORE_WRITE_BUSY."""
    holder = run_writer("hold")
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    with pytest.raises(StoreWriteBusy) as info:
        WriterLock.acquire(ws, command="ingest", head_sha=None)
    assert info.value.details["owner"]["pid"] == holder.pid
    holder.communicate("")
    assert holder.returncode == 0
    with WriterLock.acquire(ws, command="ingest", head_sha=None):
        pass


def test_dead_owner_lock_is_reclaimed_with_a_warning(ws: Workspace) -> None:
    """Contract §3: a same-host lock whose process is gone is reclaimed automatically."""
    _write_owner(ws, pid=_dead_pid(), processStartTime="1")
    assert inspect_lock(ws).state == "stale"
    with WriterLock.acquire(ws, command="ingest", head_sha=None) as lock:
        assert len(lock.warnings) == 1
        assert "reclaimed" in lock.warnings[0]
        assert json.loads(ws.lock_path.read_text(encoding="utf-8"))["token"] == lock.token


def test_reused_pid_with_another_start_time_counts_as_dead(ws: Workspace) -> None:
    """Implementation choice: the recorded process start time defeats pid reuse."""
    if process_start_time(os.getpid()) is None:
        pytest.skip("process start time is only recorded on Linux")
    _write_owner(ws, processStartTime="1")  # our pid, but not our start time
    assert inspect_lock(ws).state == "stale"
    _write_owner(ws, bootId="another-boot")
    assert inspect_lock(ws).state == "stale"


def test_zombie_owner_counts_as_dead(ws: Workspace) -> None:
    """Implementation choice: an exited but unreaped owner (zombie) is not alive."""
    if not Path("/proc/self/stat").exists():
        pytest.skip("zombie detection reads /proc")
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # exited, still unreaped
        _write_owner(ws, pid=proc.pid, processStartTime=None)
        assert inspect_lock(ws).state == "stale"
    finally:
        proc.wait()


def _hidepid_available() -> bool:
    if os.geteuid() != 0 or not sys.platform.startswith("linux"):
        return False
    probe = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c",
         "mount -t proc -o hidepid=2 proc /proc && command -v setpriv"],
        capture_output=True,
        check=False,
    )  # fmt: skip
    return probe.returncode == 0


def test_live_owner_hidden_by_hidepid_is_not_taken_for_dead() -> None:
    """Contract §3: only a provably gone owner is reclaimed. Under a ``hidepid=2`` /proc
    another user's live writer has no readable ``/proc/<pid>/stat``; it stays ``active``."""
    if not _hidepid_available():
        pytest.skip("needs root, unshare and setpriv to mount a hidepid /proc")
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        owner = {
            "token": "f" * 32,
            "pid": live.pid,
            "hostname": socket.gethostname(),
            "bootId": boot_id(),
            "processStartTime": process_start_time(live.pid),
        }
        check = (
            "import json, os, sys; from ragit._lock import owner_state; "
            "owner = json.loads(sys.argv[1]); "
            "print(os.path.exists(f\"/proc/{owner['pid']}/stat\"), owner_state(owner))"
        )
        script = " ".join(
            ["mount -t proc -o hidepid=2 proc /proc &&",
             "setpriv --reuid=65534 --regid=65534 --clear-groups",
             '"$0" -c "$1" "$2"']
        )  # fmt: skip
        proc = subprocess.run(
            ["unshare", "-m", "--propagation", "private", "sh", "-c", script,
             sys.executable, check, json.dumps(owner)],
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.split() == ["False", "active"]  # /proc hid it; still alive
    finally:
        live.kill()
        live.wait()


def test_other_host_lock_is_stale_error_not_reclaimed(ws: Workspace) -> None:
    """Contract §3: a lock that cannot be proven dead (another host) → STORE_WRITE_LOCK_STALE."""
    _write_owner(ws, hostname="another-host.invalid")
    assert inspect_lock(ws).state == "unknown"
    with pytest.raises(StoreWriteLockStale) as info:
        WriterLock.acquire(ws, command="ingest", head_sha=None)
    assert info.value.details["lockState"] == "unknown"
    assert info.value.details["owner"]["hostname"] == "another-host.invalid"
    assert info.value.details["path"] == ".ragit/runtime/store-write.lock"
    assert info.value.recovery == "ragit doctor --format json"
    assert ws.lock_path.exists()


@pytest.mark.parametrize("content", ["{not json", "", "[]", '{"pid": 1}'])
def test_unreadable_lock_is_stale_error(ws: Workspace, content: str) -> None:
    """Contract §3: an unreadable owner cannot be proven dead → STORE_WRITE_LOCK_STALE."""
    ws.runtime_dir.mkdir(parents=True)
    ws.lock_path.write_text(content, encoding="utf-8")
    assert inspect_lock(ws).state == "unknown"
    with pytest.raises(StoreWriteLockStale):
        WriterLock.acquire(ws, command="ingest", head_sha=None)
    assert ws.lock_path.read_text(encoding="utf-8") == content


def test_release_only_removes_the_lock_of_the_owning_token(ws: Workspace) -> None:
    """docs/store.md: a lock is released only by the owning token."""
    lock = WriterLock.acquire(ws, command="ingest", head_sha=None)
    _write_owner(ws, token="0" * 32)  # somebody else's lock now sits there
    lock.release()
    assert json.loads(ws.lock_path.read_text(encoding="utf-8"))["token"] == "0" * 32


def test_lost_lock_fails_assert_held(ws: Workspace) -> None:
    """Implementation choice: every mutation re-checks that the lock is still ours."""
    with WriterLock.acquire(ws, command="ingest", head_sha=None) as lock:
        lock.assert_held()
        ws.lock_path.unlink()
        with pytest.raises(StoreWriteBusy):
            lock.assert_held()


def test_racing_processes_get_exactly_one_lock(
    ws: Workspace, run_writer: Callable[..., subprocess.Popen[str]]
) -> None:
    """Contract §6: among writers started together exactly one gets the lock."""
    procs = [run_writer("hold") for _ in range(4)]
    first_lines = []
    for proc in procs:
        assert proc.stdout is not None
        first_lines.append(proc.stdout.readline().strip())
    winners = [line for line in first_lines if line == "held"]
    losers = [json.loads(line) for line in first_lines if line != "held"]
    assert len(winners) == 1
    assert [loser["error"] for loser in losers] == ["STORE_WRITE_BUSY"] * 3
    for proc in procs:
        proc.communicate("")
    assert sorted(p.returncode for p in procs) == [0, 3, 3, 3]
    assert inspect_lock(ws).state == "missing"


def test_racing_reclaimers_of_one_stale_lock_get_exactly_one_lock(
    ws: Workspace, run_writer: Callable[..., subprocess.Popen[str]]
) -> None:
    """Contract §6: two writers reclaiming the same dead lock cannot both win."""
    _write_owner(ws, pid=_dead_pid(), processStartTime="1")
    procs = [run_writer("hold") for _ in range(3)]
    lines = []
    for proc in procs:
        assert proc.stdout is not None
        lines.append(proc.stdout.readline().strip())
    assert lines.count("held") == 1
    for proc in procs:
        proc.communicate("")
