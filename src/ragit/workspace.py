"""Where RAGit keeps things inside a repository (the ``.ragit/`` layout).

A :class:`Workspace` is a resolved Git root plus the paths derived from it.
Nothing here touches the filesystem except :func:`Workspace.is_initialized` and
:func:`Workspace.check_contained` (``lstat`` calls only).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

RAGIT_DIR = ".ragit"

# Runtime state that `init` keeps out of git (the `.gitignore` entries of docs/authority.md).
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


# Every directory RAGit creates or writes inside .ragit (and .ragit itself, ""). A committed
# symlink at one of them must not make RAGit write outside the repository.
WRITE_DIRS = (
    "",
    "manifest",
    "runtime",
    "runtime/transactions",
    "store",
    "store/chunks",
    "store.next",
    "store.prev",
    "cache",
    "cache/embeddings",
    "log",
    "log/events",
    "log/harness-runs",
    "log/transcripts",
    "reports",
    "reports/narrative",
    "security",
    "security/quarantine",
    "memory",
    "memory/working",
    "memory/sessions",
    "artifacts",
    "artifacts/session",
    "artifacts/harness",
    "docs",
    "guide",
    "guide/templates",
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
    def chunk_packs_dir(self) -> Path:
        """The chunk-id packs of the local manifests (``ragit.snapshot.chunk_packs``)."""
        return self.manifest_dir / "packs"

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
    def store_unopenable_path(self) -> Path:
        """Left by a writer that found the canonical collection unopenable (zvec crashed in a
        probe) and had no published copy to restore; removed by the next publish (a store
        rebuild's). ``doctor`` and ``repair`` read it."""
        return self.runtime_dir / "store-unopenable.json"

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

    def check_contained(self) -> None:
        """Refuse to write through a symlink that leaves the repository.

        A repository may commit symlinks inside ``.ragit/`` (``manifest``, ``runtime``,
        ``reports/narrative``, ``.ragit`` itself); a write through one that resolves outside
        the repository would land anywhere on the machine. Each of :data:`WRITE_DIRS` that is
        a symlink must resolve inside the root and outside ``.git`` (a loop counts as
        outside). Costs one ``lstat`` per directory; called by every command that writes,
        before it writes.

        Raises:
            FilesystemUnusable: ``reason`` ``outside-repository``, naming the symlink;
                ``not-a-directory`` when ``.ragit`` is a file.
        """
        from ragit.contract.fs_errors import FilesystemUnusable

        if self.ragit_dir.exists() and not self.ragit_dir.is_dir():
            raise FilesystemUnusable(
                RAGIT_DIR, FilesystemUnusable.NOT_A_DIRECTORY, errno_name="ENOTDIR"
            )
        root = self.root.resolve()
        git_dir = root / ".git"
        for rel in WRITE_DIRS:
            path = self.ragit_dir / rel if rel else self.ragit_dir
            if not path.is_symlink():
                continue
            try:
                target = path.resolve(strict=False)
                inside = (target == root or root in target.parents) and not (
                    target == git_dir or git_dir in target.parents
                )
            except (OSError, RuntimeError):  # a symlink loop
                inside = False
            if not inside:
                raise FilesystemUnusable(
                    self.relative(path),
                    FilesystemUnusable.OUTSIDE_REPOSITORY,
                    target=os.readlink(path),
                )

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
