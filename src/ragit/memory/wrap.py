"""`memory wrap`: record a session into working memory (docs/reference/memory.md, contract §9).

The payload is masked and admission-checked (surface ``memory.wrap``) before
anything is written. Under the memory lock the wrap then writes its session
record, the open-loop registry and the working state; a later wrap merges into
the working state instead of replacing it (see :func:`merge_working`), so two
wraps — in a row or from two processes at once — both survive.

``sessionId`` is built from the parsed ``createdAt`` instant (digits only) and
the goal's hash; when that name is taken by a different wrap (same goal, same
second) the next free ``-2``, ``-3``… suffix is used. Replaying an identical
wrap is recognized by its content hash and changes nothing.
"""

from __future__ import annotations

from typing import Any

from ragit.artifacts.common import canonical_hash, require_masking, source_head
from ragit.artifacts.events import append_events, make_event
from ragit.artifacts.ids import decision_id, goal_id, loop_id, normalize_instant, session_id
from ragit.artifacts.lock import memory_lock
from ragit.artifacts.records import read_record
from ragit.artifacts.sanitize import Sanitizer, admission_event, remask
from ragit.artifacts.storage import (
    create_exclusive,
    dumps_record,
    require_initialized,
    write_record,
)
from ragit.config import RagitConfig
from ragit.memory.models import WrapInput
from ragit.memory.working import (
    current_path,
    load_working,
    merge_working,
    open_loops_path,
    session_path,
)
from ragit.workspace import Workspace

TITLE_FROM_TEXT = 120
MAX_SUFFIX = 999


def _title_of(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else text
    return line if len(line) <= TITLE_FROM_TEXT else line[: TITLE_FROM_TEXT - 3].rstrip() + "..."


def _decision(item: Any, sid: str) -> dict[str, Any]:
    if isinstance(item, str):
        title, summary = _title_of(item), item
        item = {"title": title, "summary": summary}
    title = item["title"]
    summary = item["summary"]
    return {
        "id": item.get("id") or decision_id(title, summary),
        "title": title,
        "summary": summary,
        "rationale": item.get("rationale"),
        "alternatives": list(item.get("alternatives") or []),
        "consequences": list(item.get("consequences") or []),
        "relatedFiles": list(item.get("relatedFiles") or []),
        "sourceSessionId": sid,
    }


def _loop(item: dict[str, Any], sid: str) -> dict[str, Any]:
    return {
        "id": item.get("id") or loop_id(item["title"]),
        "title": item["title"],
        "status": item.get("status") or "open",
        "nextAction": item["nextAction"],
        "blockingConditions": list(item.get("blockingConditions") or []),
        "relatedFiles": list(item.get("relatedFiles") or []),
        "sourceSessionId": item.get("sourceSessionId") or sid,
    }


def _session_record(
    masked: dict[str, Any], sid: str, head: str | None, created_at: str
) -> dict[str, Any]:
    decisions: dict[str, dict[str, Any]] = {}
    for item in masked.get("decisions") or []:
        decision = _decision(item, sid)
        decisions[decision["id"]] = decision
    loops: dict[str, dict[str, Any]] = {}
    for item in masked.get("openLoops") or []:
        loop = _loop(item, sid)
        loops[loop["id"]] = loop
    return {
        "version": 1,
        "sessionId": sid,
        "goalId": goal_id(masked["goal"]),
        "goal": masked["goal"],
        "summary": masked["summary"],
        "constraints": list(masked.get("constraints") or []),
        "decisions": list(decisions.values()),
        "openLoops": list(loops.values()),
        "nextActions": list(masked.get("nextActions") or []),
        "promotionCandidates": list(masked.get("promotionCandidates") or []),
        "sourceHeadSha": head,
        "createdAt": created_at,
    }


def _content_hash(record: dict[str, Any]) -> str:
    body = {k: v for k, v in record.items() if k not in ("sessionId", "contentHash")}
    for key in ("decisions", "openLoops"):
        body[key] = [{k: v for k, v in d.items() if k != "sourceSessionId"} for d in body[key]]
    return canonical_hash(body)


def _pick_session_id(ws: Workspace, base: str, digest: str) -> tuple[str, bool]:
    """A free session id (or the one an identical earlier wrap used) and whether it is a replay."""
    for n in range(1, MAX_SUFFIX + 1):
        sid = base if n == 1 else f"{base}-{n}"
        existing = read_record(session_path(ws, sid))
        if existing is None and not session_path(ws, sid).exists():
            return sid, False
        if isinstance(existing, dict) and existing.get("contentHash") == digest:
            return sid, True
    raise RuntimeError("no free session id")


def wrap(ws: Workspace, cfg: RagitConfig, payload: WrapInput, *, dry_run: bool) -> dict[str, Any]:
    """Record one wrap; the data of `memory wrap`.

    Raises:
        NotInitialized: no ``ragit init`` yet.
        ConfigInvalid: secret masking is switched off (apply only).
        SnapshotRefInvalid, SnapshotRefAmbiguous: a ``sourceHeadSha`` naming no single commit.
        StoreWriteBusy: the memory lock stayed busy.
    """
    require_initialized(ws)
    require_masking(cfg, ws, dry_run=dry_run)
    warnings: list[str] = []
    head = source_head(ws, payload.source_head_sha, warnings)
    created_at = normalize_instant(payload.created_at, "createdAt")
    sanitizer = Sanitizer.for_config(cfg, "memory.wrap", "memory.wrap")
    raw = payload.model_dump(mode="json", by_alias=True, exclude={"source_head_sha", "created_at"})
    masked = sanitizer.json(raw)
    base = session_id(created_at, masked["goal"])
    record = _session_record(masked, base, head, created_at)
    digest = _content_hash(record)

    def plan() -> tuple[str, bool, dict[str, Any], dict[str, Any], list[str], list[str]]:
        sid, replay = _pick_session_id(ws, base, digest)
        session = _session_record(masked, sid, head, created_at)
        session["contentHash"] = digest
        state, unreadable = load_working(ws)
        if unreadable:
            warnings.append("the working state was unreadable and has been started afresh")
        if replay:
            return sid, True, session, state, [], []
        merged, new_ids, closed = merge_working(state, session)
        return sid, False, session, merged, new_ids, closed

    if dry_run:
        sid, replay, session, state, new_ids, closed = plan()
    else:
        with memory_lock(ws):
            sid, replay, session, state, new_ids, closed = plan()
            if not replay:
                if not create_exclusive(session_path(ws, sid), dumps_record(session)):
                    raise RuntimeError("session file appeared while holding the memory lock")
                write_record(
                    open_loops_path(ws),
                    {
                        "version": 1,
                        "latestSessionId": state["latestSessionId"],
                        "updatedAt": state["updatedAt"],
                        "items": state["openLoops"],
                    },
                )
                write_record(current_path(ws), state)
            events = [_wrap_event(ws, session, closed)]
            if sanitizer.flagged:
                events.append(_admission_event(sanitizer, session))
            append_events(ws, events)
            sanitizer.flush(ws, events[0]["recordedAt"])
    if replay:
        warnings.append(f"an identical wrap was already recorded as {sid}; nothing changed")
    data: dict[str, Any] = {
        "sessionId": sid,
        "sessionPath": ws.relative(session_path(ws, sid)),
        "currentPath": ws.relative(current_path(ws)),
        "openLoopsPath": ws.relative(open_loops_path(ws)),
        "sourceHeadSha": head,
        "createdAt": created_at,
        "goalId": session["goalId"],
        "dryRun": dry_run,
        "replayed": replay,
        "merged": {
            "decisions": len(state["decisions"]),
            "newDecisionIds": new_ids,
            "openLoops": len(state["openLoops"]),
            "closedLoopIds": closed,
            "constraints": len(state["constraints"]),
        },
        "admission": sanitizer.dump_admission(),
        "redactionSummary": sanitizer.redaction.dump(),
        "warnings": warnings,
    }
    out, _summary = remask(data)
    assert isinstance(out, dict)
    return out


def _wrap_event(ws: Workspace, session: dict[str, Any], closed: list[str]) -> dict[str, Any]:
    related: list[str] = []
    for item in [*session["decisions"], *session["openLoops"]]:
        for path in item.get("relatedFiles") or []:
            if path not in related:
                related.append(path)
    return make_event(
        "memory.wrap",
        summary=f"wrap: {_title_of(session['goal'])}",
        content_digest=session["contentHash"],
        operation="memory.wrap",
        goal_id=session["goalId"],
        session_id=session["sessionId"],
        source_head_sha=session["sourceHeadSha"],
        related_paths=related,
        open_loops=[loop["title"] for loop in session["openLoops"] if loop["status"] != "closed"],
        next_actions=session["nextActions"],
        metadata={
            "decisions": len(session["decisions"]),
            "closedLoopIds": closed,
            "promotionCandidates": len(session["promotionCandidates"]),
        },
        output_refs=[ws.relative(session_path(ws, session["sessionId"]))],
    )


def _admission_event(sanitizer: Sanitizer, session: dict[str, Any]) -> dict[str, Any]:
    return admission_event(
        sanitizer,
        goal=session["goalId"],
        session=session["sessionId"],
        head=session["sourceHeadSha"],
        digest=session["contentHash"],
    )
