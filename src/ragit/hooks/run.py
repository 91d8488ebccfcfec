"""The background job a managed hook starts: ``python -m ragit.hooks.run <hook>``.

It ingests the repository's *current* HEAD incrementally (``auto`` mode: from
the nearest indexed ancestor, else a full snapshot). Hook jobs coalesce: at most
one runs per worktree (it holds the ``flock`` on ``.ragit/runtime/hook-ingest.run``).
A job that finds one running leaves a request (``hook-ingest.pending``, naming its
hook) and exits at once, so a burst of commits never queues a job per commit. The
running job, after each ingest, takes the requests (logging the next ingest under the
newest requesting hook's name, every hook it serves in ``requests``) and ingests again,
or again when HEAD moved: the newest HEAD
is always the one ingested. The request and the runner's exit are decided under one
short ``flock`` (``hook-ingest.guard``), so no request is left behind by a runner
that is finishing. A busy writer (a CLI ingest, the compactor) is waited for,
bounded; every outcome is one JSON line on stdout, which the hook appends to
``.ragit/runtime/hooks.log``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

BUSY_WAIT_SECONDS = 120.0
BUSY_POLL_SECONDS = 0.25
# A worktree changing under the dirty check (REPOSITORY_STATE_CHANGED) is retried this often.
STATE_RETRIES = 5

RUN_NAME = "hook-ingest.run"
PENDING_NAME = "hook-ingest.pending"
GUARD_NAME = "hook-ingest.guard"
SPAWNED_NAME = "hook-ingest.spawned"  # Workspace.hook_spawned_path


def _log(hook: str, **fields: object) -> None:
    record = {
        "recordedAt": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "hook": hook,
        **fields,
    }
    sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def _claim_or_request(runtime: Path, hook: str) -> contextlib.ExitStack | None:
    """Become this worktree's hook runner (the returned stack holds the run lock), or leave
    a request for the running one and return ``None``."""
    from ragit._lock import flocked

    stack = contextlib.ExitStack()
    with flocked(runtime / GUARD_NAME):
        try:
            owner = {
                "token": uuid.uuid4().hex,
                "pid": os.getpid(),
                "command": "hook-ingest",
                "hook": hook,
                "startedAt": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            }
            # Not 0: a reader's shared probe (ragit.snapshot.selection.ingest_running) may
            # hold the file for an instant; a running runner holds it for seconds.
            stack.enter_context(flocked(runtime / RUN_NAME, wait_s=0.2, owner=owner))
        except TimeoutError:
            with (runtime / PENDING_NAME).open("a", encoding="utf-8") as pending:
                pending.write(hook + "\n")
            return None
        # A request left by a runner that was killed is ours now: this run ingests HEAD.
        (runtime / PENDING_NAME).unlink(missing_ok=True)
        (runtime / SPAWNED_NAME).unlink(missing_ok=True)  # the run lock says it from now on
    return stack


def _next_run(
    runtime: Path, stack: contextlib.ExitStack, hook: str, moved: bool
) -> list[str] | None:
    """Under the guard: the hooks whose requests the next run serves (the pending requests,
    else ``hook`` when HEAD moved), or None after releasing the run lock."""
    from ragit._lock import flocked

    with flocked(runtime / GUARD_NAME):
        pending = runtime / PENDING_NAME
        try:
            lines = pending.read_text(encoding="utf-8").split()
        except FileNotFoundError:
            lines = None
        if lines is not None:
            pending.unlink(missing_ok=True)
            (runtime / SPAWNED_NAME).unlink(missing_ok=True)
            return list(dict.fromkeys(lines)) or [hook]
        if moved:
            return [hook]
        stack.close()
        return None


def _ingest_once(hook: str, root: Path, extra: dict[str, Any]) -> dict[str, Any] | None:
    """One ingest of the current HEAD; logs the outcome; returns the ingest data or None."""
    from ragit.config import load_config
    from ragit.contract.errors import RagitError, RepositoryStateChanged, StoreWriteBusy
    from ragit.ingest.apply import run_ingest
    from ragit.ingest.request import IngestRequest
    from ragit.workspace import Workspace

    ws = Workspace(root)
    deadline = time.monotonic() + BUSY_WAIT_SECONDS
    state_retries = 0
    while True:
        try:
            cfg = load_config(ws)
            data = run_ingest(ws, cfg, IngestRequest(committed_only=True), lambda _m: None)
        except StoreWriteBusy:
            if time.monotonic() < deadline:
                time.sleep(BUSY_POLL_SECONDS)  # background job: waiting for the writer is the point
                continue
            _log(hook, ok=False, code="STORE_WRITE_BUSY", recovery="ragit ingest", **extra)
            return None
        except RepositoryStateChanged as exc:
            state_retries += 1
            if state_retries < STATE_RETRIES:
                time.sleep(0.2 * state_retries)  # git is changing the worktree right now
                continue
            _log(hook, ok=False, code=exc.code, message=exc.message, recovery=exc.recovery, **extra)
            return None
        except RagitError as exc:
            _log(
                hook,
                ok=False,
                code=exc.code,
                message=exc.message,
                recovery=exc.recovery or "ragit ingest --all",
                **extra,
            )
            return None
        except Exception as exc:
            _log(
                hook,
                ok=False,
                code="UNEXPECTED",
                message=str(exc) or type(exc).__name__,
                recovery="ragit ingest --all",
                **extra,
            )
            return None
        _log(
            hook,
            ok=True,
            commitSha=data["commitSha"],
            baseMode=data["baseMode"],
            processed=data["processed"],
            reused=data["reused"],
            noop=data["noop"],
            **({"warnings": data["warnings"]} if data.get("warnings") else {}),
            **extra,
        )
        return data


def _head(root: Path) -> str | None:
    from ragit.contract.errors import RagitError
    from ragit.snapshot._git import GitRepo

    try:
        head = GitRepo(root).head()
    except RagitError:
        return None
    return head.sha


def main(argv: list[str]) -> int:
    """Run (or request) a hook-triggered ingest; always exits 0 (hooks never fail git)."""
    os.environ["RAGIT_PROGRESS"] = "0"
    hook = argv[0] if argv else "unknown"
    from ragit.snapshot._git import GitRepo, discover_root
    from ragit.workspace import Workspace

    root = discover_root(Path.cwd())
    if root is None:
        _log(hook, ok=False, code="NOT_A_GIT_REPOSITORY")
        return 0
    runtime = Workspace(root).runtime_dir
    stack = _claim_or_request(runtime, hook)
    if stack is None:
        _log(hook, ok=True, coalesced="an ingest is running; it ingests the newest HEAD next")
        return 0
    with stack:
        serving: list[str] | None = [hook]
        while serving is not None:
            # Logged under the newest request's hook; ``requests`` names every hook served.
            current, extra = serving[-1], {"requests": serving} if len(serving) > 1 else {}
            moved = False
            busy_with = GitRepo(root).operation_in_progress()
            if busy_with is not None:
                # Intermediate commits of a rebase (or a stopped merge) are not worth a
                # snapshot: the hook that ends it (post-rewrite, post-merge) ingests the result.
                _log(current, ok=True, skipped=f"git {busy_with} in progress", **extra)
            else:
                data = _ingest_once(current, root, extra)
                moved = data is not None and _head(root) not in (None, data["commitSha"])
            serving = _next_run(runtime, stack, current, moved)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
