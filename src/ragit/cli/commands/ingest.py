"""`ragit ingest` — commit-bound indexing."""

from __future__ import annotations

import time
from collections.abc import Callable
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
        preview = (data.get("configSource") or {}).get("worktreeDocuments")
        if preview is not None:
            lines.append(
                f"the working-tree config, once committed, would index {preview} document(s)"
            )
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


WAIT_POLL_SECONDS = 0.25
DEFAULT_WAIT_TIMEOUT_S = 120


def _owner_line(owner: dict[str, Any] | None) -> str:
    if not owner:
        return "another writer"
    target = str(owner.get("headSha") or "")[:12]
    what = f"{owner.get('command')} of {target}" if target else str(owner.get("command"))
    return f"{what} (pid {owner.get('pid')}, started {owner.get('startedAt')})"


def _ingest_waiting(inv: Invocation, attempt: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``attempt`` until no live writer holds the lock, bounded by ``--wait-timeout``.

    Progress (the owner, the seconds waited) goes to stderr about once a second.

    Raises:
        StoreWriteBusy: the writer still runs when the timeout ends.
    """
    from ragit.contract.errors import StoreWriteBusy
    from ragit.contract.inputs import positive_int_option
    from ragit.store.lock import inspect_lock

    ws = inv.workspace()
    raw = inv.params.get("wait_timeout")
    timeout = (
        positive_int_option(raw, "waitTimeout", 3600) if raw is not None else DEFAULT_WAIT_TIMEOUT_S
    )
    start = time.monotonic()
    while True:
        try:
            return attempt()
        except StoreWriteBusy as busy:
            waited = time.monotonic() - start
            if waited >= timeout:
                busy.message += f" (waited {waited:.0f} s)"
                raise
            who = _owner_line(busy.details.get("owner"))
            # Cheap polling of the lock file; the ingest is planned again once it is free.
            next_note = 0.0
            while (now := time.monotonic()) - start < timeout:
                if now >= next_note:
                    inv.progress(f"wait: {now - start:.0f}/{timeout} s for the writer: {who}")
                    next_note = now + 1.0
                if inspect_lock(ws).state != "active":
                    break
                time.sleep(WAIT_POLL_SECONDS)


def run(inv: Invocation) -> Outcome:
    """Handler for `ragit ingest`."""
    from ragit.ingest.apply import run_ingest
    from ragit.ingest.request import IngestRequest

    ws = inv.workspace()
    cfg = inv.config()
    if inv.input_source is not None:
        from ragit.ingest.inputs import IngestInput, request_from_input

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
    if inv.params.get("wait") and not req.dry_run:
        data = _ingest_waiting(inv, lambda: run_ingest(ws, cfg, req, inv.progress))
    else:
        data = run_ingest(ws, cfg, req, inv.progress)
    warnings = data.pop("warnings", [])
    if cfg.docs_authority.validate_on_ingest:
        from ragit.ops.authority.engine import validate_commit_docs

        report = validate_commit_docs(
            ws, cfg, data.get("commitSha"), list(data.get("plannedFiles") or [])
        )
        data["docAuthority"] = report
        if report["violations"]:
            warnings.append(
                f"{report['violations']} document contract violation(s) in "
                f"{len(report['files'])} ingested document(s); see `ragit doc validate`"
            )
    return Outcome(
        data=data, text=lambda: _with_warnings(render(data), warnings), warnings=warnings
    )


def _with_warnings(text: str, warnings: list[str]) -> str:
    return "\n".join([text, *(f"{paint('warning:', 'yellow')} {w}" for w in warnings)])
