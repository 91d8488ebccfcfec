"""The repository's name on the shared store (``store.backend = "postgres"``, docs/team.md).

``store.repository`` when it is set; otherwise ``git:<sha>`` of the root of HEAD's
first-parent history — the first commit, which every clone of the repository shares and no
other repository has — so two repositories on one server never share a name by default.
A repository without commits yet has no root: ``project.name`` then. A shallow clone's
history stops before its root: it must name the repository (``store.repository``) or fetch
the whole history.

Walking a long history costs ~13 us a commit (1.3 s for 100,000), so the roots found are kept
in the user cache (``<user cache dir>/roots/<repo id>.json``: the last tips walked and their
root, never in the repository); a later walk stops at the first commit it knows, and a cached
root is used only while it is a parentless commit of this repository. A cache that cannot be
read or written is walked past.
"""

from __future__ import annotations

import json
from pathlib import Path

from ragit import _json
from ragit._fs import atomic_write_text
from ragit.config import RagitConfig
from ragit.contract.errors import SnapshotStoreUnavailable
from ragit.snapshot._git import GitRepo
from ragit.workspace import Workspace, user_cache_dir

PREFIX = "git:"
# (worktree root, HEAD) → root commit: a process (the MCP server) walks the history once
# per HEAD it sees.
_roots: dict[tuple[str, str], str | None] = {}
# How many tips (commit → root) the user cache keeps per checkout.
KEEP_TIPS = 16


def store_repository(ws: Workspace, cfg: RagitConfig, git: GitRepo | None = None) -> str:
    """The name of this repository's snapshots on the shared store.

    Raises:
        SnapshotStoreUnavailable: ``store.repository`` is unset in a shallow clone.
    """
    if cfg.store.repository:
        return cfg.store.repository
    git = git if git is not None else GitRepo(ws.root)
    head = git.head().sha
    if head is None:
        return cfg.project.name
    key = (str(ws.root), head)
    if key not in _roots:
        _roots[key] = _root_of(ws, git, head)
    root = _roots[key]
    if root is None:
        raise SnapshotStoreUnavailable(
            None,
            "store.repository is unset and this clone is shallow, so the root commit that "
            "names the repository on the shared store is not in it: set store.repository "
            "(ragit config set store.repository <org>/<repo>) in every clone, or fetch the "
            "whole history (git fetch --unshallow)",
        )
    return PREFIX + root


def _cache_path(ws: Workspace) -> Path:
    return user_cache_dir() / "roots" / f"{ws.repo_id}.json"


def _root_of(ws: Workspace, git: GitRepo, head: str) -> str | None:
    """HEAD's first-parent root, walking only the commits since a tip the cache knows."""
    path = _cache_path(ws)
    try:
        tips = _json.loads(path.read_text(encoding="utf-8")).get("tips", {})
        known = {
            str(tip): str(root)
            for tip, root in tips.items()
            if isinstance(root, str) and git.is_root_commit(root)
        }
    except (OSError, ValueError, AttributeError):
        known = {}
    root = git.first_parent_root(head, known)
    if root is not None and known.get(head) != root:
        known.pop(head, None)
        known[head] = root  # newest last: the oldest tips are dropped first
        kept = dict(list(known.items())[-KEEP_TIPS:])
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, json.dumps({"tips": kept}) + "\n", fsync=False)
        except OSError:
            pass  # a read-only cache: the next process walks again
    return root
