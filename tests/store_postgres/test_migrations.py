"""Versioned schema migrations of the shared store (docs/team.md)."""

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


def test_version_3_indexes_the_chunks_already_stored_under_terms_3(
    database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Implementation choice: the migration to the term rules ``terms-3`` gives every chunk a
    version-2 store holds the keyword terms a writer of version 3 writes: its ``en`` terms
    again (joined words also by their parts) and its Korean morphemes (``ko``)."""
    import dataclasses
    from collections import Counter

    from _rows import DIM, make_rows

    from ragit.store.postgres import migrate as migrate_module
    from ragit.text.terms import cjk_terms, en_terms, field_terms

    monkeypatch.setattr(migrate_module, "SCHEMA_VERSION", 2)
    migrate_module.migrate()
    monkeypatch.setattr(migrate_module, "SCHEMA_VERSION", SCHEMA_VERSION)
    rows = make_rows(30, seed=3)
    rows[0] = dataclasses.replace(rows[0], search_en="React.lazy and generic_associated_types")
    assert any(r.search_cjk for r in rows)
    with psycopg.connect(database) as conn:
        (ns,) = conn.execute(
            "INSERT INTO ragit_namespaces(namespace, dimensions) VALUES ('ns', %s) "
            "RETURNING namespace_id",
            (DIM,),
        ).fetchone()
        for r in rows:
            # terms-2: every word's stem, joined words not split into their parts.
            old_en = [
                term
                for word in r.search_en.split()
                for term in (en_terms(word)[:1] if {".", "_"} & set(word) else en_terms(word))
            ]
            conn.execute(
                "INSERT INTO ragit_chunks(namespace_id, chunk_id, text, search_en, search_cjk, "
                "section_title, heading_path, token_count, len_en, len_cjk, embedding) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s::vector)",
                (
                    ns, r.chunk_id, r.text, r.search_en, r.search_cjk, r.section_title,
                    r.heading_path, r.token_count, len(old_en), len(cjk_terms(r.search_cjk)),
                    str(list(r.vector)),
                ),
            )  # fmt: skip
            for field, split in ((0, old_en), (1, cjk_terms(r.search_cjk))):
                for term, tf in Counter(split).items():
                    conn.execute(
                        "INSERT INTO ragit_chunk_terms VALUES (%s, %s, %s, %s, %s)",
                        (ns, field, term, r.chunk_id, tf),
                    )
    result = migrate()
    assert result.applied == tuple(range(3, SCHEMA_VERSION + 1))
    split = field_terms([r.search_en for r in rows], [r.search_cjk for r in rows])
    with psycopg.connect(database) as conn:
        lengths = {
            cid: (en, cjk, ko)
            for cid, en, cjk, ko in conn.execute(
                "SELECT chunk_id, len_en, len_cjk, len_ko FROM ragit_chunks"
            ).fetchall()
        }
        postings = conn.execute(
            "SELECT field, chunk_id, term, tf FROM ragit_chunk_terms"
        ).fetchall()
    assert lengths == {
        r.chunk_id: (len(en), len(cjk), len(ko))
        for r, en, cjk, ko in zip(rows, *split, strict=True)
    }
    got: dict[tuple[int, str], dict[str, int]] = {}
    for field, cid, term, tf in postings:
        got.setdefault((field, cid), {})[term] = tf
    expected = {
        (field, r.chunk_id): dict(Counter(terms))
        for field, texts in enumerate(split)
        for r, terms in zip(rows, texts, strict=True)
        if terms
    }
    assert got == expected
    assert {"react", "lazi", "generic", "associ"} <= set(got[(0, rows[0].chunk_id)])
    assert sum(ko for _en, _cjk, ko in lengths.values()) > 0
