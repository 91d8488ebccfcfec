"""`ragit ingest` — commit-bound indexing."""

from __future__ import annotations

from typing import Any

from ragit.cli.invocation import Invocation, Outcome
from ragit.cli.render import paint, value


def render(data: dict[str, Any]) -> str:
    """What was indexed (or would be), then what blocks it, then where the manifest is."""
    sha = str(data.get("commitSha") or "-")[:12]
    dry = data["mode"] != "apply"
    if data.get("noop"):
        lines = [f"nothing to do: the snapshot of {sha} is already indexed"]
    else:
        base = (
            "full snapshot"
            if data.get("fullSnapshot")
            else (
                f"on top of {str(data['baseSha'])[:12]}"
                if data.get("baseSha")
                else data["baseMode"]
            )
        )
        verb = "would index" if dry else "indexed"
        lines = [
            f"{verb} {data['documents']} document(s) at {sha} ({base}): "
            f"{data['processed']} processed, {data['reused']} reused, "
            f"{data['embedded']} chunk(s) embedded, {data['masked']} masked"
        ]
    if dry:
        lines.append(f"would fail: {value(data.get('wouldFail'))}")
    if data["dirtyCandidates"]:
        lines.append("uncommitted: " + ", ".join(data["dirtyCandidates"]))
    for blocker in data.get("blockers", []):
        lines.append(f"{paint('blocker:', 'red')} {blocker['code']}")
    for item in data.get("skippedFiles", []):
        lines.append(f"skipped {item['path']}: {item['reason']}")
    timings = data.get("timings") or {}
    if not dry and data.get("manifestPath"):
        took = f" in {timings['totalMs'] / 1000:.1f} s" if timings.get("totalMs") else ""
        lines.append(f"manifest: {data['manifestPath']}{took}")
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
