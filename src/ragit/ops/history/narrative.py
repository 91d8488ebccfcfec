"""`ragit narrative`: one self-contained HTML report, the Recovery View (docs/history.md).

The report is rendered from a versioned JSON model (``schemaVersion``) built from the
`log` window, the `drift` evaluation at HEAD and the event ledger: **Recover now**
(readiness, the newest wrap's open loops and next actions, what needs attention),
**What to trust** (fresh vs suspect/stale knowledge, each document cited by path,
snapshot commit and heading) and **How we got here** (the window's snapshots with
their deltas and semantic overlay, and the ledger's events).

The whole model is masked like query output before anything renders it; the page is
rendered by Jinja2 with autoescaping (never by concatenation), so every value from a
document is escaped. The page needs no network and no script: inline style only.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragit.contract.errors import InputInvalid, RagitError
from ragit.ops.history.drift import REASON_WORDS, DriftRequest, evaluate
from ragit.ops.history.log import LogRequest, run_log
from ragit.security.masking import mask_json
from ragit.workspace import Workspace

if TYPE_CHECKING:
    from ragit.ops.status.report import SharedStore

SCHEMA_VERSION = 1
DEFAULT_MAX_COMMITS = 10
MAX_COMMITS = 1_000
MAX_EVENTS = 50


@dataclass(frozen=True)
class NarrativeRequest:
    rev_range: str | None = None
    max_commits: int = DEFAULT_MAX_COMMITS
    output: str | None = None
    emit_model: str | None = None
    dry_run: bool = False


def _target(ws: Workspace, raw: str | None, field: str, default: Path | None) -> Path | None:
    if raw is None:
        return default
    if not raw.strip() or any(ord(c) < 32 for c in raw):
        raise InputInvalid(field, "must be a file path")
    path = Path(raw).expanduser()
    if not path.is_absolute():
        path = ws.root / path
    if path.is_dir():
        raise InputInvalid(field, "is a directory; name a file")
    return path


def _shown(ws: Workspace, path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        return ws.relative(path)
    except ValueError:
        return str(path)


def _title_and_heading(git: Any, blob_sha: str, path: str) -> tuple[str, str | None]:
    """A document's title and its first heading (outside code fences).

    The title is the frontmatter's ``title``, else the document's only H1, else one made
    from the file name (``text/3668-async-closures.md`` → ``3668 async closures``): a
    document whose first heading is a section (``## Summary``), or that has an H1 per
    section, is not titled by it.
    """
    from ragit.ingest.chunking import iter_headings, normalized_body
    from ragit.ingest.frontmatter import parse_frontmatter
    from ragit.ops.authority.contracts import title_from_path

    try:
        text = git.read_blob(blob_sha)[:65536].decode("utf-8", errors="replace")
    except RagitError:  # a citation without a heading is still a citation
        return title_from_path(path), None
    headings = list(iter_headings(normalized_body(text)))
    first = headings[0].title if headings else None
    title = parse_frontmatter(text)[0].get("title", "").strip()
    if not title:
        top = [h.title for h in headings if h.level == 1]
        title = top[0] if len(top) == 1 else title_from_path(path)
    return title, first


def _latest_wrap(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    for event in events:
        if event.get("eventType") == "memory.wrap":
            return {
                "summary": event.get("summary", ""),
                "recordedAt": event.get("recordedAt"),
                "sessionId": event.get("sessionId"),
                "goalId": event.get("goalId"),
                "openLoops": list(event.get("openLoops") or []),
                "nextActions": list(event.get("nextActions") or []),
            }
    return None


def build_model(ws: Workspace, req: NarrativeRequest) -> dict[str, Any]:
    """The unmasked-then-masked model of the report (reads only).

    Raises:
        SnapshotStoreUnavailable: the shared store cannot be read.
    """
    from ragit.ops.status.report import shared_for

    with shared_for(ws) as shared:  # the shared store, reached once for the whole report
        return _build_model(ws, req, shared)


def _build_model(
    ws: Workspace, req: NarrativeRequest, shared: SharedStore | None
) -> dict[str, Any]:
    from ragit import __version__
    from ragit.artifacts.events import TimelineFilters, timeline
    from ragit.snapshot._git import GitRepo

    log = run_log(
        ws,
        LogRequest(rev_range=req.rev_range, max_count=req.max_commits, show_missing=True),
        shared,
    )
    drift = evaluate(ws, DriftRequest(max_count=100_000), shared)
    events = timeline(ws, TimelineFilters(max_count=MAX_EVENTS), "default")["events"]
    git = GitRepo(ws.root)
    head = git.head().sha
    entries = log["entries"]
    anchor = entries[0]["commitSha"] if entries else head
    baseline = drift["baseline"]
    snapshot_sha = baseline["snapshotSha"]
    blobs: dict[str, tuple[str, str]] = {}
    if snapshot_sha:
        from ragit.ops.status.report import shared_manifest

        for doc in shared_manifest(ws, snapshot_sha, shared).docs:
            blobs[doc.document_id] = (doc.blob_sha, doc.doc_type)
    items: list[dict[str, Any]] = []
    anchors: dict[str, str] = {}
    for item in drift["items"]:
        row = {
            key: item[key] for key in ("scope", "itemType", "id", "title", "status", "reasonCodes")
        }
        row["recommendedActions"] = item.get("recommendedActions", [])
        row["anchor"] = f"item-{item['itemType']}-{item['id']}"
        row["heading"] = None
        row["docTitle"] = None
        row["docType"] = None
        row["citation"] = None
        if item["itemType"] == "document" and snapshot_sha:
            blob, doc_type = blobs.get(item["id"], ("", None))
            title, heading = _title_and_heading(git, blob, item["title"]) if blob else (None, None)
            row["heading"] = heading
            row["docTitle"] = title
            row["docType"] = doc_type
            row["citation"] = {"path": item["title"], "commitSha": snapshot_sha, "heading": heading}
            anchors[item["title"]] = row["anchor"]
        items.append(row)
    for entry in entries:
        for change in entry["snapshot"].get("changed", []):
            change["anchor"] = anchors.get(change["path"]) if change["status"] != "D" else None
    attention = [i for i in items if i["status"] != "fresh"]
    first_actions: list[str] = []
    for item in attention:
        for action in item["recommendedActions"]:
            if action not in first_actions:
                first_actions.append(action)
    wrap = _latest_wrap(events)
    selected = [e["commitSha"] for e in entries if e["snapshot"]["status"] == "indexed"]
    missing = [e["commitSha"] for e in entries if e["snapshot"]["status"] != "indexed"]
    model: dict[str, Any] = {
        "schemaVersion": SCHEMA_VERSION,
        "producer": "ragit",
        "producerVersion": __version__,
        "generatedAt": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "headSha": head,
        "anchorSha": anchor,
        "window": {
            "revRange": log["revRange"],
            "maxCommits": req.max_commits,
            "selectedSnapshotShas": selected,
            "missingSnapshotCommits": missing,
        },
        "summary": {
            "snapshots": len(selected),
            "missingCommits": len(missing),
            "fresh": drift["counts"]["fresh"],
            "suspect": drift["counts"]["suspect"],
            "stale": drift["counts"]["stale"],
            "overallStatus": drift["overallStatus"],
            "events": len(events),
            "openLoops": len(wrap["openLoops"]) if wrap else 0,
        },
        "recoverNow": {
            "readiness": {
                "headSha": head,
                "headIndexed": bool(head) and snapshot_sha == head,
                "baselineSnapshotSha": snapshot_sha,
                "overallStatus": drift["overallStatus"],
            },
            "firstActions": first_actions,
            "latestWrap": wrap,
            "attention": attention[:50],
        },
        "trust": {
            "items": items,
            "attention": attention,
            "fresh": [i for i in items if i["status"] == "fresh"],
        },
        "history": {"entries": entries, "events": events},
        "warnings": [*log["warnings"], *drift["warnings"]],
    }
    masked, _count, _sources = mask_json(model)
    assert isinstance(masked, dict)
    return masked


# What the Type column calls each kind of item (a document: its type, when it has one).
ITEM_KINDS = {
    "baseline": "snapshot",
    "document": "document",
    "memoryArtifact": "memory",
    "harnessSuite": "harness suite",
}


def render_html(model: dict[str, Any]) -> str:
    """The report page: Jinja2, autoescaped, from the (masked) model."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("ragit.ops.history", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    from ragit.text.dates import human_time

    env.filters["when"] = human_time
    env.globals["kinds"] = ITEM_KINDS
    env.globals["reasons"] = REASON_WORDS
    return env.get_template("narrative.html.j2").render(m=model)


def run_narrative(ws: Workspace, req: NarrativeRequest) -> dict[str, Any]:
    """Build the model, render the page and (unless dry-run) write both; the command's data."""
    from ragit._fs import atomic_write_bytes
    from ragit.artifacts.storage import dumps_record

    model = build_model(ws, req)
    anchor = model["anchorSha"] or "unborn"
    default = ws.ragit_dir / "reports" / "narrative" / f"{anchor}.html"
    report = _target(ws, req.output, "output", default)
    model_path = _target(ws, req.emit_model, "emitModel", None)
    assert report is not None
    html = render_html(model)
    if not req.dry_run:
        atomic_write_bytes(report, html.encode("utf-8"))
        if model_path is not None:
            atomic_write_bytes(model_path, dumps_record(model).encode("utf-8"))
    return {
        "dryRun": req.dry_run,
        "reportPath": _shown(ws, report),
        "modelPath": _shown(ws, model_path),
        "schemaVersion": SCHEMA_VERSION,
        "headSha": model["headSha"],
        "anchorSha": model["anchorSha"],
        "window": model["window"],
        "summary": model["summary"],
        "bytes": len(html.encode("utf-8")),
        "warnings": list(model["warnings"]),
    }
