"""`ragit migrate store` — the shared store's schema migrations."""

from __future__ import annotations

from typing import Any

from ragit.cli.invocation import Invocation, Outcome


def render(data: dict[str, Any]) -> str:
    """The versions, then one line per step applied (or to apply)."""
    before, after = data["schemaVersionBefore"], data["schemaVersionAfter"]
    dry = data["mode"] == "dry-run"
    if not data["steps"]:
        return f"migrate store: schema version {before} is current; nothing to apply"
    head = (
        f"migrate store (dry-run): schema version {before} -> {after}; would apply:"
        if dry
        else f"migrate store: schema version {before} -> {after}; applied:"
    )
    lines = [head]
    for step in data["steps"]:
        lines.append(f"- {step['version']}: {step['description']}")
    return "\n".join(lines)


def run(inv: Invocation) -> Outcome:
    """Handler for `ragit migrate store`."""
    from ragit.ops.maintenance.store_migrate import migrate_store

    data = migrate_store(dry_run=bool(inv.params.get("dry_run"))).dump()
    return Outcome(data=data, text=lambda: render(data))
