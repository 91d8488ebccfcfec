"""A real tmpfs for the tests that need a full or read-only disk."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def tmpfs(mount: Path, options: str) -> Iterator[Path]:
    """A tmpfs mounted at ``mount`` (made if missing) with ``options`` (``size=1m,ro``) for
    the block, unmounted after; skips with a reason starting ``LOUD SKIP`` where mounting is
    not permitted."""
    mount.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(mount)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"LOUD SKIP: mounting a tmpfs is not permitted here ({done.stderr.strip()!r})")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, check=False)
