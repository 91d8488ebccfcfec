"""``ragit migrate embeddings`` on the shared store (docs/team.md), with real processes and a
real PostgreSQL + pgvector.

Clone A (the "CI", ``store.backend = "postgres"``) ingests two commits with the default
profile (256 dimensions), then the team switches the profile (64 dimensions, committed).
The migration republishes every snapshot of the repository in the new namespace with its
manifest's exact bytes: each migrated commit then answers exactly what a fresh ingest with
the new profile answers (computed independently, in a database of its own). Its dry run
writes nothing; another repository's snapshots on the same server are untouched; a
migration killed inside a publication or between two snapshots leaves every commit
answering, and a rerun finishes; a snapshot whose documents cannot be read back from git
is left as it is and named with its recovery.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

sys.path.insert(0, str(Path(__file__).parents[1] / "mcp"))
sys.path.insert(0, str(Path(__file__).parent))

from _answers import answers, cli, ok
from _mcp_helpers import RAGIT, git, hermetic_env, make_repo, run, tree_state
from test_roles import roles  # noqa: F401 - the fixture
from test_team_workflow import NEW_DOC

import ragit
from ragit.store.postgres.migrate import migrate

SECRET = "pw-5ecret-migrate-81"
REPOSITORY = "team/migrate"
OLD_DIMS, NEW_DIMS = 256, 64
_TABLES = (
    "ragit_namespaces",
    "ragit_chunks",
    "ragit_chunk_terms",
    "ragit_snapshots",
    "ragit_snapshot_chunks",
)


# ---------------------------------------------------------------- helpers


def _hermetic(tmp_path: Path) -> dict[str, str]:
    """:func:`hermetic_env`, whose subprocesses import the ``ragit`` this test imports."""
    return {**hermetic_env(tmp_path), "PYTHONPATH": str(Path(ragit.__file__).parents[1])}


def _env(tmp_path: Path, database: str) -> dict[str, str]:
    """A hermetic environment whose connection string carries a password (the server trusts
    its socket and ignores it: what matters is that no output shows it)."""
    return {**_hermetic(tmp_path), "RAGIT_DATABASE_URL": make_conninfo(database, password=SECRET)}


def _cli(root: Path, env: dict[str, str], *args: str) -> tuple[int, dict[str, Any], str]:
    return cli(root, env, *args, secret=SECRET)


def _ok(root: Path, env: dict[str, str], *args: str) -> dict[str, Any]:
    return ok(root, env, *args, secret=SECRET)


def _answers(root: Path, env: dict[str, str], sha: str) -> dict[str, Any]:
    """Hits (ids, scores, texts, citations, ``--explain``) and the pack's selection."""
    return answers(_ok, root, env, sha)


def _row_counts(url: str) -> dict[str, int]:
    with psycopg.connect(url) as conn:
        return {
            table: int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])  # type: ignore[index]
            for table in _TABLES
        }


def _snapshots(url: str, repository: str) -> dict[str, tuple[Any, ...]]:
    """Each commit's snapshot row of ``repository``: id, namespace, dimensions, manifest,
    chunk ids."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT s.commit_sha, s.snapshot_id, n.namespace, n.dimensions, s.manifest, "
            "ARRAY(SELECT c.chunk_id FROM ragit_snapshot_chunks c "
            "WHERE c.snapshot_id = s.snapshot_id ORDER BY 1) "
            "FROM ragit_snapshots s JOIN ragit_namespaces n USING (namespace_id) "
            "WHERE s.repository_id = %s",
            (repository,),
        ).fetchall()
    return {str(r[0]): tuple(r[1:]) for r in rows}


def _dims(url: str, repository: str) -> dict[str, int]:
    return {sha: int(row[2]) for sha, row in _snapshots(url, repository).items()}


def _two_commits(tmp_path: Path, env: dict[str, str]) -> tuple[Path, list[str]]:
    """Clone A ingests two commits with the default profile, then commits the new profile
    (64 dimensions; that commit is not ingested). Returns A and the two ingested SHAs."""
    a = make_repo(
        tmp_path / "a",
        env,
        config={"store.backend": "postgres", "store.repository": REPOSITORY},
        ingest=False,
    )
    shas = [git(a, env, "rev-parse", "HEAD")]
    assert _ok(a, env, "ingest", "--all")["embedded"] > 0
    (a / "docs" / "shared-index.md").write_text(NEW_DOC, encoding="utf-8")
    git(a, env, "add", "--all")
    git(a, env, "commit", "-q", "-m", "Shared index page")
    shas.append(git(a, env, "rev-parse", "HEAD"))
    assert _ok(a, env, "ingest", "--all")["embedded"] > 0
    _switch_profile(a, env)
    return a, shas


def _switch_profile(root: Path, env: dict[str, str]) -> None:
    run([RAGIT, "config", "set", "embedding.dimensions", str(NEW_DIMS)], cwd=root, env=env)
    git(root, env, "commit", "-q", "-am", "RAGit: the team's new embedding profile")


@pytest.fixture
def fresh_database(pg_server: Any) -> Iterator[str]:
    """A second, empty database (migrated): where a fresh ingest computes every vector
    itself, so the comparison is with vectors the migration did not write."""
    name = f"ragit_fresh{os.getpid()}_{time.monotonic_ns()}"
    with pg_server.admin() as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    url = pg_server.url(name)
    yield url
    with pg_server.admin() as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _fresh_answers(
    a: Path, env: dict[str, str], url: str, shas: list[str], tmp_path: Path
) -> dict[str, Any]:
    """What a fresh ingest of each commit with the new profile answers (a clone of A under
    another repository name, on a server of its own)."""
    fresh_env = {**env, "RAGIT_DATABASE_URL": make_conninfo(url, password=SECRET)}
    f = tmp_path / "fresh"
    run(["git", "clone", "-q", str(a), str(f)], cwd=tmp_path, env=env)
    run([RAGIT, "migrate", "store"], cwd=f, env=fresh_env)
    run([RAGIT, "config", "set", "store.repository", "team/fresh"], cwd=f, env=fresh_env)
    out: dict[str, Any] = {}
    for sha in shas:
        assert _ok(f, fresh_env, "ingest", "--all", "--at", sha)["embedded"] > 0
        out[sha] = _answers(f, fresh_env, sha)
    assert set(_dims(url, "team/fresh").values()) == {NEW_DIMS}
    return out


# ---------------------------------------------------------------- the migration


def test_a_migrated_commit_answers_as_a_fresh_ingest_with_the_new_profile(
    database: str, fresh_database: str, tmp_path: Path
) -> None:
    """Contract-level promise of EXT-062/EXT-063: the migration re-embeds from git objects
    and republishes the same manifest bytes in the new namespace."""
    migrate()
    env = _env(tmp_path, database)
    a, shas = _two_commits(tmp_path, env)
    before = _snapshots(database, REPOSITORY)
    assert {row[2] for row in before.values()} == {OLD_DIMS}
    manifests = tree_state(a / ".ragit" / "manifest")
    expected = _fresh_answers(a, env, fresh_database, shas, tmp_path)

    data = _ok(a, env, "migrate", "embeddings")

    assert data["migrationNeeded"] is True and data["migrated"] is True
    assert data["mode"] == "apply" and data["backend"] == "postgres"
    assert data["repository"] == REPOSITORY
    assert data["currentContract"]["dimensions"] == OLD_DIMS
    assert data["targetContract"]["dimensions"] == NEW_DIMS
    assert data["snapshotsToMigrate"] == data["snapshotsMigrated"] == 2
    assert data["namespacesToMigrate"] == 1 and data["staleSnapshots"] == []
    assert data["manifests"] == 2 and data["documents"] > 0
    assert data["embedded"] == data["chunksToEmbed"] == data["chunks"] > 0
    after = _snapshots(database, REPOSITORY)
    assert set(after) == set(shas)
    target = data["targetContract"]["namespaceId"]
    for sha in shas:
        _id, namespace, dims, manifest, chunk_ids = after[sha]
        assert (namespace, dims) == (target, NEW_DIMS)
        # The same manifest bytes and chunk ids, in the new namespace.
        assert (manifest, chunk_ids) == (before[sha][3], before[sha][4])
    assert tree_state(a / ".ragit" / "manifest") == manifests  # never rewritten
    assert not (a / ".ragit" / "store").exists()

    for sha in shas:
        assert _answers(a, env, sha) == expected[sha], sha
    # A clone that never ingested reads the migrated snapshots the same way.
    b = tmp_path / "b"
    run(["git", "clone", "-q", str(a), str(b)], cwd=tmp_path, env=env)
    assert _answers(b, env, shas[0]) == expected[shas[0]]

    # Nothing left: a second run plans nothing and writes nothing.
    rows = _row_counts(database)
    again = _ok(a, env, "migrate", "embeddings")
    assert again["migrationNeeded"] is False and again["migrated"] is False
    assert again["snapshotsToMigrate"] == 0 and again["chunksToEmbed"] == 0
    assert again["currentContract"] == again["targetContract"]
    assert _row_counts(database) == rows
    assert _snapshots(database, REPOSITORY) == after


def test_a_dry_run_plans_the_migration_and_writes_nothing(database: str, tmp_path: Path) -> None:
    """EXT-064: the same plan from a read-only connection; nothing written anywhere."""
    migrate()
    env = _env(tmp_path, database)
    a, _shas = _two_commits(tmp_path, env)
    rows, tree = _row_counts(database), tree_state(a)

    dry = _ok(a, env, "migrate", "embeddings", "--dry-run")

    assert _row_counts(database) == rows, "a dry run writes nothing on the server"
    assert tree_state(a) == tree, "a dry run writes nothing in the repository"
    assert dry["mode"] == "dry-run" and dry["migrated"] is False
    assert dry["migrationNeeded"] is True and dry["snapshotsToMigrate"] == 2
    assert dry["chunksToEmbed"] == dry["chunks"] > 0
    real = _ok(a, env, "migrate", "embeddings")
    planned = (
        "currentContract",
        "targetContract",
        "manifests",
        "documents",
        "chunks",
        "migrationNeeded",
        "snapshotsToMigrate",
        "namespacesToMigrate",
        "chunksToEmbed",
    )
    assert {k: dry[k] for k in planned} == {k: real[k] for k in planned}
    assert real["embedded"] == dry["chunksToEmbed"]


def test_another_repositorys_snapshots_on_the_server_are_untouched(
    database: str, tmp_path: Path
) -> None:
    """EXT-063: only this repository's snapshots move; the old namespace's chunks stay."""
    migrate()
    env = _env(tmp_path, database)
    a, shas = _two_commits(tmp_path, env)
    # X: another repository on the same server, indexed with the old profile at commit 2.
    x = tmp_path / "x"
    run(["git", "clone", "-q", str(a), str(x)], cwd=tmp_path, env=env)
    git(x, env, "checkout", "-q", shas[1])
    run([RAGIT, "config", "set", "store.repository", "team/other"], cwd=x, env=env)
    _ok(x, env, "ingest", "--all", "--at", shas[1])
    theirs = _snapshots(database, "team/other")
    their_answers = _answers(x, env, shas[1])
    old_chunks = _row_counts(database)["ragit_chunks"]

    data = _ok(a, env, "migrate", "embeddings")

    assert data["snapshotsMigrated"] == 2
    assert _snapshots(database, "team/other") == theirs
    assert _answers(x, env, shas[1]) == their_answers
    # The new namespace's chunks were added; none of the old namespace's was removed.
    assert _row_counts(database)["ragit_chunks"] == old_chunks + data["embedded"]


def _killed_migration(root: Path, env: dict[str, str], point: str, tmp_path: Path) -> None:
    """A ``migrate embeddings`` paused at ``point``, then SIGKILLed there."""
    release = tmp_path / f"release-{point}"  # never created: the migration dies paused
    proc = subprocess.Popen(
        [RAGIT, "migrate", "embeddings", "--format", "json"],
        cwd=root,
        env={**env, "RAGIT_FAULT_PAUSE_AT": point, "RAGIT_FAULT_RELEASE": str(release)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    seen = ""
    deadline = time.monotonic() + 300
    try:
        while f"paused at {point}" not in seen:
            line = proc.stderr.readline()
            if not line and proc.poll() is not None:
                raise AssertionError(f"the migration ended before {point}: {seen}")
            seen += line
            assert time.monotonic() < deadline, seen
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=60) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        out, err = proc.communicate()
    assert SECRET not in seen + out + err


def _wait_for_no_writer(url: str) -> None:
    deadline = time.monotonic() + 60
    query = (
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
        "AND application_name = 'ragit-writer'"
    )
    while time.monotonic() < deadline:
        with psycopg.connect(url, autocommit=True) as conn:
            if conn.execute(query).fetchone() == (0,):
                return
        time.sleep(0.05)
    raise AssertionError("the killed writer's backend did not end")


def test_every_point_of_the_shared_migration_is_killed_here() -> None:
    """A fault point added to the shared-store migration must be killed in this file (the
    publication's own points are killed by test_server_faults.py)."""
    room = Path(ragit.__file__).parent / "ops" / "maintenance"
    source = (room / "migrate_shared.py").read_text("utf-8")
    assert set(re.findall(r"faults\.reach\(\s*\"([a-z-]+)\"", source)) == {
        "migrate-snapshot-published"
    }


def test_a_killed_migration_leaves_every_commit_answering_and_a_rerun_finishes(
    database: str, fresh_database: str, tmp_path: Path
) -> None:
    """EXT-063: one transaction per snapshot; killed inside a publication or between two
    snapshots, every commit answers (old or new binding, never a mix); a rerun continues."""
    migrate()
    env = _env(tmp_path, database)
    a, shas = _two_commits(tmp_path, env)
    expected = _fresh_answers(a, env, fresh_database, shas, tmp_path)
    old = {sha: _answers(a, env, sha) for sha in shas}
    assert old[shas[0]] != expected[shas[0]]  # the profiles rank differently

    # Killed inside the first publication: nothing republished, every commit as before.
    _killed_migration(a, env, "pg-snapshot-inserted", tmp_path)
    _wait_for_no_writer(database)
    assert set(_dims(database, REPOSITORY).values()) == {OLD_DIMS}
    for sha in shas:
        assert _answers(a, env, sha) == old[sha], sha

    # Killed after the first snapshot is republished: it answers as the fresh ingest, the
    # other as before.
    _killed_migration(a, env, "migrate-snapshot-published", tmp_path)
    _wait_for_no_writer(database)
    assert _dims(database, REPOSITORY) == {shas[0]: NEW_DIMS, shas[1]: OLD_DIMS}
    assert _answers(a, env, shas[0]) == expected[shas[0]]
    assert _answers(a, env, shas[1]) == old[shas[1]]

    # The rerun republishes the rest and embeds nothing twice.
    rerun = _ok(a, env, "migrate", "embeddings")
    assert rerun["snapshotsToMigrate"] == rerun["snapshotsMigrated"] == 1
    assert rerun["embedded"] == rerun["chunksToEmbed"] < rerun["chunks"]
    assert set(_dims(database, REPOSITORY).values()) == {NEW_DIMS}
    for sha in shas:
        assert _answers(a, env, sha) == expected[sha], sha


def test_a_snapshot_whose_documents_are_not_in_the_clone_is_left_with_its_recovery(
    database: str, tmp_path: Path
) -> None:
    """EXT-063: a snapshot that cannot be regenerated (its blob is not in this clone) stays
    in its namespace, answering, and is named with the ingest that re-indexes it."""
    migrate()
    env = _env(tmp_path, database)
    a = make_repo(
        tmp_path / "a",
        env,
        config={"store.backend": "postgres", "store.repository": REPOSITORY},
        ingest=False,
    )
    main = git(a, env, "rev-parse", "HEAD")
    _ok(a, env, "ingest", "--all")
    # A side branch with a page only it has, ingested, never in the migrating clone.
    git(a, env, "checkout", "-q", "-b", "side")
    (a / "docs" / "side.md").write_text(NEW_DOC, encoding="utf-8")
    git(a, env, "add", "--all")
    git(a, env, "commit", "-q", "-m", "Side page")
    side = git(a, env, "rev-parse", "HEAD")
    _ok(a, env, "ingest", "--all")
    git(a, env, "checkout", "-q", "main")
    m = tmp_path / "m"
    # --no-local: only the objects main reaches (a local clone would link them all).
    clone = ["git", "clone", "-q", "--no-local", "--single-branch", "--branch", "main"]
    run([*clone, str(a), str(m)], cwd=tmp_path, env=env)
    _switch_profile(m, env)
    side_answers = _answers(a, env, side)

    data = _ok(m, env, "migrate", "embeddings")

    assert data["snapshotsToMigrate"] == 2 and data["snapshotsMigrated"] == 1
    assert [s["commitSha"] for s in data["staleSnapshots"]] == [side]
    assert data["staleSnapshots"][0]["recovery"] == f"ragit ingest --all --at {side}"
    assert _dims(database, REPOSITORY) == {main: NEW_DIMS, side: OLD_DIMS}
    assert _answers(a, env, side) == side_answers  # left as it was
    again = _ok(m, env, "migrate", "embeddings", "--dry-run")
    assert again["snapshotsToMigrate"] == 1  # still reported


# ---------------------------------------------------------------- nothing to do, errors


def test_a_repository_with_nothing_to_migrate_reports_no_migration(
    database: str, tmp_path: Path
) -> None:
    """EXT-062: every snapshot in the configured namespace, or none at all: nothing to do."""
    migrate()
    env = _env(tmp_path, database)
    a = make_repo(
        tmp_path / "a",
        env,
        config={"store.backend": "postgres", "store.repository": REPOSITORY},
        ingest=False,
    )
    empty = _ok(a, env, "migrate", "embeddings")
    assert empty["migrationNeeded"] is False and empty["currentContract"] is None
    assert empty["manifests"] == 0
    _ok(a, env, "ingest", "--all")
    rows, tree = _row_counts(database), tree_state(a)

    data = _ok(a, env, "migrate", "embeddings")

    assert data["migrationNeeded"] is False and data["migrated"] is False
    assert data["snapshotsToMigrate"] == 0 and data["manifests"] == 1
    assert data["currentContract"] == data["targetContract"]
    assert _row_counts(database) == rows and tree_state(a) == tree


def test_no_server_or_a_reader_role_is_store_unavailable_without_the_password(
    database: str,
    roles: dict[str, str],  # noqa: F811 - test_roles' fixture
    tmp_path: Path,
) -> None:
    """EXT-062: no server is SNAPSHOT_STORE_UNAVAILABLE (exit 3, masked); a role that can
    only read cannot migrate, and nothing is embedded."""
    env = {**_hermetic(tmp_path), "RAGIT_DATABASE_URL": roles["ragit_owner"]}
    run([RAGIT, "migrate", "store"], cwd=tmp_path, env=env)
    ci = {**env, "RAGIT_DATABASE_URL": roles["ragit_ci"]}
    a, _shas = _two_commits(tmp_path, ci)

    reader = {**env, "RAGIT_DATABASE_URL": roles["ragit_reader"]}
    dry = _ok(a, reader, "migrate", "embeddings", "--dry-run")  # a reader may plan
    assert dry["snapshotsToMigrate"] == 2
    rows = _row_counts(database)
    code, envelope, out = _cli(a, reader, "migrate", "embeddings")
    assert code == 3, out
    error = envelope["error"]
    assert error["code"] == "SNAPSHOT_STORE_UNAVAILABLE"
    assert "cannot write to the shared store" in str(error["details"]["reason"])
    assert "embed:" not in out
    assert _row_counts(database) == rows

    nowhere = {
        **env,
        "RAGIT_DATABASE_URL": make_conninfo(database, dbname="nowhere", password=SECRET),
    }
    for args in (("migrate", "embeddings"), ("migrate", "embeddings", "--dry-run")):
        code, envelope, out = _cli(a, nowhere, *args)
        assert code == 3, out
        assert envelope["error"]["code"] == "SNAPSHOT_STORE_UNAVAILABLE", out
