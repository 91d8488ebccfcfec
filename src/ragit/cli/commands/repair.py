"""`ragit repair` and `ragit migrate embeddings`."""

from __future__ import annotations

from typing import Any

from ragit.cli.invocation import Invocation, Outcome
from ragit.contract.errors import InputInvalid


def render(data: dict[str, Any]) -> str:
    lines = [f"repair ({data['mode']}): {data['summary']}"]
    drift = data.get("drift")
    if drift:
        counts = drift["counts"]
        lines.append(
            f"drift: {drift['overallStatus']} (fresh {counts['fresh']}, suspect "
            f"{counts['suspect']}, stale {counts['stale']})"
        )
    for action in data["plannedActions"]:
        lines.append(f"- {action['action']} [{action['status']}] {', '.join(action['notes'])}")
        lines.append(f"  {action['command']}")
    for action in data["executedActions"]:
        lines.append(f"  executed {action['action']}: {action['status']}")
    if not data["plannedActions"]:
        lines.append("nothing to repair")
    return "\n".join(lines)


def run_repair_cmd(inv: Invocation) -> Outcome:
    """Handler for `ragit repair`."""
    from ragit.cli.commands.history import item_ids, max_count_option
    from ragit.ops.history.drift import MAX_COUNT
    from ragit.ops.maintenance.repair import ACTIONS, RepairFilters, run_repair

    requested = list(inv.params.get("action") or ())
    for action in requested:
        if action not in ACTIONS:
            raise InputInvalid("action", f"must be one of {', '.join(ACTIONS)}")
    ids = item_ids(inv)
    limit = max_count_option(inv, 0, MAX_COUNT) if inv.params.get("max_count") is not None else None
    filters = RepairFilters(
        scope=inv.params.get("scope") or "all",
        path=inv.params.get("path"),
        goal_id=ids["goal"],
        session_id=ids["session"],
        max_count=limit,
    )
    data, error = run_repair(
        inv.workspace(),
        inv.config(),
        apply=bool(inv.params.get("apply")),
        requested=requested,
        progress=inv.progress,
        filters=filters,
    )
    warnings = data.pop("warnings")
    if error is not None:
        # Contract §2: a failure's data is null; what ran before it is in the warnings.
        done = [a["action"] for a in data["executedActions"] if a["status"] == "executed"]
        inv.warnings.extend(warnings)
        if done:
            inv.warnings.append(f"repair executed before the failure: {', '.join(done)}")
        raise error
    return Outcome(data=data, text=lambda: render(data), warnings=warnings)


def _render_migrate(data: dict[str, Any]) -> str:
    lines = [f"migrate embeddings ({data['mode']})"]
    lines.append(f"- current: {data['currentContract']}")
    lines.append(f"- target:  {data['targetContract']}")
    lines.append(f"- migrationNeeded: {data['migrationNeeded']}")
    lines.append(
        f"- manifests: {data['manifests']}  documents: {data['documents']}  "
        f"chunks: {data['chunks']}"
    )
    if data.get("backend") == "postgres":
        lines.append(
            f"- shared store ({data['repository']}): snapshots to migrate: "
            f"{data['snapshotsToMigrate']} in {data['namespacesToMigrate']} namespace(s), "
            f"chunks to embed: {data['chunksToEmbed']}"
        )
        if "snapshotsMigrated" in data:
            lines.append(
                f"- republished: {data['snapshotsMigrated']}  embedded: {data['embedded']}  "
                f"left as they are: {len(data['staleSnapshots'])}"
            )
    return "\n".join(lines)


def run_migrate_embeddings(inv: Invocation) -> Outcome:
    """Handler for `ragit migrate embeddings`."""
    from ragit.embed import resolve_profile
    from ragit.ops.maintenance.rebuild import plan_rebuild, rebuild_store
    from ragit.store.backend import store_backend
    from ragit.store.meta import read_meta

    ws = inv.workspace()
    cfg = inv.config()
    if store_backend(cfg.store.backend).shared:
        from ragit.ops.maintenance.migrate_shared import migrate_shared

        shared, notes = migrate_shared(ws, cfg, dry_run=inv.dry_run, progress=inv.progress)
        return Outcome(data=shared, text=lambda: _render_migrate(shared), warnings=notes)
    target = resolve_profile(cfg.embedding).as_dict()
    meta = read_meta(ws)
    current = dict(meta.embedding) if meta is not None else None
    needed = current is not None and current.get("namespaceId") != target["namespaceId"]
    plan = plan_rebuild(ws)
    data: dict[str, Any] = {
        "mode": "dry-run" if inv.dry_run else "apply",
        "currentContract": current,
        "targetContract": target,
        "manifests": plan["manifests"],
        "documents": plan["documents"],
        "chunks": plan["chunks"],
        "migrationNeeded": needed,
        "migrated": False,
    }
    warnings: list[str] = []
    if needed and not inv.dry_run:
        result = rebuild_store(ws, cfg, command="migrate-embeddings", progress=inv.progress)
        data["migrated"] = True
        data["chunks"] = result["chunks"]
        warnings = list(result.get("warnings", []))
    return Outcome(data=data, text=lambda: _render_migrate(data), warnings=warnings)
