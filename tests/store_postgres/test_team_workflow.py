"""The team workflow end to end, with real processes (docs/team.md).

Clone A is the "CI": ``store.backend = "postgres"`` (committed in its config) and it ingests
two commits into a real PostgreSQL + pgvector. Clone B is a ``git clone`` of A with no
``.ragit/store`` and no manifests: its ``ragit query``, ``ragit context pack`` and
``ragit-mcp`` (the installed script over stdio, driven by the MCP SDK's client; every call
checks that no byte of B changed) answer every commit exactly as A's own queries do. An
ingest killed with SIGKILL inside its publishing transaction leaves the previous snapshot
answering and the killed commit unindexed on the server; a missing or wrong connection is
``SNAPSHOT_STORE_UNAVAILABLE`` and the password is never printed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[1] / "mcp"))

from _mcp_helpers import RAGIT, McpServer, git, hermetic_env, make_repo, run

from ragit.store.postgres.migrate import migrate

SECRET = "pw-5ecret-e2e-77"
QUESTIONS = ["double entry", "idempotency keys", "shared index for the team"]
GOAL = "implement posting validation"
NEW_DOC = (
    "# Shared index\n\n"
    "## Purpose\n\n"
    "The shared index for the team answers every clone by commit: one CI job ingests, "
    "every developer queries the same snapshot.\n"
)
THIRD_DOC = "# Killed ingest\n\n## Note\n\nThis commit is published only by the second ingest.\n"


def _cli(root: Path, env: dict[str, str], *args: str, check: bool = True) -> dict[str, Any]:
    proc = run([RAGIT, *args, "--format", "json"], cwd=root, env=env, check=check)
    envelope: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return envelope


def _answers(root: Path, env: dict[str, str], sha: str) -> dict[str, Any]:
    """The data of the queries and the context pack of ``sha`` (explicit ``--at``)."""
    out: dict[str, Any] = {}
    for question in QUESTIONS:
        envelope = _cli(root, env, "query", question, "--at", sha, "--top-k", "5", "--explain")
        assert envelope["ok"] is True, envelope
        out[question] = envelope["data"]
    envelope = _cli(root, env, "context", "pack", GOAL, "--at", sha)
    assert envelope["ok"] is True, envelope
    out[GOAL] = envelope["data"]
    return out


def _comparable(answers: dict[str, Any]) -> dict[str, Any]:
    """What must be identical across clones: the snapshot, the hits (ids, scores, texts,
    citations), the evidence and the pack's selection (branch and dirtiness may differ)."""
    keep = ("snapshotSha", "hits", "evidence", "usedTokens", "selectedHits", "selection")
    return {k: {f: v[f] for f in keep if f in v} for k, v in answers.items()}


def _kill_while_publishing(root: Path, env: dict[str, str], tmp: Path) -> None:
    """Start an ingest, wait until it holds the publishing transaction open, SIGKILL it."""
    release = tmp / "release-never"
    fault_env = {
        **env,
        "RAGIT_FAULT_PAUSE_AT": "pg-snapshot-inserted",
        "RAGIT_FAULT_RELEASE": str(release),
    }
    proc = subprocess.Popen(
        [RAGIT, "ingest", "--all", "--format", "json"],
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
        while "paused at pg-snapshot-inserted" not in seen:
            line = proc.stderr.readline()
            assert line or proc.poll() is None, f"the ingest ended first: {seen}"
            seen += line
            assert time.monotonic() < deadline, seen
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=60) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()


def test_a_clone_that_never_ingested_answers_every_commit_from_the_server(
    database: str, tmp_path: Path
) -> None:
    migrate()
    env = {**hermetic_env(tmp_path), "RAGIT_DATABASE_URL": database}

    # --- clone A, the "CI": two commits ingested into the shared store
    a = make_repo(
        tmp_path / "a",
        env,
        config={"store.backend": "postgres", "store.repository": "team/e2e"},
        ingest=False,
    )
    c1 = git(a, env, "rev-parse", "HEAD")
    first = _cli(a, env, "ingest", "--all")
    assert first["ok"] is True, first
    assert first["data"]["embedded"] > 0
    assert not (a / ".ragit" / "store").exists()  # nothing of zvec: the server holds it
    assert (a / ".ragit" / "manifest" / f"{c1}.json").is_file()  # selection's local copy
    (a / "docs" / "shared-index.md").write_text(NEW_DOC, encoding="utf-8")
    git(a, env, "add", "--all")
    git(a, env, "commit", "-q", "-m", "Shared index page")
    c2 = git(a, env, "rev-parse", "HEAD")
    second = _cli(a, env, "ingest", "--all")
    assert second["ok"] is True, second
    assert 0 < second["data"]["embedded"] < first["data"]["embedded"]  # the rest was stored
    expected = {sha: _answers(a, env, sha) for sha in (c1, c2)}
    assert expected[c1]["double entry"]["hits"], "the fixture answers its own question"
    assert any(h["path"] == "docs/shared-index.md" for h in expected[c2][QUESTIONS[2]]["hits"])
    assert all(h["path"] != "docs/shared-index.md" for h in expected[c1][QUESTIONS[2]]["hits"])

    # --- clone B: a git clone, no store, no manifest, never ingested
    b = tmp_path / "b"
    run(["git", "clone", "-q", str(a), str(b)], cwd=tmp_path, env=env)
    assert not (b / ".ragit" / "store").exists()
    assert not (b / ".ragit" / "manifest").exists()
    for sha in (c1, c2):
        got = _answers(b, env, sha)
        assert _comparable(got) == _comparable(expected[sha]), sha
    head = _cli(b, env, "query", QUESTIONS[2], "--top-k", "5", "--explain")
    assert head["data"]["snapshot"]["selection"] == "head-exact"
    assert head["data"]["hits"] == expected[c2][QUESTIONS[2]]["hits"]
    assert not (b / ".ragit" / "store").exists()
    assert not (b / ".ragit" / "manifest").exists()  # a read writes nothing

    # --- ragit-mcp in B: real stdio; McpServer.call fails if any byte of B changes
    with McpServer(b, env, stderr_path=tmp_path / "mcp-b.log") as server:
        for sha in (c1, c2):
            for question in QUESTIONS:
                call = server.call(
                    "ragit_query",
                    {"question": question, "at": sha, "topK": 5, "explain": True},
                )
                assert call.envelope["ok"] is True, call.envelope
                assert call.data["hits"] == expected[sha][question]["hits"]
                assert call.data["snapshotSha"] == sha
            pack = server.call("ragit_context_pack", {"goal": GOAL, "at": sha})
            assert pack.envelope["ok"] is True, pack.envelope
            assert _comparable({GOAL: pack.data}) == _comparable({GOAL: expected[sha][GOAL]})

    # --- an ingest SIGKILLed inside its publishing transaction publishes nothing
    (a / "docs" / "killed.md").write_text(THIRD_DOC, encoding="utf-8")
    git(a, env, "add", "--all")
    git(a, env, "commit", "-q", "-m", "A commit whose first ingest is killed")
    c3 = git(a, env, "rev-parse", "HEAD")
    _kill_while_publishing(a, env, tmp_path)
    run(["git", "pull", "-q", "--ff-only"], cwd=b, env=env)
    assert git(b, env, "rev-parse", "HEAD") == c3
    missing = _cli(b, env, "query", QUESTIONS[0], check=False)
    assert missing["ok"] is False
    assert missing["error"]["code"] == "SNAPSHOT_NOT_INDEXED", missing["error"]
    assert missing["error"]["details"]["nearestIndexedAncestor"] == c2
    with McpServer(b, env, stderr_path=tmp_path / "mcp-b2.log") as server:
        call = server.call("ragit_query", {"question": QUESTIONS[0]})
        assert call.envelope["error"]["code"] == "SNAPSHOT_NOT_INDEXED"
        assert call.envelope["error"]["details"]["nearestIndexedAncestor"] == c2
        call = server.call("ragit_query", {"question": QUESTIONS[2], "at": c2, "topK": 5})
        assert call.envelope["ok"] is True
        assert [h["citation"] for h in call.data["hits"]] == [
            h["citation"] for h in expected[c2][QUESTIONS[2]]["hits"]
        ]
    assert _comparable(_answers(b, env, c2)) == _comparable(expected[c2])

    # The next ingest of the same commit publishes it (the killed writer's lock died with it).
    again = _cli(a, env, "ingest", "--all")
    assert again["ok"] is True, again
    now = _cli(b, env, "query", "killed ingest", "--top-k", "3")
    assert now["ok"] is True, now
    assert now["data"]["snapshotSha"] == c3
    assert (
        now["data"]["hits"]
        == _cli(a, env, "query", "killed ingest", "--top-k", "3")["data"]["hits"]
    )


def test_no_or_a_wrong_connection_is_typed_and_never_prints_the_password(
    database: str, tmp_path: Path
) -> None:
    migrate()
    base = hermetic_env(tmp_path)
    env = {**base, "RAGIT_DATABASE_URL": database}
    a = make_repo(tmp_path / "a", env, config={"store.backend": "postgres"}, ingest=False)
    assert _cli(a, env, "ingest", "--all")["ok"] is True
    sha = git(a, env, "rev-parse", "HEAD")

    # Nothing configured (no RAGIT_DATABASE_URL, no PG* variable).
    for args in (("query", "double entry"), ("context", "pack", GOAL)):
        proc = run([RAGIT, *args, "--format", "json"], cwd=a, env=base, check=False)
        assert proc.returncode == 3, proc.stdout + proc.stderr
        error = json.loads(proc.stdout)["error"]
        assert error["code"] == "SNAPSHOT_STORE_UNAVAILABLE"
        assert error["details"]["resolvedSha"] == sha

    # A wrong connection that carries a password: an unknown database on the same server.
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    params = conninfo_to_dict(database)
    wrong = make_conninfo(**{**params, "dbname": f"nosuch_{params['dbname']}", "password": SECRET})
    assert SECRET in wrong
    bad = {**base, "RAGIT_DATABASE_URL": wrong}
    for args in (("query", "double entry"), ("context", "pack", GOAL)):
        proc = run([RAGIT, *args, "--format", "json"], cwd=a, env=bad, check=False)
        assert proc.returncode == 3, proc.stdout + proc.stderr
        assert SECRET not in proc.stdout and SECRET not in proc.stderr
        assert json.loads(proc.stdout)["error"]["code"] == "SNAPSHOT_STORE_UNAVAILABLE"
    # An ingest of the indexed commit (it asks the server whether it still holds it) and of
    # a new commit, with either connection, fail the same way and publish nothing.
    for ingest_env in (base, bad):
        proc = run(
            [RAGIT, "ingest", "--all", "--format", "json"], cwd=a, env=ingest_env, check=False
        )
        assert proc.returncode == 3, proc.stdout + proc.stderr
        assert SECRET not in proc.stdout and SECRET not in proc.stderr
        assert json.loads(proc.stdout)["error"]["details"]["resolvedSha"] == sha
    (a / "docs" / "later.md").write_text("# Later\n\n## Note\n\nA later page.\n", "utf-8")
    git(a, env, "add", "--all")
    git(a, env, "commit", "-q", "-m", "Later page")
    later = git(a, env, "rev-parse", "HEAD")
    for ingest_env in (base, bad):
        proc = run(
            [RAGIT, "ingest", "--all", "--format", "json"], cwd=a, env=ingest_env, check=False
        )
        assert proc.returncode == 3, proc.stdout + proc.stderr
        assert SECRET not in proc.stdout and SECRET not in proc.stderr
        error = json.loads(proc.stdout)["error"]
        assert error["code"] == "SNAPSHOT_STORE_UNAVAILABLE"
        assert error["details"]["resolvedSha"] == later
    assert not (a / ".ragit" / "manifest" / f"{later}.json").exists()
    with McpServer(a, bad, stderr_path=tmp_path / "mcp-bad.log") as server:
        call = server.call("ragit_query", {"question": "double entry"})
        assert call.envelope["error"]["code"] == "SNAPSHOT_STORE_UNAVAILABLE"
        assert SECRET not in json.dumps(call.envelope)
    assert SECRET not in (tmp_path / "mcp-bad.log").read_text(encoding="utf-8")


def test_an_ingest_killed_after_writing_chunks_publishes_nothing_and_the_next_skips_them(
    database: str, tmp_path: Path
) -> None:
    """Chunks are committed batch by batch, the snapshot only at publication: an ingest that
    dies between the two (``os._exit(137)`` at ``shared-chunks-written``, as SIGKILL would)
    leaves the commit unindexed on the server, and the next ingest embeds nothing again."""
    migrate()
    env = {**hermetic_env(tmp_path), "RAGIT_DATABASE_URL": database}
    a = make_repo(tmp_path / "a", env, config={"store.backend": "postgres"}, ingest=False)
    c1 = git(a, env, "rev-parse", "HEAD")
    assert _cli(a, env, "ingest", "--all")["ok"] is True
    (a / "docs" / "shared-index.md").write_text(NEW_DOC, encoding="utf-8")
    git(a, env, "add", "--all")
    git(a, env, "commit", "-q", "-m", "Shared index page")
    c2 = git(a, env, "rev-parse", "HEAD")
    killed = run(
        [RAGIT, "ingest", "--all", "--format", "json"],
        cwd=a,
        env={**env, "RAGIT_FAULT_AT": "shared-chunks-written"},
        check=False,
    )
    assert killed.returncode == 137, killed.stdout + killed.stderr
    assert not (a / ".ragit" / "manifest" / f"{c2}.json").exists()

    b = tmp_path / "b"
    run(["git", "clone", "-q", str(a), str(b)], cwd=tmp_path, env=env)
    missing = _cli(b, env, "query", QUESTIONS[2], check=False)
    assert missing["error"]["code"] == "SNAPSHOT_NOT_INDEXED"
    assert missing["error"]["details"]["nearestIndexedAncestor"] == c1
    assert _cli(b, env, "query", QUESTIONS[2], "--at", c1)["ok"] is True

    again = _cli(a, env, "ingest", "--all")
    assert again["ok"] is True, again
    assert again["data"]["embedded"] == 0  # the killed ingest's chunks were stored
    answer = _cli(b, env, "query", QUESTIONS[2], "--top-k", "3")
    assert answer["data"]["snapshotSha"] == c2
    assert answer["data"]["hits"][0]["path"] == "docs/shared-index.md"
    assert (
        answer["data"]["hits"]
        == _cli(a, env, "query", QUESTIONS[2], "--top-k", "3")["data"]["hits"]
    )


def test_a_clone_indexed_locally_switches_to_the_shared_store_with_one_ingest(
    database: str, tmp_path: Path
) -> None:
    """A clone whose manifests were made by zvec ingests (the shared store holds none of their
    chunks) switches with ``config set store.backend postgres`` and ``ingest --all``: the
    ingest is not a noop (the server lacks the commit), reads the documents again instead of
    carrying them over from the local manifest, and publishes; a fresh clone then answers as
    the zvec store did."""
    migrate()
    env = {**hermetic_env(tmp_path), "RAGIT_DATABASE_URL": database}
    a = make_repo(tmp_path / "a", env)  # zvec, ingested
    sha = git(a, env, "rev-parse", "HEAD")
    local = _cli(a, env, "query", QUESTIONS[0], "--top-k", "5")["data"]
    run([RAGIT, "config", "set", "store.backend", "postgres"], cwd=a, env=env)
    git(a, env, "commit", "-q", "-am", "Use the shared store")
    c2 = git(a, env, "rev-parse", "HEAD")
    for target in (sha, c2):
        result = _cli(a, env, "ingest", "--all", "--at", target)
        assert result["ok"] is True, result
        assert result["data"]["noop"] is False
    b = tmp_path / "b"
    run(["git", "clone", "-q", str(a), str(b)], cwd=tmp_path, env=env)
    shared = _cli(b, env, "query", QUESTIONS[0], "--top-k", "5", "--at", sha)["data"]
    assert [h["citation"] for h in shared["hits"]] == [h["citation"] for h in local["hits"]]
    assert _cli(b, env, "query", QUESTIONS[0])["data"]["snapshotSha"] == c2
