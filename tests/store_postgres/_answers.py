"""What a shared-store answer must keep across faults and roles: the hits of a few questions
(ids, scores, texts, citations, with ``--explain``) and a context pack's selection at a
commit, read through the CLI; and the CLI call the shared-store tests make (:func:`cli`,
:func:`ok`)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[1] / "mcp"))

from _mcp_helpers import RAGIT, run

QUESTIONS = ["double entry", "idempotency keys"]
GOAL = "implement posting validation"
KEEP = ("snapshotSha", "hits", "evidence", "usedTokens", "selectedHits", "selection")

Ok = Callable[..., dict[str, Any]]


def answers(
    ok: Ok,
    root: Path,
    env: dict[str, str],
    sha: str,
    questions: list[str] = QUESTIONS,
    goal: str = GOAL,
) -> dict[str, Any]:
    """``ok(root, env, *argv)`` runs one command and returns its data."""
    out: dict[str, Any] = {}
    for question in questions:
        data = ok(root, env, "query", question, "--at", sha, "--top-k", "5", "--explain")
        out[question] = {k: data[k] for k in KEEP if k in data}
    data = ok(root, env, "context", "pack", goal, "--at", sha)
    out[goal] = {k: data[k] for k in KEEP if k in data}
    return out


def cli(
    root: Path, env: dict[str, str], *args: str, secret: str | None = None
) -> tuple[int, dict[str, Any], str]:
    """``ragit <args> --format json`` in ``root``: exit code, envelope and all output (which
    never shows ``secret`` nor a traceback)."""
    proc = run([RAGIT, *args, "--format", "json"], cwd=root, env=env, check=False)
    envelope: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    output = proc.stdout + proc.stderr
    if secret is not None:
        assert secret not in output
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, envelope, output


def ok(root: Path, env: dict[str, str], *args: str, secret: str | None = None) -> dict[str, Any]:
    """:func:`cli` that must succeed; its data."""
    code, envelope, out = cli(root, env, *args, secret=secret)
    assert code == 0 and envelope["ok"] is True, out
    data: dict[str, Any] = envelope["data"]
    return data
