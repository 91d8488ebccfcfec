"""`ragit memory recall`: the resume packet, snapshot-backed or degraded."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest
from _memkit import SECRET, Repo, tree_state, wrap_payload


def _index(repo: Repo) -> str:
    """Add a second commit (so HEAD has a parent) and build its snapshot."""
    head = repo.commit({"docs/plan.md": "# Plan: Auth\n\n## Milestones\n\n- login\n"}, "plan")
    run = repo.ragit("ingest", "--all", "--format", "json")
    assert run.code == 0, run.output
    return head


def test_recall_without_snapshot_degrades_with_working_memory(repo: Repo) -> None:
    """Contract-mandated (docs/contract.md §5): no snapshot → unavailable, null sha, warning, exit
    0."""
    assert repo.input("memory", "wrap", payload=wrap_payload()).code == 0
    run = repo.ragit("memory", "recall", "auth flow refresh", "--format", "json")
    assert run.code == 0, run.output
    data = run.data
    assert data["snapshotSha"] is None
    assert data["snapshot"]["status"] == "unavailable"
    assert data["snapshot"]["resolvedSha"] == repo.head()
    assert any("SNAPSHOT_NOT_INDEXED" in w for w in run.envelope["warnings"])
    assert data["constraints"] == ["no new dependencies"]
    assert [loop["title"] for loop in data["openLoops"]] == ["refresh token rotation"]
    assert [d["title"] for d in data["relatedDecisions"]] == ["Use JWT access tokens"]
    assert data["nextActions"] == ["wire the refresh endpoint", "write the rotation test"]
    assert data["latestSessionId"].startswith("20260410T090000Z-")


class _Embedder(BaseHTTPRequestHandler):
    """An Ollama-format embedding server on 127.0.0.1 that counts its requests."""

    requests: ClassVar[list[str]] = []

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(self.path)
        vectors = [[float((len(t) + i) % 7 + 1) for i in range(768)] for t in body["input"]]
        raw = json.dumps({"embeddings": vectors}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


@pytest.fixture
def embedding_server() -> Iterator[tuple[str, list[str]]]:
    handler = type("Handler", (_Embedder,), {"requests": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler.requests
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_degraded_recall_makes_no_embedding_call(
    repo: Repo, embedding_server: tuple[str, list[str]]
) -> None:
    """Contract-mandated: a degraded recall never calls an embedding provider."""
    url, requests = embedding_server
    for key, value in (
        ("embedding.provider", "ollama"),
        ("embedding.model", "nomic-embed-text"),
        ("embedding.base_url", url),
    ):
        assert repo.ragit("config", "set", key, value).code == 0
    _index(repo)
    indexed = repo.ragit("memory", "recall", "postgres ledger", "--format", "json")
    assert indexed.data["snapshot"]["status"] == "indexed"
    assert requests, "the indexed recall should have embedded its question"
    repo.commit({"docs/notes.md": "# Notes\n\nunindexed\n"}, "notes")
    seen = len(requests)
    degraded = repo.ragit("memory", "recall", "postgres ledger", "--format", "json")
    assert degraded.code == 0, degraded.output
    assert degraded.data["snapshot"]["status"] == "unavailable"
    assert len(requests) == seen


def test_recall_degrades_on_a_corrupt_manifest(repo: Repo) -> None:
    """Contract-mandated: SNAPSHOT_MANIFEST_INVALID degrades recall instead of failing it."""
    repo.write(f".ragit/manifest/{repo.head()}.json", "{not json")
    run = repo.ragit("memory", "recall", "auth", "--format", "json")
    assert run.code == 0, run.output
    assert run.data["snapshotSha"] is None
    assert any("SNAPSHOT_MANIFEST_INVALID" in w for w in run.envelope["warnings"])


def test_recall_with_a_snapshot_is_snapshot_backed(repo: Repo) -> None:
    """Contract-mandated: snapshotSha == snapshot.resolvedSha when indexed; ADRs are decisions."""
    head = _index(repo)
    run = repo.ragit("memory", "recall", "ledger database postgres", "--format", "json")
    assert run.code == 0, run.output
    data = run.data
    assert data["snapshotSha"] == head == data["snapshot"]["resolvedSha"]
    assert data["snapshot"]["status"] == "indexed"
    assert data["retrievedHits"], data
    assert data["retrievedHits"][0]["path"] == "docs/adr/0001-database.md"
    decisions = [d for d in data["relatedDecisions"] if d["source"] == "snapshot"]
    assert [d["path"] for d in decisions] == ["docs/adr/0001-database.md"]
    assert decisions[0]["title"] == "ADR: Use Postgres"


def test_recall_in_a_pipe_is_the_envelope_and_both_only_when_asked(repo: Repo) -> None:
    """Contract-mandated (§2): json when stdout is not a terminal; both when asked for."""
    run = repo.ragit("memory", "recall", "auth")
    assert run.code == 0
    assert json.loads(run.stdout)["command"] == "memory recall"
    both = repo.ragit("memory", "recall", "auth", "--format", "both")
    lines = both.stdout.rstrip("\n").splitlines()
    assert lines[-2] == "---"
    assert json.loads(lines[-1])["command"] == "memory recall"
    assert "goal: auth" in both.stdout


def test_recall_views_project_hits_and_items(repo: Repo) -> None:
    """Contract-mandated: --view minimal|default|full projects hits (docs/contract.md §2)."""
    _index(repo)
    assert repo.input("memory", "wrap", payload=wrap_payload()).code == 0
    minimal = repo.ragit("memory", "recall", "postgres", "--view", "minimal", "--format", "json")
    full = repo.ragit("memory", "recall", "postgres", "--view", "full", "--format", "json")
    hit_min = minimal.data["retrievedHits"][0]
    hit_full = full.data["retrievedHits"][0]
    assert "excerpt" in hit_min and "scoreVector" not in hit_min
    assert "text" in hit_full and "scoreVector" in hit_full
    assert set(minimal.data["openLoops"][0]) == {"id", "title", "status", "nextAction"}
    assert "relatedFiles" in full.data["openLoops"][0]


def test_recall_writes_nothing(repo: Repo) -> None:
    """Contract-mandated: recall is a read (no file is created, changed or touched)."""
    assert repo.input("memory", "wrap", payload=wrap_payload()).code == 0
    before = tree_state(repo.root)
    assert repo.ragit("memory", "recall", "auth", "--format", "json").code == 0
    assert tree_state(repo.root) == before


def test_recall_output_is_re_masked(repo: Repo) -> None:
    """Contract-mandated: recall re-masks its output, even of a working state written unmasked."""
    assert repo.input("memory", "wrap", payload=wrap_payload()).code == 0
    path = repo.root / ".ragit/memory/working/current.json"
    state = json.loads(path.read_text(encoding="utf-8"))
    state["constraints"].append(f"token = {SECRET}")
    path.write_text(json.dumps(state), encoding="utf-8")
    run = repo.ragit("memory", "recall", "auth", "--format", "both")
    assert run.code == 0
    assert SECRET not in run.output
    assert run.data["redactionSummary"]["applied"] is True


@pytest.mark.parametrize("goal", ["", "   ", "a\u0007b"])
def test_blank_or_control_goal_is_input_invalid(repo: Repo, goal: str) -> None:
    """Contract-mandated: a required string must be non-blank and free of control characters."""
    run = repo.ragit("memory", "recall", goal, "--format", "json")
    assert run.code == 2
    assert run.error["code"] == "INPUT_INVALID"


def test_recall_shows_reviewed_session_artifacts_by_keyword(repo: Repo) -> None:
    """Contract-mandated: recall merges reviewed artifact overlays; keyword-only is warned."""
    session = {
        "goal": "auth",
        "turns": [
            {
                "turnId": "t1",
                "role": "assistant",
                "content": "Therefore the stable rule is: refresh tokens rotate on every use.",
                "createdAt": "2026-04-10T09:00:00Z",
            }
        ],
    }
    materialized = repo.input("session", "materialize", payload=session)
    (artifact,) = materialized.data["artifactIds"]
    review = {"updates": [{"artifactId": artifact, "nextStatus": "reviewed"}]}
    assert repo.input("artifact", "review", payload=review).code == 0
    run = repo.ragit("memory", "recall", "rotate refresh tokens", "--format", "json")
    hits = run.data["retrievedHits"]
    assert [h["artifactId"] for h in hits] == [artifact]
    assert hits[0]["originType"] == "artifact" and hits[0]["scope"] == "session"
    assert hits[0]["citation"]["sourceType"] == "artifact"
    assert any("keyword only" in w for w in run.envelope["warnings"])


def test_an_unreadable_working_state_is_a_warning_not_a_failure(repo: Repo) -> None:
    """Implementation choice: recall survives a torn or hand-edited working state."""
    repo.write(".ragit/memory/working/current.json", "{torn")
    run = repo.ragit("memory", "recall", "auth", "--format", "json")
    assert run.code == 0, run.output
    assert run.data["openLoops"] == [] and run.data["latestSessionId"] is None
    assert any("working state" in w for w in run.envelope["warnings"])
