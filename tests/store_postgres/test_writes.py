"""Writers of the shared store: idempotent upserts, atomic snapshots, killed writers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import psycopg
import pytest
from _rows import DIM, make_rows, manifest_bytes

from ragit.contract.errors import IngestStoreWriteUnverified, InputInvalid
from ragit.store.postgres.migrate import migrate
from ragit.store.postgres.read import PgReader
from ragit.store.postgres.steps import bulk_lock_key, writer_lock_key
from ragit.store.postgres.write import PgWriter
from ragit.text.morphemes import morpheme_terms
from ragit.text.terms import cjk_terms, en_terms

CHILD = Path(__file__).parent / "_child.py"
NAMESPACE = "test-ns"  # the child's
SHA_A = "a" * 40
SHA_B = "b" * 40


def _counts(url: str) -> tuple[int, int, int, int]:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT (SELECT count(*) FROM ragit_chunks), (SELECT count(*) FROM ragit_chunk_terms),"
            " (SELECT count(*) FROM ragit_snapshots), (SELECT count(*) FROM ragit_snapshot_chunks)"
        ).fetchone()
    assert row is not None
    return (int(row[0]), int(row[1]), int(row[2]), int(row[3]))


def _advisory_locks(url: str) -> set[tuple[int, str]]:
    """The granted advisory locks (bigint keys) and their modes."""
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT ((classid::bigint << 32) | objid::bigint)::bit(64)::bigint, mode "
            "FROM pg_locks WHERE locktype = 'advisory' AND granted"
        ).fetchall()
    return {(int(key), str(mode)) for key, mode in rows}


def _expected_postings(rows: list) -> int:
    return sum(
        len(set(en_terms(r.search_en)))
        + len(set(cjk_terms(r.search_cjk)))
        + len(set(morpheme_terms(r.search_cjk)))
        for r in rows
    )


def test_write_is_content_addressed_and_idempotent(database: str) -> None:
    migrate()
    rows = make_rows(120, seed=1)
    with PgWriter.open("repo", NAMESPACE, DIM) as writer:
        first = writer.write(rows)
        again = writer.write(rows[::-1] + rows[:10])  # repeats inside one call, too
        # Another repository's writer sees them stored: it embeds nothing again.
        with PgWriter.open("other-repo", NAMESPACE, DIM) as other:
            assert other.existing([r.chunk_id for r in rows] + ["0" * 16]) == {
                r.chunk_id for r in rows
            }
        with PgWriter.open("repo", "another-namespace", DIM) as other:
            assert other.existing([r.chunk_id for r in rows]) == set()
    assert (first.written, first.present) == (120, 0)
    assert (again.written, again.present) == (0, 120)
    chunks, postings, _s, _sc = _counts(database)
    assert chunks == 120
    assert postings == _expected_postings(rows)
    with psycopg.connect(database) as conn:
        stored = conn.execute(
            "SELECT len_en, len_cjk, len_ko FROM ragit_chunks WHERE chunk_id = %s",
            (rows[0].chunk_id,),
        ).fetchone()
        tf = dict(
            conn.execute(
                "SELECT term, tf FROM ragit_chunk_terms WHERE chunk_id = %s AND field = 0",
                (rows[0].chunk_id,),
            ).fetchall()
        )
    assert stored == (
        len(en_terms(rows[0].search_en)),
        len(cjk_terms(rows[0].search_cjk)),
        len(morpheme_terms(rows[0].search_cjk)),
    )
    assert tf == dict(Counter(en_terms(rows[0].search_en)))


def test_concurrent_upserts_from_several_processes_store_each_chunk_once(database: str) -> None:
    migrate()
    n = 400
    # Four processes write the same rows in different orders: two share a repository (the
    # advisory lock makes them take turns), two others race them on the same chunk ids.
    repositories = ["repo-1", "repo-1", "repo-2", "repo-3"]
    procs = [
        subprocess.Popen(
            [sys.executable, str(CHILD), "write", repo, "7", str(n), str(i)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for i, repo in enumerate(repositories)
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, [err.decode()[-2000:] for _o, err in outs]
    written = [json.loads(out)["written"] for out, _err in outs]
    assert sum(written) == n  # every chunk inserted by exactly one process
    rows = make_rows(n, seed=7)
    chunks, postings, _s, _sc = _counts(database)
    assert chunks == n
    assert postings == _expected_postings(rows)


def test_publish_is_visible_at_once_and_readable_by_a_client_that_never_wrote(
    database: str,
) -> None:
    migrate()
    rows = make_rows(60, seed=2)
    ids = [r.chunk_id for r in rows]
    with PgWriter.open("repo", NAMESPACE, DIM) as writer:
        writer.write(rows)
        writer.publish(SHA_A, manifest_bytes(SHA_A, ids[:40]), ids[:40])
    with PgReader.open() as reader:  # another connection, no local state at all
        snap = reader.snapshot("repo", SHA_A)
        assert snap is not None
        assert snap.manifest == manifest_bytes(SHA_A, ids[:40])
        assert snap.chunk_ids == tuple(sorted(ids[:40]))
        assert snap.namespace == NAMESPACE
        assert reader.snapshot("repo", SHA_B) is None
        assert reader.snapshot("other-repo", SHA_A) is None
        assert reader.snapshot_shas("repo") == [SHA_A]
        fetched = reader.fetch(snap, ids)
        assert sorted(fetched) == sorted(ids[:40])  # nothing outside the snapshot
        assert fetched[ids[0]].text == rows[0].text


def test_republishing_a_commit_replaces_it_in_one_transaction(database: str) -> None:
    migrate()
    rows = make_rows(30, seed=3)
    ids = [r.chunk_id for r in rows]
    with PgWriter.open("repo", NAMESPACE, DIM) as writer:
        writer.write(rows)
        writer.publish(SHA_A, manifest_bytes(SHA_A, ids[:10]), ids[:10])
        writer.publish(SHA_A, manifest_bytes(SHA_A, ids[10:]), ids[10:])
    with PgReader.open() as reader:
        snap = reader.snapshot("repo", SHA_A)
        assert snap is not None
        assert snap.chunk_ids == tuple(sorted(ids[10:]))
    assert _counts(database)[2:] == (1, 20)


def test_publish_refuses_chunks_that_are_not_stored(database: str) -> None:
    migrate()
    rows = make_rows(10, seed=4)
    ids = [r.chunk_id for r in rows]
    with PgWriter.open("repo", NAMESPACE, DIM) as writer:
        writer.write(rows[:8])
        with pytest.raises(IngestStoreWriteUnverified) as info:
            writer.publish(SHA_A, manifest_bytes(SHA_A, ids), ids)
        assert info.value.details == {"missingCount": 2}
        with pytest.raises(InputInvalid):
            writer.publish("abc", b"{}", ids[:8])
        with pytest.raises(InputInvalid):
            writer.write([rows[0].__class__(**{**rows[0].__dict__, "vector": [0.0] * (DIM + 1)})])
    assert _counts(database)[2:] == (0, 0)
    with (
        PgWriter.open("repo", NAMESPACE, DIM + 1) as other,
        pytest.raises(InputInvalid, match="8-dimensional"),
    ):
        other.publish(SHA_B, b"{}", [])


def _paused_child(phase: str, release: Path, *args: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "RAGIT_FAULT_PAUSE_AT": phase, "RAGIT_FAULT_RELEASE": str(release)}
    proc = subprocess.Popen(
        [sys.executable, str(CHILD), *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stderr is not None
    line = proc.stderr.readline().decode()
    assert f"ragit-fault: paused at {phase}" in line, line + proc.stderr.read().decode()
    return proc


def _wait_backend_gone(url: str, pid_hint: int) -> None:
    deadline = time.monotonic() + 30
    with psycopg.connect(url, autocommit=True) as conn:
        while time.monotonic() < deadline:
            (n,) = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'ragit-writer'"
            ).fetchone()
            if n == 0:
                return
            time.sleep(0.05)
    raise AssertionError(f"the killed writer's backend (client pid {pid_hint}) lingers")


def test_a_writer_killed_mid_publish_leaves_nothing_visible(database: str, tmp_path: Path) -> None:
    migrate()
    n = 50
    ids = [r.chunk_id for r in make_rows(n, seed=5)]
    proc = _paused_child(
        "pg-snapshot-inserted", tmp_path / "never", "publish", "repo", "5", str(n), SHA_A
    )
    try:
        # Paused inside the publishing transaction: the rows exist only in it.
        with PgReader.open() as reader:
            assert reader.snapshot("repo", SHA_A) is None
        assert _counts(database)[2:] == (0, 0)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    _wait_backend_gone(database, proc.pid)
    assert _counts(database)[2:] == (0, 0)  # rolled back by the server
    with PgReader.open() as reader:
        assert reader.snapshot("repo", SHA_A) is None
    # The lock died with the writer: the next writer publishes the same commit.
    out = subprocess.run(
        [sys.executable, str(CHILD), "publish", "repo", "5", str(n), SHA_A],
        capture_output=True,
        timeout=120,
        check=True,
    )
    assert json.loads(out.stdout) == {"published": SHA_A}
    with PgReader.open() as reader:
        snap = reader.snapshot("repo", SHA_A)
        assert snap is not None
        assert snap.chunk_ids == tuple(sorted(ids))


def test_a_writer_killed_mid_write_leaves_no_rows(database: str, tmp_path: Path) -> None:
    migrate()
    proc = _paused_child("pg-chunks-inserted", tmp_path / "never", "write", "repo", "6", "50", "0")
    try:
        assert _counts(database) == (0, 0, 0, 0)
        # A concurrent writer of the same repository waits on the advisory lock, not on rows;
        # the first load into the namespace also holds its bulk lock, shared.
        assert _advisory_locks(database) == {
            (writer_lock_key("repo", NAMESPACE), "ExclusiveLock"),
            (bulk_lock_key(NAMESPACE), "ShareLock"),
        }
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    _wait_backend_gone(database, proc.pid)
    assert _counts(database) == (0, 0, 0, 0)
