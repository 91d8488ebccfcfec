"""The operating system's refusals, as raised by the real calls, become FILESYSTEM_UNUSABLE.

Each error is produced for real: a path under a regular file (ENOTDIR), a write on a
read-only tmpfs (EROFS), a file and an SQLite database growing on a full tmpfs (ENOSPC and
SQLite's "database or disk is full"). Mounting skips with `LOUD SKIP` where not permitted.
"""

from __future__ import annotations

import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests._tmpfs import tmpfs

from ragit.contract.fs_errors import FilesystemUnusable, filesystem_error


def _raised(action: object) -> BaseException:
    assert callable(action)
    try:
        action()
    except BaseException as exc:  # what the operating system raised, kept for the mapping
        return exc
    raise AssertionError("the call did not fail")


@pytest.fixture
def tiny_tmpfs(tmp_path: Path) -> Iterator[Path]:
    with tmpfs(tmp_path / "tmpfs", "size=256k") as mount:
        yield mount


def test_a_file_where_a_directory_belongs_names_that_file(tmp_path: Path) -> None:
    """Docs/contract.md: ENOTDIR is `not-a-directory`, naming the file that stands in the way
    (repo-relative), and moving `.ragit` aside is its recovery."""
    (tmp_path / ".ragit").write_text("x", encoding="utf-8")
    exc = _raised((tmp_path / ".ragit" / "manifest" / "a.json").read_bytes)

    typed = filesystem_error(exc, tmp_path)

    assert typed is not None
    assert typed.details == {"path": ".ragit", "reason": "not-a-directory", "errno": "ENOTDIR"}
    assert typed.recovery == "mv .ragit .ragit.bak && ragit init --yes"
    assert (typed.category, typed.exit_code, typed.retryable) == ("not_ready", 3, False)


def test_a_full_disk_is_no_space_for_files_and_for_sqlite(tiny_tmpfs: Path) -> None:
    """Docs/contract.md: ENOSPC and SQLite's "database or disk is full" are `no-space`."""
    full = _raised(lambda: (tiny_tmpfs / "big").write_bytes(b"x" * (1 << 20)))
    (tiny_tmpfs / "big").unlink()
    db = sqlite3.connect(tiny_tmpfs / "terms.sqlite")
    try:
        db.execute("CREATE TABLE t (v BLOB)")
        sqlite_full = _raised(
            lambda: [db.execute("INSERT INTO t VALUES (zeroblob(65536))") for _ in range(64)]
        )
    finally:
        db.close()

    for exc in (full, sqlite_full):
        typed = filesystem_error(exc, tiny_tmpfs)
        assert isinstance(typed, FilesystemUnusable), exc
        assert typed.details["reason"] == "no-space"
        assert typed.details["errno"] == "ENOSPC"


def test_a_read_only_file_system_is_read_only(tiny_tmpfs: Path) -> None:
    """Docs/contract.md: EROFS is `read-only-filesystem`, naming the path."""
    remount = subprocess.run(
        ["mount", "-o", "remount,ro", str(tiny_tmpfs)], capture_output=True, check=False
    )
    if remount.returncode != 0:
        pytest.skip("LOUD SKIP: a read-only remount is not permitted here")
    exc = _raised(lambda: (tiny_tmpfs / "meta.json").write_text("{}", encoding="utf-8"))

    typed = filesystem_error(exc, tiny_tmpfs)

    assert typed is not None
    assert typed.details == {
        "path": "meta.json",
        "reason": "read-only-filesystem",
        "errno": "EROFS",
    }


def test_other_failures_are_not_filesystem_conditions(tmp_path: Path) -> None:
    """Implementation choice: a missing file or a programming error stays what it is."""
    missing = _raised((tmp_path / "absent").read_bytes)
    assert filesystem_error(missing, tmp_path) is None
    assert filesystem_error(ValueError("bad"), tmp_path) is None
    assert filesystem_error(sqlite3.OperationalError("no such table: t"), tmp_path) is None
