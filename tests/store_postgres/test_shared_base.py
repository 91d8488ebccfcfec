"""Ingest on the shared store in a clone without local manifests (docs/team.md), with real
processes and a real PostgreSQL + pgvector.

A CI job runs in a fresh clone: its ``ragit ingest`` (no ``--all``) or ``--since REV`` takes
the base snapshot from the server when the clone has no manifest file of it, writes exactly
the manifest a clone with local manifests writes, and embeds only the chunks the server
lacks.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[1] / "mcp"))
sys.path.insert(0, str(Path(__file__).parent))

from _mcp_helpers import RAGIT, git, hermetic_env, make_repo, run
from test_team_workflow import NEW_DOC, _answers, _cli, _comparable

from ragit.store.postgres.migrate import migrate
from ragit.store.postgres.read import PgReader

REPOSITORY = "team/ci"


def _clone(source: Path, dest: Path, env: dict[str, str]) -> Path:
    run(["git", "clone", "-q", str(source), str(dest)], cwd=dest.parent, env=env)
    assert not (dest / ".ragit" / "manifest").exists()
    assert not (dest / ".ragit" / "store").exists()
    return dest


def _manifest(root: Path, sha: str) -> dict[str, Any]:
    """The local manifest of ``sha`` as RAGit reads it (chunk ids, whatever its indexVersion)."""
    from ragit.snapshot.manifest import load_manifest
    from ragit.workspace import Workspace

    return load_manifest(Workspace(root), sha).model_dump(by_alias=True)


def _server_manifest(repository: str, sha: str) -> bytes | None:
    reader = PgReader.open()
    try:
        found = reader.snapshot(repository, sha)
        return None if found is None else bytes(found.manifest)
    finally:
        reader.close()


def _two_commits(tmp_path: Path, env: dict[str, str]) -> tuple[Path, str, str, dict[str, Any]]:
    """Clone A (the first CI run) ingests commit 1 with ``--all``; commit 2 adds a page and is
    not ingested. Returns A, both SHAs and the first ingest's data."""
    a = make_repo(
        tmp_path / "a",
        env,
        config={"store.backend": "postgres", "store.repository": REPOSITORY},
        ingest=False,
    )
    c1 = git(a, env, "rev-parse", "HEAD")
    first = _cli(a, env, "ingest", "--all")
    assert first["ok"] is True, first
    (a / "docs" / "shared-index.md").write_text(NEW_DOC, encoding="utf-8")
    git(a, env, "add", "--all")
    git(a, env, "commit", "-q", "-m", "Shared index page")
    c2 = git(a, env, "rev-parse", "HEAD")
    return a, c1, c2, first["data"]


def test_a_fresh_clone_ingests_incrementally_from_the_servers_base(
    database: str, tmp_path: Path
) -> None:
    migrate()
    env = {**hermetic_env(tmp_path), "RAGIT_DATABASE_URL": database}
    a, c1, c2, first = _two_commits(tmp_path, env)

    # --- B: a fresh clone at commit 2 (a CI job) runs a plain `ragit ingest`
    b = _clone(a, tmp_path / "b", env)
    got = _cli(b, env, "ingest")
    assert got["ok"] is True, got
    data = got["data"]
    assert data["baseMode"] == "since" and data["baseSha"] == c1, data
    assert data["noop"] is False
    assert data["processed"] == 1 and data["plannedFiles"] == ["docs/shared-index.md"]
    assert data["reused"] == first["documents"] == data["documents"] - 1
    new_manifest = _manifest(b, c2)
    base_manifest = json.loads(_server_manifest(REPOSITORY, c1) or b"null")
    new_ids = {cid for d in new_manifest["docs"] for cid in d["chunkIds"]}
    base_ids = {cid for d in base_manifest["docs"] for cid in d["chunkIds"]}
    assert data["embedded"] == len(new_ids - base_ids) > 0  # only what the server lacked
    # The server holds the local manifest's exact self-contained form (indexVersion 1: the
    # local file names chunk-id packs, which the server's readers do not have).
    from ragit.snapshot.manifest import load_manifest
    from ragit.workspace import Workspace

    local_bytes = load_manifest(Workspace(b), c2).to_json_bytes()
    assert _server_manifest(REPOSITORY, c2) == local_bytes

    # --- C: a clone that ingests both commits itself (its own repository name on the server,
    # so its snapshots are its own; the chunks are shared, content-addressed)
    c = _clone(a, tmp_path / "c", env)
    run([RAGIT, "config", "set", "store.repository", "team/self"], cwd=c, env=env)
    assert _cli(c, env, "ingest", "--all", "--at", c1)["ok"] is True
    own = _cli(c, env, "ingest")
    assert own["ok"] is True, own
    assert (own["data"]["baseMode"], own["data"]["baseSha"]) == ("since", c1)
    assert own["data"]["reused"] == data["reused"]
    # The same manifest, byte for byte but for its creation time.
    ours, theirs = _manifest(b, c2), _manifest(c, c2)
    assert ours.pop("createdAt") and theirs.pop("createdAt")
    assert ours == theirs
    assert json.dumps(ours, ensure_ascii=False, separators=(",", ":")) == json.dumps(
        theirs, ensure_ascii=False, separators=(",", ":")
    )
    # And the same answers at commit 2.
    assert _comparable(_answers(b, env, c2)) == _comparable(_answers(c, env, c2))

    # --- D: another fresh clone; `--since` commit 1 finds the base on the server, and the
    # commit is already published with the same documents: a noop that writes nothing.
    d = _clone(a, tmp_path / "d", env)
    since = _cli(d, env, "ingest", "--since", c1)
    assert since["ok"] is True, since
    assert since["data"]["noop"] is True
    assert since["data"]["embedded"] == 0
    assert not (d / ".ragit" / "manifest").exists()
    # A targeted ingest starts from the target's snapshot on the server.
    partial = _cli(d, env, "ingest", "--path", "docs/shared-index.md")
    assert partial["ok"] is True, partial
    assert partial["data"]["baseMode"] == "partial-head", partial["data"]
    assert partial["data"]["noop"] is True
    assert _server_manifest(REPOSITORY, c2) == local_bytes  # nothing republished


_TABLES = (
    "ragit_namespaces",
    "ragit_chunks",
    "ragit_chunk_terms",
    "ragit_snapshots",
    "ragit_snapshot_chunks",
)


def _row_counts(database: str) -> dict[str, int]:
    import psycopg

    with psycopg.connect(database) as conn:
        return {
            table: int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])  # type: ignore[index]
            for table in _TABLES
        }


_COUNTS = (
    "documents",
    "processed",
    "reused",
    "skipped",
    "embedded",
    "baseMode",
    "baseSha",
    "plannedFiles",
    "deletedDocumentIds",
    "noop",
)


def test_a_dry_run_counts_against_the_server_and_writes_nothing(
    database: str, tmp_path: Path
) -> None:
    from _mcp_helpers import tree_state

    migrate()
    env = {**hermetic_env(tmp_path), "RAGIT_DATABASE_URL": database}
    a, c1, c2, _first = _two_commits(tmp_path, env)
    # Another repository on the same server publishes commit 2's content first: the server
    # then holds every chunk of commit 2 (chunks are shared per embedding namespace).
    x = _clone(a, tmp_path / "x", env)
    run([RAGIT, "config", "set", "store.repository", "team/other"], cwd=x, env=env)
    other = _cli(x, env, "ingest", "--all")
    assert other["ok"] is True and other["data"]["embedded"] > 0, other

    # A (local manifest of commit 1): the dry run embeds nothing, as the ingest then does.
    rows, tree = _row_counts(database), tree_state(a)
    dry = _cli(a, env, "ingest", "--dry-run")
    assert dry["ok"] is True, dry
    assert dry["data"]["mode"] == "dry-run" and dry["data"]["wouldFail"] is False
    assert _row_counts(database) == rows, "a dry run writes nothing on the server"
    assert tree_state(a) == tree, "a dry run writes nothing in the repository"
    real = _cli(a, env, "ingest")
    assert real["ok"] is True, real
    assert {k: dry["data"][k] for k in _COUNTS} == {k: real["data"][k] for k in _COUNTS}
    assert real["data"]["embedded"] == 0 and real["data"]["processed"] == 1

    # A fresh clone at commit 3 (one new page): the base comes from the server and the dry
    # run counts exactly the new page's chunks; nothing written on either side.
    (a / "docs" / "third.md").write_text(
        "# Third page\n\n## Note\n\nA page only commit three has.\n", encoding="utf-8"
    )
    git(a, env, "add", "--all")
    git(a, env, "commit", "-q", "-m", "Third page")
    b = _clone(a, tmp_path / "b", env)
    rows, tree = _row_counts(database), tree_state(b)
    dry = _cli(b, env, "ingest", "--dry-run")
    assert dry["ok"] is True, dry
    assert (dry["data"]["baseMode"], dry["data"]["baseSha"]) == ("since", c2)
    assert dry["data"]["embedded"] > 0
    assert _row_counts(database) == rows
    assert tree_state(b) == tree
    real = _cli(b, env, "ingest")
    assert real["ok"] is True, real
    assert {k: dry["data"][k] for k in _COUNTS} == {k: real["data"][k] for k in _COUNTS}
    # Published with the same documents: a dry run again is a noop that embeds nothing.
    again = _cli(tmp_path / "x", env, "ingest", "--dry-run", "--at", c1)
    assert again["ok"] is True, again
    assert again["data"]["embedded"] == 0
    assert _cli(b, env, "ingest", "--dry-run")["data"]["noop"] is True
