"""The manifest rules SNAP-005 and SNAP-006 on the shared store, with real processes and a real
PostgreSQL + pgvector: a commit's manifest is the server's row, so a damaged row is what a
damaged manifest file is locally — `query` and `context pack` fail with the typed error
(exit 4) naming ``postgres:<sha>``, the row is kept as it is, `doctor` names the ingest that
republishes the commit, and after it the commit answers as before.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "mcp"))
sys.path.insert(0, str(Path(__file__).parent))

from _mcp_helpers import git, hermetic_env, make_repo
from test_team_workflow import _answers, _cli, _comparable

from ragit.store.postgres.migrate import migrate

REPOSITORY = "team/manifests"


def _row(database: str, sha: str) -> str:
    with psycopg.connect(database) as conn:
        row = conn.execute(
            "SELECT manifest FROM ragit_snapshots WHERE repository_id = %s AND commit_sha = %s",
            (REPOSITORY, sha),
        ).fetchone()
    assert row is not None
    return str(row[0])


def _set_row(database: str, sha: str, text: str) -> None:
    with psycopg.connect(database, autocommit=True) as conn:
        conn.execute(
            "UPDATE ragit_snapshots SET manifest = %s WHERE repository_id = %s AND commit_sha = %s",
            (text, REPOSITORY, sha),
        )


def _future(text: str) -> str:
    data: dict[str, Any] = json.loads(text)
    data["indexVersion"] = 999
    return json.dumps(data)


def _other_commit(text: str) -> str:
    data: dict[str, Any] = json.loads(text)
    data["commitSha"] = "0" * 40
    return json.dumps(data)


@pytest.mark.parametrize(
    ("damage", "code"),
    [
        (lambda text: text[:40], "SNAPSHOT_MANIFEST_INVALID"),
        (_other_commit, "SNAPSHOT_MANIFEST_INVALID"),
        (_future, "SNAPSHOT_SCHEMA_UNSUPPORTED"),
    ],
    ids=["truncated", "sha-mismatch", "future-index-version"],
)
def test_a_damaged_manifest_row_is_a_typed_error_kept_until_republished(
    database: str, tmp_path: Path, damage: Any, code: str
) -> None:
    migrate()
    env = {**hermetic_env(tmp_path), "RAGIT_DATABASE_URL": database}
    root = make_repo(
        tmp_path / "a",
        env,
        config={"store.backend": "postgres", "store.repository": REPOSITORY},
        ingest=False,
    )
    assert _cli(root, env, "ingest", "--all")["ok"] is True
    head = git(root, env, "rev-parse", "HEAD")
    expected = _comparable(_answers(root, env, head))
    damaged = damage(_row(database, head))
    _set_row(database, head, damaged)

    for argv in (["query", "double entry"], ["context", "pack", "posting validation"]):
        got = _cli(root, env, *argv, check=False)
        assert got["ok"] is False, got
        assert got["error"]["code"] == code
        assert got["error"]["category"] == "corrupt_or_incompatible"
        if code == "SNAPSHOT_MANIFEST_INVALID":
            assert got["error"]["details"]["path"] == f"postgres:{head}"
    assert _row(database, head) == damaged  # kept: nothing rewrites or deletes it on a read

    doctor = _cli(root, env, "doctor", check=False)
    failed = {c["name"]: c for c in doctor["data"]["checks"] if not c["ok"]}
    assert set(failed) == {"snapshot.head"}, failed
    recovery = failed["snapshot.head"]["recovery"]
    # `--at <sha>` for a damaged manifest; a plain one (HEAD) for an unsupported version.
    assert recovery in (f"ragit ingest --all --at {head}", "ragit ingest --all"), recovery
    assert _cli(root, env, *recovery.split()[1:])["ok"] is True
    assert _comparable(_answers(root, env, head)) == expected
