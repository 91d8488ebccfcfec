"""`ragit hooks install|uninstall|status`."""

from __future__ import annotations

from typing import Any

from ragit.cli.invocation import Invocation, Outcome


def render(data: dict[str, Any]) -> str:
    from ragit.cli.commands.status import hook_run_line

    lines = [f"hooks in {data['hooksDir']}" + (" (dry run)" if data["dryRun"] else "")]
    for hook in data["hooks"]:
        chained = " (chains the previous hook)" if hook["chained"] else ""
        lines.append(f"- {hook['name']}: {hook['state']}{chained}")
    if "lastRun" in data:
        last = data["lastRun"]
        lines.append(f"last run: {hook_run_line(last) if last else 'none yet'}")
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
    from ragit.ops.status.report import last_hook_run

    ws = inv.workspace()
    data = hooks.status(ws)
    data["lastRun"] = last_hook_run(ws)
    return Outcome(data=data, text=lambda: render(data))
