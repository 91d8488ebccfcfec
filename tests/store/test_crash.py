"""Crash safety with real processes: kill -9 (os._exit) at every write phase, readers during a
paused writer. Each writer is writer_proc.py running the full ingest write protocol."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from ragit.contract.errors import StoreReadBusy
from ragit.store.copies import copies_root
from ragit.store.journal_scan import scan_journals
from ragit.store.lock import inspect_lock
from ragit.store.meta import read_meta
from ragit.store.reader import StoreReader
from ragit.workspace import Workspace

SHA_A, SHA_B, SHA_C = "a" * 40, "b" * 40, "c" * 40
N = 2100  # three insert batches
SHARED = 40
Runner = Callable[..., subprocess.Popen[str]]

# (fault point, whether B's manifest is committed when the process dies,
#  whether B's generation is published when it dies, rows B writes)
FAULTS = [
    ("prepared", False, False, N),
    ("store-insert-batch", False, False, N),  # after the first of three batches
    # after the 10th of 10 batches, while the background flush of batches 1-8 may run
    ("store-insert-batch:10", False, False, 9500),
    ("store-written", False, False, N),
    ("store-verified", False, False, N),
    ("manifest-committed", True, False, N),
    ("publish-copied", True, False, N),
    ("publish-meta-written", True, True, N),
    ("published", True, True, N),
    ("completed", True, True, N),
]


def _finish(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = proc.communicate()
    return proc.returncode, out, err


def _ok(proc: subprocess.Popen[str]) -> dict[str, object]:
    code, out, err = _finish(proc)
    assert code == 0, err
    result: dict[str, object] = json.loads(out.strip().splitlines()[-1])
    return result


def _ids(prefix: str, n: int) -> list[str]:
    return [f"{prefix}-{i:05d}" for i in range(n)]


@pytest.mark.parametrize(("point", "committed", "published", "n"), FAULTS)
def test_kill_at_any_phase_keeps_old_generation_readable_and_next_writer_recovers(
    ws: Workspace, run_writer: Runner, point: str, committed: bool, published: bool, n: int
) -> None:
    """Contract-mandated (§6; docs/faults.md): a crash at any phase leaves the old snapshot
    queryable and the new one complete or recoverable; the next writer reclaims the lock and
    recovers."""
    first = _ok(run_writer("ingest", SHA_A, "a", "50", str(SHARED)))
    assert first["generation"] == 1

    code, _, _ = _finish(
        run_writer("ingest", SHA_B, "b", str(n), str(SHARED), env={"RAGIT_FAULT_AT": point})
    )
    assert code == 137
    assert inspect_lock(ws).state == "stale"
    assert ws.manifest_path(SHA_B).exists() is committed

    # Readers keep working from the last published generation while the lock is stale.
    with StoreReader.open_latest(ws, wait_ms=0) as reader:
        assert reader.generation == (2 if published else 1)
        got = reader.fetch([*_ids("a", 50), *_ids("shared", SHARED)])
        assert len(got) == 50 + SHARED
        b_rows = reader.fetch(_ids("b", n))
        assert len(b_rows) == (n if published else 0)

    third = _ok(run_writer("ingest", SHA_C, "c", "30", str(SHARED)))
    warnings = " ".join(str(w) for w in third["warnings"])  # type: ignore[attr-defined]
    if point != "completed":
        assert "reclaimed" in warnings
        assert third["rolledBack"] or third["finalized"]
    assert bool(third["finalized"]) is (committed and point != "completed")
    assert bool(third["rolledBack"]) is (not committed)

    assert inspect_lock(ws).state == "missing"
    assert {s.classification for s in scan_journals(ws)} == {"completed"}
    with StoreReader.open_latest(ws, wait_ms=0) as reader:
        assert reader.generation == read_meta(ws).generation  # type: ignore[union-attr]
        assert (
            len(reader.fetch([*_ids("a", 50), *_ids("c", 30), *_ids("shared", SHARED)]))
            == 50 + 30 + SHARED
        )
        # B's rows survive exactly when its manifest was committed (no residue otherwise).
        assert len(reader.fetch(_ids("b", n))) == (n if committed else 0)
        assert reader.chunk_count == 50 + 30 + SHARED + (n if committed else 0)


@pytest.mark.parametrize("phase", ["store-written", "manifest-committed"])
def test_reader_answers_from_previous_generation_while_a_writer_is_paused(
    ws: Workspace, run_writer: Runner, tmp_path: Path, phase: str
) -> None:
    """Contract §6: queries never block on ingest; without a copy they fail fast as busy."""
    _ok(run_writer("ingest", SHA_A, "a", "20", "0"))
    release = tmp_path / "release"
    writer = run_writer(
        "ingest",
        SHA_B,
        "b",
        "20",
        "0",
        env={"RAGIT_FAULT_PAUSE_AT": phase, "RAGIT_FAULT_RELEASE": str(release)},
    )
    assert writer.stderr is not None
    assert writer.stderr.readline().strip() == f"ragit-fault: paused at {phase}"
    assert inspect_lock(ws).state == "active"

    with StoreReader.open_latest(ws, wait_ms=0) as reader:
        assert reader.generation == 1
        assert len(reader.fetch(_ids("a", 20))) == 20
        assert reader.fetch(_ids("b", 20)) == {}

    shutil.rmtree(copies_root(ws))  # cache cleared while the writer is active
    with pytest.raises(StoreReadBusy):
        StoreReader.open_latest(ws, wait_ms=50)

    release.touch()
    result = _ok(writer)
    assert result["generation"] == 2
    with StoreReader.open_latest(ws, wait_ms=0) as reader:
        assert reader.generation == 2
        assert len(reader.fetch([*_ids("a", 20), *_ids("b", 20)])) == 40


def test_reader_recreates_the_copy_after_a_crashed_writer_is_recovered(
    ws: Workspace, run_writer: Runner
) -> None:
    """Design §2.5: a missing copy is re-made from the canonical files once no writer is left."""
    _ok(run_writer("ingest", SHA_A, "a", "20", "0"))
    code, _, _ = _finish(
        run_writer("ingest", SHA_B, "b", "20", "0", env={"RAGIT_FAULT_AT": "store-written"})
    )
    assert code == 137
    shutil.rmtree(copies_root(ws))
    with pytest.raises(StoreReadBusy):  # the dead writer's residue may sit in the files
        StoreReader.open_latest(ws, wait_ms=0)
    _ok(run_writer("ingest", SHA_C, "c", "5", "0"))
    shutil.rmtree(copies_root(ws))
    with StoreReader.open_latest(ws, wait_ms=0) as reader:
        assert len(reader.fetch([*_ids("a", 20), *_ids("c", 5)])) == 25
        assert reader.fetch(_ids("b", 20)) == {}
