"""Where RAGit keeps things inside a repository (the ``.ragit/`` layout).

A :class:`Workspace` is a resolved Git root plus the paths derived from it.
Nothing here touches the filesystem except :func:`Workspace.is_initialized`.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

RAGIT_DIR = ".ragit"

# Runtime state that `init` keeps out of git (UR §5.3 policy `safe`, plus runtime/).
GITIGNORE_ENTRIES = (
    ".ragit/store/",
    ".ragit/store.next/",
    ".ragit/store.prev/",
    ".ragit/cache/",
    ".ragit/log/",
    ".ragit/reports/",
    ".ragit/security/",
    ".ragit/memory/sessions/",
    ".ragit/memory/working/",
    ".ragit/artifacts/session/",
    ".ragit/manifest/",
    ".ragit/artifacts/harness/",
    ".ragit/runtime/",
)


@dataclass(frozen=True)
class Workspace:
    """A repository root and the RAGit paths inside it."""

    root: Path

    @property
    def ragit_dir(self) -> Path:
        return self.root / RAGIT_DIR

    @property
    def config_path(self) -> Path:
        return self.ragit_dir / "config.toml"

    @property
    def manifest_dir(self) -> Path:
        return self.ragit_dir / "manifest"

    @property
    def store_dir(self) -> Path:
        return self.ragit_dir / "store"

    @property
    def runtime_dir(self) -> Path:
        return self.ragit_dir / "runtime"

    @property
    def store_unverified_path(self) -> Path:
        """Left by a publish refused for missing chunks; removed by the next publish that
        verifies (a store rebuild's included). ``doctor`` and ``repair`` read it."""
        return self.runtime_dir / "store-unverified.json"

    @property
    def lock_path(self) -> Path:
        return self.runtime_dir / "store-write.lock"

    @property
    def hook_run_path(self) -> Path:
        """Held (``flock``) by the one hook-triggered ingest runner of this worktree."""
        return self.runtime_dir / "hook-ingest.run"

    @property
    def hook_spawned_path(self) -> Path:
        """Written by a managed hook (HEAD's SHA) just before it starts the runner, removed by
        the runner once it holds :attr:`hook_run_path`: a read in between knows an ingest of
        HEAD is on its way."""
        return self.runtime_dir / "hook-ingest.spawned"

    @property
    def memory_lock_path(self) -> Path:
        return self.runtime_dir / "memory.lock"

    @property
    def transactions_dir(self) -> Path:
        return self.runtime_dir / "transactions"

    @property
    def memory_dir(self) -> Path:
        return self.ragit_dir / "memory"

    @property
    def gitignore_path(self) -> Path:
        return self.root / ".gitignore"

    def manifest_path(self, commit_sha: str) -> Path:
        return self.manifest_dir / f"{commit_sha}.json"

    def is_initialized(self) -> bool:
        return self.config_path.is_file()

    def relative(self, path: Path) -> str:
        """Repo-relative POSIX form of ``path`` (which must lie inside the root)."""
        return path.relative_to(self.root).as_posix()

    @property
    def repo_id(self) -> str:
        """Stable id of this checkout, used to name per-repository user caches."""
        return hashlib.sha256(os.fsencode(self.root)).hexdigest()[:16]


def user_cache_dir() -> Path:
    """RAGit's per-user cache (reader copies of the store, model builds); never in a repo."""
    base = os.environ.get("XDG_CACHE_HOME")
    if base:
        return Path(base) / "ragit"
    return Path.home() / ".cache" / "ragit"
