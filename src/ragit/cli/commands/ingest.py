"""`ragit ingest` — commit-bound indexing."""

from __future__ import annotations

from typing import Any

from ragit.cli.invocation import Invocation, Outcome


def render(data: dict[str, Any]) -> str:
    lines = [f"ingest ({data['mode']}) {data['commitSha']}"]
    for key in (
        "baseMode",
        "baseSha",
        "documents",
        "processed",
        "reused",
        "skipped",
        "embedded",
        "masked",
        "wouldFail",
        "noop",
    ):
        lines.append(f"- {key}: {data.get(key)}")
    if data["dirtyCandidates"]:
        lines.append("- dirtyCandidates: " + ", ".join(data["dirtyCandidates"]))
    for blocker in data.get("blockers", []):
        lines.append(f"- blocker: {blocker['code']}")
    for item in data.get("skippedFiles", []):
        lines.append(f"- skipped {item['path']}: {item['reason']}")
    lines.append(f"- manifest: {data['manifestPath']}")
    return "\n".join(lines)


def run(inv: Invocation) -> Outcome:
    """Handler for `ragit ingest`."""
    from ragit.ingest.apply import run_ingest
    from ragit.ingest.request import IngestInput, IngestRequest, request_from_input

    ws = inv.workspace()
    cfg = inv.config()
    if inv.input_source is not None:
        req = request_from_input(inv.read_input(IngestInput), dry_run=inv.dry_run)
    else:
        p = inv.params
        from ragit.snapshot.surface import split_globs

        req = IngestRequest(
            all=bool(p.get("all")),
            since=p.get("since"),
            files=split_globs(p["files"]) if p.get("files") else [],
            paths=list(p.get("path") or ()),
            at=p.get("at"),
            scope=p.get("scope") or "durable",
            dry_run=inv.dry_run,
        )
    data = run_ingest(ws, cfg, req, inv.progress)
    warnings = data.pop("warnings", [])
    return Outcome(data=data, text=lambda: render(data), warnings=warnings)
