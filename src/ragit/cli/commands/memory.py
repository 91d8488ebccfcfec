"""`ragit memory wrap|recall|promote` — working memory and its promotion to the corpus."""

from __future__ import annotations

import sys
from typing import Any

from ragit.cli.invocation import Invocation, Outcome


def read_memory_input(inv: Invocation, *, allow_array: bool = False) -> Any:
    """The raw ``--input`` JSON of a memory command (arrays only where allowed).

    Raises:
        InputInvalid: any input rule of contract §4.
    """
    from ragit.memory.inputs import load_input

    assert inv.input_source is not None
    root = inv.root if inv.root is not None else inv.start_dir
    return load_input(inv.input_source, root, sys.stdin.buffer, allow_array=allow_array)


def _lines(title: str, items: list[str]) -> list[str]:
    if not items:
        return []
    return ["", f"{title}:", *(f"- {item}" for item in items)]


def render_wrap(data: dict[str, Any]) -> str:
    merged = data["merged"]
    lines = [
        f"memory wrap ({'dry-run' if data['dryRun'] else 'apply'}) {data['sessionId']}",
        f"- session: {data['sessionPath']}",
        f"- working: {data['currentPath']}",
        f"- open loops: {data['openLoopsPath']} ({merged['openLoops']} open)",
        f"- decisions: {merged['decisions']} ({len(merged['newDecisionIds'])} new)",
        f"- source head: {data['sourceHeadSha'] or '-'}",
    ]
    if merged["closedLoopIds"]:
        lines.append(f"- closed: {', '.join(merged['closedLoopIds'])}")
    lines += [f"warning: {w}" for w in data["warnings"]]
    return "\n".join(lines)


def run_wrap(inv: Invocation) -> Outcome:
    """Handler for `ragit memory wrap`."""
    from ragit.memory.models import WrapInput, validate_input
    from ragit.memory.wrap import wrap

    ws = inv.workspace()
    payload = validate_input(WrapInput, read_memory_input(inv))
    data = wrap(ws, inv.config(), payload, dry_run=inv.dry_run)
    return Outcome(data=data, text=lambda: render_wrap(data), warnings=list(data["warnings"]))


def render_recall(data: dict[str, Any]) -> str:
    snap = data["snapshot"]
    lines = [
        f"goal: {data['goal']}",
        f"snapshot: {data['snapshotSha'] or '-'}  status: {snap['status']}",
        f"latest_session: {data['latestSessionId'] or '-'}  view: {data['view']}",
    ]
    if data.get("summary"):
        lines += ["", "Summary:", data["summary"]]
    lines += _lines("Constraints", data["constraints"])
    if data["openLoops"]:
        lines += ["", "Open Loops:"]
        for loop in data["openLoops"]:
            lines.append(f"- [{loop['status']}] {loop['title']}")
            if loop.get("nextAction"):
                lines.append(f"  next: {loop['nextAction']}")
            if loop.get("blockingConditions"):
                lines.append(f"  blockers: {', '.join(loop['blockingConditions'])}")
    if data["relatedDecisions"]:
        lines += ["", "Related Decisions:"]
        for decision in data["relatedDecisions"]:
            where = decision.get("path") or decision.get("sourceSessionId") or decision["source"]
            lines.append(f"- {decision['title']} ({where})")
    if data["retrievedHits"]:
        lines += ["", "Retrieved Hits:"]
        for n, hit in enumerate(data["retrievedHits"], 1):
            lines.append(
                f"{n}. [{hit['citation']['id']}] `{hit['path']}` · {hit['sectionTitle']} · "
                f"score={hit['scoreFinal']:.4f}"
            )
            body = hit.get("text", hit.get("excerpt", ""))
            lines += [f"   {line}" for line in str(body).splitlines() or [""]]
    lines += _lines("Next Actions", data["nextActions"])
    lines += _lines("Warnings", data["warnings"])
    return "\n".join(lines)


def run_recall(inv: Invocation) -> Outcome:
    """Handler for `ragit memory recall`."""
    from ragit.contract.inputs import required_text
    from ragit.memory.recall import recall

    goal = required_text(inv.params.get("goal") or "", "goal")
    ws = inv.workspace()
    from ragit.contract.inputs import wait_seconds

    wait = wait_seconds(inv.params.get("wait"), bool(inv.params.get("no_wait")))
    data = recall(ws, inv.config(), goal, view=inv.view, wait_s=wait)
    return Outcome(data=data, text=lambda: render_recall(data), warnings=list(data["warnings"]))


def render_promote(data: dict[str, Any]) -> str:
    mode = "dry-run" if data["dryRun"] else "apply"
    lines = [f"memory promote ({mode}): {len(data['plannedFiles'])} document(s)"]
    for path in data["createdFiles"] if not data["dryRun"] else data["plannedFiles"]:
        lines.append(f"- {'created' if not data['dryRun'] else 'would create'} {path}")
    lines.append(f"- ingested: {str(data['ingested']).lower()}")
    lines += [f"warning: {w}" for w in data["warnings"]]
    return "\n".join(lines)


def run_promote(inv: Invocation) -> Outcome:
    """Handler for `ragit memory promote`."""
    from ragit.memory.models import PromoteInput, validate_input
    from ragit.memory.promote import promote

    ws = inv.workspace()
    raw = read_memory_input(inv, allow_array=True)
    if isinstance(raw, list):
        raw = {"promotionCandidates": raw}
    payload = validate_input(PromoteInput, raw)
    data = promote(ws, inv.config(), payload, dry_run=inv.dry_run)
    return Outcome(data=data, text=lambda: render_promote(data), warnings=list(data["warnings"]))
