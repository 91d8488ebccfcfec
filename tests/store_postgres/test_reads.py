"""Readers of the shared store: per-snapshot BM25 equal to the local keyword index's,
vector search within a snapshot, read-only transactions, a server restart mid-read."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest
from _rows import DIM, make_rows, manifest_bytes

from ragit.contract.errors import StoreReadBusy
from ragit.retrieve.keyword import best, bm25, snapshot_terms
from ragit.store.postgres.migrate import migrate
from ragit.store.postgres.read import PgReader
from ragit.store.postgres.write import PgWriter, index_name
from ragit.store.terms import TermReader, TermWriter
from ragit.text.terms import cjk_terms, en_terms, query_terms

NAMESPACE = "test-ns"
SHA_A = "a" * 40
SHA_B = "b" * 40
QUESTIONS = (
    "snapshot commit queries",
    "kubernetes feature gates rollout kube-apiserver",
    "claim's v1.28 kubernetes.io feature_gate",
    "커밋을 스냅샷 검색은",
    "pods pods scheduler node 커밋",
    "nothing matches zzz",
)


def _publish(rows: list[Any], snapshots: dict[str, list[str]]) -> None:
    with PgWriter.open("repo", NAMESPACE, DIM) as writer:
        writer.write(rows)
        for sha, ids in snapshots.items():
            writer.publish(sha, manifest_bytes(sha, ids), ids)


def _documents(ids: list[str], size: int) -> list[list[str]]:
    # Documents of a few chunks each; one chunk shared by two documents.
    docs = [ids[i : i + size] for i in range(0, len(ids), size)]
    docs[-1] = [*docs[-1], ids[0]]
    return docs


def test_bm25_per_snapshot_equals_the_local_keyword_index(database: str, tmp_path: Path) -> None:
    migrate()
    rows = make_rows(300, seed=11)
    ids = [r.chunk_id for r in rows]
    # Snapshot A: the first 200 chunks; snapshot B overlaps it and brings 100 others, so
    # statistics over everything stored would differ from A's own.
    snap_ids = {SHA_A: ids[:200], SHA_B: ids[100:]}
    _publish(rows, snap_ids)
    # The same rows in the local keyword index (SQLite, what the zvec backend reads).
    writer = TermWriter.open(tmp_path)
    writer.add(rows)
    writer.close()
    local = TermReader.open(tmp_path)
    with PgReader.open() as reader:
        for sha, chunk_ids in snap_ids.items():
            snap = reader.snapshot("repo", sha)
            assert snap is not None
            shared = reader.terms(snap)
            documents = _documents(sorted(chunk_ids), 7)
            owner_local, owner_pg = object(), object()
            st_local = snapshot_terms(local, frozenset(chunk_ids), owner_local, sha, documents)
            st_pg = snapshot_terms(shared, frozenset(chunk_ids), owner_pg, sha, documents)
            assert st_pg.ids.tolist() == st_local.ids.tolist()
            for field in ("en", "cjk"):
                assert np.array_equal(st_pg.lengths[field], st_local.lengths[field])
                assert st_pg.avgdl[field] == st_local.avgdl[field]
            for question in QUESTIONS:
                for field, split in (("en", en_terms), ("cjk", cjk_terms)):
                    query = query_terms(split(question))
                    a = bm25(local, st_local, field, query)
                    b = bm25(shared, st_pg, field, query)
                    # The same bits, not merely close.
                    assert np.array_equal(a.chunk, b.chunk), (sha, question, field)
                    assert np.array_equal(a.coverage, b.coverage)
                    assert np.array_equal(a.document, b.document)
                    assert best(st_local, a.chunk, 10) == best(st_pg, b.chunk, 10)
    local.close()


def test_a_snapshots_scores_do_not_move_when_other_snapshots_are_published(
    database: str,
) -> None:
    migrate()
    rows = make_rows(200, seed=12)
    ids = [r.chunk_id for r in rows]
    _publish(rows[:80], {SHA_A: ids[:80]})
    question = query_terms(en_terms("snapshot commit queries kubernetes"))
    with PgReader.open() as reader:
        snap = reader.snapshot("repo", SHA_A)
        assert snap is not None
        st = snapshot_terms(reader.terms(snap), frozenset(ids[:80]), object(), SHA_A)
        before = bm25(reader.terms(snap), st, "en", question).chunk
    _publish(rows, {SHA_B: ids[40:]})  # more chunks sharing the same terms
    with PgReader.open() as reader:
        snap = reader.snapshot("repo", SHA_A)
        assert snap is not None
        terms = reader.terms(snap)
        st = snapshot_terms(terms, frozenset(ids[:80]), object(), SHA_A)
        after = bm25(terms, st, "en", question).chunk
    assert np.array_equal(before, after)
    assert np.count_nonzero(before) > 0


def _cosine_top(rows: list[Any], ids: set[str], q: np.ndarray, k: int) -> list[tuple[str, float]]:
    scored = []
    for r in rows:
        if r.chunk_id in ids:
            v = np.asarray(r.vector, dtype=np.float64)
            scored.append((-float(v @ q / (np.linalg.norm(v) * np.linalg.norm(q))), r.chunk_id))
    return [(cid, -s) for s, cid in sorted(scored)[:k]]


def test_vector_search_stays_within_the_snapshot(
    database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ragit.store.postgres.write as write_module

    monkeypatch.setattr(write_module, "GRAPH_MIN_ROWS", 0)  # a small namespace with a graph
    migrate()
    rows = make_rows(400, seed=13)
    ids = [r.chunk_id for r in rows]
    in_a = set(ids[:150])
    _publish(rows, {SHA_A: ids[:150], SHA_B: ids[150:]})
    rng = np.random.default_rng(99)
    with PgReader.open() as reader:
        snap_a = reader.snapshot("repo", SHA_A)
        snap_b = reader.snapshot("repo", SHA_B)
        assert snap_a is not None and snap_b is not None
        for _ in range(5):
            q = rng.normal(size=DIM)
            got = reader.vector_search(snap_a, q.tolist(), 10)
            want = _cosine_top(rows, in_a, q, 10)
            assert [c for c, _s in got] == [c for c, _s in want]
            assert all(abs(a[1] - b[1]) < 1e-5 for a, b in zip(got, want, strict=True))
        # The nearest chunk of all is in B: asking A never returns it.
        target = np.asarray(rows[300].vector, dtype=np.float64)
        assert reader.vector_search(snap_b, target.tolist(), 1)[0][0] == ids[300]
        assert ids[300] not in {c for c, _s in reader.vector_search(snap_a, target.tolist(), 150)}
        assert len(reader.vector_search(snap_a, target.tolist(), 1000)) == 150
    with psycopg.connect(database) as conn:
        (indexdef,) = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = %s", (index_name(1),)
        ).fetchone()
    assert "hnsw" in indexdef
    assert "vector_cosine_ops" in indexdef


def test_reader_transactions_refuse_writes(database: str) -> None:
    migrate()
    rows = make_rows(5, seed=14)
    _publish(rows, {SHA_A: [r.chunk_id for r in rows]})
    with PgReader.open() as reader:
        conn = reader.connection
        with conn.transaction():
            (mode,) = conn.execute("SHOW transaction_read_only").fetchone()
        assert mode == "on"
        for statement in (
            "DELETE FROM ragit_snapshots",
            "INSERT INTO ragit_snapshot_chunks VALUES (1, 'x')",
            "CREATE TABLE ragit_x(a int)",
        ):
            with pytest.raises(psycopg.errors.ReadOnlySqlTransaction), conn.transaction():
                conn.execute(statement)
        assert reader.snapshot("repo", SHA_A) is not None  # still there, still readable


def _wait_for(predicate: Any, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _reader_waiting(url: str) -> bool:
    with psycopg.connect(url, autocommit=True) as conn:
        (n,) = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'ragit-reader' "
            "AND wait_event_type = 'Lock'"
        ).fetchone()
    return int(n) > 0


def _blocked_read(database: str, reader: PgReader, snap: Any) -> tuple[Any, threading.Thread]:
    """Start a vector search that blocks on a lock another connection holds; returns that
    connection and the thread (its outcome in ``thread.outcome``)."""
    blocker = psycopg.connect(database)
    blocker.execute("LOCK TABLE ragit_chunks IN ACCESS EXCLUSIVE MODE")
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["result"] = reader.vector_search(snap, [1.0] * DIM, 3)
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=run)
    thread.outcome = outcome  # type: ignore[attr-defined]
    thread.start()
    _wait_for(lambda: _reader_waiting(database), "the read to block mid-query")
    return blocker, thread


def _assert_transient(error: BaseException | None) -> None:
    assert isinstance(error, StoreReadBusy), repr(error)
    payload = error.payload()
    assert payload["code"] == "STORE_READ_BUSY"
    assert payload["category"] == "transient"
    assert payload["retryable"] is True
    assert "interrupted the read" in payload["message"]


def test_a_server_restart_mid_read_is_a_transient_retryable_error(
    database: str, pg_server: Any
) -> None:
    migrate()
    rows = make_rows(20, seed=15)
    _publish(rows, {SHA_A: [r.chunk_id for r in rows]})
    reader = PgReader.open()
    try:
        snap = reader.snapshot("repo", SHA_A)
        assert snap is not None
        blocker, thread = _blocked_read(database, reader, snap)
        # Terminates every connection, mid-query for the reader. Immediate: with a fast
        # shutdown the blocker's backend may end first and the reader's statement (its own
        # transaction) finish before its backend is stopped: a whole answer, no fault.
        pg_server.restart(mode="immediate")
        thread.join(timeout=60)
        blocker.close()
        _assert_transient(thread.outcome.get("error"))  # type: ignore[attr-defined]
        # Retrying on the same reader works once the server is back (it reconnects).
        assert len(reader.vector_search(snap, [1.0] * DIM, 3)) == 3
    finally:
        reader.close()


def test_a_terminated_backend_mid_read_is_a_transient_retryable_error(database: str) -> None:
    migrate()
    rows = make_rows(20, seed=16)
    _publish(rows, {SHA_A: [r.chunk_id for r in rows]})
    with PgReader.open() as reader:
        snap = reader.snapshot("repo", SHA_A)
        assert snap is not None
        blocker, thread = _blocked_read(database, reader, snap)
        with psycopg.connect(database, autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE application_name = 'ragit-reader'"
            )
        thread.join(timeout=60)
        blocker.close()
        _assert_transient(thread.outcome.get("error"))  # type: ignore[attr-defined]
        assert len(reader.vector_search(snap, [1.0] * DIM, 3)) == 3


def test_exact_search_ignores_the_index_and_approximate_search_uses_it(
    database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ragit.store.postgres.write as write_module

    monkeypatch.setattr(write_module, "GRAPH_MIN_ROWS", 0)  # a small namespace with a graph
    migrate()
    rows = make_rows(600, seed=17)
    ids = [r.chunk_id for r in rows]
    small = set(ids[:30])  # a small snapshot in a large namespace
    _publish(rows, {SHA_A: ids[:30], SHA_B: ids[30:]})
    with psycopg.connect(database, autocommit=True) as admin:
        admin.execute("ANALYZE")
    rng = np.random.default_rng(7)
    with PgReader.open() as reader:
        snap = reader.snapshot("repo", SHA_A)
        assert snap is not None
        conn = reader.connection
        conn.execute("SET enable_seqscan = off")  # push the planner towards the HNSW index
        conn.commit()
        with conn.transaction():
            plan = "\n".join(
                r[0]
                for r in conn.execute(
                    f"EXPLAIN SELECT chunk_id FROM ragit_chunks c WHERE c.namespace_id = 1 "
                    f"ORDER BY c.embedding::vector({DIM}) <=> "
                    f"'[{','.join(['1'] * DIM)}]'::vector({DIM}) LIMIT 5"
                ).fetchall()
            )
        assert index_name(1) in plan  # the index serves the approximate ordering
        for _ in range(5):
            q = rng.normal(size=DIM)
            want = [c for c, _s in _cosine_top(rows, small, q, 10)]
            assert [c for c, _s in reader.vector_search(snap, q.tolist(), 10)] == want
            # Approximate: when the graph's candidates filtered by snapshot come back short,
            # the search falls back to the exact scan rather than answer with fewer.
            got = reader.vector_search(snap, q.tolist(), 10, approximate=True)
            assert [c for c, _s in got] == want


def test_prefetch_reads_a_questions_postings_in_one_statement(
    database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ragit.store.postgres.term_index as term_index_module

    migrate()
    rows = make_rows(300, seed=18)
    ids = [r.chunk_id for r in rows]
    _publish(rows, {SHA_A: ids[:200], SHA_B: ids[100:]})
    wanted = {
        "en": ["snapshot", "commit", "kube-apiserver", "zzz-absent"],
        "cjk": ["커밋", "스냅샷"],
    }
    with PgReader.open() as reader, PgReader.open() as other:
        snap = reader.snapshot("repo", SHA_A)
        assert snap is not None
        calls: list[Any] = []
        real = reader._rows
        monkeypatch.setattr(reader, "_rows", lambda *a, **k: calls.append(a) or real(*a, **k))
        terms = reader.view(snap).terms()
        terms.chunks()
        assert len(calls) == 1
        terms.prefetch(wanted)
        assert len(calls) == 2  # every term of both fields: one statement
        got = {(f, t): terms.postings(f, t) for f, ts in wanted.items() for t in ts}
        assert len(calls) == 2  # answered from memory
        # The same postings as read term by term by another reader.
        one_by_one = other.view(snap).terms()
        for (field, term), postings in got.items():
            expected = one_by_one.postings(field, term)
            assert sorted(postings.tolist()) == sorted(expected.tolist())
        assert len(got[("en", "snapshot")]) > 0 and len(got[("cjk", "커밋")]) > 0
        assert len(got[("en", "zzz-absent")]) == 0
        # The memory is bounded: the oldest terms are forgotten, then read again.
        monkeypatch.setattr(term_index_module, "CACHED_TERMS", 2)
        terms.prefetch({"en": ["pods", "node", "gate"]})
        assert len(terms._postings) == 2
        again = terms.postings("en", "snapshot")
        assert len(calls) == 4
        assert sorted(again.tolist()) == sorted(got[("en", "snapshot")].tolist())


def test_reads_prepare_no_statements_on_the_server(database: str) -> None:
    # A prepared statement may switch to a generic plan, blind to how many ids an
    # `= ANY(array)` holds (measured: 3x the CPU of warm keyword-only queries).
    migrate()
    rows = make_rows(50, seed=19)
    ids = [r.chunk_id for r in rows]
    _publish(rows, {SHA_A: ids})
    with PgReader.open() as reader:
        snap = reader.snapshot("repo", SHA_A)
        assert snap is not None
        for i in range(12):
            reader.fetch(snap, ids[i : i + 10])
            reader.vector_search(snap, [1.0] * DIM, 5)
            reader.terms(snap).postings("en", "snapshot")
        (prepared,) = reader.connection.execute(
            "SELECT count(*) FROM pg_prepared_statements"
        ).fetchone()
    assert prepared == 0


def test_reads_of_a_known_snapshot_join_none_of_its_rows_and_stay_exact(
    database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once a snapshot's chunk ids are read, its postings, texts, vectors and exact vector
    scan read the namespace's rows by key (the client keeps the snapshot's): no statement
    joins the snapshot's rows. The answers are the snapshot's only, and the exact scan
    stays exact after the namespace grows (it then joins, as before)."""
    migrate()
    rows = make_rows(400, seed=21)
    ids = [r.chunk_id for r in rows]
    _publish(rows[:300], {SHA_A: ids[:290]})  # 10 chunks of the namespace beyond A's
    members = set(ids[:290])
    rng = np.random.default_rng(7)
    with PgReader.open() as reader, PgReader.open() as other:
        snap = reader.snapshot("repo", SHA_A)
        assert snap is not None
        terms = reader.view(snap).terms()
        terms.chunks()
        calls: list[str] = []
        real = reader._rows
        monkeypatch.setattr(
            reader, "_rows", lambda q, *a, **k: calls.append(str(q)) or real(q, *a, **k)
        )
        terms.prefetch({"en": ["snapshot", "commit"], "cjk": ["커밋"]})
        assert reader.fetch(snap, ids[280:300]).keys() == set(ids[280:290])
        assert reader.fetch_vectors(snap, ids[280:300]).keys() == set(ids[280:290])
        for _ in range(4):
            q = rng.normal(size=DIM)
            got = reader.vector_search(snap, q.tolist(), 10)
            want = _cosine_top(rows, members, q, 10)
            assert [c for c, _s in got] == [c for c, _s in want]
        assert calls and not [c for c in calls if "ragit_snapshot_chunks" in c], calls
        # The same postings as a reader of the whole snapshot's rows would keep.
        fresh = other.view(snap).terms()
        for field, term in (("en", "snapshot"), ("en", "commit"), ("cjk", "커밋")):
            mine = sorted(terms.postings(field, term).tolist())
            assert mine == sorted(fresh.postings(field, term).tolist())
            assert len(mine) > 0

        # Another commit adds 100 chunks to the namespace: the scan counted 10 beyond the
        # snapshot, so its rows are no longer enough and it answers by the joined scan.
        _publish(rows[300:], {SHA_B: ids[300:]})
        calls.clear()
        for _ in range(3):
            q = rng.normal(size=DIM)
            got = reader.vector_search(snap, q.tolist(), 280)
            want = _cosine_top(rows, members, q, 280)
            assert [c for c, _s in got] == [c for c, _s in want]
        assert [c for c in calls if "ragit_snapshot_chunks" in c]
