"""`doctor` and `status` with ``store.backend = "postgres"``, against a real server.

Doctor checks the connection (masked), the schema version (behind: ``ragit migrate store``;
newer: upgrade RAGit), the pgvector extension, each namespace's HNSW index (ready, loading,
being built, invalid, missing) and the repository's indexed commits; `status` reports the
backend, the schema version, the server's snapshot count and whether HEAD is indexed there,
with no local store. The CLI runs as real processes in clones of a fixture repository.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import psycopg

sys.path.insert(0, str(Path(__file__).parents[1] / "mcp"))

from _mcp_helpers import RAGIT, git, hermetic_env, make_repo, run

from ragit.store.postgres.migrate import migrate
from ragit.store.postgres.steps import SCHEMA_VERSION

SECRET = "pw-5ecret-doctor-31"
CONFIG = {"store.backend": "postgres", "store.repository": "team/doctor"}


def _cli(root: Path, env: dict[str, str], *args: str) -> tuple[int, dict[str, Any], str]:
    proc = run([RAGIT, *args, "--format", "json"], cwd=root, env=env, check=False)
    envelope: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return proc.returncode, envelope, proc.stdout + proc.stderr


def _checks(envelope: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in envelope["data"]["checks"]}


def _clone(tmp_path: Path, env: dict[str, str], a: Path) -> Path:
    b = tmp_path / "b"
    run(["git", "clone", "-q", str(a), str(b)], cwd=tmp_path, env=env)
    assert not (b / ".ragit" / "store").exists() and not (b / ".ragit" / "manifest").exists()
    return b


def test_doctor_describes_the_shared_store_from_a_clone_without_a_local_store(
    database: str, tmp_path: Path
) -> None:
    migrate()
    env = {**hermetic_env(tmp_path), "RAGIT_DATABASE_URL": database}
    a = make_repo(tmp_path / "a", env, config=CONFIG, ingest=False)
    assert _cli(a, env, "ingest", "--all")[1]["ok"] is True
    head = git(a, env, "rev-parse", "HEAD")
    b = _clone(tmp_path, env, a)

    code, envelope, _out = _cli(b, env, "doctor")
    assert code == 0, envelope
    checks = _checks(envelope)
    assert "store.meta" not in checks  # no local store is needed, or looked for
    assert checks["store.connection"]["ok"] is True
    assert checks["store.connection"]["backend"] == "postgres"
    assert checks["store.schema"]["ok"] is True
    assert checks["store.schema"]["schemaVersion"] == SCHEMA_VERSION
    assert checks["store.pgvector"]["ok"] is True
    assert checks["store.pgvector"]["pgvector"]["installed"]
    index = checks["store.vector-index"]
    assert index["ok"] is True
    # A small namespace gets no graph (exact scans); its state says so.
    assert [n["state"] for n in index["namespaces"]] == ["not-needed"]
    snapshots = checks["store.snapshots"]
    assert snapshots["ok"] is True and snapshots["repository"] == "team/doctor"
    assert snapshots["snapshotCount"] == 1 and snapshots["indexedCommits"] == [head]
    assert checks["snapshot.head"]["ok"] is True


def test_status_reports_the_shared_store_and_heads_snapshot_there_without_a_local_store(
    database: str, tmp_path: Path
) -> None:
    migrate()
    env = {**hermetic_env(tmp_path), "RAGIT_DATABASE_URL": database}
    a = make_repo(tmp_path / "a", env, config=CONFIG, ingest=False)
    assert _cli(a, env, "ingest", "--all")[1]["ok"] is True
    head = git(a, env, "rev-parse", "HEAD")
    b = _clone(tmp_path, env, a)

    code, envelope, _out = _cli(b, env, "status")
    assert code == 0, envelope
    data = envelope["data"]
    assert data["store"]["backend"] == "postgres"
    assert data["store"]["schemaVersion"] == SCHEMA_VERSION
    assert data["store"]["snapshotCount"] == 1
    assert data["store"]["headIndexed"] is True
    assert data["snapshot"]["status"] == "indexed" and data["searchReady"] is True
    assert data["snapshot"]["chunks"] > 0
    text = run([RAGIT, "status", "--format", "text"], cwd=b, env=env).stdout
    assert "shared (postgres) team/doctor: schema" in text and "HEAD indexed" in text

    # A new commit not ingested yet: HEAD is not indexed; the nearest ancestor on the server.
    (b / "docs" / "later.md").write_text("# Later\n\n## Note\n\nA later page.\n", "utf-8")
    git(b, env, "add", "--all")
    git(b, env, "commit", "-q", "-m", "Later page")
    code, envelope, _out = _cli(b, env, "status")
    data = envelope["data"]
    assert data["store"]["headIndexed"] is False and data["store"]["snapshotCount"] == 1
    assert data["snapshot"]["status"] == "missing"
    assert data["snapshot"]["nearestIndexedAncestor"] == head
    assert not (b / ".ragit" / "store").exists() and not (b / ".ragit" / "manifest").exists()


def test_doctor_names_the_migration_when_behind_and_an_upgrade_when_newer(
    database: str, tmp_path: Path
) -> None:
    env = {**hermetic_env(tmp_path), "RAGIT_DATABASE_URL": database}
    a = make_repo(tmp_path / "a", env, config=CONFIG, ingest=False)

    code, envelope, _out = _cli(a, env, "doctor")  # a database never migrated
    assert code == 1
    checks = _checks(envelope)
    assert checks["store.connection"]["ok"] is True
    assert checks["store.schema"]["ok"] is False
    assert checks["store.schema"]["schemaVersion"] == 0
    assert checks["store.schema"]["recovery"] == "ragit migrate store"
    assert checks["store.pgvector"]["ok"] is False  # the first migration creates it
    assert checks["store.pgvector"]["recovery"] == "ragit migrate store"
    assert envelope["error"]["recovery"]["command"] == "ragit migrate store"
    code, envelope, _out = _cli(a, env, "status")
    assert envelope["data"]["store"]["schemaVersion"] == 0
    assert envelope["data"]["snapshot"]["status"] == "store-unavailable"
    assert envelope["data"]["snapshot"]["recovery"] == "ragit doctor --format json"

    migrate()
    with psycopg.connect(database, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO ragit_schema_version(version, description) VALUES (%s, 'future')",
            (SCHEMA_VERSION + 1,),
        )
    code, envelope, _out = _cli(a, env, "doctor")
    assert code == 1
    schema = _checks(envelope)["store.schema"]
    assert schema["ok"] is False and schema["schemaVersion"] == SCHEMA_VERSION + 1
    assert "newer than this RAGit" in schema["detail"] and "upgrade RAGit" in schema["detail"]
    assert schema["recovery"].startswith("pip install --upgrade")


def test_doctor_without_a_server_or_with_a_refused_one_is_masked(
    database: str, tmp_path: Path
) -> None:
    base = hermetic_env(tmp_path)
    a = make_repo(
        tmp_path / "a", {**base, "RAGIT_DATABASE_URL": database}, config=CONFIG, ingest=False
    )
    code, envelope, _out = _cli(a, base, "doctor")
    assert code == 1
    check = _checks(envelope)["store.connection"]
    assert check["ok"] is False and "RAGIT_DATABASE_URL" in check["detail"]
    # Setting a variable is advice, not a command that fixes anything when run (contract §3).
    assert check["recovery"] is None and "export RAGIT_DATABASE_URL=" in check["hint"]
    assert envelope["error"]["recovery"] == {"command": None, "hint": check["hint"]}

    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    params = conninfo_to_dict(database)
    wrong = make_conninfo(**{**params, "dbname": f"nosuch_{params['dbname']}", "password": SECRET})
    for args in (("doctor",), ("status",)):
        code, envelope, out = _cli(a, {**base, "RAGIT_DATABASE_URL": wrong}, *args)
        assert SECRET not in out
    assert envelope["data"]["store"]["readable"] is False
    assert envelope["data"]["store"]["errorCode"] == "SNAPSHOT_STORE_UNAVAILABLE"
    # The server accepts the connection (its local sockets trust): the password is not shown.
    migrate()
    good = make_conninfo(**{**params, "password": SECRET})
    code, envelope, out = _cli(a, {**base, "RAGIT_DATABASE_URL": good}, "doctor")
    assert _checks(envelope)["store.connection"]["ok"] is True, envelope
    assert SECRET not in out


def test_doctor_and_status_connect_to_the_server_once(
    database: str, tmp_path: Path, monkeypatch: Any
) -> None:
    """`doctor` reaches the shared store once (its health facts, then HEAD's manifest over the
    same connection), and `status` too; their output is the CLI's."""
    from ragit.ops.maintenance.doctor import run_doctor
    from ragit.ops.status.report import repository_status
    from ragit.workspace import Workspace

    migrate()
    env = {**hermetic_env(tmp_path), "RAGIT_DATABASE_URL": database}
    a = make_repo(tmp_path / "a", env, config=CONFIG, ingest=False)
    assert _cli(a, env, "ingest", "--all")[1]["ok"] is True
    b = _clone(tmp_path, env, a)
    code, envelope, _out = _cli(b, env, "doctor")
    assert code == 0, envelope
    _code, status_envelope, _out = _cli(b, env, "status")

    connects: list[str] = []
    real = psycopg.connect

    def counting(*args: Any, **kwargs: Any) -> Any:
        connects.append("connect")
        return real(*args, **kwargs)

    monkeypatch.setattr(psycopg, "connect", counting)
    data, error = run_doctor(Workspace(b))
    assert error is None, error
    assert len(connects) == 1, connects
    shared = ("snapshot.", "store.")
    ours = [c for c in data["checks"] if c["name"].startswith(shared)]
    cli = [c for c in envelope["data"]["checks"] if c["name"].startswith(shared)]
    assert ours == cli

    connects.clear()
    status = repository_status(Workspace(b))
    assert len(connects) == 1, connects
    assert status["store"] == status_envelope["data"]["store"]
    assert status["snapshot"]["status"] == "indexed"
