"""`harness pack`: a suite and its resources as one re-masked packet (reads only;
docs/reference/harness.md)."""

from __future__ import annotations

from typing import Any

from ragit.artifacts.sanitize import remask
from ragit.harness.rules import record_rules
from ragit.harness.suites import resolve_suite, suite_resources
from ragit.workspace import Workspace


def pack(ws: Workspace, suite_ref: str) -> dict[str, Any]:
    """The data of `harness pack` (reads only): the suite's resources, re-masked.

    Raises:
        InputInvalid: the suite reference names no suite.
    """
    suite = resolve_suite(ws, suite_ref, "suiteRef")
    resources, missing = suite_resources(ws, suite)
    data = {
        "suiteId": suite.artifact_id,
        "goal": suite.summary.removeprefix("Harness suite for: ") or suite.title,
        "goalId": suite.goal_id,
        "title": suite.title,
        "status": suite.status,
        "resources": [
            {
                "artifactId": r.artifact_id,
                "kind": r.kind,
                "title": r.title,
                "summary": r.summary,
                "status": r.status,
                "rules": record_rules(r),
                "input": (r.payload or {}).get("input"),
            }
            for r in resources
        ],
        "missingRefs": missing,
    }
    masked, summary = remask(data)
    assert isinstance(masked, dict)
    masked["redactionSummary"] = summary.dump()
    return masked
