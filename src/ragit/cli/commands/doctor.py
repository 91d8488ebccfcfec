"""`ragit doctor` — named checks with recovery commands."""

from __future__ import annotations

from typing import Any

from ragit.cli.invocation import Invocation, Outcome


def render(data: dict[str, Any]) -> str:
    lines = []
    for check in data["checks"]:
        mark = "OK  " if check["ok"] else "FAIL"
        lines.append(f"{mark} {check['name']}: {check['detail']}")
        if not check["ok"] and check.get("recovery"):
            lines.append(f"     fix: {check['recovery']}")
    return "\n".join(lines)


def run(inv: Invocation) -> Outcome:
    """Handler for `ragit doctor`."""
    from ragit.ops.doctor import run_doctor

    data, error = run_doctor(inv.workspace())
    return Outcome(data=data, text=lambda: render(data), error=error)
