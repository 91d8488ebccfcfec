"""`ragit migrate store` against a real PostgreSQL (EXT-046, EXT-047, EXT-050): the CLI as a
subprocess, the database named only by the environment."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import psycopg
import pytest

import ragit.store.postgres.migrate as migrate_module
from ragit.contract.registry import by_path
from ragit.store.postgres import steps
from ragit.store.postgres.migrate import migrate
from ragit.store.postgres.steps import SCHEMA_VERSION, STEPS

DESCRIBE = Path(__file__).parents[2] / "src" / "ragit" / "contract" / "describe.json"


def _ragit(cwd: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, Any, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "ragit", *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    envelope = json.loads(proc.stdout) if proc.stdout.startswith("{") else None
    return proc.returncode, envelope, proc.stderr


def _output_schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(DESCRIBE.read_text())["specs"]["migrate store"][
        "outputSchema"
    ]
    return schema


def _database_state(url: str) -> list[Any]:
    """Every table of the database and its row count, and the schema versions recorded."""
    with psycopg.connect(url) as conn:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1"
            ).fetchall()
        ]
        counts = [
            (t, conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0])  # type: ignore[index]
            for t in tables
        ]
        versions = (
            conn.execute("SELECT version FROM ragit_schema_version ORDER BY 1").fetchall()
            if "ragit_schema_version" in tables
            else []
        )
    return [counts, versions]


def _all_steps() -> list[dict[str, Any]]:
    return [{"version": i + 1, "description": s.description} for i, s in enumerate(STEPS)]


def test_dry_run_then_apply_then_again_outside_a_repository(database: str, tmp_path: Path) -> None:
    assert by_path()["migrate store"].supports_dry_run
    before = _database_state(database)
    code, env, err = _ragit(tmp_path, "migrate", "store", "--dry-run")
    assert code == 0, err
    assert env["ok"] and env["command"] == "migrate store"
    assert env["data"] == {
        "mode": "dry-run",
        "backend": "postgres",
        "schemaVersionBefore": 0,
        "schemaVersionAfter": SCHEMA_VERSION,
        "targetSchemaVersion": SCHEMA_VERSION,
        "steps": _all_steps(),
        "migrated": False,
    }
    assert _database_state(database) == before  # the dry run wrote nothing
    code, env, err = _ragit(tmp_path, "migrate", "store")
    assert code == 0, err
    assert env["data"] == {
        "mode": "apply",
        "backend": "postgres",
        "schemaVersionBefore": 0,
        "schemaVersionAfter": SCHEMA_VERSION,
        "targetSchemaVersion": SCHEMA_VERSION,
        "steps": _all_steps(),
        "migrated": True,
    }
    jsonschema.validate(env["data"], _output_schema())
    applied = _database_state(database)
    assert applied[1] == [(v,) for v in range(1, SCHEMA_VERSION + 1)]
    code, env, err = _ragit(tmp_path, "migrate", "store")
    assert code == 0, err
    assert env["data"]["steps"] == [] and env["data"]["migrated"] is False
    assert env["data"]["schemaVersionBefore"] == env["data"]["schemaVersionAfter"] == SCHEMA_VERSION
    code, env, err = _ragit(tmp_path, "migrate", "store", "--dry-run")
    assert code == 0 and env["data"]["steps"] == []
    code, _env, err = _ragit(tmp_path, "migrate", "store", "--dry-run", "--format", "text")
    assert code == 0, err
    assert _database_state(database) == applied
    # Text: the versions and, when steps were applied, one line each.
    proc = subprocess.run(
        [sys.executable, "-m", "ragit", "migrate", "store", "--format", "text"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0
    assert f"schema version {SCHEMA_VERSION} is current" in proc.stdout


def test_an_older_store_is_upgraded_in_place(
    database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A store at version 1 (before step 2), with a chunk and its postings.
    monkeypatch.setattr(migrate_module, "STEPS", steps.STEPS[:1])
    monkeypatch.setattr(migrate_module, "SCHEMA_VERSION", 1)
    assert migrate().after == 1
    with psycopg.connect(database) as conn:
        conn.execute("INSERT INTO ragit_namespaces(namespace, dimensions) VALUES ('ns', 3)")
        conn.execute(
            "INSERT INTO ragit_chunks VALUES (1, 'c1', 't', 'snapshot', '', 's', 'h', 1, 1, 0, "
            "'[1,0,0]')"
        )
        conn.execute("INSERT INTO ragit_chunk_terms VALUES (1, 0, 'snapshot', 'c1', 1)")
    code, env, err = _ragit(tmp_path, "migrate", "store", "--dry-run")
    assert code == 0, err
    assert env["data"]["schemaVersionBefore"] == 1
    assert [s["version"] for s in env["data"]["steps"]] == list(range(2, SCHEMA_VERSION + 1))
    code, env, err = _ragit(tmp_path, "migrate", "store")
    assert code == 0, err
    assert env["data"]["schemaVersionBefore"] == 1
    assert env["data"]["schemaVersionAfter"] == SCHEMA_VERSION
    assert [s["version"] for s in env["data"]["steps"]] == list(range(2, SCHEMA_VERSION + 1))
    with psycopg.connect(database) as conn:
        assert conn.execute("SELECT count(*) FROM ragit_chunk_terms").fetchone() == (1,)
        (fks,) = conn.execute(  # type: ignore[misc]
            "SELECT count(*) FROM pg_constraint "
            "WHERE conrelid = 'ragit_chunk_terms'::regclass AND contype = 'f'"
        ).fetchone()
    assert fks == 0


@pytest.mark.parametrize("dry_run", [False, True])
def test_a_newer_schema_is_refused_and_nothing_is_applied(
    database: str, tmp_path: Path, dry_run: bool
) -> None:
    migrate()
    newer = SCHEMA_VERSION + 5
    with psycopg.connect(database) as conn:
        conn.execute(
            "INSERT INTO ragit_schema_version(version, description) VALUES (%s, 'future')",
            (newer,),
        )
    before = _database_state(database)
    args = ["migrate", "store", *(["--dry-run"] if dry_run else [])]
    code, env, err = _ragit(tmp_path, *args)
    assert code == 3, err
    assert env["error"]["code"] == "SNAPSHOT_STORE_UNAVAILABLE"
    reason = env["error"]["details"]["reason"]
    assert f"version {newer}" in reason and f"RAGit's {SCHEMA_VERSION}" in reason
    assert _database_state(database) == before


def test_a_refused_login_prints_no_password(database: str, tmp_path: Path) -> None:
    secret = "Xy-secret-42"
    # The server echoes the database name it does not know: name it after the password.
    url = database.replace("/ragit_t", f"/{secret}_ragit_t", 1)
    url = re.sub(r"^postgresql://[^@/]*@", f"postgresql://postgres:{secret}@", url)
    assert secret in url
    for args in (["migrate", "store"], ["migrate", "store", "--dry-run", "--format", "text"]):
        proc = subprocess.run(
            [sys.executable, "-m", "ragit", *args],
            cwd=tmp_path,
            env={**os.environ, "RAGIT_DATABASE_URL": url},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert proc.returncode == 3
        assert "SNAPSHOT_STORE_UNAVAILABLE" in proc.stdout + proc.stderr
        assert secret not in proc.stdout + proc.stderr
