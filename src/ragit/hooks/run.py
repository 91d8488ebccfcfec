"""The background job a managed hook starts: ``python -m ragit.hooks.run <hook>``.

It ingests the repository's *current* HEAD incrementally (``auto`` mode: from
the nearest indexed ancestor, else a full snapshot), so a burst of commits
coalesces into the snapshots that are still missing when each job runs. A busy
writer is waited for (this runs in the background, git is not waiting); every
outcome is one JSON line on stdout, which the hook appends to
``.ragit/runtime/hooks.log``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

BUSY_WAIT_SECONDS = 120.0


def _log(hook: str, **fields: object) -> None:
    record = {
        "recordedAt": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "hook": hook,
        **fields,
    }
    sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def main(argv: list[str]) -> int:
    """Run one hook-triggered ingest; always exits 0 (hooks never fail git)."""
    os.environ["RAGIT_PROGRESS"] = "0"
    hook = argv[0] if argv else "unknown"
    from ragit.config import load_config
    from ragit.contract.errors import RagitError, StoreWriteBusy
    from ragit.ingest.apply import run_ingest
    from ragit.ingest.request import IngestRequest
    from ragit.snapshot._git import discover_root
    from ragit.workspace import Workspace

    root = discover_root(Path.cwd())
    if root is None:
        _log(hook, ok=False, code="NOT_A_GIT_REPOSITORY")
        return 0
    ws = Workspace(root)
    from ragit.snapshot._git import GitRepo

    busy_with = GitRepo(root).operation_in_progress()
    if busy_with is not None:
        # Intermediate commits of a rebase (or a stopped merge) are not worth a snapshot:
        # the post-rewrite (or post-merge/post-commit) hook that ends it ingests the result.
        _log(hook, ok=True, skipped=f"git {busy_with} in progress")
        return 0
    deadline = time.monotonic() + BUSY_WAIT_SECONDS
    while True:
        try:
            cfg = load_config(ws)
            data = run_ingest(ws, cfg, IngestRequest(), lambda _m: None)
        except StoreWriteBusy:
            if time.monotonic() < deadline:
                time.sleep(1.0)  # background job: waiting for the active writer is the point
                continue
            _log(hook, ok=False, code="STORE_WRITE_BUSY", recovery="ragit ingest")
            return 0
        except RagitError as exc:
            _log(
                hook,
                ok=False,
                code=exc.code,
                message=exc.message,
                recovery=exc.recovery or "ragit ingest --all",
            )
            return 0
        except Exception as exc:
            _log(
                hook,
                ok=False,
                code="UNEXPECTED",
                message=str(exc) or type(exc).__name__,
                recovery="ragit ingest --all",
            )
            return 0
        _log(
            hook,
            ok=True,
            commitSha=data["commitSha"],
            baseMode=data["baseMode"],
            processed=data["processed"],
            reused=data["reused"],
            noop=data["noop"],
        )
        return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
