"""Loading a manifest and the cyclic garbage collector (a start-up cost of every read)."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from tests.snapshot._kit import indexed_repo

from ragit.snapshot import manifest as manifest_module


@pytest.mark.parametrize("freeze", [True, False])
def test_a_parsed_manifest_is_frozen_only_where_the_process_wants_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, freeze: bool
) -> None:
    """Implementation choice: short-lived processes move the parsed manifest's objects to the
    permanent generation (gc.freeze), so full collections stop traversing them; a
    long-lived process (the MCP server) keeps collecting everything."""
    repo = indexed_repo(tmp_path, "docs-basic")
    head = repo.head()
    monkeypatch.setattr(manifest_module, "FREEZE_GC_AFTER_LOAD", freeze)
    monkeypatch.setattr(manifest_module, "_CACHE", {})
    gc.unfreeze()
    try:
        loaded = manifest_module.load_manifest(repo.ws, head)
        assert loaded.commit_sha == head
        assert (gc.get_freeze_count() > 0) is freeze
        assert gc.isenabled()
    finally:
        gc.unfreeze()
