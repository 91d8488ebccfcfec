"""Loading a manifest and the cyclic garbage collector (a start-up cost of every read)."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.snapshot._kit import TIMEOUT, indexed_repo

from ragit import _process
from ragit.retrieve import snapshot_chunks as engine
from ragit.snapshot import manifest as manifest_module

# Runs the real `ragit` entry point in a fresh interpreter and reports, as the process
# exits, how many objects the collector's permanent generation holds.
_FREEZE_PROBE = """
import atexit, gc, os, sys
atexit.register(lambda: os.write(2, b"frozen=%d\\n" % gc.get_freeze_count()))
from ragit.cli.main import main
main(sys.argv[1:])
"""


def test_loading_a_manifest_as_a_library_leaves_the_collector_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Implementation choice: a library function sets no process-wide collector policy; with
    no entry point's policy registered, nothing is frozen."""
    repo = indexed_repo(tmp_path, "docs-basic")
    head = repo.head()
    monkeypatch.setattr(_process, "_hooks", {})
    monkeypatch.setattr(manifest_module, "_CACHE", {})
    gc.unfreeze()
    try:
        loaded = manifest_module.load_manifest(repo.ws, head)
        assert loaded.commit_sha == head
        assert gc.get_freeze_count() == 0
        assert gc.isenabled()
    finally:
        gc.unfreeze()


def test_an_entry_point_policy_runs_after_each_manifest_parsed_from_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Implementation choice: the registered hook runs once per manifest parsed from disk,
    not again for one this process already holds."""
    repo = indexed_repo(tmp_path, "docs-basic")
    head = repo.head()
    calls: list[str] = []
    monkeypatch.setattr(_process, "_hooks", {})
    monkeypatch.setattr(manifest_module, "_CACHE", {})
    _process.on_manifest_loaded(lambda: calls.append("loaded"))
    manifest_module.load_manifest(repo.ws, head)
    manifest_module.load_manifest(repo.ws, head)
    assert calls == ["loaded"]


def test_the_ragit_cli_freezes_the_collector_once_a_query_read_its_manifest(
    tmp_path: Path,
) -> None:
    """Implementation choice: the short-lived `ragit` process moves a parsed manifest's
    objects to the collector's permanent generation, so full collections skip them."""
    repo = indexed_repo(tmp_path, "docs-basic")
    proc = subprocess.run(
        [sys.executable, "-c", _FREEZE_PROBE, "query", "install", "--format", "json"],
        cwd=repo.root,
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=TIMEOUT,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    frozen = [line for line in proc.stderr.splitlines() if line.startswith("frozen=")]
    assert frozen and int(frozen[-1].split("=")[1]) > 0, proc.stderr


def test_a_re_read_manifest_replaces_its_snapshots_cached_chunk_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Implementation choice: the per-snapshot chunk-id set is keyed by the snapshot and
    held with the manifest it came from, so re-reading one snapshot never crowds out the
    others and a new parse of it is never answered from the old one."""
    repo = indexed_repo(tmp_path, "docs-basic")
    head = repo.head()
    monkeypatch.setattr(engine, "_DOC_CHUNKS", {})
    raw = repo.ws.manifest_path(head).read_bytes()
    first = manifest_module.parse_manifest(head, raw, "x", packs=repo.ws.chunk_packs_dir)
    again = manifest_module.parse_manifest(head, raw, "x", packs=repo.ws.chunk_packs_dir)
    assert first is not again
    ids = engine.document_chunk_ids(first)
    assert engine.document_chunk_ids(first) is ids
    assert engine.document_chunk_ids(again) == ids
    assert list(engine._DOC_CHUNKS) == [head]
    assert engine._DOC_CHUNKS[head][0] is again
