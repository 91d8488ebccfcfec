"""Artifact records: the model, where they live, reading them, what is searchable
(docs/reference/memory.md).

An artifact is a reviewable knowledge candidate:

* session artifacts (``feedback constraint failure insight openLoop``) from
  ``session materialize``, in ``.ragit/artifacts/session/<artifactId>.json``;
* harness artifacts (``case oracle failure fixture golden checker rubric
  promptTemplate trace envAssumption suite``) from ``harness capture`` and
  ``harness run``, in ``.ragit/artifacts/harness/<kind>/<artifactId>.json``.

The file of an artifact is derived from its id alone (scope and kind are parsed
from the id and checked against the known kinds), so no other text reaches a
path. This module only reads: writing a record (re-masked on every write) is
:func:`ragit.artifacts.writes.save_artifact`, and ingest binding is
:mod:`ragit.artifacts.binding`, so readers (retrieval, the read-only MCP server)
never load a writer.

Lifecycle: ``captured`` → ``reviewed`` → ``promoted``; side states ``superseded``,
``retracted``, ``archived``. Allowed review transitions (docs/reference/memory.md, as the
original implements them): captured → reviewed|retracted|archived; reviewed →
superseded|retracted|archived; promoted → superseded|archived. Anything else is
a warning, never a failure. ``promoted`` is reached only through a promote command.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from ragit.artifacts.ids import parse_artifact_id
from ragit.artifacts.records import read_record
from ragit.workspace import Workspace

Status = Literal["captured", "reviewed", "promoted", "superseded", "retracted", "archived"]
STATUSES: tuple[str, ...] = (
    "captured",
    "reviewed",
    "promoted",
    "superseded",
    "retracted",
    "archived",
)
EXCLUDED: frozenset[str] = frozenset({"superseded", "retracted", "archived"})
TRANSITIONS: dict[str, frozenset[str]] = {
    "captured": frozenset({"reviewed", "retracted", "archived"}),
    "reviewed": frozenset({"superseded", "retracted", "archived"}),
    "promoted": frozenset({"superseded", "archived"}),
    "superseded": frozenset(),
    "retracted": frozenset(),
    "archived": frozenset(),
}
EXCERPT_MAX = 240


class _Record(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    def dump(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


class EvidenceRef(_Record):
    evidence_id: str
    turn_ids: list[str] = Field(default_factory=list)
    tool_trace_ids: list[str] = Field(default_factory=list)
    excerpt: str = ""


class Provenance(_Record):
    actor: str = "assistant"
    producer: str = "ragit"
    producer_version: str = ""
    operation: str = ""
    input_refs: list[str] = Field(default_factory=list)
    output_refs: list[str] = Field(default_factory=list)
    evidence_refs: list[str] = Field(default_factory=list)
    content_hash: str = ""


class ArtifactRecord(_Record):
    """The stored form of an artifact (docs/reference/memory.md plus ``version`` and
    ``reviewHistory``)."""

    version: int = 1
    artifact_id: str
    artifact_scope: Literal["session", "harness"]
    kind: str
    tier: Literal["candidate", "durable"] = "candidate"
    status: Status = "captured"
    title: str
    summary: str = ""
    text: str = ""
    goal_id: str | None = None
    episode_id: str | None = None
    source_session_id: str | None = None
    source_head_sha: str | None = None
    capture_head_sha: str | None = None
    bound_head_sha: str | None = None
    binding_status: Literal["pending", "bound", "local_only"] = "pending"
    authority: Literal[
        "user_asserted", "assistant_inferred", "reviewed_harness", "promoted_durable"
    ] = "assistant_inferred"
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)
    search_policy: Literal["none", "session", "harness", "evidence"] = "session"
    related_paths: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    supersedes: list[str] = Field(default_factory=list)
    evidence_refs: list[EvidenceRef] = Field(default_factory=list)
    provenance: Provenance = Field(default_factory=Provenance)
    created_at: str
    updated_at: str
    payload: dict[str, Any] | None = None
    review_history: list[dict[str, Any]] = Field(default_factory=list)


def artifacts_root(ws: Workspace) -> Path:
    return ws.ragit_dir / "artifacts"


def artifact_path(ws: Workspace, artifact_id: str) -> Path | None:
    """Where an artifact id lives, or None for a malformed id (never a path from user text)."""
    parsed = parse_artifact_id(artifact_id)
    if parsed is None:
        return None
    scope, kind = parsed
    if scope == "session":
        return artifacts_root(ws) / "session" / f"{artifact_id}.json"
    return artifacts_root(ws) / "harness" / kind / f"{artifact_id}.json"


def parse_record(raw: Any, expected_id: str | None = None) -> ArtifactRecord | None:
    """A validated record (or None: not a record, or not the id its file name says)."""
    if not isinstance(raw, dict):
        return None
    try:
        record = ArtifactRecord.model_validate(raw)
    except ValidationError:
        return None
    if parse_artifact_id(record.artifact_id) is None:
        return None
    if expected_id is not None and record.artifact_id != expected_id:
        return None
    return record


def load_artifact(ws: Workspace, artifact_id: str) -> ArtifactRecord | None:
    """The record of ``artifact_id`` or None (unknown, malformed or unreadable)."""
    path = artifact_path(ws, artifact_id)
    if path is None:
        return None
    return parse_record(read_record(path), artifact_id)


def iter_artifacts(ws: Workspace) -> list[ArtifactRecord]:
    """Every readable artifact record, sorted by id; unreadable files are skipped."""
    root = artifacts_root(ws)
    files: list[Path] = []
    session_dir = root / "session"
    if session_dir.is_dir():
        files.extend(session_dir.glob("art_session_*.json"))
    harness_dir = root / "harness"
    if harness_dir.is_dir():
        files.extend(harness_dir.glob("*/art_harness_*.json"))
    out: list[ArtifactRecord] = []
    for path in files:
        artifact = path.name[: -len(".json")]
        expected = artifact_path(ws, artifact)
        if expected is None or expected != path:
            continue
        record = parse_record(read_record(path), artifact)
        if record is not None:
            out.append(record)
    out.sort(key=lambda r: r.artifact_id)
    return out


def relative_path(ws: Workspace, artifact_id: str) -> str:
    path = artifact_path(ws, artifact_id)
    assert path is not None
    return ws.relative(path)


# ---------------------------------------------------------------- searchable units


def searchable_units(record: ArtifactRecord) -> list[dict[str, Any]]:
    """What of an artifact retrieval may return: its body and its evidence excerpts.

    ``[{scope, sourceType, sourceId, sectionTitle, text}]`` — the body (scope =
    its search policy ``session|harness``) when it is reviewed or promoted; each
    evidence excerpt (scope ``evidence``) while the artifact is captured,
    reviewed or promoted. Superseded, retracted and archived artifacts and
    ``searchPolicy: none`` yield nothing.
    """
    if record.status in EXCLUDED or record.search_policy == "none":
        return []
    units: list[dict[str, Any]] = []
    body = ""
    if record.status in ("reviewed", "promoted") and record.search_policy in ("session", "harness"):
        body = " ".join((record.text or record.summary or record.title).split())
        units.append(
            {
                "scope": record.search_policy,
                "sourceType": "artifact",
                "sourceId": record.artifact_id,
                "sectionTitle": record.title,
                "text": record.text or record.summary or record.title,
            }
        )
    for evidence in record.evidence_refs:
        excerpt = " ".join(evidence.excerpt.split()).removesuffix("...")
        if not excerpt or (body and excerpt in body):
            # An excerpt of a searchable body would only repeat it.
            continue
        units.append(
            {
                "scope": "evidence",
                "sourceType": "evidence",
                "sourceId": f"{record.artifact_id}:{evidence.evidence_id}",
                "sectionTitle": record.title,
                "text": evidence.excerpt,
            }
        )
    return units
