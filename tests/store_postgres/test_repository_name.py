"""The repository's default name on the shared store: its root commit (docs/team.md).

Two repositories left at the default configuration (``store.backend = "postgres"`` only,
``project.name`` the same ``ragit-project`` in both) ingest into one server: each is named
``git:<root sha>``, so ``status`` and doctor count only its own snapshots, and a clone of
one answers from that one's snapshots. A shallow clone cannot see its root commit: with
``store.repository`` unset it is a typed error naming the setting; set, it answers.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[1] / "mcp"))

from _mcp_helpers import RAGIT, McpServer, git, hermetic_env, make_repo, run

from ragit.store.postgres.migrate import migrate

CONFIG = {"store.backend": "postgres"}


def _cli(root: Path, env: dict[str, str], *args: str) -> tuple[int, dict[str, Any]]:
    proc = run([RAGIT, *args, "--format", "json"], cwd=root, env=env, check=False)
    return proc.returncode, json.loads(proc.stdout.strip().splitlines()[-1])


def _ok(root: Path, env: dict[str, str], *args: str) -> dict[str, Any]:
    code, envelope = _cli(root, env, *args)
    assert code == 0 and envelope["ok"] is True, envelope
    data: dict[str, Any] = envelope["data"]
    return data


def _root(root: Path, env: dict[str, str]) -> str:
    return git(root, env, "rev-list", "--first-parent", "--max-parents=0", "HEAD")


def _snapshots(root: Path, env: dict[str, str]) -> dict[str, Any]:
    code, envelope = _cli(root, env, "doctor")
    assert code == 0, envelope
    checks = {c["name"]: c for c in envelope["data"]["checks"]}
    snapshots: dict[str, Any] = checks["store.snapshots"]
    return snapshots


def test_two_repositories_at_the_default_keep_their_snapshots_apart(
    database: str, tmp_path: Path
) -> None:
    migrate()
    env = {**hermetic_env(tmp_path), "RAGIT_DATABASE_URL": database}
    a = make_repo(tmp_path / "a", env, "docs-basic", config=CONFIG, ingest=False)
    k = make_repo(tmp_path / "k", env, "korean-mixed", config=CONFIG, ingest=False)
    assert _ok(a, env, "config", "get", "project.name") == _ok(
        k, env, "config", "get", "project.name"
    )
    names = {"a": f"git:{_root(a, env)}", "k": f"git:{_root(k, env)}"}
    assert names["a"] != names["k"]
    _ok(a, env, "ingest", "--all")
    (a / "docs" / "later.md").write_text("# Later\n\n## Note\n\nA later ledger page.\n", "utf-8")
    git(a, env, "add", "--all")
    git(a, env, "commit", "-q", "-m", "Later page")
    _ok(a, env, "ingest", "--all")
    _ok(k, env, "ingest", "--all")

    for repo, name, count in ((a, names["a"], 2), (k, names["k"], 1)):
        status = _ok(repo, env, "status")
        assert status["store"]["repository"] == name
        assert status["store"]["snapshotCount"] == count, status["store"]
        assert status["store"]["headIndexed"] is True
        snapshots = _snapshots(repo, env)
        assert snapshots["repository"] == name
        assert snapshots["snapshotCount"] == count
        assert git(repo, env, "rev-parse", "HEAD") in snapshots["indexedCommits"]

    # A clone of A (never ingested, no local store) answers from A's snapshots.
    expected = _ok(a, env, "query", "double entry", "--top-k", "5")
    b = tmp_path / "b"
    run(["git", "clone", "-q", str(a), str(b)], cwd=tmp_path, env=env)
    got = _ok(b, env, "query", "double entry", "--top-k", "5")
    assert got["snapshotSha"] == git(a, env, "rev-parse", "HEAD")
    assert got["hits"] == expected["hits"]
    assert _ok(b, env, "status")["store"]["repository"] == names["a"]
    with McpServer(b, env, stderr_path=tmp_path / "mcp.log") as server:
        call = server.call("ragit_query", {"question": "double entry", "topK": 5})
        assert call.envelope["ok"] is True, call.envelope
        assert call.data["hits"] == expected["hits"]

    # A shallow clone lacks the root commit: with the name unset, a typed error naming it;
    # named explicitly (as every clone then must be), it answers.
    s = tmp_path / "s"
    run(["git", "clone", "-q", "--depth", "1", f"file://{a}", str(s)], cwd=tmp_path, env=env)
    code, envelope = _cli(s, env, "query", "double entry")
    assert code == 3, envelope
    assert envelope["error"]["code"] == "SNAPSHOT_STORE_UNAVAILABLE"
    assert "store.repository" in envelope["error"]["details"]["reason"]
    status = _ok(s, env, "status")
    assert status["store"]["readable"] is False
    assert "store.repository" in status["store"]["reason"]
    _ok(s, env, "config", "set", "store.repository", names["a"])
    assert _ok(s, env, "query", "double entry", "--top-k", "5")["hits"] == expected["hits"]
