"""Fixtures for the store tests: a workspace in tmp_path, a private cache, writer processes."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from _store_helpers import WRITER_PROC

from ragit.workspace import Workspace


@pytest.fixture(autouse=True)
def _store_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    for name in ("RAGIT_FAULT_AT", "RAGIT_FAULT_PAUSE_AT", "RAGIT_FAULT_RELEASE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "repo"
    (root / ".ragit").mkdir(parents=True)
    return Workspace(root)


@pytest.fixture
def run_writer(ws: Workspace, tmp_path: Path) -> Iterator[Callable[..., subprocess.Popen[str]]]:
    """Start ``writer_proc.py`` (a real writer process) against ``ws``."""
    started: list[subprocess.Popen[str]] = []

    def start(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        full_env = {**os.environ, **(env or {})}
        proc = subprocess.Popen(
            [sys.executable, str(WRITER_PROC), str(ws.root), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            env=full_env,
        )
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
