"""Git hooks that keep HEAD's snapshot current (contract §12; docs/contract.md, hooks).

``post-commit``, ``post-merge``, ``post-rewrite`` and ``post-checkout`` (branch
checkouts only) start an incremental ingest of the new HEAD from its nearest
indexed ancestor in the background, so git is never slowed or blocked; the run
appends one JSON line to ``.ragit/runtime/hooks.log``.

Installation follows pre-commit's design: each script carries a marker line
with the hash of its template (and earlier hashes are recognized); a foreign
hook already in place is moved to ``<hook>.legacy`` and chained (it runs first,
its exit status is kept); uninstall restores it. The hooks directory is
``core.hooksPath`` when set, else ``hooks/`` in the common git dir, so linked
worktrees share the hooks and each run ingests the worktree it fired in. The
script records the absolute interpreter that installed it.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragit.workspace import Workspace

HOOK_NAMES = ("post-commit", "post-merge", "post-rewrite", "post-checkout")
MARKER = "# managed-by-ragit"
LEGACY_SUFFIX = ".legacy"

_TEMPLATE = """#!/bin/sh
{marker} {digest}
# Keeps RAGit's snapshot of HEAD current. Installed by `ragit hooks install`;
# remove with `ragit hooks uninstall` (a hook that was here before is restored).
RAGIT_PYTHON={python}
status=0
if [ -x "$0{legacy}" ]; then
    "$0{legacy}" "$@" || status=$?
fi
if [ "{name}" = "post-checkout" ] && [ "$3" != "1" ]; then
    exit $status
fi
top=$(git rev-parse --show-toplevel 2>/dev/null) || exit $status
# A symlinked .ragit or .ragit/runtime may lead outside the repository: never write there.
if [ -f "$top/.ragit/config.toml" ] && [ ! -L "$top/.ragit" ] \\
        && [ ! -L "$top/.ragit/runtime" ]; then
    mkdir -p "$top/.ragit/runtime"
    if [ -x "$RAGIT_PYTHON" ]; then
        # Said before the job starts: a read right after the commit waits for it.
        git rev-parse HEAD >"$top/.ragit/runtime/hook-ingest.spawned" 2>/dev/null || :
        (
            unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_PREFIX GIT_REFLOG_ACTION
            cd "$top" && exec "$RAGIT_PYTHON" -m ragit.hooks.run {name}
        ) </dev/null >>"$top/.ragit/runtime/hooks.log" 2>&1 &
    else
        # The interpreter moved (a recreated virtualenv): say so where status looks.
        record='{{"recordedAt": "%s", "hook": "{name}", "ok": false,'
        record="$record"' "code": "HOOK_INTERPRETER_MISSING", "message": "%s is gone",'
        record="$record"' "recovery": "ragit hooks install"}}\\n'
        printf "$record" "$(date -u +%Y-%m-%dT%H:%M:%S+00:00)" "$RAGIT_PYTHON" \\
            >>"$top/.ragit/runtime/hooks.log"
    fi
fi
exit $status
"""


def template_digest() -> str:
    return hashlib.sha256(_TEMPLATE.encode()).hexdigest()[:16]


def render_hook(name: str, python: str) -> str:
    """The managed script for hook ``name``."""
    return _TEMPLATE.format(
        marker=MARKER,
        digest=template_digest(),
        python=shlex.quote(python),
        legacy=LEGACY_SUFFIX,
        name=name,
    )


def hooks_dir(ws: Workspace) -> Path:
    """Where git looks for hooks in this repository."""
    from ragit.snapshot._git import GitRepo

    git = GitRepo(ws.root)
    configured = git.config_value("core.hooksPath")
    if configured:
        path = Path(os.path.expanduser(configured))
        return path if path.is_absolute() else (ws.root / path)
    return git.common_dir / "hooks"


@dataclass(frozen=True)
class HookState:
    name: str
    path: Path
    state: str  # installed | outdated | external | absent | planned | removed
    chained: bool

    def to_dict(self, ws: Workspace, action: str) -> dict[str, Any]:
        try:
            target = self.path.relative_to(ws.root).as_posix()
        except ValueError:
            target = str(self.path)
        return {
            "name": self.name,
            "target": target,
            "action": action,
            "state": self.state,
            "chained": self.chained,
        }


def _classify(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return "absent"
    except IsADirectoryError:
        return "external"
    for line in text.splitlines()[:3]:
        if line.startswith(MARKER):
            digest = line[len(MARKER) :].strip()
            return "installed" if digest == template_digest() else "outdated"
    return "external"


def recorded_interpreter(path: Path) -> str | None:
    """The interpreter a managed hook script runs (its ``RAGIT_PYTHON=`` line), or ``None``."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines()[:12]:
        if line.startswith("RAGIT_PYTHON="):
            try:
                words = shlex.split(line[len("RAGIT_PYTHON=") :])
            except ValueError:
                return None
            return words[0] if words else None
    return None


def broken_interpreters(ws: Workspace) -> list[dict[str, str | None]]:
    """Managed hooks whose recorded interpreter is gone (a moved or deleted venv): git runs
    them without error, and they silently do nothing."""
    broken: list[dict[str, str | None]] = []
    for hook in inspect_hooks(ws):
        if hook.state not in ("installed", "outdated"):
            continue
        python = recorded_interpreter(hook.path)
        if python is None or not os.access(python, os.X_OK):
            broken.append({"name": hook.name, "interpreter": python})
    return broken


def inspect_hooks(ws: Workspace) -> list[HookState]:
    directory = hooks_dir(ws)
    out = []
    for name in HOOK_NAMES:
        path = directory / name
        legacy = path.with_name(name + LEGACY_SUFFIX)
        out.append(HookState(name, path, _classify(path), legacy.exists()))
    return out


def _write_executable(path: Path, text: str) -> None:
    from ragit._fs import atomic_write_text

    atomic_write_text(path, text)
    mode = path.stat().st_mode
    path.chmod(mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH | stat.S_IRUSR)


def install(ws: Workspace, *, dry_run: bool, python: str | None = None) -> dict[str, Any]:
    """Install (or upgrade) the managed hooks; idempotent."""
    python = python or sys.executable
    directory = hooks_dir(ws)
    results = []
    for hook in inspect_hooks(ws):
        legacy = hook.path.with_name(hook.name + LEGACY_SUFFIX)
        chained = hook.chained or hook.state == "external"
        if dry_run:
            state = "installed" if hook.state == "installed" else "planned"
            results.append(HookState(hook.name, hook.path, state, chained).to_dict(ws, "install"))
            continue
        directory.mkdir(parents=True, exist_ok=True)
        if hook.state == "external":
            if legacy.exists():
                raise_conflict(hook.path, legacy)
            os.replace(hook.path, legacy)
        if hook.state != "installed" or recorded_interpreter(hook.path) != python:
            # A hook recorded for another interpreter (a moved venv) is rewritten for this one.
            _write_executable(hook.path, render_hook(hook.name, python))
        results.append(HookState(hook.name, hook.path, "installed", chained).to_dict(ws, "install"))
    return {"dryRun": dry_run, "root": str(ws.root), "hooksDir": str(directory), "hooks": results}


def raise_conflict(path: Path, legacy: Path) -> None:
    """A foreign hook exists and a `.legacy` one too: refuse to lose either.

    Raises:
        InputInvalid: naming both files.
    """
    from ragit.contract.errors import InputInvalid

    raise InputInvalid(
        "hooks",
        "a foreign hook and a .legacy hook both exist; move one aside first",
        hook=str(path),
        legacy=str(legacy),
    )


def uninstall(ws: Workspace, *, dry_run: bool) -> dict[str, Any]:
    """Remove the managed hooks and restore chained foreign ones."""
    directory = hooks_dir(ws)
    results = []
    for hook in inspect_hooks(ws):
        legacy = hook.path.with_name(hook.name + LEGACY_SUFFIX)
        managed = hook.state in ("installed", "outdated")
        if not managed:
            results.append(hook.to_dict(ws, "uninstall"))
            continue
        state = "planned" if dry_run else "removed"
        if not dry_run:
            hook.path.unlink()
            if legacy.exists():
                os.replace(legacy, hook.path)
        results.append(
            HookState(hook.name, hook.path, state, legacy.exists() or hook.chained).to_dict(
                ws, "uninstall"
            )
        )
    return {"dryRun": dry_run, "root": str(ws.root), "hooksDir": str(directory), "hooks": results}


def status(ws: Workspace) -> dict[str, Any]:
    """Inspect the hooks without changing anything."""
    directory = hooks_dir(ws)
    return {
        "dryRun": False,
        "root": str(ws.root),
        "hooksDir": str(directory),
        "hooks": [h.to_dict(ws, "status") for h in inspect_hooks(ws)],
    }
