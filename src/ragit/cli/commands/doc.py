"""`ragit doc validate|refresh|create|reconcile` — document authority (docs/authority.md)."""

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


class SkippedCounts(WireModel):
    """How many markdown files `doc validate` did not check, by reason."""

    untyped: int
    directory_index: int
    other_type: int
    outside_surface: int
    not_markdown: int
    unreadable: int


class SkippedFile(WireModel):
    path: str
    reason: str


class DocValidateData(WireModel):
    """Result of `doc validate`."""

    doc_type: str | None
    paths: list[str] | None
    checked_files: int
    tracked: int
    violations: int
    invalid_files: int
    files: list[DocFileReport]
    skipped: SkippedCounts
    skipped_files: list[SkippedFile]


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
    from ragit.ops.authority.engine import check_type

    raw = inv.params.get("type")
    if raw is None and required:
        raise InputInvalid("type", "--type is required")
    return check_type(None if raw is None else str(raw))


def _optional_text(inv: Invocation, name: str) -> str | None:
    raw = inv.params.get(name)
    return None if raw is None else str(raw)


_SKIP_WORDS = (
    ("untyped", "untyped", "untyped"),
    ("directoryIndex", "directory index", "directory indexes"),
    ("otherType", "of another type", "of another type"),
    ("outsideSurface", "outside the ingest surface", "outside the ingest surface"),
    ("notMarkdown", "not markdown", "not markdown"),
    ("unreadable", "unreadable", "unreadable"),
)
_TYPED_HINT = (
    "  a document is typed by its frontmatter (type: adr, prd, srs, spec, plan, ddd, "
    "glossary or pbd), a typed H1 (ADR: …) or its directory (docs/adr/…); "
    "see ragit doc create --help"
)


def render_validate(data: dict[str, Any]) -> str:
    """Violations first (as a linter prints them), then one summary line of what was
    checked and what was not, and why."""
    lines: list[str] = []
    shown = 0
    hidden = 0
    for entry in data["files"]:
        for violation in entry["violations"]:
            if shown >= TEXT_LIMIT:
                hidden += 1
                continue
            shown += 1
            lines.append(f"{entry['path']}: {violation['code']}: {violation['message']}")
    if hidden:
        lines.append(f"… {hidden} more (--format json lists all)")
    checked = data["checkedFiles"]
    head = f"{checked} document{'' if checked == 1 else 's'} checked"
    if data["violations"]:
        head += f": {data['invalidFiles']} with {data['violations']} violation(s)"
    elif checked:
        head += ": no violation"
    skipped = data["skipped"]
    parts = [
        f"{skipped[key]} {one if skipped[key] == 1 else many}"
        for key, one, many in _SKIP_WORDS
        if skipped[key]
    ]
    total = sum(skipped.values())
    if total:
        head += (
            f"; {total} markdown file{'' if total == 1 else 's'} not checked ({', '.join(parts)})"
        )
    lines.append(head)
    if skipped["untyped"] and not checked:
        lines.append(_TYPED_HINT)
    return "\n".join(lines)


# Violations `doc refresh` cannot fix: it only inserts, and these need existing text rewritten.
_HAND_EDITS = frozenset({"h1-prefix-mismatch", "frontmatter-type-mismatch"})


def _recovery(files: list[dict[str, Any]], doc_type: str | None) -> tuple[str | None, str | None]:
    """(command, hint) for failed documents: `doc refresh` of exactly the documents it can
    fix (it only inserts), and a hint naming what needs an edit by hand."""
    import shlex

    fixable = [
        f["path"] for f in files if any(v["code"] not in _HAND_EDITS for v in f["violations"])
    ]
    by_hand = [f["path"] for f in files if any(v["code"] in _HAND_EDITS for v in f["violations"])]
    command = None
    if fixable and len(fixable) <= 20 and not any("," in p for p in fixable):
        command = f"ragit doc refresh --files {shlex.quote(','.join(fixable))}"
    elif fixable:
        command = "ragit doc refresh" + (f" --type {doc_type}" if doc_type else "")
    hint = None
    if by_hand:
        named = ", ".join(by_hand[:5]) + (
            f" and {len(by_hand) - 5} more" if len(by_hand) > 5 else ""
        )
        hint = f"Edit by hand (doc refresh only inserts): the H1 or frontmatter type of {named}."
    return command, hint


def run_validate(inv: Invocation) -> Outcome:
    """Handler for `ragit doc validate`: exit 1 on violations unless ``--exit-zero``."""
    from ragit.contract.errors import DocValidationFailed
    from ragit.ops.authority.validate import validate

    doc_type = _type(inv)
    if doc_type is not None and inv.params.get("all"):
        raise InputInvalid("all", "--type and --all cannot be combined")
    raw_paths = inv.params.get("paths") or ()
    paths = [str(p) for p in raw_paths] or None
    ws = inv.workspace()
    data = validate(ws, inv.config(), doc_type=doc_type, paths=paths, start=inv.start_dir)
    error = None
    if data["violations"] and not inv.params.get("exit_zero"):
        failed = [entry for entry in data["files"] if entry["violations"]]
        command, hint = _recovery(failed, doc_type)
        error = DocValidationFailed(
            data["violations"], [entry["path"] for entry in failed], command, hint=hint
        )
    return Outcome(data=data, text=lambda: render_validate(data), error=error)


def _reconcile_line(summary: dict[str, Any] | None) -> str:
    if summary is None:
        return "index: not updated (run `ragit init --yes` first)"
    return (
        f"index {summary['indexPath']}: {summary['status']} "
        f"({summary['tracked']} tracked, {summary['violations']} violations)"
    )


def run_refresh(inv: Invocation) -> Outcome:
    """Handler for `ragit doc refresh`."""
    from ragit.ops.authority.engine import refresh

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
    from ragit.ops.authority.engine import create

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
    from ragit.ops.authority.engine import reconcile

    data = reconcile(inv.workspace(), inv.config(), dry_run=inv.dry_run)

    def text() -> str:
        lines = [_reconcile_line(data) + f", {data['mapped']} mapped"]
        for entry in data["entries"]:
            if entry["status"] == "mapped":
                lines.append(f"  {entry['sourcePath']} → {entry['canonicalPath']}")
        return "\n".join(lines)

    return Outcome(data=data, text=text)
