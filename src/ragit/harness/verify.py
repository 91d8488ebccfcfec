"""`harness verify`: the structural preflight of a suite, without executing anything
(docs/reference/harness.md).

Checks: the suite is active and has resource references, they all load, none
is superseded, retracted or archived, it has active cases, and each case has
rules (its own or from an oracle). `harness run` refuses to apply a suite that
fails any of them.
"""

from __future__ import annotations

from typing import Any

from ragit.artifacts.catalog import EXCLUDED, ArtifactRecord
from ragit.artifacts.sanitize import remask
from ragit.harness.suites import case_rules, resolve_suite, suite_resources
from ragit.workspace import Workspace


def verify_suite(ws: Workspace, suite: ArtifactRecord) -> dict[str, Any]:
    """Structural preflight of a suite (no execution): ``{suiteId, checks[], hasFailure}``."""
    checks: list[dict[str, Any]] = []

    def check(name: str, ok: bool, detail: str) -> None:
        checks.append({"name": name, "ok": ok, "detail": detail})

    resources, missing = suite_resources(ws, suite)
    refs = (suite.payload or {}).get("resourceRefs") or []
    check("suite-status", suite.status not in EXCLUDED, f"suite status is {suite.status}")
    check("suite-has-resources", bool(refs), f"{len(refs)} resource reference(s)")
    check(
        "resources-resolve",
        not missing,
        "all references load" if not missing else "missing: " + ", ".join(missing),
    )
    inactive = [r.artifact_id for r in resources if r.status in EXCLUDED]
    check(
        "resources-active",
        not inactive,
        "no resource is superseded, retracted or archived"
        if not inactive
        else "inactive (skipped by run): " + ", ".join(inactive),
    )
    cases = [r for r in resources if r.kind == "case" and r.status not in EXCLUDED]
    check("suite-has-cases", bool(cases), f"{len(cases)} active case(s)")
    for case in cases:
        sources = case_rules(ws, case)
        n = sum(len(rules) for _src, rules in sources)
        check(
            f"case-bindings:{case.artifact_id}",
            bool(sources),
            f"{n} rule(s) from {len(sources)} source(s)"
            if sources
            else "the case declares no rules and no oracle with rules",
        )
    return {
        "suiteId": suite.artifact_id,
        "checks": checks,
        "hasFailure": any(not c["ok"] for c in checks),
    }


def verify(ws: Workspace, suite_ref: str) -> dict[str, Any]:
    """The data of `harness verify` (reads only).

    Raises:
        InputInvalid: the suite reference names no suite.
    """
    suite = resolve_suite(ws, suite_ref, "suite")
    data = verify_suite(ws, suite)
    out, _summary = remask(data)
    assert isinstance(out, dict)
    return out
