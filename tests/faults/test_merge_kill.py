"""A kill -9 inside the writer's segment merge (the recipe of docs/faults.md).

A small store is merged by the ingest that wrote it (zvec ``optimize()``, about half of a
small incremental ingest). The recipe: pause an ``ingest`` at ``store-written``, release it,
``kill -9`` it a few tens of milliseconds later (inside the merge), then commit and run two
ordinary ingests and ask every snapshot again. Merging the canonical collection in place left
it inconsistent ("FtsIndexer::insert failed … field is sealed", "inconsistent total row
counts"): every later ingest failed. The merge now runs on a copy that is swapped in through
``.ragit/store.next`` (:func:`ragit.store.compact.merge_held`), so a kill at any instant of it
leaves the canonical collection as the insert left it, and the next writer rolls the
interrupted transaction back.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from tests.faults._faultkit import (
    Case,
    _answers,
    _doctor_failures,
    compare_answers,
    prepare,
)
from tests.snapshot._kit import wait_for_line

FOURTH = "docs/adr/0003-outbox.md"
OUTBOX = "# Outbox\n\nEvents leave through an outbox table polled by the relay.\n"
FIFTH = "docs/runbooks/relay.md"
RELAY = "# Relay runbook\n\nRestart the relay when the outbox lag exceeds five minutes.\n"

# Milliseconds between releasing the writer paused at store-written and the kill: the merge
# of the docs-basic store takes a few hundred of them on a loaded 2-core box.
OFFSETS_MS = (30, 70, 120, 200, 320)

_REFERENCE: dict[str, Any] = {}


def _later_commits(case: Case) -> None:
    """Two more commits, each ingested by an ordinary ``ragit ingest``; asserts both pass."""
    repo = case.repo
    for path, text in ((FOURTH, OUTBOX), (FIFTH, RELAY)):
        repo.commit({path: text}, f"add {path}")
        run = repo.ragit("ingest")
        assert run.code == 0, run.output


def _reference(tmp_path: Path) -> dict[str, Any]:
    """Every snapshot's answers after the same commits and ingests with no kill (per worker)."""
    if not _REFERENCE:
        case = prepare("ingest", tmp_path / "_reference-merge")
        _later_commits(case)
        for label, sha in case.snapshots.items():
            _REFERENCE[label] = _answers(case.repo, sha)
    return _REFERENCE


@pytest.mark.parametrize("offset_ms", OFFSETS_MS)
def test_a_kill_inside_the_inline_merge_keeps_every_snapshot_and_later_ingests_work(
    tmp_path: Path, offset_ms: int
) -> None:
    """Contract-mandated (§6): a kill -9 inside the writer's merge never breaks the store: the next
    ingests succeed and every published snapshot answers as with no kill."""
    expected = _reference(tmp_path)
    case = prepare("ingest", tmp_path)
    repo = case.repo
    assert case.extra["head"]  # the commit this ingest writes (S3)
    release = repo.root.parent / "release"
    child = repo.popen(
        "ingest",
        env={"RAGIT_FAULT_PAUSE_AT": "store-written", "RAGIT_FAULT_RELEASE": str(release)},
    )
    try:
        wait_for_line(child.stderr, "ragit-fault: paused at store-written")
        release.touch()
        time.sleep(offset_ms / 1000)
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=60)
    finally:
        release.touch()
        if child.poll() is None:
            child.kill()
            child.wait()

    readers = compare_answers(case, [case.before], allow={"SNAPSHOT_STORE_UNAVAILABLE"})
    assert set(readers.values()) <= {"same", "SNAPSHOT_STORE_UNAVAILABLE"}, readers

    _later_commits(case)  # the first recovers the killed transaction, then writes

    assert compare_answers(case, [expected, case.before], allow=set()) == {
        "S1": "same",
        "S2": "same",
    }
    assert _doctor_failures(repo)[0] == []


def test_the_inline_merge_keeps_every_file_of_the_collection_directory(tmp_path: Path) -> None:
    """ragit.store.compact.merge_held: the merged copy carries every file of
    ``.ragit/store/chunks`` (whatever its name) and of the store directory, and leaves no
    ``store.next``, ``store.prev`` or merge copy behind."""
    from ragit.store.lock import WriterLock
    from ragit.store.publishing import publish

    case = prepare("ingest", tmp_path)
    repo = case.repo
    extra = repo.ws.store_dir / "chunks" / "terms.sqlite"
    with WriterLock.acquire(repo.ws, command="test", head_sha=None) as lock:
        extra.write_bytes(b"beside the collection\x00\x01")
        publish(repo.ws, lock)  # a RAGit write: its fingerprint covers the new file
    before = json.loads((repo.ws.store_dir / "meta.json").read_text(encoding="utf-8"))

    run = repo.ragit("ingest")

    assert run.code == 0, run.output
    after = json.loads((repo.ws.store_dir / "meta.json").read_text(encoding="utf-8"))
    assert after["generation"] == before["generation"] + 1
    assert extra.read_bytes() == b"beside the collection\x00\x01"
    assert (repo.ws.store_dir / "referenced.ids").is_file()
    assert not (repo.ws.ragit_dir / "store.next").exists()
    assert not (repo.ws.ragit_dir / "store.prev").exists()
    assert not list(repo.ws.runtime_dir.glob("compact-*"))
    chunks = repo.ws.store_dir / "chunks"
    segments = [p for p in chunks.iterdir() if p.name.isdigit() and any(p.glob("scalar.*.ipc"))]
    assert len(segments) == 1, segments
    assert _doctor_failures(repo)[0] == []
