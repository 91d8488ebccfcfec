"""A store generation that lacks chunks a manifest names: a typed error, never a short answer.

The reader copy of the published generation is damaged by deleting rows from it (as a kill
inside a merge once produced: a published generation without most of its rows). A query
must fail with ``SNAPSHOT_STORE_UNAVAILABLE``; doctor names the store rebuild, and running
that command makes every snapshot answer again.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable
from pathlib import Path

import pytest
from tests.snapshot._kit import RagitRepo, indexed_repo, private_cache  # noqa: F401

from ragit.contract.errors import RagitError
from ragit.store._zvec import Collection
from ragit.store.copies import copy_path

QUESTION = "idempotency keys retry"
REBUILD = "ragit repair --apply --action store-rebuild"


def _delete_from_reader_copy(repo: RagitRepo, ids: Iterable[str]) -> None:
    meta = json.loads((repo.ws.store_dir / "meta.json").read_text(encoding="utf-8"))
    path = copy_path(repo.ws, meta["storeId"], meta["generation"])
    collection = Collection.open(path, read_only=False)
    try:
        collection.delete(sorted(ids))
        collection.flush()
    finally:
        collection.close()


def _head_chunks(repo: RagitRepo) -> list[list[str]]:
    return [d["chunkIds"] for d in repo.manifest(repo.head())["docs"]]


@pytest.mark.parametrize("lost", ["all", "one"])
def test_a_query_over_missing_chunks_is_snapshot_store_unavailable(
    tmp_path: Path, lost: str
) -> None:
    """Contract-mandated (§7): never ``ok`` with fewer (or no) hits."""
    repo = indexed_repo(tmp_path, "docs-basic")
    assert repo.ragit("query", QUESTION, "--format", "json").data["hits"]
    docs = _head_chunks(repo)
    ids = {cid for chunks in docs for cid in chunks} if lost == "all" else {docs[0][0]}
    _delete_from_reader_copy(repo, ids)

    with pytest.raises(RagitError) as caught:
        repo.query(QUESTION, top_k=5)
    assert caught.value.code == "SNAPSHOT_STORE_UNAVAILABLE"
    run = repo.ragit("query", QUESTION, "--format", "json")
    assert run.code == 3, run.output
    assert run.error["code"] == "SNAPSHOT_STORE_UNAVAILABLE"


def test_doctor_names_the_store_rebuild_for_missing_chunks_and_it_fixes_them(
    tmp_path: Path,
) -> None:
    """Contract-mandated (§6): doctor's recovery for missing chunks is the command that fixes
    them."""
    repo = indexed_repo(tmp_path, "docs-basic")
    before = repo.ragit("query", QUESTION, "--format", "json").data["hits"]
    _delete_from_reader_copy(repo, {cid for chunks in _head_chunks(repo) for cid in chunks})

    report, error = repo.doctor()
    failed = {c["name"]: c.get("recovery") for c in report["checks"] if not c["ok"]}
    assert failed.get("ragit.manifest-consistency") == REBUILD, failed
    assert error is not None and error.recovery == REBUILD

    fix = repo.ragit(*shlex.split(REBUILD)[1:])
    assert fix.code == 0, fix.output
    report, error = repo.doctor()
    assert error is None, [c for c in report["checks"] if not c["ok"]]
    after = repo.ragit("query", QUESTION, "--format", "json").data["hits"]
    assert [h["citation"] for h in after] == [h["citation"] for h in before]


def test_with_head_unindexed_too_doctor_names_the_rebuild_first(tmp_path: Path) -> None:
    """Contract-mandated (§6): an ingest cannot fix missing chunks (it fails on the broken store and
    points back at doctor), so doctor's recovery is the rebuild even when HEAD is new."""
    repo = indexed_repo(tmp_path, "docs-basic")
    _delete_from_reader_copy(repo, {cid for chunks in _head_chunks(repo) for cid in chunks})
    repo.commit({"docs/notes.md": "# Notes\n\nA new note.\n"}, "note")

    _report, error = repo.doctor()
    assert error is not None and error.recovery == REBUILD

    fix = repo.ragit(*shlex.split(REBUILD)[1:])
    assert fix.code == 0, fix.output
    assert repo.ragit("ingest").code == 0
    _report, error = repo.doctor()
    assert error is None
