"""What makes a worktree dirty, and which of it an ingest of HEAD would read.

Used by `status`: ``worktreeChanges`` and, when HEAD is not indexed, ``dirtyCandidates``.
"""

from __future__ import annotations

from typing import Any

from ragit.contract.errors import RagitError
from ragit.snapshot._git import GitRepo
from ragit.workspace import Workspace


def dirty_candidates(ws: Workspace, dirty: dict[str, str]) -> list[str]:
    """Dirty paths on the implicit ingest surface (the ones that would block `ingest`)."""
    from ragit.config import load_config
    from ragit.snapshot.config_at import config_for_commit
    from ragit.snapshot.surface import SurfaceMatcher

    if not dirty:
        return []
    try:
        git = GitRepo(ws.root)
        head = git.head().sha
        cfg = load_config(ws)
        if head is not None:  # the surface the next ingest reads: HEAD's committed config
            cfg = config_for_commit(git, head, cfg)
    except RagitError:
        return []
    surface = SurfaceMatcher(cfg.ingest.doc_globs, cfg.ingest.include, cfg.ingest.exclude)
    return sorted(path for path in dirty if surface.matches(path))


_SHOWN_PATHS = 10


def worktree_changes(ws: Workspace, dirty: dict[str, str]) -> dict[str, Any]:
    """What makes the worktree dirty: counts by state, the first paths, and the documents
    among them that an ingest would read (the ones a commit must take before ingest)."""
    counts = {state: 0 for state in ("modified", "staged", "deleted", "untracked")}
    for state in dirty.values():
        counts[state] = counts.get(state, 0) + 1
    documents = dirty_candidates(ws, dirty)
    return {
        **counts,
        "paths": sorted(dirty)[:_SHOWN_PATHS],
        "documents": documents[:_SHOWN_PATHS],
        "documentCount": len(documents),
    }
