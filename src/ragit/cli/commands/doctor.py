"""`ragit doctor` — named checks with recovery commands."""

from __future__ import annotations

from ragit.cli.invocation import Invocation, Outcome


def run(inv: Invocation) -> Outcome:
    """Handler for `ragit doctor`."""
    from ragit.ops.doctor import render, run_doctor

    data, error = run_doctor(inv.workspace())
    return Outcome(data=data, text=lambda: render(data), error=error)
