"""`ragit security audit` and `ragit security purge`."""

from __future__ import annotations

from ragit.cli.invocation import Invocation, Outcome
from ragit.contract.errors import InputInvalid


def run_audit_cmd(inv: Invocation) -> Outcome:
    """Handler for `ragit security audit`."""
    from ragit.ops.security import render_audit, run_audit

    data = run_audit(inv.workspace(), inv.config())
    return Outcome(data=data, text=lambda: render_audit(data))


def run_purge_cmd(inv: Invocation) -> Outcome:
    """Handler for `ragit security purge`."""
    from ragit.ops.security import TARGETS, render_purge, run_purge

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
