"""Harness suites: resolving a suite reference, its resources, and the rules of a case.

A suite is named by its artifact id or by its JSON path under
``.ragit/artifacts/harness/``; its ``payload.resourceRefs`` name its resources.
A case's rules are its own plus those of the active resources its
``oracleRefs`` name.
"""

from __future__ import annotations

from typing import Any

from ragit.artifacts.catalog import EXCLUDED, ArtifactRecord, load_artifact, parse_record
from ragit.artifacts.ids import ARTIFACT_ID, parse_artifact_id
from ragit.artifacts.records import read_record
from ragit.artifacts.storage import inside
from ragit.contract.errors import InputInvalid
from ragit.harness.rules import record_rules
from ragit.workspace import Workspace


def resolve_suite(ws: Workspace, ref: str, field: str) -> ArtifactRecord:
    """A suite by artifact id or by its JSON path under ``.ragit/artifacts/harness/``.

    Raises:
        InputInvalid: malformed, outside the harness artifacts, unknown, or not a suite.
    """
    if ARTIFACT_ID.fullmatch(ref):
        parsed = parse_artifact_id(ref)
        if parsed is None or parsed != ("harness", "suite"):
            raise InputInvalid(field, "must name a harness suite (art_harness_suite_…)")
        record = load_artifact(ws, ref)
        if record is None:
            raise InputInvalid(field, "no harness suite with this id")
        return record
    from ragit.snapshot.surface import validate_repo_path

    rel = validate_repo_path(ref, field)
    if not rel.startswith(".ragit/artifacts/harness/") or not rel.endswith(".json"):
        raise InputInvalid(
            field, "a suite path must be a .json file under .ragit/artifacts/harness/"
        )
    path = inside(ws, ws.root / rel, field)
    record = parse_record(read_record(path))
    if record is None or record.kind != "suite" or record.artifact_scope != "harness":
        raise InputInvalid(field, "the file is not a harness suite record")
    return record


def suite_resources(ws: Workspace, suite: ArtifactRecord) -> tuple[list[ArtifactRecord], list[str]]:
    """The suite's resources (in reference order) and the references that did not load."""
    refs = list((suite.payload or {}).get("resourceRefs") or [])
    found: list[ArtifactRecord] = []
    missing: list[str] = []
    for ref in refs:
        record = load_artifact(ws, ref) if isinstance(ref, str) else None
        if record is None:
            missing.append(str(ref))
        else:
            found.append(record)
    return found, missing


def case_rules(ws: Workspace, case: ArtifactRecord) -> list[tuple[ArtifactRecord, dict[str, Any]]]:
    """Rule sources of a case: itself, then the rule-bearing resources it references."""
    out: list[tuple[ArtifactRecord, dict[str, Any]]] = []
    own = record_rules(case)
    if own:
        out.append((case, own))
    for ref in (case.payload or {}).get("oracleRefs") or []:
        other = load_artifact(ws, ref) if isinstance(ref, str) else None
        if other is None or other.status in EXCLUDED:
            continue
        rules = record_rules(other)
        if rules:
            out.append((other, rules))
    return out
