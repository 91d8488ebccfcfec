"""`ragit status` — the read-only repository summary."""

from __future__ import annotations

from typing import Any

from ragit.cli.invocation import Invocation, Outcome
from ragit.cli.render import paint, value


def _lock(lock: dict[str, Any]) -> str:
    state = lock.get("state")
    if state == "missing":
        return "free"
    owner = lock.get("owner")
    if isinstance(owner, dict):
        who = ", ".join(f"{k} {value(v)}" for k, v in owner.items() if v is not None)
        return f"{state} ({who})" if who else str(state)
    return str(state)


def _dirty(data: dict[str, Any]) -> str:
    """``no``, or what makes the worktree dirty and whether ingest cares."""
    if not data["worktreeDirty"]:
        return "no"
    changes = data.get("worktreeChanges") or {}
    states = ("modified", "staged", "deleted", "untracked")
    counts = ", ".join(f"{changes[s]} {s}" for s in states if changes.get(s))
    paths = list(changes.get("paths") or [])
    total = sum(int(changes.get(s) or 0) for s in states)
    shown = ", ".join(paths[:3]) + (", …" if total > 3 else "")
    line = f"yes — {counts} ({shown})" if counts else "yes"
    documents = int(changes.get("documentCount") or 0)
    if documents:
        line += (
            f"; {documents} document{'' if documents == 1 else 's'} to commit before "
            f"ingest: {', '.join(changes['documents'][:3])}" + (", …" if documents > 3 else "")
        )
    elif counts:
        line += "; no document ingest reads"
    return line


def render(data: dict[str, Any]) -> str:
    """Readiness first (snapshot, next step), then the repository, store and config."""
    snap = data["snapshot"]
    state = snap["status"]
    headline = paint(state, "green" if state == "indexed" else "yellow")
    size = ""
    if state == "indexed" and snap.get("documents") is not None:
        size = f" ({snap['documents']} documents, {snap.get('chunks')} chunks)"
    lines = [
        f"snapshot:     {headline}{size}" + (f" — {snap['reason']}" if snap.get("reason") else ""),
    ]
    if snap.get("recovery"):
        lines.append(f"next:         {snap['recovery']}")
    if data["detached"]:
        branch = "detached HEAD"
    else:
        branch = data["branch"] or "-"
    lines += [
        f"search ready: {value(data['searchReady'])}",
        "",
        f"repository:   {data['root']}",
        f"initialized:  {value(data['initialized'])}"
        + ("" if data["initialized"] else " (run: ragit init --yes)"),
        f"branch:       {branch}",
        f"head:         {data['head'] or 'no commit yet'}",
        f"dirty:        {_dirty(data)}",
    ]
    store = data["store"]
    if store.get("backend") == "postgres":
        if not store.get("present"):
            lines.append(f"store:        shared (postgres), unreachable ({store.get('reason')})")
        elif not store.get("readable"):
            lines.append(f"store:        shared (postgres), {store.get('reason')}")
        else:
            head = "indexed" if store.get("headIndexed") else "not indexed"
            lines.append(
                f"store:        shared (postgres) {store.get('repository')}: schema "
                f"{store.get('schemaVersion')}, {store.get('snapshotCount')} snapshot(s), "
                f"HEAD {head}"
            )
    elif store.get("present"):
        lines.append(
            f"store:        generation {store.get('generation')}, {store.get('chunkCount')} "
            "chunks stored for all snapshots"
            if store.get("readable")
            else f"store:        unreadable ({store.get('reason')})"
        )
    else:
        lines.append("store:        not created yet (the first ingest creates it)")
    lines.append(f"manifests:    {data['manifests']}")
    emb = data.get("embedding") or {}
    configured = emb.get("configured") or {}
    if configured:
        lines.append(
            f"embedding:    {configured.get('provider')} / {configured.get('model')}"
            f" ({configured.get('dimensions')} dimensions)"
        )
        stored = emb.get("store") or {}
        if emb.get("needsMigration"):
            lines.append(
                f"migration:    {paint('needed', 'yellow')} — the store holds "
                f"{stored.get('provider')} / {stored.get('model')} "
                "(run: ragit migrate embeddings)"
            )
        else:
            lines.append("migration:    not needed")
    lines.append(f"writer lock:  {_lock(data['writerLock'])}")
    memory = data.get("memoryLock") or {}
    if memory.get("state") == "active" and memory.get("owner"):
        owner = memory["owner"]
        lines.append(f"memory lock:  held by pid {owner.get('pid')} ({owner.get('command')})")
    pending = data["transactions"]["pending"]
    lines.append(f"pending:      {len(pending)} unfinished transaction(s)")
    last = (data.get("hooks") or {}).get("lastRun")
    if last:
        lines.append(f"last hook:    {hook_run_line(last)}")
    return "\n".join(lines)


def hook_run_line(last: dict[str, Any]) -> str:
    """One line for the last hook-triggered ingest: when, which hook, the outcome."""
    outcome = str(last.get("outcome"))
    head = f"{last.get('recordedAt')} {last.get('hook')}: "
    if outcome == "failed":
        text = head + paint(f"failed ({last.get('code')})", "red")
        if last.get("recovery"):
            text += f" — next: {last['recovery']}"
        return text + " (log: .ragit/runtime/hooks.log)"
    sha = str(last.get("commitSha") or "")[:12]
    text = head + paint(outcome, "green" if outcome == "ok" else "yellow")
    if sha:
        text += f", indexed {sha}"
    warnings = last.get("warnings") or []
    if warnings:
        text += f"; {paint('warning:', 'yellow')} {warnings[0]}"
    return text


def run(inv: Invocation) -> Outcome:
    """Handler for `ragit status`."""
    from ragit.ops.status.report import repository_status

    data = repository_status(inv.workspace())
    warnings = status_warnings(data)
    return Outcome(
        data=data,
        text=lambda: "\n".join(
            [render(data), *(f"{paint('warning:', 'yellow')} {w}" for w in warnings)]
        ),
        warnings=warnings,
    )


def status_warnings(data: dict[str, Any]) -> list[str]:
    """An empty or partial snapshot of HEAD, and a working-tree config that differs from the
    committed one in keys that decide a snapshot (contract §6)."""
    from ragit.snapshot.config_at import drift_message

    out: list[str] = []
    coverage = data["snapshot"].get("coverage") or {}
    if coverage.get("warning"):
        out.append(str(coverage["warning"]))
    differs = data["config"].get("worktreeDiffers") or []
    if differs:
        out.append(drift_message(list(differs)))
    return out
