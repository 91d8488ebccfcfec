"""The bottom helpers the store is built on: the atomic write and the file-lock primitive."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from ragit import _lock
from ragit._fs import atomic_write_bytes, atomic_write_text


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_atomic_write_replaces_and_makes_missing_directories(tmp_path: Path) -> None:
    """Implementation choice: the target's directory is made on demand; no temp file stays."""
    target = tmp_path / "a" / "b" / "file.json"
    atomic_write_text(target, "one\n")
    atomic_write_text(target, "two\r\n", fsync=False)
    assert target.read_bytes() == b"two\r\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["file.json"]
    assert stat.S_IMODE(target.stat().st_mode) == 0o600 & ~_umask()


def test_atomic_write_mode_is_applied_before_the_umask(tmp_path: Path) -> None:
    """Implementation choice: ``mode`` is what ``open`` would create (umask applied)."""
    target = tmp_path / "entry.json"
    atomic_write_bytes(target, b"{}", mode=0o666, fsync=False)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~_umask()


def test_exclusive_write_never_replaces_an_existing_file(tmp_path: Path) -> None:
    """Implementation choice: an exclusive write links the complete temp file into place."""
    target = tmp_path / "owner"
    atomic_write_bytes(target, b"first", exclusive=True)
    with pytest.raises(FileExistsError):
        atomic_write_bytes(target, b"second", exclusive=True)
    assert target.read_bytes() == b"first"
    assert [p.name for p in tmp_path.iterdir()] == ["owner"]


def test_lock_take_reclaims_a_stale_owner_and_refuses_a_live_one(tmp_path: Path) -> None:
    """Implementation choice: the primitive under the store writer lock."""
    path = tmp_path / "runtime" / "x.lock"
    dead = _lock.owner_record(token="d" * 32, command="old", started_at="t0")
    dead["pid"] = 2**22 + 1  # above the largest pid_max (2**22): never alive
    path.parent.mkdir()
    path.write_text(json.dumps(dead), encoding="utf-8")
    assert _lock.inspect(path).state == "stale"

    owner = _lock.owner_record(token="a" * 32, command="test", started_at="t1", extra=1)
    found = _lock.take(path, owner)
    assert found.state == "stale" and found.owner == dead
    assert _lock.read_owner(path) == owner
    assert _lock.inspect(path).state == "active"

    with pytest.raises(_lock.LockHeld) as held:
        _lock.take(path, _lock.owner_record(token="b" * 32, command="t", started_at="t2"))
    assert held.value.info.state == "active" and not held.value.raced

    _lock.release(path, "b" * 32)  # not the owner: nothing happens
    assert path.exists()
    _lock.release(path, "a" * 32)
    assert _lock.inspect(path).state == "missing"
    assert sorted(p.name for p in path.parent.iterdir()) == ["x.lock.guard"]
