"""`ragit drift`, `log` and `repair` on the shared store (docs/team.md), with real processes
and a real PostgreSQL + pgvector.

They read the indexed commits and their manifests from the server, so a clone that never
ingested sees what CI indexed;
repair's ``store-rebuild`` repairs what can be wrong on the server (chunks a snapshot names
that were deleted, a namespace's missing graph) and never creates the embedded store.
"""

from __future__ import annotations

import sys
from pathlib import Path

import psycopg
import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "mcp"))
sys.path.insert(0, str(Path(__file__).parent))

from _mcp_helpers import git, hermetic_env, make_repo, run
from test_team_workflow import _answers, _cli, _comparable

import ragit.store.postgres.health as health_module
import ragit.store.postgres.write as write_module
from ragit.store.postgres.health import health
from ragit.store.postgres.migrate import migrate

REPOSITORY = "team/repair"


def _indexed(tmp_path: Path, env: dict[str, str]) -> tuple[Path, str]:
    """A repository whose HEAD the shared store holds."""
    root = make_repo(
        tmp_path / "a",
        env,
        config={"store.backend": "postgres", "store.repository": REPOSITORY},
        ingest=False,
    )
    got = _cli(root, env, "ingest", "--all")
    assert got["ok"] is True, got
    return root, git(root, env, "rev-parse", "HEAD")


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def _delete_chunks(database: str, count: int) -> list[str]:
    """Delete ``count`` of the repository's chunks (and their postings) behind RAGit's back,
    as a restore from a partial backup would leave them."""
    with psycopg.connect(database, autocommit=True) as conn:
        ids = [
            str(r[0])
            for r in conn.execute(
                "SELECT sc.chunk_id FROM ragit_snapshot_chunks sc JOIN ragit_snapshots s "
                'USING (snapshot_id) WHERE s.repository_id = %s ORDER BY sc.chunk_id COLLATE "C" '
                "LIMIT %s",
                (REPOSITORY, count),
            ).fetchall()
        ]
        conn.execute("DELETE FROM ragit_chunk_terms WHERE chunk_id = ANY(%s)", (ids,))
        conn.execute("DELETE FROM ragit_chunks WHERE chunk_id = ANY(%s)", (ids,))
    return ids


def test_a_clone_without_manifests_logs_and_drifts_from_the_servers_snapshots(
    database: str, tmp_path: Path
) -> None:
    migrate()
    env = {**hermetic_env(tmp_path), "RAGIT_DATABASE_URL": database}
    a, head = _indexed(tmp_path, env)
    b = tmp_path / "b"
    run(["git", "clone", "-q", str(a), str(b)], cwd=tmp_path, env=env)
    assert not (b / ".ragit" / "manifest").exists()
    before = _files(b)

    history = _cli(b, env, "log")
    assert history["ok"] is True, history
    assert history["data"]["entries"], history
    assert history["data"]["entries"][0]["snapshot"]["status"] == "indexed"
    assert history["data"] == {**_cli(a, env, "log")["data"]}  # as the ingesting clone's

    drift = _cli(b, env, "drift")
    assert drift["ok"] is True, drift
    assert drift["data"]["baseline"]["snapshotSha"] == head
    assert drift["data"]["baseline"]["reasonCodes"] == []
    assert drift["data"]["overallStatus"] == "fresh"
    # The clone's repair has nothing to do: no ingest, no store rebuild.
    plan = _cli(b, env, "repair", "--apply")
    assert plan["ok"] is True, plan
    assert plan["data"]["plannedActions"] == []
    assert _files(b) == before
    assert not (b / ".ragit" / "store").exists()


def test_drift_and_repair_name_an_unreachable_server(database: str, tmp_path: Path) -> None:
    migrate()
    env = {**hermetic_env(tmp_path), "RAGIT_DATABASE_URL": database}
    a, head = _indexed(tmp_path, env)
    # Nothing listening on the socket: transient, retry later (EXT-102).
    gone = {**env, "RAGIT_DATABASE_URL": f"postgresql://nobody@/nothing?host={tmp_path}/none"}
    for argv in (["drift"], ["repair", "--apply"]):
        got = _cli(a, gone, *argv, check=False)
        assert got["ok"] is False, got
        assert got["error"]["code"] in ("STORE_READ_BUSY", "STORE_WRITE_BUSY"), got["error"]
        assert got["error"]["retryable"] is True
        assert "nobody" not in got["error"]["message"]  # the URL is masked
    # A database the server does not have: misconfiguration, naming the commit (EXT-102).
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    params = conninfo_to_dict(database)
    wrong = {**env, "RAGIT_DATABASE_URL": make_conninfo(**{**params, "dbname": "nosuch_db"})}
    for argv in (["drift"], ["repair", "--apply"]):
        got = _cli(a, wrong, *argv, check=False)
        assert got["ok"] is False, got
        assert got["error"]["code"] == "SNAPSHOT_STORE_UNAVAILABLE", got["error"]
        assert got["error"]["retryable"] is False
        assert got["error"]["details"]["resolvedSha"] == head
    # Bad input is its typed error before the server is reached (contract: validation before
    # any store access).
    for argv, code in (
        (["drift", "--scope", "everything"], "INPUT_INVALID"),
        (["repair", "--scope", "everything"], "INPUT_INVALID"),
        (["log", "nosuch..HEAD"], "SNAPSHOT_REF_INVALID"),
    ):
        got = _cli(a, gone, *argv, check=False)
        assert got["ok"] is False and got["error"]["code"] == code, got
    assert not (a / ".ragit" / "store").exists()


def test_repair_regenerates_chunks_the_server_lost_and_answers_as_before(
    database: str, tmp_path: Path
) -> None:
    migrate()
    env = {**hermetic_env(tmp_path), "RAGIT_DATABASE_URL": database}
    root, head = _indexed(tmp_path, env)
    expected = _comparable(_answers(root, env, head))
    lost = _delete_chunks(database, 3)

    plan = _cli(root, env, "repair")
    assert plan["ok"] is True, plan
    (action,) = plan["data"]["plannedActions"]
    assert action["action"] == "store-rebuild"
    assert action["reasonCodes"] == ["snapshot_chunks_missing"]
    assert any("3 chunk(s)" in note for note in action["notes"])

    applied = _cli(root, env, "repair", "--apply")
    assert applied["ok"] is True, applied
    assert [a["status"] for a in applied["data"]["executedActions"]] == ["executed"]
    with psycopg.connect(database) as conn:
        back = conn.execute(
            "SELECT count(*) FROM ragit_chunks WHERE chunk_id = ANY(%s)", (lost,)
        ).fetchone()
    assert back is not None and back[0] == len(lost)
    assert _comparable(_answers(root, env, head)) == expected
    assert _cli(root, env, "repair")["data"]["plannedActions"] == []
    assert not (root / ".ragit" / "store").exists()


def test_repair_builds_a_missing_graph(
    database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The graph a killed load leaves missing is what doctor reports; repair builds it."""
    migrate()
    monkeypatch.setattr(write_module, "GRAPH_MIN_ROWS", 0)
    monkeypatch.setattr(health_module, "GRAPH_MIN_ROWS", 0)
    env = {**hermetic_env(tmp_path), "RAGIT_DATABASE_URL": database}
    for key, value in env.items():
        if key != "PATH":
            monkeypatch.setenv(key, value)
    root, _head = _indexed(tmp_path, env)  # a CLI ingest: a small namespace gets no graph
    (name,) = _states()
    assert _states() == {name: "missing"}  # at GRAPH_MIN_ROWS = 0, as a large one after a kill

    from ragit.config import load_config
    from ragit.ops.maintenance.repair import run_repair
    from ragit.workspace import Workspace

    ws = Workspace(root)
    cfg = load_config(ws)
    data, failure = run_repair(ws, cfg, apply=True, requested=[], progress=lambda _m: None)
    assert failure is None, failure
    (action,) = data["executedActions"]
    assert action["reasonCodes"] == ["vector_index_missing"]
    assert _states() == {name: "ready"}


def _states() -> dict[str, str]:
    return {n["namespace"]: n["state"] for n in health(REPOSITORY)["namespaces"]}


def test_status_says_a_migration_is_needed_until_migrate_embeddings_ran(
    database: str, tmp_path: Path
) -> None:
    """`status`'s ``embedding.needsMigration`` on the shared store: the namespaces of the
    repository's snapshots on the server against the configured profile's."""
    migrate()
    env = {**hermetic_env(tmp_path), "RAGIT_DATABASE_URL": database}
    root, _head = _indexed(tmp_path, env)

    def embedding() -> dict[str, object]:
        got = _cli(root, env, "status")
        assert got["ok"] is True, got
        block: dict[str, object] = got["data"]["embedding"]
        return block

    first = embedding()
    assert first["needsMigration"] is False and first["ready"] is True
    assert _cli(root, env, "config", "set", "embedding.dimensions", "64")["ok"] is True
    changed = embedding()
    assert changed["needsMigration"] is True and changed["ready"] is False
    assert changed["store"] == first["store"]
    assert _cli(root, env, "migrate", "embeddings")["data"]["migrated"] is True
    after = embedding()
    assert after["needsMigration"] is False and after["ready"] is True
    assert after["store"] != first["store"]
