"""`ragit security audit` and `ragit security purge`."""

from __future__ import annotations

from typing import Any

from ragit.cli.invocation import Invocation, Outcome
from ragit.contract.errors import InputInvalid


def render_audit(data: dict[str, Any]) -> str:
    summary = data["summary"]
    egress = data["providerEgress"]
    lines = [
        f"security audit: {summary['critical']} critical, {summary['warn']} warn, "
        f"{summary['info']} info",
        f"- embedding egress: {egress['provider']} ({egress['class']}), policy {egress['policy']}",
    ]
    for finding in data["findings"]:
        lines.append(
            f"- [{finding['severity']}] {finding['surface']} {finding['path']} "
            f"{finding['field']}: {finding['reason']}"
        )
        lines.append(f"    fix: {finding['suggestedAction']}")
    if not data["findings"]:
        lines.append("no findings")
    return "\n".join(lines)


def run_audit_cmd(inv: Invocation) -> Outcome:
    """Handler for `ragit security audit`."""
    from ragit.ops.security.audit import run_audit

    data = run_audit(inv.workspace(), inv.config())
    return Outcome(data=data, text=lambda: render_audit(data))


def render_purge(data: dict[str, Any]) -> str:
    lines = [f"security purge ({data['mode']}), target {data['target']}"]
    for item in data["planned"]:
        lines.append(f"- {item['action']} {item['path']} [{item['target']}]")
    if not data["planned"]:
        lines.append("- nothing to purge")
    if data["mode"] == "apply":
        lines.append(f"rewritten: {len(data['rewritten'])}, deleted: {len(data['deleted'])}")
    for stale in data["staleSnapshots"]:
        lines.append(f"stale snapshot {stale['commitSha']}: {stale['recovery']}")
    return "\n".join(lines)


def run_purge_cmd(inv: Invocation) -> Outcome:
    """Handler for `ragit security purge`."""
    from ragit.ops.security.purge import TARGETS, run_purge

    target = inv.params.get("target") or "all"
    if target not in TARGETS:
        raise InputInvalid("target", f"must be one of {', '.join(TARGETS)}")
    data = run_purge(
        inv.workspace(),
        inv.config(),
        target=target,
        dry_run=inv.dry_run,
        progress=inv.progress,
    )
    warnings = data.pop("warnings")
    return Outcome(data=data, text=lambda: render_purge(data), warnings=warnings)
