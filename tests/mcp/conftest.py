"""Fixtures for the ragit-mcp tests (helpers live in ``_mcp_helpers.py``)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from _mcp_helpers import McpServer, hermetic_env, make_repo  # noqa: E402


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A hermetic subprocess environment below this test's tmp_path."""
    return hermetic_env(tmp_path)


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[Callable[..., McpServer]]:
    """Start ``ragit-mcp`` servers that are stopped at the end of the test."""
    started: list[McpServer] = []

    def start(root: Path, env: dict[str, str], **kwargs: Any) -> McpServer:
        n = len(started)
        server = McpServer(root, env, stderr_path=tmp_path / f"mcp-stderr-{n}.log", **kwargs)
        server.__enter__()
        started.append(server)
        return server

    yield start
    for server in reversed(started):
        server.__exit__(None, None, None)


@pytest.fixture(scope="module")
def indexed_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """docs-basic, initialized, committed and ingested (shared by a module; never written)."""
    base = tmp_path_factory.mktemp("indexed")
    env = hermetic_env(base)
    return make_repo(base, env), env


@pytest.fixture(scope="module")
def shared_server(
    indexed_repo: tuple[Path, dict[str, str]], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[McpServer]:
    """One long-lived server over :func:`indexed_repo` for a whole module."""
    root, env = indexed_repo
    log = tmp_path_factory.mktemp("shared-server") / "stderr.log"
    with McpServer(root, env, stderr_path=log) as server:
        yield server
