"""The repository's name on the shared store (``store.backend = "postgres"``, docs/team.md).

``store.repository`` when it is set; otherwise ``git:<sha>`` of the root of HEAD's
first-parent history — the first commit, which every clone of the repository shares and no
other repository has — so two repositories on one server never share a name by default.
A repository without commits yet has no root: ``project.name`` then. A shallow clone's
history stops before its root: it must name the repository (``store.repository``) or fetch
the whole history.
"""

from __future__ import annotations

from ragit.config import RagitConfig
from ragit.contract.errors import SnapshotStoreUnavailable
from ragit.snapshot._git import GitRepo
from ragit.workspace import Workspace

PREFIX = "git:"
# (worktree root, HEAD) → root commit: a process (the MCP server) walks the history once
# per HEAD it sees.
_roots: dict[tuple[str, str], str | None] = {}


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
        _roots[key] = git.first_parent_root(head)
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
