"""`ragit hooks install|uninstall|status`."""

from __future__ import annotations

from typing import Any

from ragit.cli.invocation import Invocation, Outcome


def render(data: dict[str, Any]) -> str:
    lines = [f"hooks in {data['hooksDir']}" + (" (dry run)" if data["dryRun"] else "")]
    for hook in data["hooks"]:
        chained = " (chains the previous hook)" if hook["chained"] else ""
        lines.append(f"- {hook['name']}: {hook['state']}{chained}")
    return "\n".join(lines)


def run_install(inv: Invocation) -> Outcome:
    """Handler for `ragit hooks install`."""
    from ragit import hooks

    data = hooks.install(inv.workspace(), dry_run=inv.dry_run)
    return Outcome(data=data, text=lambda: render(data))


def run_uninstall(inv: Invocation) -> Outcome:
    """Handler for `ragit hooks uninstall`."""
    from ragit import hooks

    data = hooks.uninstall(inv.workspace(), dry_run=inv.dry_run)
    return Outcome(data=data, text=lambda: render(data))


def run_status(inv: Invocation) -> Outcome:
    """Handler for `ragit hooks status`."""
    from ragit import hooks

    data = hooks.status(inv.workspace())
    return Outcome(data=data, text=lambda: render(data))
