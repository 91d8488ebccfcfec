"""`ragit timeline` — the operational event ledger, newest first."""

from __future__ import annotations

from ragit.cli.invocation import Invocation, Outcome


def run(inv: Invocation) -> Outcome:
    """Handler for `ragit timeline`."""
    from ragit.contract.errors import InputInvalid
    from ragit.contract.inputs import has_control_chars, positive_int_option
    from ragit.memory.events import (
        DEFAULT_MAX_COUNT,
        KINDS,
        MAX_COUNT,
        TimelineFilters,
        render_timeline,
        timeline,
    )
    from ragit.memory.ids import parse_instant

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
