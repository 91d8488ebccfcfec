"""The fault suite's server-side cases: real processes against a real PostgreSQL + pgvector.

* A server restart (``pg_ctl restart -m immediate``) while ``ragit query``, ``ragit context
  pack`` and ``ragit-mcp``'s ``ragit_query`` wait inside a read is ``STORE_READ_BUSY``
  (transient, retryable, exit 3) and prints no password; the next call answers, for MCP
  from the same server process.
* An ingest SIGKILLed at each point of its shared-store write (inside a batch, between
  batches, after the last batch, inside the publishing transaction) leaves nothing of its
  snapshot visible, the previous snapshot answering exactly as before and no advisory lock
  held; the next ingest publishes. Killed after the publishing commit, the snapshot is
  visible whole.
* The writer's connection terminated (``pg_terminate_backend``) mid-ingest is
  ``STORE_WRITE_BUSY`` (transient, exit 3), nothing is visible, and a retry publishes.
* A stopped server (nothing listening) is transient too (``STORE_READ_BUSY`` for what reads,
  ``STORE_WRITE_BUSY`` with ``lockState: "unreachable"`` for a writer's connection), both
  retryable, and once the server is started again the same calls answer and publish; a
  server that answers but refuses (an unknown database or role) stays
  ``SNAPSHOT_STORE_UNAVAILABLE``.

A read is held inside the server by another session's ``ACCESS EXCLUSIVE`` lock on
``ragit_chunks`` (the reader's statement waits in the server, as a long query would); a
writer is held at a fault point (``RAGIT_FAULT_PAUSE_AT``, :mod:`ragit._faults`).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

sys.path.insert(0, str(Path(__file__).parents[1] / "mcp"))

from _answers import GOAL, QUESTIONS, answers
from _mcp_helpers import RAGIT, McpServer, git, hermetic_env, make_repo, run

import ragit
from ragit.store.backend_write import WRITE_BATCH
from ragit.store.postgres.migrate import migrate

SECRET = "pw-5ecret-faults-53"
# A page of this many sections is more chunks than one write batch (WRITE_BATCH): its
# ingest writes two batches.
BULK_SECTIONS = WRITE_BATCH + 120
# Every point of a shared-store ingest a writer can die at, in order, and whether the
# snapshot is published (visible) when it dies there. `pg-index-building` is reached only
# by a namespace of GRAPH_MIN_ROWS chunks (killed in test_bulk.py).
INGEST_POINTS = [
    ("ingest-planned", False),
    ("pg-chunks-inserted", False),
    ("pg-chunks-committed", False),
    ("shared-chunks-written", False),
    ("pg-snapshot-inserted", False),
    ("pg-snapshot-committed", True),
]
_PATTERN = re.compile(r"faults\.reach\(\s*\"([a-z-]+)\"")


# ---------------------------------------------------------------- helpers


def _env(tmp_path: Path, database: str) -> dict[str, str]:
    """A hermetic environment whose connection string carries a password (the server
    trusts its socket and ignores it: what matters is that no output shows it)."""
    url = make_conninfo(database, password=SECRET)
    assert SECRET in url
    return {**hermetic_env(tmp_path), "RAGIT_DATABASE_URL": url}


def _cli(root: Path, env: dict[str, str], *args: str) -> tuple[int, dict[str, Any], str]:
    proc = run([RAGIT, *args, "--format", "json"], cwd=root, env=env, check=False)
    envelope: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return proc.returncode, envelope, proc.stdout + proc.stderr


def _ok(root: Path, env: dict[str, str], *args: str) -> dict[str, Any]:
    code, envelope, out = _cli(root, env, *args)
    assert code == 0 and envelope["ok"] is True, out
    assert SECRET not in out
    data: dict[str, Any] = envelope["data"]
    return data


def _answers(root: Path, env: dict[str, str], sha: str) -> dict[str, Any]:
    """What must not move: hits (ids, scores, texts, citations) and the pack's selection."""
    return answers(_ok, root, env, sha)


def _wait_for(predicate: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _scalar(database: str, query: str, *params: Any) -> Any:
    with psycopg.connect(database, autocommit=True) as conn:
        row = conn.execute(query, params).fetchone()
    assert row is not None
    return row[0]


def _backends(database: str, application: str, *, waiting: bool = False) -> int:
    query = (
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
        "AND application_name = %s"
    )
    if waiting:
        query += " AND wait_event_type = 'Lock'"
    return int(_scalar(database, query, application))


def _advisory_locks(database: str) -> int:
    return int(
        _scalar(
            database,
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND database = "
            "(SELECT oid FROM pg_database WHERE datname = current_database())",
        )
    )


def _published(database: str, sha: str) -> int:
    return int(_scalar(database, "SELECT count(*) FROM ragit_snapshots WHERE commit_sha = %s", sha))


def _page_chunks(database: str, tag: str) -> int:
    """How many chunks of the page ``tag`` the server stores."""
    return int(
        _scalar(
            database, "SELECT count(*) FROM ragit_chunks WHERE text LIKE %s", f"%{tag} ledger rule%"
        )
    )


def _lock_chunks(database: str) -> Any:
    """A session holding ``ragit_chunks`` exclusively (its transaction stays open): every
    read of a chunk waits inside the server until it ends."""
    blocker = psycopg.connect(database)
    blocker.execute("LOCK TABLE ragit_chunks IN ACCESS EXCLUSIVE MODE")
    return blocker


def _assert_read_busy(code: int | None, envelope: dict[str, Any], out: str) -> None:
    assert SECRET not in out
    assert envelope["ok"] is False, envelope
    error = envelope["error"]
    assert error["code"] == "STORE_READ_BUSY", error
    assert error["category"] == "transient"
    assert error["retryable"] is True
    assert error["details"] == {"waitedMs": 0}
    assert "interrupted the read" in error["message"]
    if code is not None:
        assert code == 3, out


def _pull(b: Path, env: dict[str, str], sha: str) -> None:
    run(["git", "pull", "-q", "--ff-only"], cwd=b, env=env)
    assert git(b, env, "rev-parse", "HEAD") == sha


def _bulk_page(tag: str) -> str:
    sections = "".join(
        f"## {tag} topic {i}\n\nThe {tag} ledger rule number {i} keeps entry {i * 7} balanced.\n\n"
        for i in range(BULK_SECTIONS)
    )
    return f"# {tag} rules\n\n{sections}"


def _paused_ingest(root: Path, env: dict[str, str], point: str, release: Path) -> Any:
    """An ``ingest --all`` that stops at ``point`` (it waits there until ``release``
    exists); returns the process once it is there."""
    proc = subprocess.Popen(
        [RAGIT, "ingest", "--all", "--format", "json"],
        cwd=root,
        env={**env, "RAGIT_FAULT_PAUSE_AT": point, "RAGIT_FAULT_RELEASE": str(release)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    deadline = time.monotonic() + 300
    seen = ""
    while f"paused at {point}" not in seen:
        line = proc.stderr.readline()
        if not line and proc.poll() is not None:
            out = proc.stdout.read() if proc.stdout else ""
            raise AssertionError(f"the ingest ended before {point}: {seen}{out}")
        seen += line
        assert time.monotonic() < deadline, seen
    return proc


def _repository(tmp_path: Path, env: dict[str, str]) -> tuple[Path, Path, str]:
    """Clone A ("CI", postgres backend) with its first commit ingested; clone B, a git clone
    that never ingests and reads the server only."""
    a = make_repo(
        tmp_path / "a",
        env,
        config={"store.backend": "postgres", "store.repository": "team/faults"},
        ingest=False,
    )
    first = _ok(a, env, "ingest", "--all")
    assert first["embedded"] > 0
    b = tmp_path / "b"
    run(["git", "clone", "-q", str(a), str(b)], cwd=tmp_path, env=env)
    return a, b, git(a, env, "rev-parse", "HEAD")


def _commit_page(a: Path, env: dict[str, str], tag: str) -> str:
    (a / "docs" / f"{tag}.md").write_text(_bulk_page(tag), encoding="utf-8")
    git(a, env, "add", "--all")
    git(a, env, "commit", "-q", "-m", f"{tag} rules")
    return git(a, env, "rev-parse", "HEAD")


# ---------------------------------------------------------------- a) restart mid-read


def test_a_server_restart_mid_read_is_read_busy_and_the_next_call_answers(
    database: str, pg_server: Any, tmp_path: Path
) -> None:
    migrate()
    env = _env(tmp_path, database)
    a, _b, sha = _repository(tmp_path, env)
    expected = _answers(a, env, sha)

    commands = [
        ("query", QUESTIONS[0], "--at", sha, "--top-k", "5", "--explain"),
        ("context", "pack", GOAL, "--at", sha),
    ]
    for args in commands:
        blocker = _lock_chunks(database)
        try:
            proc = subprocess.Popen(
                [RAGIT, *args, "--format", "json"],
                cwd=a,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            _wait_for(lambda: _backends(database, "ragit-reader", waiting=True) > 0, str(args))
            assert proc.poll() is None
            pg_server.restart(mode="immediate")
            stdout, stderr = proc.communicate(timeout=120)
        finally:
            blocker.close()
        envelope = json.loads(stdout.strip().splitlines()[-1])
        _assert_read_busy(proc.returncode, envelope, stdout + stderr)
        # The server is back: the next call answers exactly as before the restart.
        assert _answers(a, env, sha) == expected, args

    log = tmp_path / "mcp.log"
    with McpServer(a, env, stderr_path=log) as server:
        arguments = {"question": QUESTIONS[0], "at": sha, "topK": 5, "explain": True}
        before = server.call("ragit_query", arguments)
        assert before.envelope["ok"] is True, before.envelope
        assert before.data["hits"] == expected[QUESTIONS[0]]["hits"]
        blocker = _lock_chunks(database)
        outcome: dict[str, Any] = {}

        def call() -> None:
            try:
                outcome["call"] = server.call("ragit_query", arguments)
            except BaseException as exc:  # reported by the assertion below
                outcome["error"] = exc

        thread = threading.Thread(target=call)
        thread.start()
        try:
            _wait_for(lambda: _backends(database, "ragit-reader", waiting=True) > 0, "mcp read")
            pg_server.restart(mode="immediate")
            thread.join(timeout=120)
        finally:
            blocker.close()
        assert not thread.is_alive()
        assert "error" not in outcome, outcome
        interrupted = outcome["call"].envelope
        _assert_read_busy(None, interrupted, json.dumps(interrupted))
        # The same server process answers its next call (its reader connects again).
        after = server.call("ragit_query", arguments)
        assert after.envelope["ok"] is True, after.envelope
        assert after.data["hits"] == expected[QUESTIONS[0]]["hits"]
        pack = server.call("ragit_context_pack", {"goal": GOAL, "at": sha})
        assert pack.envelope["ok"] is True, pack.envelope
        assert pack.data["selectedHits"] == expected[GOAL]["selectedHits"]
    assert SECRET not in log.read_text(encoding="utf-8")


def test_a_stopped_server_is_transient_and_the_same_calls_answer_once_it_is_back(
    database: str, pg_server: Any, tmp_path: Path
) -> None:
    """Implementation choice (docs/team.md): a server that does not answer is transient and
    retryable (reads STORE_READ_BUSY, writes STORE_WRITE_BUSY), never "run doctor"."""
    migrate()
    env = _env(tmp_path, database)
    a, _b, sha = _repository(tmp_path, env)
    expected = _answers(a, env, sha)
    later = _commit_page(a, env, "later")
    pg_server.stop()
    try:
        for args in (("query", QUESTIONS[0], "--at", sha), ("context", "pack", GOAL)):
            code, envelope, out = _cli(a, env, *args)
            assert code == 3, out
            error = envelope["error"]
            assert (error["code"], error["category"], error["retryable"]) == (
                "STORE_READ_BUSY",
                "transient",
                True,
            ), error
            assert "cannot be reached right now" in error["message"]
            assert SECRET not in out
        code, envelope, out = _cli(a, env, "ingest")
        assert code == 3, out
        error = envelope["error"]
        # It reads its base snapshot from the server first: the read is what finds it away.
        assert error["code"] in ("STORE_READ_BUSY", "STORE_WRITE_BUSY"), error
        assert (error["category"], error["retryable"]) == ("transient", True), error
        assert SECRET not in out
    finally:
        pg_server.start()
    assert _answers(a, env, sha) == expected
    assert _ok(a, env, "ingest")["commitSha"] == later
    assert _published(database, later) == 1


def test_a_server_that_refuses_the_configuration_stays_store_unavailable(
    database: str, tmp_path: Path
) -> None:
    """Implementation choice (docs/team.md): misconfiguration — a database or a role the
    server does not know — is not ready and not retryable (retrying cannot help)."""
    migrate()
    env = _env(tmp_path, database)
    a, _b, sha = _repository(tmp_path, env)
    params = psycopg.conninfo.conninfo_to_dict(database)
    wrong = {
        "database": make_conninfo(**{**params, "dbname": f"nosuch_{params['dbname']}"}),
        "role": make_conninfo(**{**params, "user": "nosuch_role"}),
    }
    for what, url in wrong.items():
        code, envelope, out = _cli(a, {**env, "RAGIT_DATABASE_URL": url}, "query", "keys")
        assert code == 3, (what, out)
        error = envelope["error"]
        assert (error["code"], error["retryable"]) == ("SNAPSHOT_STORE_UNAVAILABLE", False), (
            what,
            error,
        )
        assert error["details"]["resolvedSha"] == sha


# ---------------------------------------------------------------- b) a killed writer


def test_every_point_of_a_shared_store_ingest_is_killed_here() -> None:
    """A fault point added to the shared store's write path must be killed in this file."""
    src = Path(ragit.__file__).parent
    reached = set(_PATTERN.findall((src / "store/postgres/write.py").read_text("utf-8")))
    apply = (src / "ingest/apply.py").read_text("utf-8")
    apply += (src / "ingest/shared.py").read_text("utf-8")
    reached |= {"shared-chunks-written", "ingest-planned"} & set(_PATTERN.findall(apply))
    # A security purge's points are killed in test_security_purge.py.
    purge = {point for point in reached if point.startswith("pg-purge-")}
    assert reached - {"pg-index-building"} - purge == {point for point, _ in INGEST_POINTS}


def test_an_ingest_killed_at_each_point_leaves_the_previous_snapshot_answering(
    database: str, tmp_path: Path
) -> None:
    migrate()
    env = _env(tmp_path, database)
    a, b, base = _repository(tmp_path, env)
    for point, visible in INGEST_POINTS:
        tag = point.replace("-", "")
        expected = _answers(b, env, base)
        sha = _commit_page(a, env, tag)
        release = tmp_path / f"release-{tag}"  # never created: the ingest dies paused
        proc = _paused_ingest(a, env, point, release)
        try:
            os.kill(proc.pid, signal.SIGKILL)
            assert proc.wait(timeout=60) == -signal.SIGKILL
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            stdout, stderr = proc.communicate()
        assert SECRET not in stdout + stderr
        # The killed writer's backend ends with its connection (its transaction rolled
        # back, its advisory locks released).
        _wait_for(lambda: _backends(database, "ragit-writer") == 0, f"{point}: backend ends")
        assert _advisory_locks(database) == 0, point
        stored = _page_chunks(database, tag)
        if point == "pg-chunks-committed":  # between batches: the first one is stored
            assert 0 < stored < BULK_SECTIONS, stored
        elif not visible:
            written = point in ("shared-chunks-written", "pg-snapshot-inserted")
            assert stored == (BULK_SECTIONS if written else 0), point
        _pull(b, env, sha)
        if visible:
            assert _published(database, sha) == 1, point
            head = _ok(b, env, "query", tag, "--top-k", "3")
            assert head["snapshotSha"] == sha, point
        else:
            assert _published(database, sha) == 0, point
            code, envelope, out = _cli(b, env, "query", QUESTIONS[0])
            assert code != 0 and envelope["error"]["code"] == "SNAPSHOT_NOT_INDEXED", out
            assert envelope["error"]["details"]["nearestIndexedAncestor"] == base, point
        # The previous snapshot answers exactly as before.
        assert _answers(b, env, base) == expected, point

        # The next ingest succeeds, leaves no advisory lock, and the commit answers whole.
        # (Once the namespace holds GRAPH_MIN_ROWS chunks, the ingest returns while a
        # detached builder builds its graph, holding the bulk lock: it ends on its own.)
        _ok(a, env, "ingest", "--all")
        assert _published(database, sha) == 1, point
        _wait_for(lambda: _advisory_locks(database) == 0, f"{point}: builder ends", 300.0)
        _wait_for(lambda: _backends(database, "ragit-writer") == 0, f"{point}: builder ends")
        hits = _ok(b, env, "query", f"{tag} ledger rule number 7", "--top-k", "3")
        assert hits["snapshotSha"] == sha, point
        assert hits["hits"][0]["path"] == f"docs/{tag}.md", point
        assert _page_chunks(database, tag) == BULK_SECTIONS, point
        base = sha


# ---------------------------------------------------------------- c) a dropped connection


@pytest.mark.parametrize(
    "point", ["pg-chunks-inserted", "shared-chunks-written", "pg-snapshot-inserted"]
)
def test_the_writers_connection_dropped_mid_ingest_is_write_busy_and_a_retry_publishes(
    database: str, tmp_path: Path, point: str
) -> None:
    migrate()
    env = _env(tmp_path, database)
    a, b, base = _repository(tmp_path, env)
    expected = _answers(b, env, base)
    sha = _commit_page(a, env, "dropped")
    release = tmp_path / "release"
    proc = _paused_ingest(a, env, point, release)
    try:
        terminated = _scalar(
            database,
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND application_name = 'ragit-writer'",
        )
        assert terminated == 1
        release.touch()
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert SECRET not in stdout + stderr
    assert proc.returncode == 3, stdout + stderr
    envelope = json.loads(stdout.strip().splitlines()[-1])
    error = envelope["error"]
    assert error["code"] == "STORE_WRITE_BUSY", error
    assert error["category"] == "transient" and error["retryable"] is True
    assert error["details"] == {"lockState": "interrupted", "owner": None}
    assert "interrupted the write" in error["message"]
    assert "Traceback" not in stderr

    assert _published(database, sha) == 0
    assert not (a / ".ragit" / "manifest" / f"{sha}.json").exists()
    assert _advisory_locks(database) == 0
    _pull(b, env, sha)
    code, missing, out = _cli(b, env, "query", QUESTIONS[0])
    assert code != 0 and missing["error"]["code"] == "SNAPSHOT_NOT_INDEXED", out
    assert missing["error"]["details"]["nearestIndexedAncestor"] == base
    assert _answers(b, env, base) == expected

    _ok(a, env, "ingest", "--all")  # the retry
    assert _published(database, sha) == 1
    assert _advisory_locks(database) == 0
    hits = _ok(b, env, "query", "dropped ledger rule number 7", "--top-k", "3")
    assert hits["snapshotSha"] == sha
    assert hits["hits"][0]["path"] == "docs/dropped.md"
