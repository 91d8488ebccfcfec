"""Versioned schema migrations of the shared store (issue 21 §2)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from ragit.contract.errors import SnapshotStoreUnavailable
from ragit.store.postgres.migrate import migrate
from ragit.store.postgres.read import PgReader
from ragit.store.postgres.steps import SCHEMA_VERSION, STEPS
from ragit.store.postgres.write import PgWriter

CHILD = Path(__file__).parent / "_child.py"
TABLES = {
    "ragit_schema_version",
    "ragit_namespaces",
    "ragit_chunks",
    "ragit_chunk_terms",
    "ragit_snapshots",
    "ragit_snapshot_chunks",
}


def _tables(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        ).fetchall()
    return {r[0] for r in rows}


def test_fresh_database_gets_every_step_and_reports_the_version(database: str) -> None:
    assert _tables(database) == set()
    result = migrate()
    assert result.before == 0
    assert result.after == SCHEMA_VERSION == len(STEPS)
    assert result.applied == tuple(range(1, SCHEMA_VERSION + 1))
    assert _tables(database) == TABLES
    with PgReader.open() as reader:
        assert reader.schema_version() == SCHEMA_VERSION
    with psycopg.connect(database) as conn:
        rows = conn.execute(
            "SELECT version, description FROM ragit_schema_version ORDER BY version"
        ).fetchall()
        ext = conn.execute("SELECT extversion FROM pg_extension WHERE extname='vector'").fetchone()
    assert [r[0] for r in rows] == list(range(1, SCHEMA_VERSION + 1))
    assert [r[1] for r in rows] == [s.description for s in STEPS]
    assert ext is not None


def test_a_second_run_changes_nothing(database: str) -> None:
    migrate()
    with psycopg.connect(database) as conn:
        before = conn.execute("SELECT * FROM ragit_schema_version ORDER BY version").fetchall()
    again = migrate()
    assert again.before == again.after == SCHEMA_VERSION
    assert again.applied == ()
    with psycopg.connect(database) as conn:
        after = conn.execute("SELECT * FROM ragit_schema_version ORDER BY version").fetchall()
    assert after == before


def test_concurrent_runs_apply_each_step_once(database: str) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, str(CHILD), "migrate"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for _ in range(3)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], [o[1] for o in outs]
    applied = sorted(v for out, _err in outs for v in json.loads(out)["applied"])
    assert applied == list(range(1, SCHEMA_VERSION + 1))  # one process applied each step
    with psycopg.connect(database) as conn:
        (count,) = conn.execute("SELECT count(*) FROM ragit_schema_version").fetchone()
    assert count == SCHEMA_VERSION


def test_reader_and_writer_refuse_an_unmigrated_database(database: str) -> None:
    with pytest.raises(SnapshotStoreUnavailable, match="schema is version 0"):
        PgReader.open()
    with pytest.raises(SnapshotStoreUnavailable, match="schema is version 0"):
        PgWriter.open("repo", "ns", 4)


def test_a_failed_step_leaves_the_previous_version(
    database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragit.store.postgres import migrate as migrate_module
    from ragit.store.postgres import steps

    broken = (*steps.STEPS, steps.Step("broken", "CREATE TABLE ragit_x(a int); SELECT 1/0;"))
    monkeypatch.setattr(migrate_module, "STEPS", broken)
    monkeypatch.setattr(migrate_module, "SCHEMA_VERSION", len(broken))
    with pytest.raises(SnapshotStoreUnavailable, match="division by zero"):
        migrate_module.migrate()
    assert "ragit_x" not in _tables(database)  # the failed step's DDL was rolled back
    with psycopg.connect(database) as conn:
        (version,) = conn.execute("SELECT max(version) FROM ragit_schema_version").fetchone()
    assert version == SCHEMA_VERSION


def test_version_3_indexes_the_korean_morphemes_of_chunks_already_stored(
    database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Implementation choice: the migration that adds the ``ko`` keyword field gives every
    chunk a version-2 store already holds the morphemes a writer of version 3 writes."""
    from collections import Counter

    from _rows import DIM, make_rows

    from ragit.store.postgres import migrate as migrate_module
    from ragit.text.morphemes import morpheme_terms
    from ragit.text.terms import cjk_terms, en_terms

    monkeypatch.setattr(migrate_module, "SCHEMA_VERSION", 2)
    migrate_module.migrate()
    monkeypatch.setattr(migrate_module, "SCHEMA_VERSION", SCHEMA_VERSION)
    rows = make_rows(30, seed=3)
    assert any(r.search_cjk for r in rows)
    with psycopg.connect(database) as conn:
        (ns,) = conn.execute(
            "INSERT INTO ragit_namespaces(namespace, dimensions) VALUES ('ns', %s) "
            "RETURNING namespace_id",
            (DIM,),
        ).fetchone()
        for r in rows:
            conn.execute(
                "INSERT INTO ragit_chunks(namespace_id, chunk_id, text, search_en, search_cjk, "
                "section_title, heading_path, token_count, len_en, len_cjk, embedding) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s::vector)",
                (
                    ns, r.chunk_id, r.text, r.search_en, r.search_cjk, r.section_title,
                    r.heading_path, r.token_count, len(en_terms(r.search_en)),
                    len(cjk_terms(r.search_cjk)), str(list(r.vector)),
                ),
            )  # fmt: skip
    result = migrate()
    assert result.applied == tuple(range(3, SCHEMA_VERSION + 1))
    with psycopg.connect(database) as conn:
        lengths = dict(conn.execute("SELECT chunk_id, len_ko FROM ragit_chunks").fetchall())
        postings = conn.execute(
            "SELECT chunk_id, term, tf FROM ragit_chunk_terms WHERE field = 2"
        ).fetchall()
    assert lengths == {r.chunk_id: len(morpheme_terms(r.search_cjk)) for r in rows}
    got: dict[str, dict[str, int]] = {}
    for cid, term, tf in postings:
        got.setdefault(cid, {})[term] = tf
    expected = {r.chunk_id: dict(Counter(morpheme_terms(r.search_cjk))) for r in rows}
    assert got == {cid: terms for cid, terms in expected.items() if terms}
    assert sum(lengths.values()) > 0
