"""`ragit log`, `ragit drift`, `ragit narrative` and their text renderers."""

from __future__ import annotations

from typing import Any

from ragit.cli.invocation import Invocation, Outcome


def _max_count(inv: Invocation, default: int, maximum: int) -> int:
    from ragit.contract.inputs import positive_int_option

    raw = inv.params.get("max_count")
    return positive_int_option(raw, "maxCount", maximum) if raw is not None else default


def _rev_range(inv: Invocation) -> str | None:
    value = inv.params.get("revrange", inv.params.get("revRange"))
    return value if isinstance(value, str) else None


def run_log(inv: Invocation) -> Outcome:
    """Handler for `ragit log`."""
    from ragit.ops.history import DEFAULT_MAX_COUNT, MAX_COUNT, LogRequest, run_log

    p = inv.params
    req = LogRequest(
        rev_range=_rev_range(inv),
        max_count=_max_count(inv, DEFAULT_MAX_COUNT, MAX_COUNT),
        doc_type=p.get("type"),
        path=p.get("path"),
        show_missing=bool(p.get("show_missing")),
        view=inv.view,
    )
    data = run_log(inv.workspace(), req)
    return Outcome(data=data, text=lambda: render_log(data), warnings=list(data["warnings"]))


def _types(types: dict[str, int]) -> str:
    return " ".join(f"{name}={count}" for name, count in types.items()) or "-"


def render_log(data: dict[str, Any]) -> str:
    """Text of `ragit log`: one line per commit (minimal) or one block per commit."""
    view = data["view"]
    entries = data["entries"]
    lines: list[str] = []
    if not entries:
        lines.append(f"no snapshots in {data['revRange']}")
    for entry in entries:
        sha7 = entry["commitSha"][:7]
        snap = entry["snapshot"]
        if view == "minimal":
            if snap["status"] != "indexed":
                lines.append(f"{sha7} {snap['status']} | {entry['subject']}")
                continue
            d = snap["delta"]
            lines.append(
                f"{sha7} indexed docs={snap['docs']} chunks={snap['chunks']} "
                f"+{d['added']} ~{d['modified']} -{d['deleted']} | {_types(snap['types'])} | "
                f"{entry['subject']}"
            )
            continue
        if lines:
            lines.append("")
        lines.append(f"commit {entry['commitSha']}")
        lines.append(f"Subject: {entry['subject']}")
        lines.append(f"Author: {entry['authorName']}")
        lines.append(f"AuthoredAt: {entry['authoredAt']}")
        if snap["status"] != "indexed":
            lines.append(f"Snapshot: {snap['status']}")
            continue
        lines.append(f"Snapshot: indexed ({snap['createdAt']})")
        prev = snap["previousSnapshotSha"]
        lines.append(f"Based on: {prev[:7] if prev else '(none: first snapshot)'}")
        d = snap["delta"]
        lines.append(f"Knowledge: docs={snap['docs']} chunks={snap['chunks']}")
        lines.append(
            f"Delta: +{d['added']} added ~{d['modified']} modified -{d['deleted']} deleted"
        )
        semantic = entry["semantic"]
        lines.append(f"Semantic delta: {semantic['headline'] or 'none'}")
        for kind, label in (("beliefs", "belief"), ("openLoops", "open loop")):
            for item in semantic.get(kind, []):
                lines.append(f"  {label}: {item['title']} [{item['artifactId']}]")
        if snap.get("changed"):
            lines.append("Changed:")
            for row in snap["changed"]:
                extra = ""
                if view == "full":
                    extra = f" chunks={row['chunks']} ({row['chunkDelta']:+d})"
                    if row["memoryPath"]:
                        extra += " memory"
                lines.append(f"  {row['status']} {row['path']} [{row['docType']}]{extra}")
        lines.append(f"Types: {_types(snap['types'])}")
    for warning in data["warnings"]:
        lines.append(f"warning: {warning}")
    return "\n".join(lines)


def item_ids(inv: Invocation) -> dict[str, str | None]:
    """``--goal`` and ``--session`` of `drift` and `repair`, checked."""
    from ragit.contract.errors import InputInvalid
    from ragit.contract.inputs import has_control_chars

    ids: dict[str, str | None] = {}
    for name in ("goal", "session"):
        value = inv.params.get(name)
        if value is not None and (
            not value.strip() or has_control_chars(value) or len(value) > 256
        ):
            raise InputInvalid(name, "must be a non-empty id")
        ids[name] = value
    return ids


def max_count_option(inv: Invocation, default: int, maximum: int) -> int:
    """``-n/--max-count``, checked (``default`` when absent)."""
    return _max_count(inv, default, maximum)


def run_drift(inv: Invocation) -> Outcome:
    """Handler for `ragit drift`."""
    from ragit.ops.drift import DEFAULT_MAX_COUNT, MAX_COUNT, DriftRequest, evaluate

    p = inv.params
    ids = item_ids(inv)
    req = DriftRequest(
        scope=p.get("scope") or "all",
        path=p.get("path"),
        goal_id=ids["goal"],
        session_id=ids["session"],
        max_count=_max_count(inv, DEFAULT_MAX_COUNT, MAX_COUNT),
        view=inv.view,
    )
    data = evaluate(inv.workspace(), req)
    return Outcome(data=data, text=lambda: render_drift(data), warnings=list(data["warnings"]))


def render_drift(data: dict[str, Any]) -> str:
    """Text of `ragit drift`: the overall status, then one line (or block) per item."""
    counts = data["counts"]
    base = data["baseline"]
    snap = base["snapshotSha"]
    lines = [
        f"drift: {data['overallStatus']} (fresh={counts['fresh']} suspect={counts['suspect']} "
        f"stale={counts['stale']})",
        f"baseline: head {str(base['headSha'])[:7]} snapshot {snap[:7] if snap else '-'}",
    ]
    for item in data["items"]:
        reasons = ",".join(item["reasonCodes"]) or "-"
        lines.append(f"{item['status']:<7} {item['itemType']:<14} {item['title']} [{reasons}]")
        if data["view"] == "minimal":
            continue
        for action in item.get("recommendedActions", []):
            lines.append(f"        -> {action}")
        if data["view"] == "full":
            lines.append(f"        id: {item['id']}")
            if item.get("affectedPaths"):
                lines.append(f"        paths: {', '.join(item['affectedPaths'])}")
    for warning in data["warnings"]:
        lines.append(f"warning: {warning}")
    return "\n".join(lines)


def run_narrative(inv: Invocation) -> Outcome:
    """Handler for `ragit narrative`."""
    from ragit.contract.inputs import positive_int_option
    from ragit.ops.narrative import (
        DEFAULT_MAX_COMMITS,
        MAX_COMMITS,
        NarrativeRequest,
        run_narrative,
    )

    p = inv.params
    raw = p.get("max_commits")
    max_commits = (
        positive_int_option(raw, "maxCommits", MAX_COMMITS)
        if raw is not None
        else DEFAULT_MAX_COMMITS
    )
    ws = inv.workspace()
    req = NarrativeRequest(
        rev_range=_rev_range(inv),
        max_commits=max_commits,
        output=p.get("output"),
        emit_model=p.get("emit_model"),
        dry_run=inv.dry_run,
    )
    data = run_narrative(ws, req)
    if p.get("open"):
        if inv.dry_run:
            data["warnings"].append("--open is ignored in a dry-run")
        else:
            data["warnings"].extend(_open_report(ws.root / str(data["reportPath"])))
    return Outcome(data=data, text=lambda: render_narrative(data), warnings=list(data["warnings"]))


def _open_report(path: Any) -> list[str]:
    import webbrowser

    try:
        opened = webbrowser.open(path.resolve().as_uri())
    except (OSError, RuntimeError) as exc:  # opening is best-effort
        return [f"could not open the report ({type(exc).__name__})"]
    return [] if opened else ["no browser could open the report"]


def render_narrative(data: dict[str, Any]) -> str:
    """Text of `ragit narrative`: where the report is (or would be) and what it says."""
    s = data["summary"]
    verb = "would write" if data["dryRun"] else "wrote"
    lines = [f"{verb} {data['reportPath']} ({data['bytes']} bytes)"]
    if data["modelPath"]:
        lines.append(f"{verb} model {data['modelPath']} (schemaVersion {data['schemaVersion']})")
    lines.append(
        f"window {data['window']['revRange']}: {s['snapshots']} snapshot(s), "
        f"{s['missingCommits']} commit(s) without one"
    )
    lines.append(
        f"trust: {s['overallStatus']} (fresh={s['fresh']} suspect={s['suspect']} "
        f"stale={s['stale']}); events={s['events']} open loops={s['openLoops']}"
    )
    for warning in data["warnings"]:
        lines.append(f"warning: {warning}")
    return "\n".join(lines)
