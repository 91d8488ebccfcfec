"""``ragit security purge --target store`` on the shared store (docs/team.md), with real
processes and a real PostgreSQL + pgvector.

A snapshot is made to look published by a RAGit that did not mask a document: its chunks on
the server hold the raw text (a fixture secret the current rules mask) and its manifest, on
the server and in the clone, cites them. The purge must delete that snapshot and every
chunk (and keyword posting) only it cited, in one server transaction, leave every other
snapshot answering byte for byte as before, and name the commit to re-index.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "mcp"))
sys.path.insert(0, str(Path(__file__).parent))

from _answers import answers, cli, ok
from _mcp_helpers import RAGIT, git, hermetic_env, make_repo, tree_state
from test_roles import roles  # noqa: F401 - the fixture of docs/team.md's roles

from ragit.store.postgres.migrate import migrate

LEAKY_DOC = "docs/runbooks/ci-tokens.md"
TOKEN = "ghp_RagitFixtureFAKEclassic0000000000003"
QUESTIONS = ["runbook index operations handbook", "github token ci", "database access"]
GOAL = "rotate the ci tokens"
_TABLES = (
    "ragit_namespaces",
    "ragit_chunks",
    "ragit_chunk_terms",
    "ragit_snapshots",
    "ragit_snapshot_chunks",
)


def _env(tmp_path: Path, url: str | None = None) -> dict[str, str]:
    """A hermetic environment (the checkout's PYTHONPATH kept: the CLI under test is this
    tree's) naming the server ``url``."""
    env = hermetic_env(tmp_path)
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    if url is not None:
        env["RAGIT_DATABASE_URL"] = url
    return env


def _cli(root: Path, env: dict[str, str], *args: str) -> tuple[int, dict[str, Any], str]:
    return cli(root, env, *args)


def _ok(root: Path, env: dict[str, str], *args: str) -> dict[str, Any]:
    return ok(root, env, *args)


def _answers(root: Path, env: dict[str, str], sha: str) -> dict[str, Any]:
    """Hits (ids, scores, texts, citations) and a context pack's selection at ``sha``."""
    return answers(_ok, root, env, sha, QUESTIONS, GOAL)


def _repo(base: Path, env: dict[str, str], repository: str) -> tuple[Path, str, str]:
    """The secrets fixture on the shared store under ``repository``, both commits ingested."""
    root = make_repo(
        base,
        env,
        "secrets",
        config={"store.backend": "postgres", "store.repository": repository},
        ingest=False,
    )
    first = git(root, env, "rev-list", "--max-parents=0", "HEAD")
    head = git(root, env, "rev-parse", "HEAD")
    _ok(root, env, "ingest", "--all", "--at", first)
    _ok(root, env, "ingest", "--all")
    return root, first, head


def _plant_legacy_chunks(
    root: Path, env: dict[str, str], repository: str
) -> tuple[list[str], set[str]]:
    """Republish HEAD's snapshot of ``repository`` as a RAGit that did not mask
    ``LEAKY_DOC`` would have: its chunks on the server hold the raw text, and the manifest
    (on the server and the clone's copy) cites them. Returns their ids, and those of the
    ones that hold the token (the others equal the masked chunks: the same id)."""
    from dataclasses import replace

    from ragit.config import load_config
    from ragit.embed import build_embedder
    from ragit.ingest.rows import chunk_rows
    from ragit.snapshot.manifest import load_manifest, write_manifest
    from ragit.store.postgres.write import PgWriter
    from ragit.workspace import Workspace

    ws = Workspace(root)
    cfg = load_config(ws)
    head = git(root, env, "rev-parse", "HEAD")
    raw = git(root, env, "show", f"{head}:{LEAKY_DOC}") + "\n"
    assert TOKEN in raw
    embedder = build_embedder(ws.root, cfg.embedding, cfg.security, mode="cli")
    try:
        rows = chunk_rows(raw)
        vectors = embedder.embed([row.search_en for row in rows])
        profile = embedder.profile.as_dict()
    finally:
        embedder.close()
    rows = [replace(row, vector=vec) for row, vec in zip(rows, vectors, strict=True)]
    ids = [row.chunk_id for row in rows]
    manifest = load_manifest(ws, head)
    docs = [
        d.model_copy(update={"chunk_ids": ids}) if d.path == LEAKY_DOC else d for d in manifest.docs
    ]
    assert docs != list(manifest.docs)
    legacy = manifest.model_copy(update={"docs": docs})
    with PgWriter.open(repository, str(profile["namespaceId"]), int(profile["dimensions"])) as w:
        w.write(rows)
        w.publish(head, legacy.to_json_bytes(), legacy.all_chunk_ids())
    write_manifest(ws, legacy)
    return ids, {row.chunk_id for row in rows if TOKEN in row.text}


def _server(database: str) -> dict[str, Any]:
    """The server's state: row counts, snapshots by repository and commit, and whether any
    stored text or keyword term still holds the planted token."""
    with psycopg.connect(database) as conn:
        counts = {
            table: int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])  # type: ignore[index]
            for table in _TABLES
        }
        snapshots = sorted(
            (str(r[0]), str(r[1]), int(r[2]))
            for r in conn.execute(
                "SELECT repository_id, commit_sha, snapshot_id FROM ragit_snapshots"
            ).fetchall()
        )
        texts = conn.execute(
            "SELECT count(*) FROM ragit_chunks WHERE strpos(text || search_en || section_title "
            "|| heading_path, %s) > 0",
            (TOKEN,),
        ).fetchone()
        terms = conn.execute(
            "SELECT count(*) FROM ragit_chunk_terms WHERE strpos(term, %s) > 0",
            ("ragitfixturefakeclassic",),
        ).fetchone()
    return {
        "counts": counts,
        "snapshots": snapshots,
        "secretTexts": int(texts[0]) if texts else 0,
        "secretTerms": int(terms[0]) if terms else 0,
    }


def _not_indexed(root: Path, env: dict[str, str], sha: str) -> dict[str, Any]:
    code, envelope, out = _cli(root, env, "query", "github token ci", "--at", sha)
    assert code != 0, out
    error: dict[str, Any] = envelope["error"]
    assert error["code"] == "SNAPSHOT_NOT_INDEXED", error
    return error


def test_after_a_store_purge_no_secret_text_is_left_on_the_server(
    database: str, tmp_path: Path
) -> None:
    """EXT-065: the bug this guards: the purge looked for the embedded store, found none and
    left every chunk holding the secret on the server."""
    migrate()
    env = _env(tmp_path, database)
    a, _first, _head = _repo(tmp_path / "a", env, "team/bug")
    _plant_legacy_chunks(a, env, "team/bug")
    assert _server(database)["secretTexts"] > 0

    _ok(a, env, "security", "purge", "--target", "store")

    after = _server(database)
    assert (after["secretTexts"], after["secretTerms"]) == (0, 0)


def test_a_store_purge_deletes_the_stale_snapshot_and_its_secret_chunks_from_the_server(
    database: str, tmp_path: Path
) -> None:
    """EXT-065: the secret text leaves the server; the stale commit becomes not indexed (its
    nearest ancestor named); every other snapshot, of this repository and of another one
    sharing the chunks, answers byte for byte as before; re-indexing restores the commit."""
    migrate()
    env = _env(tmp_path, database)
    a, first, head = _repo(tmp_path / "a", env, "team/purge")
    other, other_first, other_head = _repo(tmp_path / "o", env, "team/other")
    raw_ids, secret_ids = _plant_legacy_chunks(a, env, "team/purge")
    assert secret_ids and len(secret_ids) < len(set(raw_ids))
    before = _server(database)
    assert before["secretTexts"] > 0 and before["secretTerms"] > 0
    kept = {
        "a": _answers(a, env, first),
        **{sha: _answers(other, env, sha) for sha in (other_first, other_head)},
    }
    audit = _ok(a, env, "security", "audit")
    store = [f for f in audit["findings"] if f["surface"] == "store"]
    assert store and {f["severity"] for f in store} == {"critical"}
    assert {f["path"] for f in store} == {LEAKY_DOC}
    assert TOKEN not in json.dumps(audit)

    # --- the dry run: the plan, and nothing written anywhere
    tree = tree_state(a)
    dry = _ok(a, env, "security", "purge", "--target", "store", "--dry-run")
    assert _server(database) == before and tree_state(a) == tree
    assert dry["planned"][0] == {
        "target": "store",
        "action": "purge",
        "path": "postgres:team/purge",
        # The others hold no secret and equal the chunks team/other's snapshots cite.
        "chunks": len(secret_ids),
    }
    assert [(p["action"], p["path"], p.get("manifest")) for p in dry["planned"][1:]] == [
        ("delete", f"postgres:team/purge:{head}", f".ragit/manifest/{head}.json")
    ]
    assert [s["commitSha"] for s in dry["staleSnapshots"]] == [head]

    # --- the purge
    data = _ok(a, env, "security", "purge", "--target", "store")

    assert data["staleSnapshots"] == [
        {
            "commitSha": head,
            "reason": data["staleSnapshots"][0]["reason"],
            "recovery": f"ragit ingest --all --at {head}",
        }
    ]
    assert data["deleted"] == [f"postgres:team/purge:{head}", f".ragit/manifest/{head}.json"]
    assert data["store"] == {
        "backend": "postgres",
        "repository": "team/purge",
        "manifests": 1,
        "chunks": data["store"]["chunks"],
        "deletedChunks": len(secret_ids),
    }
    after = _server(database)
    assert after["secretTexts"] == 0 and after["secretTerms"] == 0
    assert after["snapshots"] == [s for s in before["snapshots"] if s[:2] != ("team/purge", head)]
    assert after["counts"]["ragit_chunks"] == before["counts"]["ragit_chunks"] - len(secret_ids)
    assert not (a / ".ragit" / "manifest" / f"{head}.json").exists()
    assert not (a / ".ragit" / "store").exists()
    error = _not_indexed(a, env, head)
    assert error["details"]["nearestIndexedAncestor"] == first, error
    assert _answers(a, env, first) == kept["a"]
    for sha in (other_first, other_head):
        assert _answers(other, env, sha) == kept[sha]
    audit = _ok(a, env, "security", "audit")
    pending = [f for f in audit["findings"] if f["surface"] == "store"]
    assert [(f["severity"], f["suggestedAction"]) for f in pending] == [
        ("warn", f"ragit ingest --all --at {head}")
    ]
    again = _ok(a, env, "security", "purge", "--target", "store", "--dry-run")
    assert [s["commitSha"] for s in again["staleSnapshots"]] == [head]  # still named

    # --- the recovery it names re-indexes the commit, masked
    _ok(a, env, *data["staleSnapshots"][0]["recovery"].split()[1:])
    hits = _ok(a, env, "query", "github token ci", "--top-k", "20", "--view", "full")
    assert LEAKY_DOC in {h["path"] for h in hits["hits"]}
    assert TOKEN not in json.dumps(hits)
    assert _server(database)["secretTexts"] == 0
    assert [
        f for f in _ok(a, env, "security", "audit")["findings"] if f["surface"] == "store"
    ] == []
    assert not (a / ".ragit" / "store").exists()


def test_a_secret_chunk_another_repository_cites_is_kept_until_that_repository_purges(
    database: str, tmp_path: Path
) -> None:
    """EXT-066: chunks are shared by every repository on the server; one repository's purge
    deletes its own stale snapshot but keeps the chunks another repository's snapshot still
    cites, says how many and who must purge; that repository's purge then deletes them."""
    migrate()
    env = _env(tmp_path, database)
    a, _first, head = _repo(tmp_path / "a", env, "team/one")
    c, _cfirst, chead = _repo(tmp_path / "c", env, "team/two")
    raw_ids, secret_ids = _plant_legacy_chunks(a, env, "team/one")
    assert _plant_legacy_chunks(c, env, "team/two")[0] == raw_ids  # content-addressed: shared
    expected = _answers(c, env, chead)

    code, envelope, out = _cli(a, env, "security", "purge", "--target", "store")

    assert code == 0, out
    data = envelope["data"]
    assert [s["commitSha"] for s in data["staleSnapshots"]] == [head]
    assert data["planned"][0]["chunks"] == 0 and data["store"]["deletedChunks"] == 0
    warned = [w for w in envelope["warnings"] if "other repositories" in w]
    assert len(warned) == 1, envelope["warnings"]
    assert warned[0].startswith(f"{len(secret_ids)} chunk(s) holding a secret")
    assert "ragit security purge --target store" in warned[0]
    _not_indexed(a, env, head)
    assert _server(database)["secretTexts"] > 0  # team/two still cites them
    assert _answers(c, env, chead) == expected

    # Now only team/two's stale snapshot cites them (and the chunks of its other documents
    # no other snapshot cites): its purge deletes them all.
    dry = _ok(c, env, "security", "purge", "--target", "store", "--dry-run")
    assert dry["planned"][0]["chunks"] >= len(set(raw_ids))
    second = _ok(c, env, "security", "purge", "--target", "store")
    assert second["store"]["deletedChunks"] == dry["planned"][0]["chunks"]
    assert _server(database)["secretTexts"] == 0 and _server(database)["secretTerms"] == 0


def _counts_and_tree(database: str, root: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    return _server(database), tree_state(root)


def test_a_role_without_delete_or_no_server_cannot_purge_and_nothing_changes(
    roles: dict[str, str],  # noqa: F811 - the fixture imported above
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """EXT-067: the reader role of docs/team.md is refused before anything changes (typed,
    naming what it lacks, no password) but may run the dry run; no server is
    SNAPSHOT_STORE_UNAVAILABLE (exit 3); the CI role, which has DELETE, purges."""
    base = _env(tmp_path)
    owner = {**base, "RAGIT_DATABASE_URL": roles["ragit_owner"]}
    ci = {**base, "RAGIT_DATABASE_URL": roles["ragit_ci"]}
    reader = {**base, "RAGIT_DATABASE_URL": roles["ragit_reader"]}
    _ok(tmp_path, owner, "migrate", "store")
    a, _first, head = _repo(tmp_path / "a", ci, "team/roles")
    monkeypatch.setenv("RAGIT_DATABASE_URL", roles["ragit_ci"])
    _plant_legacy_chunks(a, ci, "team/roles")
    (a / ".ragit" / "memory" / "working").mkdir(parents=True, exist_ok=True)
    leaky = a / ".ragit" / "memory" / "working" / "goal_legacy.json"
    leaky.write_text(json.dumps({"goalId": "goal_legacy", "summary": f"use {TOKEN}"}) + "\n")
    server_before, tree_before = _counts_and_tree(roles["ragit_owner"], a)

    for target in ("store", "all"):
        code, envelope, out = _cli(a, reader, "security", "purge", "--target", target)
        assert code == 3, out
        error = envelope["error"]
        assert error["code"] == "SNAPSHOT_STORE_UNAVAILABLE", error
        reason = str(error["details"]["reason"])
        assert "the role 'ragit_reader' cannot write to the shared store" in reason, reason
        assert "DELETE on ragit_snapshots" in reason, reason
        assert "pw-5ecret" not in out
    # The reader may plan: a dry run reads through a read-only connection.
    dry = _ok(a, reader, "security", "purge", "--target", "store", "--dry-run")
    assert [s["commitSha"] for s in dry["staleSnapshots"]] == [head]
    nowhere = {k: v for k, v in ci.items() if k != "RAGIT_DATABASE_URL"}
    code, envelope, out = _cli(a, nowhere, "security", "purge", "--target", "store")
    assert code == 3 and envelope["error"]["code"] == "SNAPSHOT_STORE_UNAVAILABLE", out
    assert _counts_and_tree(roles["ragit_owner"], a) == (server_before, tree_before)

    data = _ok(a, ci, "security", "purge", "--target", "all")
    assert [s["commitSha"] for s in data["staleSnapshots"]] == [head]
    assert ".ragit/memory/working/goal_legacy.json" in data["rewritten"]
    assert TOKEN not in leaky.read_text(encoding="utf-8")
    assert _server(roles["ragit_owner"])["secretTexts"] == 0


def _killed_at(
    root: Path, env: dict[str, str], point: str, tmp: Path, meanwhile: Callable[[], None]
) -> None:
    """Start a purge, wait until it is held at ``point``, run ``meanwhile``, SIGKILL it."""
    fault_env = {**env, "RAGIT_FAULT_PAUSE_AT": point, "RAGIT_FAULT_RELEASE": str(tmp / "never")}
    proc = subprocess.Popen(
        [RAGIT, "security", "purge", "--target", "store", "--format", "json"],
        cwd=root,
        env=fault_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + 300
        seen = ""
        while f"paused at {point}" not in seen:
            line = proc.stderr.readline()
            assert line or proc.poll() is None, f"the purge ended first: {seen}"
            seen += line
            assert time.monotonic() < deadline, seen
        meanwhile()
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=60) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()


@pytest.mark.parametrize("point", ["pg-purge-deleted", "pg-purge-committed"])
def test_a_killed_purge_leaves_the_server_as_before_or_purged_and_a_rerun_completes(
    database: str, tmp_path: Path, point: str
) -> None:
    """EXT-065: a purge SIGKILLed before its server commit leaves every row as it was (the
    stale snapshot still answering, also while the purge holds its transaction open:
    readers never wait for it nor see half a purge); killed after it, the
    snapshot is gone whole. The stale commit is recorded first, so it stays named, and the
    next purge completes (deleting the clone's copy of the manifest too)."""
    migrate()
    env = _env(tmp_path, database)
    a, first, head = _repo(tmp_path / "a", env, "team/killed")
    _plant_legacy_chunks(a, env, "team/killed")
    before = _server(database)
    stale_answers = _answers(a, env, head)
    first_answers = _answers(a, env, first)

    def meanwhile() -> None:
        # Readers are not blocked by the purge's locks and see the server as it was.
        if point == "pg-purge-deleted":
            assert _answers(a, env, head) == stale_answers
            assert _answers(a, env, first) == first_answers

    _killed_at(a, env, point, tmp_path, meanwhile)

    state = json.loads((a / ".ragit" / "security" / "state.json").read_text(encoding="utf-8"))
    assert [s["commitSha"] for s in state["staleSnapshots"]] == [head]
    if point == "pg-purge-committed":
        assert _server(database)["secretTexts"] == 0
        _not_indexed(a, env, head)
    else:
        assert _server(database) == before
        assert _answers(a, env, head) == stale_answers
    with psycopg.connect(database) as conn:  # no advisory lock outlived the purge
        locks = conn.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'").fetchone()
        assert locks is not None and locks[0] == 0
    data = _ok(a, env, "security", "purge", "--target", "store")
    assert [s["commitSha"] for s in data["staleSnapshots"]] == [head]
    assert _server(database)["secretTexts"] == 0
    assert not (a / ".ragit" / "manifest" / f"{head}.json").exists()
    assert _answers(a, env, first) == first_answers
    _not_indexed(a, env, head)
