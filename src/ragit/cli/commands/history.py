"""`ragit log`, `ragit drift`, `ragit narrative` and their text renderers."""

from __future__ import annotations

from typing import Any

from ragit.cli.invocation import Invocation, Outcome
from ragit.cli.render import paint


def _max_count(inv: Invocation, default: int, maximum: int) -> int:
    from ragit.contract.inputs import positive_int_option

    raw = inv.params.get("max_count")
    return positive_int_option(raw, "maxCount", maximum) if raw is not None else default


def _rev_range(inv: Invocation) -> str | None:
    value = inv.params.get("revrange", inv.params.get("revRange"))
    return value if isinstance(value, str) else None


def _log_view(inv: Invocation) -> str:
    """``--oneline`` is ``--view minimal``; ``--stat`` needs the full view's chunk counts."""
    from ragit.contract.errors import InputInvalid

    p = inv.params
    explicit = p.get("view")
    if p.get("oneline"):
        if explicit not in (None, "minimal"):
            raise InputInvalid("view", "--oneline is --view minimal; give one of them")
        return "minimal"
    if p.get("stat") and inv.view != "minimal":
        return "full"
    return inv.view


def _names(inv: Invocation) -> str | None:
    """Which list of changed documents the text adds: name-only, name-status or stat."""
    from ragit.contract.errors import InputInvalid

    chosen = [n for n in ("name_only", "name_status", "stat") if inv.params.get(n)]
    if len(chosen) > 1:
        flags = " and ".join("--" + n.replace("_", "-") for n in chosen)
        raise InputInvalid(chosen[1], f"{flags} cannot be combined")
    return chosen[0].replace("_", "-") if chosen else None


def run_log(inv: Invocation) -> Outcome:
    """Handler for `ragit log`."""
    from ragit.ops.history.log import DEFAULT_MAX_COUNT, MAX_COUNT, LogRequest, run_log

    p = inv.params
    view = _log_view(inv)
    names = _names(inv)
    req = LogRequest(
        rev_range=_rev_range(inv),
        max_count=_max_count(inv, DEFAULT_MAX_COUNT, MAX_COUNT),
        doc_type=p.get("type"),
        path=p.get("path"),
        show_missing=bool(p.get("show_missing")),
        view=view,
    )
    data = run_log(inv.workspace(), req)
    return Outcome(
        data=data,
        text=lambda: render_log(data, names=names),
        warnings=list(data["warnings"]),
        paged=not p.get("no_pager"),
    )


def _typed(types: dict[str, int]) -> str:
    """``adr 3, prd 1``: the typed documents (untyped ones are the rest, not a type)."""
    return ", ".join(f"{name} {count}" for name, count in types.items() if name != "unknown")


def _delta(d: dict[str, int]) -> str:
    """``+3 ~1 -2`` with the zero parts left out."""
    signs = (("added", "+"), ("modified", "~"), ("deleted", "-"))
    return " ".join(f"{sign}{d[key]}" for key, sign in signs if d[key])


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _oneline(entry: dict[str, Any]) -> str:
    sha7 = paint(entry["commitSha"][:7], "yellow")
    snap = entry["snapshot"]
    if snap["status"] != "indexed":
        note = "no snapshot" if snap["status"] == "missing" else f"snapshot {snap['status']}"
        return f"{sha7} {entry['subject']}  [{note}]"
    counts = f"{snap['docs']} docs, {snap['chunks']} chunks"
    delta = _delta(snap["delta"])
    return f"{sha7} {entry['subject']}  [{counts}" + (f"; {delta}]" if delta else "]")


def _summary_line(snap: dict[str, Any]) -> str:
    head = f"{_plural(snap['docs'], 'document')}, {_plural(snap['chunks'], 'chunk')}"
    prev = snap["previousSnapshotSha"]
    if prev is None:
        return f"{head} · first snapshot"
    d = snap["delta"]
    changes = [
        f"{d[key]} {word}"
        for key, word in (("added", "added"), ("modified", "modified"), ("deleted", "deleted"))
        if d[key]
    ]
    what = ", ".join(changes) if changes else "no document changed"
    return f"{head} · {what} since {prev[:7]}"


def _changed_lines(snap: dict[str, Any], names: str | None) -> list[str]:
    rows = snap.get("changed") or []
    if names is None or not rows:
        return []
    if names == "name-only":
        return [row["path"] for row in rows]
    if names == "name-status":
        return [f"{row['status']}  {row['path']}" for row in rows]
    width = min(max(len(row["path"]) for row in rows), 60)
    lines = []
    for row in rows:
        chunks = row.get("chunks")
        count = "" if chunks is None else f"{_plural(chunks, 'chunk')} ({row['chunkDelta']:+d})"
        lines.append(f" {row['status']} {row['path']:<{width}} | {count}")
    d = snap["delta"]
    lines.append(
        f" {_plural(len(rows), 'document')} changed: {d['added']} added, "
        f"{d['modified']} modified, {d['deleted']} deleted"
    )
    return lines


def _block(entry: dict[str, Any], view: str, names: str | None) -> list[str]:
    from ragit.text.dates import human_time

    snap = entry["snapshot"]
    lines = [
        paint(f"commit {entry['commitSha']}", "yellow"),
        f"Author: {entry['authorName']}",
        f"Date:   {human_time(entry['authoredAt'])}",
        "",
        f"    {entry['subject']}",
        "",
    ]
    if snap["status"] != "indexed":
        lines.append(
            "    no snapshot" if snap["status"] == "missing" else f"    snapshot {snap['status']}"
        )
        return lines
    lines.append(f"    {_summary_line(snap)}")
    typed = _typed(snap["types"])
    if typed:
        lines.append(f"    types: {typed}")
    if view == "full":
        lines.append(f"    indexed {human_time(snap['createdAt'])}")
    semantic = entry["semantic"]
    if semantic.get("available"):
        lines.append(f"    memory: {semantic['headline']}")
        for kind, label in (("beliefs", "belief"), ("openLoops", "open loop")):
            for item in semantic.get(kind, []):
                lines.append(f"      {label}: {item['title']} [{item['artifactId']}]")
    listed = _changed_lines(snap, names or ("stat" if view == "full" else None))
    if listed:
        lines += ["", *listed]
    return lines


def render_log(data: dict[str, Any], names: str | None = None) -> str:
    """Text of `ragit log`, as `git log`: a block per commit with its counts (the changed
    documents only with ``names``: name-only, name-status or stat), or one line per
    commit (minimal view, ``--oneline``)."""
    view = data["view"]
    entries = data["entries"]
    lines: list[str] = []
    if not entries:
        lines.append(f"no snapshots in {data['revRange']}")
    for entry in entries:
        if view == "minimal":
            lines.append(_oneline(entry))
            for row in _changed_lines(entry["snapshot"], names):
                lines.append(f"  {row}")
            continue
        if lines:
            lines.append("")
        lines += _block(entry, view, names)
    for warning in data["warnings"]:
        lines.append(f"{paint('warning:', 'yellow')} {warning}")
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
    from ragit.ops.history.drift import DEFAULT_MAX_COUNT, MAX_COUNT, DriftRequest, evaluate

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


_STATUS_COLOUR = {"stale": "red", "suspect": "yellow", "fresh": "green"}
_ITEM_LABEL = {
    "baseline": "snapshot",
    "document": "document",
    "memoryArtifact": "memory",
    "harnessSuite": "suite",
}


def _drift_where(base: dict[str, Any]) -> str:
    head = str(base["headSha"] or "")[:7] or "(no commit)"
    snap = base["snapshotSha"]
    if snap is None:
        return f"HEAD {head}, no snapshot"
    if snap == base["headSha"]:
        return f"HEAD {head}, its own snapshot"
    return f"HEAD {head}, snapshot {snap[:7]}"


def render_drift(data: dict[str, Any]) -> str:
    """Text of `ragit drift`, as `git status`: only what is suspect or stale, then the
    commands that fix it; one all-clear line when nothing is (``--format json`` lists
    every item, fresh ones included)."""
    from ragit.ops.history.drift import REASON_WORDS

    counts = data["counts"]
    where = _drift_where(data["baseline"])
    flagged = [i for i in data["items"] if i["status"] != "fresh"]
    total_flagged = counts["stale"] + counts["suspect"]
    lines: list[str] = []
    if total_flagged == 0:
        items = counts["fresh"]
        lines.append(
            f"{paint('fresh', 'green')}: nothing suspect or stale "
            f"({_count(items, 'item')} checked; {where})"
        )
    else:
        parts = [f"{counts[s]} {s}" for s in ("stale", "suspect", "fresh") if counts[s]]
        overall = data["overallStatus"]
        lines.append(f"{paint(overall, _STATUS_COLOUR[overall])}: {', '.join(parts)} ({where})")
        lines.append("")
        width = max(
            (len(_ITEM_LABEL.get(i["itemType"], i["itemType"])) for i in flagged), default=0
        )
        actions: list[str] = []
        for item in flagged:
            status = paint(f"{item['status']:<7}", _STATUS_COLOUR[item["status"]])
            label = _ITEM_LABEL.get(item["itemType"], item["itemType"])
            reasons = ", ".join(REASON_WORDS.get(code, code) for code in item["reasonCodes"])
            title = "" if item["itemType"] == "baseline" else f"{item['title']}  "
            lines.append(f"  {status} {label:<{width}}  {title}({reasons})")
            if data["view"] == "full":
                lines.append(f"          reasons: {', '.join(item['reasonCodes'])}")
                lines.append(f"          id: {item['id']}")
                if item.get("affectedPaths"):
                    lines.append(f"          paths: {', '.join(item['affectedPaths'])}")
                for action in item.get("recommendedActions", []):
                    lines.append(f"          -> {action}")
            for action in item.get("recommendedActions", []):
                if action not in actions:
                    actions.append(action)
        more = total_flagged - len(flagged)
        if more > 0:
            lines.append(f"  … {more} more (ragit drift -n {total_flagged} lists them)")
        if actions and data["view"] != "minimal":
            lines.append("")
            lines += [f"{paint('next:', 'bold')} {action}" for action in actions]
    for warning in data["warnings"]:
        lines.append(f"{paint('warning:', 'yellow')} {warning}")
    return "\n".join(lines)


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def run_narrative(inv: Invocation) -> Outcome:
    """Handler for `ragit narrative`."""
    from ragit.contract.inputs import positive_int_option
    from ragit.ops.history.narrative import (
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
