"""The operational event ledger and the data of `ragit timeline` (docs/reference/memory.md).

``.ragit/log/events/<YYYY-MM-DD>.jsonl`` (the UTC day of ``recordedAt``) holds one
JSON event per line, appended under the memory lock with a single ``write``.
Events are never rewritten. An event id is ``evt_`` + 16 hex of a SHA-256 over
the event type, the session (or goal) it belongs to and the hash of the
operation's content, so replaying the same operation produces the same id and
is not appended twice. Dry-runs append nothing. A line that cannot be parsed (a
crash mid-append) is skipped by readers and counted in ``skippedLines``.

Event record (``version: 1``)::

    {eventId, eventType, recordedAt, goalId, episodeId, sessionId, sourceHeadSha,
     summary, artifactIds[], relatedPaths[], openLoops[], nextActions[], metadata,
     provenance {actor, producer, producerVersion, operation, inputRefs[],
                 outputRefs[], evidenceRefs[], contentHash}}

Event types: ``session.materialize``, ``artifact.review``, ``memory.wrap``,
``memory.promote``, ``harness.capture``, ``harness.run``, ``harness.promote``,
``security.admission``, ``ingest.completed``; ``--kind`` filters by the part
before the dot. The text form of the timeline is rendered by the CLI
(:mod:`ragit.cli.commands.timeline`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragit import __version__, _json
from ragit.artifacts.ids import event_id, format_instant, instant_seconds, now_utc, parse_instant
from ragit.artifacts.lock import memory_lock
from ragit.artifacts.storage import append_line
from ragit.contract.errors import InputInvalid
from ragit.security.masking import mask_json
from ragit.workspace import Workspace

EVENT_TYPES: tuple[str, ...] = (
    "session.materialize",
    "artifact.review",
    "memory.wrap",
    "memory.promote",
    "harness.capture",
    "harness.run",
    "harness.promote",
    "security.admission",
    "ingest.completed",
)
KINDS: tuple[str, ...] = ("session", "artifact", "memory", "harness", "ingest", "security")
DEFAULT_MAX_COUNT = 50
MAX_COUNT = 10_000


def events_dir(ws: Workspace) -> Path:
    return ws.ragit_dir / "log" / "events"


def make_event(
    event_type: str,
    *,
    summary: str,
    content_digest: str,
    operation: str,
    goal_id: str | None = None,
    episode_id: str | None = None,
    session_id: str | None = None,
    source_head_sha: str | None = None,
    artifact_ids: Sequence[str] = (),
    related_paths: Sequence[str] = (),
    open_loops: Sequence[str] = (),
    next_actions: Sequence[str] = (),
    metadata: dict[str, Any] | None = None,
    actor: str = "assistant",
    input_refs: Sequence[str] = (),
    output_refs: Sequence[str] = (),
    evidence_refs: Sequence[str] = (),
    recorded_at: str | None = None,
) -> dict[str, Any]:
    """Build one event record (masked; its id is deterministic, see the module docstring).

    Raises:
        ValueError: an unknown ``event_type`` (a programming error).
    """
    if event_type not in EVENT_TYPES:
        raise ValueError(f"unknown event type {event_type!r}")
    scope_key = session_id or goal_id or ""
    event: dict[str, Any] = {
        "version": 1,
        "eventId": event_id(event_type, scope_key, content_digest),
        "eventType": event_type,
        "recordedAt": recorded_at or format_instant(now_utc()),
        "goalId": goal_id,
        "episodeId": episode_id,
        "sessionId": session_id,
        "sourceHeadSha": source_head_sha,
        "summary": summary,
        "artifactIds": list(artifact_ids),
        "relatedPaths": list(related_paths),
        "openLoops": list(open_loops),
        "nextActions": list(next_actions),
        "metadata": metadata or {},
        "provenance": {
            "actor": actor,
            "producer": "ragit",
            "producerVersion": __version__,
            "operation": operation,
            "inputRefs": list(input_refs),
            "outputRefs": list(output_refs),
            "evidenceRefs": list(evidence_refs),
            "contentHash": content_digest,
        },
    }
    masked, _count, _sources = mask_json(event)
    assert isinstance(masked, dict)
    return masked


def _known_ids(directory: Path, wanted: set[str]) -> set[str]:
    found: set[str] = set()
    try:
        files = sorted(directory.glob("*.jsonl"))
    except OSError:
        return found
    needles = {w: f'"eventId":"{w}"'.encode() for w in wanted}
    for path in files:
        try:
            raw = path.read_bytes()
        except OSError:
            continue
        for wanted_id, needle in needles.items():
            if wanted_id not in found and needle in raw:
                found.add(wanted_id)
        if found == wanted:
            break
    return found


def append_events(ws: Workspace, events: Iterable[dict[str, Any]]) -> list[str]:
    """Append events whose id is not in the ledger yet; returns the appended ids.

    Takes the memory lock (re-entrant, so callers that hold it may call this).

    Raises:
        StoreWriteBusy: the memory lock stayed busy.
    """
    pending = [e for e in events]
    if not pending:
        return []
    directory = events_dir(ws)
    appended: list[str] = []
    with memory_lock(ws):
        existing = _known_ids(directory, {e["eventId"] for e in pending})
        for event in pending:
            if event["eventId"] in existing:
                continue
            existing.add(event["eventId"])
            day = str(event["recordedAt"])[:10]
            line = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
            append_line(directory / f"{day}.jsonl", line)
            appended.append(event["eventId"])
    return appended


def read_events(ws: Workspace) -> tuple[list[dict[str, Any]], int]:
    """Every parseable event of the ledger (file order) and the number of skipped lines."""
    events: list[dict[str, Any]] = []
    skipped = 0
    for value in _json.jsonl_objects(events_dir(ws)):
        if (
            value is not None
            and isinstance(value.get("eventId"), str)
            and isinstance(value.get("eventType"), str)
            and isinstance(value.get("recordedAt"), str)
        ):
            events.append(value)
        else:
            skipped += 1
    return events, skipped


# ---------------------------------------------------------------- timeline


@dataclass(frozen=True)
class TimelineFilters:
    goal_id: str | None = None
    episode_id: str | None = None
    session_id: str | None = None
    kind: str | None = None
    since: str | None = None
    until: str | None = None
    max_count: int = DEFAULT_MAX_COUNT

    def dump(self) -> dict[str, Any]:
        return {
            "goalId": self.goal_id,
            "episodeId": self.episode_id,
            "sessionId": self.session_id,
            "kind": self.kind,
            "since": self.since,
            "until": self.until,
            "maxCount": self.max_count,
        }


def _matches(
    event: dict[str, Any], f: TimelineFilters, since: float | None, until: float | None
) -> bool:
    if f.goal_id is not None and event.get("goalId") != f.goal_id:
        return False
    if f.episode_id is not None and event.get("episodeId") != f.episode_id:
        return False
    if f.session_id is not None and event.get("sessionId") != f.session_id:
        return False
    if f.kind is not None and str(event.get("eventType", "")).split(".", 1)[0] != f.kind:
        return False
    if since is not None or until is not None:
        try:
            moment = parse_instant(str(event.get("recordedAt")), "recordedAt").timestamp()
        except InputInvalid:
            return False
        if since is not None and moment < since:
            return False
        if until is not None and moment > until:
            return False
    return True


def timeline(ws: Workspace, filters: TimelineFilters, view: str) -> dict[str, Any]:
    """The data of `ragit timeline`: filtered events, newest first, re-masked.

    ``summary`` describes every matching event; ``events`` holds at most
    ``maxCount`` of them.
    """
    from ragit.security.masking import RedactionSummary

    since = parse_instant(filters.since, "since").timestamp() if filters.since else None
    until = parse_instant(filters.until, "until").timestamp() if filters.until else None
    events, skipped = read_events(ws)
    chosen = [e for e in events if _matches(e, filters, since, until)]
    chosen.sort(
        key=lambda e: (instant_seconds(str(e.get("recordedAt"))) or 0.0, str(e.get("eventId"))),
        reverse=True,
    )
    by_type: dict[str, int] = {}
    for event in chosen:
        by_type[event["eventType"]] = by_type.get(event["eventType"], 0) + 1
    newest = chosen[0] if chosen else {}
    limited = chosen[: filters.max_count]
    masked, count, sources = mask_json(limited, "events")
    redaction = RedactionSummary().merge_sources(sources, count)
    warnings: list[str] = []
    if skipped:
        warnings.append(f"{skipped} unreadable event ledger line(s) were skipped")

    def latest(key: str) -> Any:
        for event in chosen:
            if event.get(key):
                return event.get(key)
        return None

    return {
        "filters": filters.dump(),
        "view": view,
        "summary": {
            "eventCount": len(chosen),
            "byType": dict(sorted(by_type.items())),
            "firstRecordedAt": chosen[-1]["recordedAt"] if chosen else None,
            "lastRecordedAt": newest.get("recordedAt"),
            "latestGoalId": latest("goalId"),
            "latestEpisodeId": latest("episodeId"),
            "latestSessionId": latest("sessionId"),
        },
        "events": masked,
        "skippedLines": skipped,
        "redactionSummary": redaction.dump(),
        "warnings": warnings,
    }
