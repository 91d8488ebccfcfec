"""Bulk loads of the shared store: without the namespace's HNSW graph, built afterwards.

A load that adds many vectors relative to the namespace (the first one, or any write of at
least ``BULK_MIN_ROWS`` rows and ``BULK_RATIO`` of the namespace) runs without the index;
``publish`` builds it once the snapshot is visible. Readers get exact answers throughout,
and a loader killed before the build, or a build killed half-way (an invalid index), leaves
a namespace the next writer finishes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest
from _rows import DIM, make_rows, manifest_bytes

import ragit.store.postgres.write as write_module
from ragit.store.postgres.migrate import migrate
from ragit.store.postgres.read import PgReader
from ragit.store.postgres.write import BULK_MIN_ROWS, PgWriter, index_name

CHILD = Path(__file__).parent / "_child.py"
NAMESPACE = "test-ns"  # the child's
SHA_A = "a" * 40
SHA_B = "b" * 40
SHA_C = "c" * 40


@pytest.fixture(autouse=True)
def _graphs_for_small_namespaces(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests' namespaces are small: they get their graph all the same (the child
    processes set the same)."""
    monkeypatch.setattr(write_module, "GRAPH_MIN_ROWS", 0)


def _index(url: str, namespace_id: int = 1) -> tuple[int, bool] | None:
    """The namespace's HNSW index as (oid, valid), None when it does not exist."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT indexrelid::oid::bigint, indisvalid FROM pg_index "
            "WHERE indexrelid = to_regclass(%s)",
            (index_name(namespace_id),),
        ).fetchone()
    return None if row is None else (int(row[0]), bool(row[1]))


def _advisory_locks(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        (n,) = conn.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'").fetchone()
    return int(n)


def _publish(writer: PgWriter, sha: str, rows: list[Any]) -> None:
    ids = [r.chunk_id for r in rows]
    writer.publish(sha, manifest_bytes(sha, ids), ids)


def _cosine_top(rows: list[Any], q: np.ndarray, k: int) -> list[str]:
    scored = []
    for r in rows:
        v = np.asarray(r.vector, dtype=np.float64)
        scored.append((-float(v @ q / (np.linalg.norm(v) * np.linalg.norm(q))), r.chunk_id))
    return [cid for _s, cid in sorted(scored)[:k]]


def _assert_exact(sha: str, rows: list[Any], seed: int = 3) -> None:
    """Exact and approximate top-10 within the snapshot equal the brute-force answer."""
    rng = np.random.default_rng(seed)
    with PgReader.open() as reader:
        snap = reader.snapshot("repo", sha)
        assert snap is not None
        assert snap.chunk_ids == tuple(sorted(r.chunk_id for r in rows))
        for _ in range(4):
            q = rng.normal(size=DIM)
            want = _cosine_top(rows, q, 10)
            assert [c for c, _s in reader.vector_search(snap, q.tolist(), 10)] == want
            got = reader.vector_search(snap, q.tolist(), 10, approximate=True)
            assert [c for c, _s in got] == want


def _paused_child(phase: str, release: Path, *args: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "RAGIT_FAULT_PAUSE_AT": phase, "RAGIT_FAULT_RELEASE": str(release)}
    proc = subprocess.Popen(
        [sys.executable, str(CHILD), *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stderr is not None
    line = proc.stderr.readline().decode()
    assert f"ragit-fault: paused at {phase}" in line, line + proc.stderr.read().decode()
    return proc


def _wait_writers_gone(url: str) -> None:
    deadline = time.monotonic() + 30
    with psycopg.connect(url, autocommit=True) as conn:
        while time.monotonic() < deadline:
            (n,) = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'ragit-writer'"
            ).fetchone()
            if n == 0:
                return
            time.sleep(0.05)
    raise AssertionError("a killed writer's backend lingers")


def test_the_first_load_runs_without_the_index_and_publish_builds_it(database: str) -> None:
    migrate()
    rows = make_rows(300, seed=21)
    with PgWriter.open("repo", NAMESPACE, DIM) as writer:
        writer.write(rows[:150])
        writer.write(rows[150:])
        assert _index(database) is None  # loaded without the graph
        _publish(writer, SHA_A, rows)
        assert _index(database) is not None and _index(database)[1]  # type: ignore[index]
        assert _advisory_locks(database) == 0  # the bulk lock is released
        # A second publish finds the index built and builds nothing.
        assert writer.build_index() is False
    _assert_exact(SHA_A, rows)


def test_a_large_write_into_an_indexed_namespace_reloads_the_graph(database: str) -> None:
    migrate()
    base = make_rows(100, seed=22)
    small = make_rows(50, seed=23)
    large = make_rows(BULK_MIN_ROWS + 100, seed=24)
    with PgWriter.open("repo", NAMESPACE, DIM) as writer:
        writer.write(base)
        _publish(writer, SHA_A, base)
        first = _index(database)
        assert first is not None and first[1]
        # A small write goes into the graph as it is.
        writer.write(small)
        assert _index(database) == first
        _publish(writer, SHA_B, base + small)
        assert _index(database) == first
        # A large one (more than BULK_MIN_ROWS and BULK_RATIO of the namespace) drops it ...
        writer.write(large)
        assert _index(database) is None
        # ... and publish builds it again, over every row.
        _publish(writer, SHA_C, base + small + large)
        second = _index(database)
        assert second is not None and second[1] and second[0] != first[0]
        # A caller that announces a large load gets the same.
        assert writer.expect(5000) is True
        assert _index(database) is None
        assert writer.build_index() is True
        assert _index(database) is not None
        # Announcing a small one changes nothing.
        assert writer.expect(10) is False
    _assert_exact(SHA_C, base + small + large)
    _assert_exact(SHA_A, base)


def test_concurrent_loaders_build_the_index_once_the_last_finishes(database: str) -> None:
    migrate()
    rows_1, rows_2 = make_rows(120, seed=25), make_rows(120, seed=26)
    with (
        PgWriter.open("repo", NAMESPACE, DIM) as one,
        PgWriter.open("other-repo", NAMESPACE, DIM) as two,
    ):
        one.write(rows_1)
        two.write(rows_2)
        _publish(one, SHA_A, rows_1)
        assert _index(database) is None  # the other loader is still loading
        two.write(rows_2)
        ids = [r.chunk_id for r in rows_2]
        two.publish(SHA_B, manifest_bytes(SHA_B, ids), ids)
        assert _index(database) is not None and _index(database)[1]  # type: ignore[index]
    _assert_exact(SHA_A, rows_1)


def test_a_reader_during_a_bulk_load_gets_exact_answers(database: str, tmp_path: Path) -> None:
    migrate()
    base = make_rows(100, seed=27)
    with PgWriter.open("repo", NAMESPACE, DIM) as writer:
        writer.write(base)
        _publish(writer, SHA_A, base)
    first = _index(database)
    assert first is not None
    release = tmp_path / "release"
    # The child writes 400 new rows (a bulk load): paused inside its write transaction,
    # after the index was dropped.
    proc = _paused_child("pg-chunks-inserted", release, "publish", "repo", "28", "400", SHA_B)
    try:
        assert _index(database) is None
        _assert_exact(SHA_A, base)
        release.touch()
        _out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()[-2000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    rebuilt = _index(database)
    assert rebuilt is not None and rebuilt[1] and rebuilt[0] != first[0]
    _assert_exact(SHA_A, base)
    _assert_exact(SHA_B, make_rows(400, seed=28))


def test_a_loader_killed_before_the_build_leaves_a_usable_namespace(
    database: str, tmp_path: Path
) -> None:
    migrate()
    rows = make_rows(300, seed=29)
    proc = _paused_child(
        "pg-index-building", tmp_path / "never", "publish", "repo", "29", "300", SHA_A
    )
    try:
        # The snapshot is published; the graph is not built: reads are exact meanwhile.
        assert _index(database) is None
        _assert_exact(SHA_A, rows)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    _wait_writers_gone(database)
    assert _advisory_locks(database) == 0  # the bulk lock died with the loader
    _assert_exact(SHA_A, rows)
    # The next writer to publish builds the index.
    more = make_rows(20, seed=30)
    with PgWriter.open("repo", NAMESPACE, DIM) as writer:
        writer.write(more)
        _publish(writer, SHA_B, rows + more)
    built = _index(database)
    assert built is not None and built[1]
    _assert_exact(SHA_B, rows + more)


def test_a_build_killed_half_way_leaves_an_invalid_index_the_next_writer_replaces(
    database: str,
) -> None:
    migrate()
    rows = make_rows(300, seed=31)
    with PgWriter.open("repo", NAMESPACE, DIM) as writer:
        writer.write(rows)
        ids = [r.chunk_id for r in rows]
        writer.publish(SHA_A, manifest_bytes(SHA_A, ids), ids)
        assert writer.expect(5000) is True  # the index is dropped for a load
    assert _index(database) is None
    # A transaction that holds ragit_chunks open for writing: CREATE INDEX CONCURRENTLY
    # registers the (invalid) index, then waits for it; the build is terminated there.
    blocker = psycopg.connect(database)
    blocker.execute("LOCK TABLE ragit_chunks IN ROW EXCLUSIVE MODE")
    outcome: dict[str, Any] = {}

    def build() -> None:
        try:
            with PgWriter.open("repo", NAMESPACE, DIM) as builder:
                outcome["built"] = builder.build_index()
        except Exception as exc:  # the typed error of the terminated build
            outcome["error"] = exc

    thread = threading.Thread(target=build)
    thread.start()
    try:
        with psycopg.connect(database, autocommit=True) as admin:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                row = admin.execute(
                    "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                    "AND query LIKE 'CREATE INDEX CONCURRENTLY%'"
                ).fetchone()
                if row is not None:
                    break
                time.sleep(0.05)
            else:
                pytest.fail("the build never waited")
            assert _index(database) == (_index(database)[0], False)  # type: ignore[index]
            admin.execute("SELECT pg_terminate_backend(%s)", (row[0],))
        thread.join(30)
    finally:
        blocker.rollback()
        blocker.close()
    assert "error" in outcome, outcome
    invalid = _index(database)
    assert invalid is not None and invalid[1] is False
    _assert_exact(SHA_A, rows)  # an invalid index is never used
    with PgWriter.open("repo", NAMESPACE, DIM) as writer:
        assert writer.build_index() is True
    rebuilt = _index(database)
    assert rebuilt is not None and rebuilt[1] and rebuilt[0] != invalid[0]
    _assert_exact(SHA_A, rows)


def test_a_small_namespace_gets_no_graph_until_it_grows(
    database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(write_module, "GRAPH_MIN_ROWS", 250)
    migrate()
    rows = make_rows(200, seed=32)
    more = make_rows(100, seed=33)
    with PgWriter.open("repo", NAMESPACE, DIM) as writer:
        writer.write(rows)
        _publish(writer, SHA_A, rows)
        assert _index(database) is None  # 200 rows: scanned exactly, no graph
        assert writer.build_index() is False
        writer.write(more)
        _publish(writer, SHA_B, rows + more)
        built = _index(database)
        assert built is not None and built[1]  # 300 rows: the graph is built
    _assert_exact(SHA_A, rows)
    _assert_exact(SHA_B, rows + more)
