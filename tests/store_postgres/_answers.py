"""What a shared-store answer must keep across faults and roles: the hits of a few questions
(ids, scores, texts, citations, with ``--explain``) and a context pack's selection at a
commit, read through the CLI."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

QUESTIONS = ["double entry", "idempotency keys"]
GOAL = "implement posting validation"
KEEP = ("snapshotSha", "hits", "evidence", "usedTokens", "selectedHits", "selection")

Ok = Callable[..., dict[str, Any]]


def answers(ok: Ok, root: Path, env: dict[str, str], sha: str) -> dict[str, Any]:
    """``ok(root, env, *argv)`` runs one command and returns its data."""
    out: dict[str, Any] = {}
    for question in QUESTIONS:
        data = ok(root, env, "query", question, "--at", sha, "--top-k", "5", "--explain")
        out[question] = {k: data[k] for k in KEEP if k in data}
    data = ok(root, env, "context", "pack", GOAL, "--at", sha)
    out[GOAL] = {k: data[k] for k in KEEP if k in data}
    return out
