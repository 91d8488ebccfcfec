"""Each namespace's HNSW index state as `doctor` reports it (``store.vector-index``), read
from a real server: ready, loading (bulk loaders hold the namespace's lock shared), being
built (the builder holds it exclusively), invalid (a build that did not finish), missing
(a large namespace without one) and not-needed (a small one: exact scans).
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest
from _rows import DIM, make_rows, manifest_bytes

sys.path.insert(0, str(Path(__file__).parents[1] / "mcp"))

from _mcp_helpers import hermetic_env, make_repo
from test_bulk import NAMESPACE, _paused_child, _wait_writers_gone

import ragit.store.backend_write as backend_write
import ragit.store.postgres.health as health_module
import ragit.store.postgres.write as write_module
from ragit.store.postgres.health import health
from ragit.store.postgres.migrate import migrate
from ragit.store.postgres.steps import index_name
from ragit.store.postgres.write import BULK_MIN_ROWS, PgWriter


def _states(repository: str = "repo") -> dict[str, str]:
    return {n["namespace"]: n["state"] for n in health(repository)["namespaces"]}


def test_the_index_states_ready_loading_building_invalid_and_missing(
    database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    migrate()
    monkeypatch.setattr(write_module, "GRAPH_MIN_ROWS", 0)
    monkeypatch.setattr(health_module, "GRAPH_MIN_ROWS", 0)
    rows = make_rows(300, seed=41)
    ids = [r.chunk_id for r in rows]
    with PgWriter.open("repo", NAMESPACE, DIM) as writer:
        writer.write(rows)
        writer.publish("a" * 40, manifest_bytes("a" * 40, ids), ids)
    assert _states() == {NAMESPACE: "ready"}
    facts = health("repo")
    assert [s["commitSha"] for s in facts["snapshots"]] == ["a" * 40]
    assert facts["namespaces"][0]["index"] == index_name(1)

    # A bulk load announced: the index is dropped while the loader runs.
    with PgWriter.open("repo", NAMESPACE, DIM) as loader:
        assert loader.expect(5000) is True
        assert _states() == {NAMESPACE: "loading"}
    # The loader is gone (its lock died with it), the index was not built: missing.
    _wait_writers_gone(database)
    assert _states() == {NAMESPACE: "missing"}
    monkeypatch.setattr(health_module, "GRAPH_MIN_ROWS", 10_000)
    assert _states() == {NAMESPACE: "not-needed"}  # small: exact scans need no graph
    monkeypatch.setattr(health_module, "GRAPH_MIN_ROWS", 0)

    # A build paused after taking the bulk lock exclusively: being built.
    proc = _paused_child(
        "pg-index-building", tmp_path / "never", "publish", "repo", "42", "300", "b" * 40
    )
    try:
        assert _states() == {NAMESPACE: "building"}
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    _wait_writers_gone(database)

    with PgWriter.open("repo", NAMESPACE, DIM) as writer:
        assert writer.build_index() is True
    assert _states() == {NAMESPACE: "ready"}
    # An index a killed build left behind is registered but not valid.
    with psycopg.connect(database, autocommit=True) as conn:
        conn.execute(
            "UPDATE pg_index SET indisvalid = false WHERE indexrelid = to_regclass(%s)",
            (index_name(1),),
        )
    assert _states() == {NAMESPACE: "invalid"}


def _index(url: str) -> tuple[int, bool] | None:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT indexrelid::oid::bigint, indisvalid FROM pg_index "
            "WHERE indexrelid = to_regclass(%s)",
            (index_name(1),),
        ).fetchone()
    return None if row is None else (int(row[0]), bool(row[1]))


def _wait_graph(url: str, timeout: float = 180.0) -> tuple[int, bool]:
    """The namespace's index once valid: an ingest's publication leaves its build to a
    detached builder process."""
    deadline = time.monotonic() + timeout
    while True:
        index = _index(url)
        if index is not None and index[1]:
            return index
        assert time.monotonic() < deadline, f"the graph was not built: {index}"
        time.sleep(0.1)


def _ingest(root: Path) -> dict[str, Any]:
    from ragit.config import load_config
    from ragit.ingest.apply import run_ingest
    from ragit.ingest.request import IngestRequest
    from ragit.workspace import Workspace

    ws = Workspace(root)
    return run_ingest(ws, load_config(ws), IngestRequest(all=True), lambda _message: None)


def test_an_ingest_announces_its_new_chunks_so_a_large_load_skips_the_graph(
    database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first large ingest of a repository into a namespace that already has its graph
    (another repository's) loads without it and builds it once at the end: the ingest calls
    ``expect`` before its batches, each of which alone is too small to count as a bulk load."""
    migrate()
    monkeypatch.setattr(write_module, "GRAPH_MIN_ROWS", 0)  # small namespaces get a graph
    monkeypatch.setattr(backend_write, "WRITE_BATCH", 50)  # batches below BULK_MIN_ROWS
    env = {**hermetic_env(tmp_path), "RAGIT_DATABASE_URL": database}
    for key, value in env.items():
        if key != "PATH":
            monkeypatch.setenv(key, value)
    a = make_repo(
        tmp_path / "a",
        env,
        config={"store.backend": "postgres", "store.repository": "team/a"},
        ingest=False,
    )
    assert _ingest(a)["embedded"] > 0
    first = _wait_graph(database)  # built after the first ingest into the namespace
    pages = {
        f"docs/generated/page-{i:03d}.md": f"# Page {i}\n\n"
        + "".join(
            f"## Topic {i}-{j}\n\nLedger entry {i * 10 + j} reconciles account {i}-{j} with "
            f"batch {j * 7 + i} of run {i}.\n\n"
            for j in range(6)
        )
        for i in range(60)
    }
    b = make_repo(
        tmp_path / "b",
        env,
        config={"store.backend": "postgres", "store.repository": "team/b"},
        ingest=False,
        files=pages,
    )
    second = _ingest(b)
    assert second["embedded"] >= BULK_MIN_ROWS
    after = _wait_graph(database)
    # Dropped for the load and built again once at the end (not grown row by row).
    assert after[0] != first[0]
    assert {n["state"] for n in health("team/b")["namespaces"]} == {"ready"}


def test_an_ingest_of_an_unchanged_commit_builds_a_missing_graph(
    database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`doctor` names ``ragit ingest --all`` for a missing or invalid graph: an ingest whose
    commit is already published (a ``noop``) builds it."""
    migrate()
    monkeypatch.setattr(write_module, "GRAPH_MIN_ROWS", 0)
    monkeypatch.setattr(health_module, "GRAPH_MIN_ROWS", 0)
    env = {**hermetic_env(tmp_path), "RAGIT_DATABASE_URL": database}
    for key, value in env.items():
        if key != "PATH":
            monkeypatch.setenv(key, value)
    a = make_repo(
        tmp_path / "a",
        env,
        config={"store.backend": "postgres", "store.repository": "team/a"},
        ingest=False,
    )
    assert _ingest(a)["embedded"] > 0
    _wait_graph(database)
    with psycopg.connect(database, autocommit=True) as conn:  # as a killed load leaves it
        conn.execute(f"DROP INDEX {index_name(1)}")
    assert set(_states("team/a").values()) == {"missing"}
    again = _ingest(a)
    assert again["noop"] is True and again["embedded"] == 0
    rebuilt = _index(database)
    assert rebuilt is not None and rebuilt[1]
    assert set(_states("team/a").values()) == {"ready"}


def test_an_ingest_returns_while_a_detached_builder_builds_the_graph(
    database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The graph build (two thirds of the server's CPU of a first ingest at N=1000) is off
    the ingest's path: the ingest publishes and returns while a builder process of its own
    builds the graph; the namespace reads ``building`` meanwhile (never ``missing``: the
    builder joined the loaders before the ingest left them), then ``ready``. The builder
    is held at ``pg-index-building`` (a fault pause); a build inside the ingest would hold
    the ingest there until the release below, 30 s later."""
    migrate()
    monkeypatch.setattr(write_module, "GRAPH_MIN_ROWS", 0)  # passed on to the builder
    monkeypatch.setattr(health_module, "GRAPH_MIN_ROWS", 0)
    env = {**hermetic_env(tmp_path), "RAGIT_DATABASE_URL": database}
    for key, value in env.items():
        if key != "PATH":
            monkeypatch.setenv(key, value)
    a = make_repo(
        tmp_path / "a",
        env,
        config={"store.backend": "postgres", "store.repository": "team/a"},
        ingest=False,
    )
    release = tmp_path / "release-build"
    monkeypatch.setenv("RAGIT_FAULT_PAUSE_AT", "pg-index-building")
    monkeypatch.setenv("RAGIT_FAULT_RELEASE", str(release))
    timer = threading.Timer(30.0, release.touch)
    timer.start()
    try:
        started = time.monotonic()
        assert _ingest(a)["embedded"] > 0
        returned = time.monotonic() - started
        states = set(_states("team/a").values())
    finally:
        release.touch()
        timer.cancel()
    assert returned < 30.0, returned
    assert states == {"building"}, states
    _wait_graph(database)
    assert set(_states("team/a").values()) == {"ready"}
