"""Fixtures for the memory tests (helpers live in ``_memkit.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from _memkit import Repo, make_repo  # noqa: E402


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    """An initialized repository with one committed ADR (not ingested)."""
    return make_repo(tmp_path)
