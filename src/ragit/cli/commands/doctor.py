"""`ragit doctor` — named checks with recovery commands."""

from __future__ import annotations

from typing import Any

from ragit.cli.invocation import Invocation, Outcome
from ragit.cli.render import paint


def render(data: dict[str, Any]) -> str:
    """One line per check (FAIL in red on a terminal), its fix, then a summary."""
    lines = []
    failed = 0
    for check in data["checks"]:
        mark = paint("ok  ", "green") if check["ok"] else paint("FAIL", "red")
        failed += 0 if check["ok"] else 1
        lines.append(f"{mark} {check['name']}: {check['detail']}")
        if not check["ok"] and check.get("recovery"):
            lines.append(f"     fix: {check['recovery']}")
        elif not check["ok"] and check.get("hint"):
            lines.append(f"     hint: {check['hint']}")
    total = len(data["checks"])
    lines.append("")
    lines.append(f"{failed} of {total} checks failed" if failed else f"all {total} checks passed")
    return "\n".join(lines)


def run(inv: Invocation) -> Outcome:
    """Handler for `ragit doctor`."""
    from ragit.ops.maintenance.doctor import run_doctor

    data, error = run_doctor(inv.workspace())
    return Outcome(data=data, text=lambda: render(data), error=error)
