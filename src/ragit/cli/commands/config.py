"""`ragit config set` — typed, comment-preserving configuration edits."""

from __future__ import annotations

from ragit.cli.invocation import Invocation, Outcome
from ragit.ops.config_set import ConfigSetData, set_value


def _render(data: ConfigSetData) -> str:
    if not data.changed:
        return f"{data.key} is already {data.value!r}"
    verb = "would change" if data.dry_run else "changed"
    return f"{data.key} {verb}: {data.previous!r} -> {data.value!r} ({data.path})"


def run_set(inv: Invocation) -> Outcome:
    """Handler for `ragit config set <key> <value>`."""
    data = set_value(
        inv.workspace(), str(inv.params["key"]), str(inv.params["value"]), dry_run=inv.dry_run
    )
    return Outcome(data=data.dump(), text=lambda: _render(data))
