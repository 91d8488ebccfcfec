"""The working-memory files under ``.ragit/memory`` and their shapes.

* ``sessions/<sessionId>.json`` — one wrap, whole and masked::

    {version: 1, sessionId, goalId, goal, summary, constraints[], decisions[],
     openLoops[], nextActions[], promotionCandidates[], sourceHeadSha, createdAt,
     contentHash}

* ``working/current.json`` — the merged working state::

    {version: 1, goal, goalId, summary, constraints[], decisions[], openLoops[],
     nextActions[], latestSessionId, sourceHeadSha, updatedAt, sessionCount}

* ``working/open-loops.json`` — the open-loop registry (non-closed loops only)::

    {version: 1, latestSessionId, updatedAt, items[]}

A decision is ``{id, title, summary, rationale, alternatives[], consequences[],
relatedFiles[], sourceSessionId}``; an open loop is ``{id, title, status,
nextAction, blockingConditions[], relatedFiles[], sourceSessionId}``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragit.artifacts.ids import SESSION_ID
from ragit.artifacts.records import read_record
from ragit.workspace import Workspace

MAX_DECISIONS = 500
MAX_CONSTRAINTS = 200
MAX_OPEN_LOOPS = 500


def sessions_dir(ws: Workspace) -> Path:
    return ws.memory_dir / "sessions"


def working_dir(ws: Workspace) -> Path:
    return ws.memory_dir / "working"


def current_path(ws: Workspace) -> Path:
    return working_dir(ws) / "current.json"


def open_loops_path(ws: Workspace) -> Path:
    return working_dir(ws) / "open-loops.json"


def session_path(ws: Workspace, sid: str) -> Path:
    """The file of a session id (which must be a well-formed id).

    Raises:
        ValueError: ``sid`` is not a session id (a programming error: ids are built, not given).
    """
    if SESSION_ID.fullmatch(sid) is None:
        raise ValueError("not a session id")
    return sessions_dir(ws) / f"{sid}.json"


def empty_working() -> dict[str, Any]:
    return {
        "version": 1,
        "goal": None,
        "goalId": None,
        "summary": None,
        "constraints": [],
        "decisions": [],
        "openLoops": [],
        "nextActions": [],
        "latestSessionId": None,
        "sourceHeadSha": None,
        "updatedAt": None,
        "sessionCount": 0,
    }


def _list_of_dicts(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        return []
    return [v for v in value if isinstance(v, dict) and isinstance(v.get("id"), str)]


def _list_of_str(value: Any) -> list[str]:
    if not isinstance(value, list):
        return []
    return [v for v in value if isinstance(v, str)]


def load_working(ws: Workspace) -> tuple[dict[str, Any], bool]:
    """The working state (empty when missing) and whether the file was unreadable."""
    raw = read_record(current_path(ws))
    state = empty_working()
    if raw is None:
        return state, current_path(ws).exists()
    if not isinstance(raw, dict):
        return state, True
    for key in ("goal", "goalId", "summary", "latestSessionId", "sourceHeadSha", "updatedAt"):
        value = raw.get(key)
        state[key] = value if isinstance(value, str) else None
    state["constraints"] = _list_of_str(raw.get("constraints"))
    state["nextActions"] = _list_of_str(raw.get("nextActions"))
    state["decisions"] = _list_of_dicts(raw.get("decisions"))
    state["openLoops"] = _list_of_dicts(raw.get("openLoops"))
    count = raw.get("sessionCount")
    state["sessionCount"] = count if isinstance(count, int) and not isinstance(count, bool) else 0
    return state, False


def load_session(ws: Workspace, sid: str | None) -> dict[str, Any] | None:
    """A session record by id, or None (missing, malformed id or unreadable)."""
    if not sid or SESSION_ID.fullmatch(sid) is None:
        return None
    raw = read_record(session_path(ws, sid))
    return raw if isinstance(raw, dict) and raw.get("sessionId") == sid else None


def merge_working(
    state: dict[str, Any], session: dict[str, Any]
) -> tuple[dict[str, Any], list[str], list[str]]:
    """Merge one wrap into the working state.

    Decisions accumulate by id (a repeated id replaces the earlier one in place);
    open loops are keyed by id and a ``closed`` loop leaves the working set;
    constraints are a union (first-seen order); next actions are replaced when
    the wrap gives any. Returns ``(new state, new decision ids, closed loop ids)``.
    """
    out = dict(state)
    decisions = {d["id"]: d for d in state["decisions"]}
    new_ids: list[str] = []
    for decision in session["decisions"]:
        if decision["id"] not in decisions:
            new_ids.append(decision["id"])
        decisions[decision["id"]] = decision
    kept = list(decisions.values())
    out["decisions"] = kept[-MAX_DECISIONS:]
    loops = {loop["id"]: loop for loop in state["openLoops"]}
    closed: list[str] = []
    for loop in session["openLoops"]:
        if loop["status"] == "closed":
            if loop["id"] in loops:
                closed.append(loop["id"])
            loops.pop(loop["id"], None)
        else:
            loops[loop["id"]] = loop
    out["openLoops"] = list(loops.values())[-MAX_OPEN_LOOPS:]
    constraints = list(state["constraints"])
    for item in session["constraints"]:
        if item not in constraints:
            constraints.append(item)
    out["constraints"] = constraints[-MAX_CONSTRAINTS:]
    if session["nextActions"]:
        out["nextActions"] = list(session["nextActions"])
    out["goal"] = session["goal"]
    out["goalId"] = session["goalId"]
    out["summary"] = session["summary"]
    out["latestSessionId"] = session["sessionId"]
    out["sourceHeadSha"] = session["sourceHeadSha"]
    out["updatedAt"] = session["createdAt"]
    out["sessionCount"] = int(state["sessionCount"]) + 1
    return out, new_ids, closed
