"""The store's roles (docs/team.md, "Roles"), run as written against a real server.

The SQL block of docs/team.md creates an owner, a CI role and a reader. The owner migrates,
the CI role ingests, and as the reader ``ragit query``, ``context pack``, ``status``,
``doctor`` and ``ragit-mcp`` answer exactly as the CI clone does while ``ragit ingest`` fails
with a typed error that names the role and what it lacks, with no traceback and no password.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

sys.path.insert(0, str(Path(__file__).parents[1] / "mcp"))

from _answers import GOAL, QUESTIONS, answers, cli, ok
from _mcp_helpers import McpServer, git, hermetic_env, make_repo, run

SECRET = "pw-5ecret-roles-62"
ROLES = ("ragit_owner", "ragit_ci", "ragit_reader")
DOCS = Path(__file__).parents[2] / "docs" / "team.md"


def roles_sql() -> str:
    """The SQL block of docs/team.md's "Roles" section."""
    text = DOCS.read_text(encoding="utf-8")
    found = re.search(
        r"<!-- ragit-roles-sql -->\s*```sql\n(?P<sql>.*?)```\s*<!-- /ragit-roles-sql -->",
        text,
        re.DOTALL,
    )
    assert found, "docs/team.md has the roles block"
    return found.group("sql")


@pytest.fixture
def roles(database: str) -> Iterator[dict[str, str]]:
    """The block run as a superuser in the test's database; the URL of each role (with a
    password the trusting socket ignores: what matters is that no output shows it)."""
    name = conninfo_to_dict(database)["dbname"]
    script = roles_sql().replace("ON DATABASE ragit ", f'ON DATABASE "{name}" ')
    for role in ROLES:
        script = script.replace(f"'{role.removeprefix('ragit_')}-password'", f"'{SECRET}'")
    assert SECRET in script and "ON DATABASE ragit " not in script
    with psycopg.connect(database, autocommit=True) as admin:
        admin.execute(script)
    try:
        yield {role: make_conninfo(database, user=role, password=SECRET) for role in ROLES}
    finally:
        with psycopg.connect(database, autocommit=True) as admin:
            for role in reversed(ROLES):  # one at a time: the default privileges name two
                admin.execute(f"DROP OWNED BY {role}")
            for role in ROLES:
                admin.execute(f"DROP ROLE {role}")


def _cli(root: Path, env: dict[str, str], *args: str) -> tuple[int, dict[str, Any], str]:
    return cli(root, env, *args, secret=SECRET)


def _ok(root: Path, env: dict[str, str], *args: str) -> dict[str, Any]:
    return ok(root, env, *args, secret=SECRET)


def _answers(root: Path, env: dict[str, str], sha: str) -> dict[str, Any]:
    """What must not move: hits (ids, scores, texts, citations) and the pack's selection."""
    return answers(_ok, root, env, sha)


def _refused_ingest(root: Path, env: dict[str, str], sha: str) -> None:
    code, envelope, out = _cli(root, env, "ingest", "--all")
    assert code == 3, out
    error = envelope["error"]
    assert error["code"] == "SNAPSHOT_STORE_UNAVAILABLE", error
    assert error["details"]["resolvedSha"] == sha
    reason = str(error["details"]["reason"])
    assert "the role 'ragit_reader' cannot write to the shared store" in reason, reason
    assert "INSERT on ragit_chunks" in reason, reason
    assert "embed:" not in out  # refused before anything was embedded


def test_the_reader_role_reads_everything_and_cannot_ingest(
    roles: dict[str, str], tmp_path: Path
) -> None:
    base = hermetic_env(tmp_path)
    owner = {**base, "RAGIT_DATABASE_URL": roles["ragit_owner"]}
    ci = {**base, "RAGIT_DATABASE_URL": roles["ragit_ci"]}
    reader = {**base, "RAGIT_DATABASE_URL": roles["ragit_reader"]}

    # The owner migrates (outside any repository), the CI role ingests.
    migrated = _ok(tmp_path, owner, "migrate", "store")
    assert migrated["schemaVersionAfter"] == migrated["targetSchemaVersion"]
    a = make_repo(
        tmp_path / "a",
        ci,
        config={"store.backend": "postgres", "store.repository": "team/roles"},
        ingest=False,
    )
    assert _ok(a, ci, "ingest", "--all")["embedded"] > 0
    sha = git(a, ci, "rev-parse", "HEAD")
    expected = _answers(a, ci, sha)

    # The reader, in a clone that never ingested: every read answers as CI's clone does.
    b = tmp_path / "b"
    run(["git", "clone", "-q", str(a), str(b)], cwd=tmp_path, env=base)
    assert _answers(b, reader, sha) == expected
    status = _ok(b, reader, "status")
    assert status["store"]["readable"] is True and status["store"]["headIndexed"] is True
    assert status["store"]["snapshotCount"] == 1
    code, envelope, out = _cli(b, reader, "doctor")
    assert code == 0, out
    checks = {c["name"]: c for c in envelope["data"]["checks"]}
    for name in ("store.connection", "store.schema", "store.pgvector", "store.snapshots"):
        assert checks[name]["ok"] is True, checks[name]
    assert checks["store.snapshots"]["indexedCommits"] == [sha]
    log = tmp_path / "mcp.log"
    with McpServer(b, reader, stderr_path=log) as server:
        for question in QUESTIONS:
            call = server.call("ragit_query", {"question": question, "topK": 5, "explain": True})
            assert call.envelope["ok"] is True, call.envelope
            assert call.data["hits"] == expected[question]["hits"]
        pack = server.call("ragit_context_pack", {"goal": GOAL})
        assert pack.envelope["ok"] is True, pack.envelope
        assert pack.data["selectedHits"] == expected[GOAL]["selectedHits"]
        assert server.call("ragit_status", {}).envelope["ok"] is True
    assert SECRET not in log.read_text(encoding="utf-8")

    # The reader cannot ingest: neither the indexed HEAD nor a new commit; nothing is written.
    _refused_ingest(b, reader, sha)
    (b / "docs" / "reader.md").write_text("# Reader\n\n## Note\n\nA reader's page.\n", "utf-8")
    git(b, base, "add", "--all")
    git(b, base, "commit", "-q", "-m", "A page the reader cannot publish")
    later = git(b, base, "rev-parse", "HEAD")
    _refused_ingest(b, reader, later)
    assert not (b / ".ragit" / "manifest" / f"{later}.json").exists()
    # The server refuses the reader's writes whatever the client does.
    with (
        psycopg.connect(roles["ragit_reader"]) as conn,
        pytest.raises(psycopg.errors.InsufficientPrivilege),
    ):
        conn.execute("DELETE FROM ragit_snapshots")
    with psycopg.connect(roles["ragit_ci"], autocommit=True) as conn:
        shas = [r[0] for r in conn.execute("SELECT commit_sha FROM ragit_snapshots")]
    assert shas == [sha]

    # The CI role publishes the same commit.
    run(["git", "push", "-q", str(a), "HEAD:refs/heads/from-b"], cwd=b, env=base)
    git(a, base, "merge", "-q", "--ff-only", "from-b")
    assert _ok(a, ci, "ingest", "--all")["embedded"] > 0
    assert _ok(b, reader, "query", "reader's page", "--top-k", "1")["snapshotSha"] == later


def _graph(url: str) -> tuple[int, bool] | None:
    """Namespace 1's HNSW index as (oid, valid); None when it does not exist."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT indexrelid::oid::bigint, indisvalid FROM pg_index "
            "WHERE indexrelid = to_regclass('ragit_chunks_hnsw_1')"
        ).fetchone()
    return None if row is None else (int(row[0]), bool(row[1]))


def test_the_ci_role_publishes_and_leaves_the_graph_to_the_owner(
    roles: dict[str, str], database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a table's owner (or a member of its role) may build or drop an index: the CI
    role of the block publishes a large load all the same (the graph left missing, reads
    exact), the owner's next writer builds it, and a CI role made a member of the owner
    drops and rebuilds it for its own bulk load."""
    from _rows import make_rows, manifest_bytes

    import ragit.store.postgres.write as write_module
    from ragit.store.postgres.migrate import migrate
    from ragit.store.postgres.read import PgReader
    from ragit.store.postgres.write import PgWriter

    monkeypatch.setattr(write_module, "GRAPH_MIN_ROWS", 0)  # a small namespace gets a graph

    def publish(role: str, sha: str, rows: list[Any]) -> PgWriter:
        monkeypatch.setenv("RAGIT_DATABASE_URL", roles[role])
        writer = PgWriter.open("repo", "test-ns", len(rows[0].vector))
        with writer:
            writer.write(rows)
            ids = [r.chunk_id for r in rows]
            writer.publish(sha, manifest_bytes(sha, ids), ids)
        return writer

    monkeypatch.setenv("RAGIT_DATABASE_URL", roles["ragit_owner"])
    migrate()
    first = make_rows(300, seed=61)
    publish("ragit_ci", "a" * 40, first)  # would build the graph: CI may not
    assert _graph(database) is None
    monkeypatch.setenv("RAGIT_DATABASE_URL", roles["ragit_reader"])
    with PgReader.open() as reader:
        snap = reader.snapshot("repo", "a" * 40)
        assert snap is not None and len(snap.chunk_ids) == len(first)
    monkeypatch.setenv("RAGIT_DATABASE_URL", roles["ragit_owner"])
    with PgWriter.open("repo", "test-ns", len(first[0].vector)) as owner:
        assert owner.build_index() is True
    built = _graph(database)
    assert built is not None and built[1] is True
    # A bulk load by CI into the indexed namespace cannot drop the graph: it loads into it.
    publish("ragit_ci", "b" * 40, make_rows(400, seed=62))
    assert _graph(database) == built
    # A member of the owner's role drops the graph for its bulk load and builds it again.
    with psycopg.connect(database, autocommit=True) as admin:
        admin.execute("GRANT ragit_owner TO ragit_ci")
    publish("ragit_ci", "c" * 40, make_rows(900, seed=63))
    rebuilt = _graph(database)
    assert rebuilt is not None and rebuilt[1] is True and rebuilt[0] != built[0]
