"""Small helpers shared by the memory, artifact and harness commands: hashing, HEAD, masking."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ragit.config import RagitConfig
from ragit.contract.errors import ConfigInvalid
from ragit.workspace import Workspace

NO_HEAD_WARNING = "HEAD has no commit yet; sourceHeadSha is null"


def canonical_hash(value: Any) -> str:
    """SHA-256 hex of the canonical JSON of ``value`` (sorted keys, compact)."""
    raw = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()


def current_head(ws: Workspace) -> str | None:
    """The HEAD commit, None when unborn."""
    from ragit.snapshot._git import GitRepo

    return GitRepo(ws.root).head().sha


def source_head(ws: Workspace, given: str | None, warnings: list[str]) -> str | None:
    """Resolve a payload's ``sourceHeadSha``: absent or ``HEAD`` → current HEAD.

    An explicit value must be a full SHA or a unique hex prefix of a commit of
    this repository (the read-ref rule of contract §5); it is stored in full.

    Raises:
        SnapshotRefInvalid, SnapshotRefAmbiguous: an explicit value that names no single commit.
    """
    from ragit.snapshot._git import GitRepo

    git = GitRepo(ws.root)
    if given is None or given == "HEAD":
        sha = git.head().sha
        if sha is None:
            warnings.append(NO_HEAD_WARNING)
        return sha
    return git.resolve_read_ref(given)


def require_masking(cfg: RagitConfig, ws: Workspace, *, dry_run: bool) -> None:
    """Memory writes refuse to apply with ``security.secret_masking = false`` (docs/config.md).

    Raises:
        ConfigInvalid: masking is off and this is not a dry-run.
    """
    if not cfg.security.secret_masking and not dry_run:
        raise ConfigInvalid(
            ws.relative(ws.config_path),
            "security.secret_masking",
            "memory and artifact writes require secret masking",
        )
