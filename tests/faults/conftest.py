"""Fault-suite fixtures: one private user cache per test (reader copies live there), and
every writer merging segments inline.

No score depends on segments, so by default a writer leaves merging to the background
compactor and merges inline only when merges are overdue. The fault suite makes every ingest
take that inline path (the same copy-merge-swap, under the writer's lock), so kills land
inside it at its phases and at random instants.
"""

from collections.abc import Iterator

import pytest
from tests.snapshot._kit import private_cache  # noqa: F401 - autouse fixture


@pytest.fixture(autouse=True)
def inline_merges(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("RAGIT_COMPACT_INLINE_ROWS", "1000000")
    yield
