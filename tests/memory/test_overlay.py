"""Artifact and evidence overlay hits for the non-durable scopes, and ingest bindings."""

from __future__ import annotations

from typing import Any

import pytest
from _memkit import Repo

from ragit.artifacts.binding import mark_bound, pending_bindings
from ragit.artifacts.catalog import ArtifactRecord, EvidenceRef, Provenance, load_artifact
from ragit.artifacts.ids import artifact_id, instant_seconds
from ragit.artifacts.writes import save_artifact
from ragit.retrieve.artifacts import artifact_hits, keyword_score, merge_hits, query_terms
from ragit.retrieve.citations import citation_id
from ragit.retrieve.hit import Hit
from ragit.text.question import analyze

DAY = 86_400.0


def _artifact(
    repo: Repo,
    *,
    scope: str = "session",
    kind: str = "insight",
    text: str = "refresh tokens rotate on every use",
    status: str = "reviewed",
    policy: str | None = None,
    updated_at: str = "2026-04-10T00:00:00Z",
    head: str | None = None,
    evidence: str | None = None,
    **extra: Any,
) -> ArtifactRecord:
    aid = artifact_id(scope, kind, text, status)
    record = ArtifactRecord(
        artifact_id=aid,
        artifact_scope=scope,  # type: ignore[arg-type]
        kind=kind,
        status=status,  # type: ignore[arg-type]
        title=text[:40],
        text=text,
        search_policy=policy or scope,  # type: ignore[arg-type]
        source_head_sha=head,
        capture_head_sha=head,
        evidence_refs=[EvidenceRef(evidence_id="evid_000000000001", excerpt=evidence)]
        if evidence
        else [],
        provenance=Provenance(content_hash="c0ffee"),
        created_at=updated_at,
        updated_at=updated_at,
        **extra,
    )
    repo.ws.ragit_dir.mkdir(exist_ok=True)
    save_artifact(repo.ws, record)
    return record


def _commit_time(at: str) -> float:
    value = instant_seconds(at)
    assert value is not None
    return value


def test_keyword_score_is_the_share_of_question_terms() -> None:
    """Contract-mandated (docs/reference/retrieval.md): keyword score = fraction of query tokens
    present."""
    terms = query_terms("How do refresh tokens rotate?")
    assert terms == ["refresh", "token", "rotate"]
    assert keyword_score(terms, "Tokens rotate daily") == pytest.approx(2 / 3)
    assert keyword_score(query_terms("토큰 갱신"), "리프레시 토큰을 매번 갱신한다") == 1.0


def test_reviewed_artifacts_are_scored_with_authority_and_snapshot_recency(repo: Repo) -> None:
    """Contract-mandated: overlay hit fields, citation and score formula (recency from commit)."""
    record = _artifact(repo, updated_at="2026-04-01T00:00:00Z")
    commit_time = _commit_time("2026-04-16T00:00:00Z")  # 15 days later
    (hit,) = artifact_hits(
        repo.ws, analyze("rotate refresh tokens"), "session", None, commit_time, top_k=5
    )
    assert hit.origin_type == "artifact" and hit.scope == "session"
    assert hit.artifact_id == record.artifact_id and hit.artifact_kind == "insight"
    assert hit.mode == "keyword" and hit.score_vector == 0.0 and hit.score_keyword == 1.0
    assert hit.authority_weight == 0.8
    assert hit.recency_weight == pytest.approx(0.5)
    assert hit.score_final == pytest.approx(0.8 * 1.0 + 0.15 * 0.8 + 0.05 * 0.5)
    assert hit.citation == {
        "id": citation_id("artifact", record.artifact_id, "c0ffee"),
        "sourceType": "artifact",
        "sourceId": record.artifact_id,
        "sourceVersion": "c0ffee",
        "sourceSha": None,
    }
    old = artifact_hits(
        repo.ws, analyze("rotate"), "session", None, commit_time + 90 * DAY, top_k=5
    )
    assert old[0].recency_weight == 0.2


def test_recency_never_reads_the_wall_clock(repo: Repo) -> None:
    """Contract-mandated: the same query at the same commit always ranks the same."""
    _artifact(repo, updated_at="2000-01-01T00:00:00Z")
    hits = artifact_hits(
        repo.ws, analyze("rotate"), "session", None, _commit_time("2000-01-02T00:00:00Z"), top_k=1
    )
    assert hits[0].recency_weight == pytest.approx(1 - 1 / 30)


@pytest.mark.parametrize("status", ["captured", "superseded", "retracted", "archived"])
def test_unreviewed_and_retired_bodies_are_not_returned(repo: Repo, status: str) -> None:
    """Contract-mandated: reviewed/promoted bodies only; superseded/retracted/archived excluded."""
    _artifact(repo, status=status)
    assert artifact_hits(repo.ws, analyze("rotate"), "all", None, None, top_k=5) == []


def test_evidence_scope_returns_excerpts_of_captured_artifacts(repo: Repo) -> None:
    """Contract-mandated: evidence excerpts of captured or reviewed artifacts."""
    record = _artifact(
        repo,
        kind="failure",
        status="captured",
        policy="evidence",
        text="login failed",
        evidence="AssertionError: 401 on refresh",
    )
    (hit,) = artifact_hits(repo.ws, analyze("refresh 401"), "evidence", None, None, top_k=5)
    assert hit.scope == "evidence" and hit.authority_weight == 0.4
    assert hit.citation["sourceType"] == "evidence"
    assert hit.citation["sourceId"] == f"{record.artifact_id}:evid_000000000001"
    assert artifact_hits(repo.ws, analyze("refresh 401"), "session", None, None, top_k=5) == []


def test_scopes_select_their_artifacts(repo: Repo) -> None:
    """Contract-mandated: session, harness, evidence and all scopes."""
    _artifact(repo, text="rotate session insight")
    _artifact(repo, scope="harness", kind="case", text="rotate harness case")
    _artifact(repo, kind="failure", policy="evidence", text="x", evidence="rotate evidence")
    scopes = {
        scope: sorted(
            h.scope for h in artifact_hits(repo.ws, analyze("rotate"), scope, None, None, top_k=9)
        )
        for scope in ("durable", "session", "harness", "evidence", "all")
    }
    assert scopes == {
        "durable": [],
        "session": ["session"],
        "harness": ["harness"],
        "evidence": ["evidence"],
        "all": ["evidence", "harness", "session"],
    }
    harness = artifact_hits(repo.ws, analyze("rotate"), "harness", None, None, top_k=1)[0]
    assert harness.authority_weight == 0.9


def test_promoted_artifacts_have_full_authority(repo: Repo) -> None:
    """Contract-mandated (docs/reference/retrieval.md): durable tier or promoted status → authority
    1.0."""
    _artifact(repo, status="promoted", tier="durable")
    assert (
        artifact_hits(repo.ws, analyze("rotate"), "session", None, None, top_k=1)[
            0
        ].authority_weight
        == 1.0
    )


def test_artifacts_from_another_history_are_hidden(repo: Repo) -> None:
    """Implementation choice: artifacts captured off the snapshot's history are not visible."""
    base = repo.head()
    later = repo.commit({"docs/later.md": "# Later\n"}, "later")
    _artifact(repo, text="rotate captured later", head=later)
    _artifact(repo, text="rotate captured at base", head=base)
    at_base = artifact_hits(repo.ws, analyze("rotate"), "session", base, None, top_k=5)
    at_later = artifact_hits(repo.ws, analyze("rotate"), "session", later, None, top_k=5)
    assert [h.text for h in at_base] == ["rotate captured at base"]
    assert len(at_later) == 2


def _durable_hit(score: float) -> Hit:
    return Hit(
        chunk_id="c1",
        document_id="d1",
        version_id="v1",
        path="docs/a.md",
        doc_type="adr",
        section_title="A",
        heading_path="A",
        text="t",
        token_count=1,
        score_vector=0.0,
        score_keyword=score,
        retrieval=score,
        authority_weight=1.0,
        recency_weight=1.0,
        score_final=score,
        mode="keyword",
        alpha=0.0,
        citation={"id": "cite-x"},
    )


def test_merge_keeps_one_hit_per_identity_and_the_best_score(repo: Repo) -> None:
    """Contract-mandated (docs/reference/retrieval.md): dedup by retrieval identity, best score
    wins, cut to topK."""
    _artifact(repo)
    overlay = artifact_hits(repo.ws, analyze("rotate"), "session", None, None, top_k=5)
    weaker = [*overlay]
    weaker[0] = Hit(**{**overlay[0].__dict__, "score_final": 0.1})
    merged = merge_hits([_durable_hit(0.5), _durable_hit(0.4)], [*overlay, *weaker], top_k=5)
    assert [h.origin_type for h in merged] == ["artifact", "document"]
    assert merged[0].score_final == overlay[0].score_final
    assert len(merge_hits([_durable_hit(0.5)], overlay, top_k=1)) == 1


def test_pending_bindings_list_searchable_units_for_ingest(repo: Repo) -> None:
    """Implementation choice: what `ingest --scope all` binds, in artifactEntries shape."""
    head = repo.head()
    reviewed = _artifact(repo, head=head)
    _artifact(repo, text="never", status="retracted")
    (entry,) = pending_bindings(repo.ws, head)
    assert entry["artifactId"] == reviewed.artifact_id
    assert entry["path"] == f".ragit/artifacts/session/{reviewed.artifact_id}.json"
    assert entry["bindingStatus"] == "bound"
    assert entry["units"] == [
        {
            "scope": "session",
            "sourceType": "artifact",
            "sourceId": reviewed.artifact_id,
            "sectionTitle": reviewed.title,
            "text": reviewed.text,
        }
    ]
    assert mark_bound(repo.ws, [reviewed.artifact_id], head) == [reviewed.artifact_id]
    record = load_artifact(repo.ws, reviewed.artifact_id)
    assert record is not None and record.bound_head_sha == head
    assert mark_bound(repo.ws, [reviewed.artifact_id], head) == []


def test_ingest_scope_all_binds_reviewed_artifacts_into_the_snapshot(repo: Repo) -> None:
    """Contract-mandated (§9, docs/reference/memory.md): `ingest --scope all` projects bound
    artifacts."""
    from ragit.snapshot.manifest import load_manifest

    head = repo.head()
    reviewed = _artifact(repo, head=head)
    durable = repo.ragit("ingest", "--all", "--format", "json")
    assert durable.data["boundArtifactIds"] == []
    bound = repo.ragit("ingest", "--all", "--scope", "all", "--format", "json")
    assert bound.data["boundArtifactIds"] == [reviewed.artifact_id]
    manifest = load_manifest(repo.ws, head)
    (entry,) = manifest.artifact_entries
    assert entry["artifactId"] == reviewed.artifact_id and len(entry["chunkIds"]) == 1
    assert manifest.chunk_scopes.session == entry["chunkIds"]
    record = load_artifact(repo.ws, reviewed.artifact_id)
    assert record is not None and record.bound_head_sha == head
    again = repo.ragit("ingest", "--all", "--scope", "all", "--format", "json")
    assert again.data["noop"] is True
    doctor = repo.ragit("doctor", "--format", "json")
    checks = {c["name"]: c for c in doctor.envelope["data"]["checks"]}
    assert checks["ragit.manifest-consistency"]["ok"], checks["ragit.manifest-consistency"]


def test_store_rebuild_regenerates_bound_artifact_chunks(repo: Repo) -> None:
    """Implementation choice: bound artifact chunks are rebuilt from their control-plane records."""
    import shutil

    _artifact(repo, head=repo.head())
    assert repo.ragit("ingest", "--all", "--scope", "all", "--format", "json").code == 0
    shutil.rmtree(repo.ws.store_dir)
    rebuilt = repo.ragit("repair", "--apply", "--format", "json")
    assert rebuilt.code == 0, rebuilt.output
    doctor = repo.ragit("doctor", "--format", "json")
    assert doctor.code == 0, doctor.output


def test_the_overlay_takes_the_analysed_question(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The overlay scores with the Question's terms and splits its text no more."""
    from ragit.retrieve import artifacts
    from ragit.text import question as question_module

    _artifact(repo)
    question = analyze("How do refresh tokens rotate?")
    before = artifact_hits(repo.ws, question, "session", None, None, top_k=5)

    def forbidden(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("the question was analysed again by the overlay")

    for module in (artifacts, question_module):
        monkeypatch.setattr(module, "overlay_terms", forbidden)
    monkeypatch.setattr(artifacts, "query_terms", forbidden)
    after = artifact_hits(repo.ws, question, "session", None, None, top_k=5)
    assert [(h.chunk_id, h.score_keyword) for h in after] == [
        (h.chunk_id, h.score_keyword) for h in before
    ]
    assert after and after[0].score_keyword == 1.0
