"""`ragit status` — the read-only repository summary."""

from __future__ import annotations

from typing import Any

from ragit.cli.invocation import Invocation, Outcome
from ragit.contract.models import WireModel


class StatusData(WireModel):
    """Shape summary for `describe` (the data itself is built by ragit.ops.status)."""

    root: str
    initialized: bool
    branch: str | None
    head: str | None
    detached: bool
    worktree_dirty: bool
    snapshot: dict[str, Any]
    search_ready: bool
    manifests: int
    config: dict[str, Any]
    store: dict[str, Any]
    embedding: dict[str, Any]
    writer_lock: dict[str, Any]
    memory_lock: dict[str, Any]
    transactions: dict[str, Any]
    security: dict[str, Any] | None = None


def render(data: dict[str, Any]) -> str:
    snap = data["snapshot"]
    lines = [
        f"repository: {data['root']}",
        f"initialized: {'yes' if data['initialized'] else 'no (run: ragit init --yes)'}",
        f"branch: {data['branch'] or '(detached)' if data['detached'] else data['branch']}",
        f"head: {data['head'] or '(no commit yet)'}",
        f"worktree dirty: {'yes' if data['worktreeDirty'] else 'no'}",
        f"snapshot: {snap['status']}" + (f" ({snap['reason']})" if snap.get("reason") else ""),
    ]
    if snap.get("recovery"):
        lines.append(f"  recovery: {snap['recovery']}")
    store = data["store"]
    if store.get("present"):
        lines.append(
            f"store: generation {store.get('generation')}, {store.get('chunkCount')} chunks"
            if store.get("readable")
            else f"store: unreadable ({store.get('reason')})"
        )
    else:
        lines.append("store: not created yet (the first ingest creates it)")
    lines.append(f"manifests: {data['manifests']}")
    lines.append(f"writer lock: {data['writerLock']['state']}")
    memory = data["memoryLock"]
    if memory["state"] == "active" and memory["owner"]:
        owner = memory["owner"]
        lines.append(f"memory lock: held by pid {owner.get('pid')} ({owner.get('command')})")
    pending = data["transactions"]["pending"]
    lines.append(f"pending transactions: {len(pending)}")
    return "\n".join(lines)


def run(inv: Invocation) -> Outcome:
    """Handler for `ragit status`."""
    from ragit.ops.status import repository_status

    data = repository_status(inv.workspace())
    return Outcome(data=data, text=lambda: render(data))
