"""`ragit doc validate|refresh|create|reconcile` — document authority (UR §12.15)."""

from __future__ import annotations

from typing import Any

from ragit.cli.invocation import Invocation, Outcome
from ragit.contract.errors import InputInvalid
from ragit.contract.models import WireModel

TEXT_LIMIT = 200  # violation lines shown in text; JSON always lists every one


class Violation(WireModel):
    code: str
    message: str
    section: str | None = None


class DocFileReport(WireModel):
    path: str
    doc_type: str
    canonical_path: str
    violations: list[Violation]


class DocValidateData(WireModel):
    """Result of `doc validate`."""

    doc_type: str | None
    checked_files: int
    tracked: int
    violations: int
    invalid_files: int
    files: list[DocFileReport]


class ReconcileSummary(WireModel):
    dry_run: bool
    index_path: str
    status: str  # created | updated | loaded | planned
    tracked: int
    violations: int
    mapped: int
    last_reconciled_at: str | None


class IndexEntry(WireModel):
    source_path: str
    canonical_path: str
    doc_type: str
    hash: str
    status: str  # canonical | mapped
    violations: list[str]


class DocReconcileData(ReconcileSummary):
    """Result of `doc reconcile`."""

    entries: list[IndexEntry]


class SkippedFile(WireModel):
    path: str
    reason: str


class DocRefreshData(WireModel):
    """Result of `doc refresh`."""

    dry_run: bool
    doc_type: str | None
    planned_files: list[str]
    refreshed_files: list[str]
    unchanged_files: list[str]
    skipped_files: list[SkippedFile]
    violations_before: int
    violations_after: int
    reconcile: ReconcileSummary | None
    warnings: list[str]


class DocCreateData(WireModel):
    """Result of `doc create`."""

    dry_run: bool
    doc_type: str
    title: str
    path: str
    canonical_path: str
    status: str  # created | planned
    used_template: bool
    violations: list[Violation]
    reconcile: ReconcileSummary | None


def _type(inv: Invocation, *, required: bool = False) -> str | None:
    from ragit.ops.doc_authority.engine import check_type

    raw = inv.params.get("type")
    if raw is None and required:
        raise InputInvalid("type", "--type is required")
    return check_type(None if raw is None else str(raw))


def _optional_text(inv: Invocation, name: str) -> str | None:
    raw = inv.params.get(name)
    return None if raw is None else str(raw)


def run_validate(inv: Invocation) -> Outcome:
    """Handler for `ragit doc validate`."""
    from ragit.ops.doc_authority.engine import validate

    doc_type = _type(inv)
    if doc_type is not None and inv.params.get("all"):
        raise InputInvalid("all", "--type and --all cannot be combined")
    ws = inv.workspace()
    data = validate(ws, inv.config(), doc_type=doc_type)

    def text() -> str:
        lines = [
            f"{data['checkedFiles']} documents checked, {data['invalidFiles']} with "
            f"{data['violations']} violations"
        ]
        shown = [
            f"  {entry['path']} ({entry['docType']}): {v['message']}"
            for entry in data["files"]
            for v in entry["violations"]
        ]
        lines += shown[:TEXT_LIMIT]
        if len(shown) > TEXT_LIMIT:
            lines.append(f"  ... and {len(shown) - TEXT_LIMIT} more (--format json lists all)")
        return "\n".join(lines)

    return Outcome(data=data, text=text)


def _reconcile_line(summary: dict[str, Any] | None) -> str:
    if summary is None:
        return "index: not updated (run `ragit init --yes` first)"
    return (
        f"index {summary['indexPath']}: {summary['status']} "
        f"({summary['tracked']} tracked, {summary['violations']} violations)"
    )


def run_refresh(inv: Invocation) -> Outcome:
    """Handler for `ragit doc refresh`."""
    from ragit.ops.doc_authority.engine import refresh

    doc_type = _type(inv)
    files = _optional_text(inv, "files")
    data = refresh(
        inv.workspace(), inv.config(), doc_type=doc_type, files=files, dry_run=inv.dry_run
    )

    def text() -> str:
        verb = "would refresh" if data["dryRun"] else "refreshed"
        changed = data["plannedFiles"] if data["dryRun"] else data["refreshedFiles"]
        lines = [
            f"{verb} {len(changed)} documents, {len(data['unchangedFiles'])} unchanged; "
            f"violations {data['violationsBefore']} → {data['violationsAfter']}"
        ]
        lines += [f"  {p}" for p in changed]
        lines += [f"  skipped {s['path']}: {s['reason']}" for s in data["skippedFiles"]]
        lines.append(_reconcile_line(data["reconcile"]))
        return "\n".join(lines)

    return Outcome(data=data, text=text, warnings=list(data["warnings"]))


def run_create(inv: Invocation) -> Outcome:
    """Handler for `ragit doc create`."""
    from ragit.ops.doc_authority.engine import create

    doc_type = _type(inv, required=True)
    assert doc_type is not None
    title = _optional_text(inv, "title")
    if title is None:
        raise InputInvalid("title", "--title is required")
    data = create(
        inv.workspace(),
        inv.config(),
        doc_type=doc_type,
        title=title,
        path=_optional_text(inv, "path"),
        dry_run=inv.dry_run,
    )

    def text() -> str:
        verb = "would create" if data["dryRun"] else "created"
        source = "template" if data["usedTemplate"] else "built-in skeleton"
        return "\n".join(
            [
                f"{verb} {data['path']} ({data['docType']}, from the {source})",
                _reconcile_line(data["reconcile"]),
            ]
        )

    return Outcome(data=data, text=text)


def run_reconcile(inv: Invocation) -> Outcome:
    """Handler for `ragit doc reconcile`."""
    from ragit.ops.doc_authority.engine import reconcile

    data = reconcile(inv.workspace(), inv.config(), dry_run=inv.dry_run)

    def text() -> str:
        lines = [_reconcile_line(data) + f", {data['mapped']} mapped"]
        for entry in data["entries"]:
            if entry["status"] == "mapped":
                lines.append(f"  {entry['sourcePath']} → {entry['canonicalPath']}")
        return "\n".join(lines)

    return Outcome(data=data, text=text)
