"""`ragit timeline` — the operational event ledger, newest first."""

from __future__ import annotations

import re
from typing import Any

from ragit.cli.invocation import Invocation, Outcome


def run(inv: Invocation) -> Outcome:
    """Handler for `ragit timeline`."""
    from ragit.artifacts.events import (
        DEFAULT_MAX_COUNT,
        KINDS,
        MAX_COUNT,
        TimelineFilters,
        timeline,
    )
    from ragit.artifacts.ids import parse_instant
    from ragit.contract.errors import InputInvalid
    from ragit.contract.inputs import has_control_chars, positive_int_option

    p = inv.params
    text_filters: dict[str, str | None] = {}
    for name in ("goal", "episode", "session"):
        value = p.get(name)
        if value is not None and (
            not value.strip() or has_control_chars(value) or len(value) > 256
        ):
            raise InputInvalid(name, "must be a non-empty id")
        text_filters[name] = value
    kind = p.get("kind")
    if kind is not None and kind not in KINDS:
        raise InputInvalid("kind", f"must be one of {', '.join(KINDS)}")
    p = {**p, "since": _day(p.get("since"), "T00:00:00Z")}
    p["until"] = _day(p.get("until"), "T23:59:59.999999Z")
    for name in ("since", "until"):
        if p.get(name) is not None:
            parse_instant(p[name], name)
    raw_max = p.get("max_count")
    max_count = (
        positive_int_option(raw_max, "maxCount", MAX_COUNT)
        if raw_max is not None
        else DEFAULT_MAX_COUNT
    )
    filters = TimelineFilters(
        goal_id=text_filters["goal"],
        episode_id=text_filters["episode"],
        session_id=text_filters["session"],
        kind=kind,
        since=p.get("since"),
        until=p.get("until"),
        max_count=max_count,
    )
    ws = inv.workspace()
    data = timeline(ws, filters, inv.view)
    return Outcome(data=data, text=lambda: render_timeline(data), warnings=list(data["warnings"]))


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _day(raw: str | None, time: str) -> str | None:
    """A bare date (``2026-12-01``) as the instant that starts (or ends) that UTC day."""
    if raw is not None and _DATE.fullmatch(raw.strip()):
        return raw.strip() + time
    return raw


def render_timeline(data: dict[str, Any]) -> str:
    """Text of `ragit timeline`: grouped by day, detail by view."""
    view = data["view"]
    summary = data["summary"]
    lines = [
        f"events: {summary['eventCount']} (showing {len(data['events'])})",
    ]
    if not data["events"]:
        lines.append("no events")
    day = None
    for event in data["events"]:
        recorded = str(event.get("recordedAt", ""))
        if recorded[:10] != day:
            day = recorded[:10]
            lines.append("")
            lines.append(f"== {day} ==")
        clock = recorded[11:19]
        lines.append(f"{clock} {event.get('eventType')} | {event.get('summary', '')}")
        if view == "minimal":
            continue
        for key, label in (
            ("goalId", "goal"),
            ("episodeId", "episode"),
            ("sessionId", "session"),
        ):
            if event.get(key):
                lines.append(f"  {label}: {event[key]}")
        for key, label in (
            ("artifactIds", "artifacts"),
            ("relatedPaths", "paths"),
            ("openLoops", "open loops"),
            ("nextActions", "next actions"),
        ):
            values = event.get(key) or []
            if values:
                lines.append(f"  {label}: {', '.join(str(v) for v in values)}")
        if view == "full":
            lines.append(f"  head: {event.get('sourceHeadSha') or '-'}")
            prov = event.get("provenance") or {}
            lines.append(
                f"  provenance: actor={prov.get('actor')} operation={prov.get('operation')} "
                f"contentHash={prov.get('contentHash')}"
            )
            for key in ("inputRefs", "outputRefs", "evidenceRefs"):
                if prov.get(key):
                    lines.append(f"  {key}: {', '.join(str(v) for v in prov[key])}")
            lines.append(f"  id: {event.get('eventId')}")
    for warning in data["warnings"]:
        lines.append(f"warning: {warning}")
    return "\n".join(lines)
