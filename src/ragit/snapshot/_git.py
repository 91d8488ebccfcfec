"""The pygit2 adapter: the only module that imports pygit2.

Every libgit2 failure is wrapped in a typed RAGit error here, so callers never
see a pygit2 exception. Knowledge is read from commits (trees and blobs), never
from the working tree; the worktree is only inspected to report dirtiness.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import cast

from ragit.contract.errors import (
    NotAGitRepository,
    RepositoryStateChanged,
    SnapshotRefAmbiguous,
    SnapshotRefInvalid,
)
from ragit.contract.fs_errors import FilesystemUnusable, shown_path
from ragit.snapshot._tls import ca_bundle_unread

with ca_bundle_unread():  # libgit2 would parse the CA bundle twice (ragit.snapshot._tls)
    import pygit2  # noqa: TID251 - this module is the pygit2 adapter

_HEX = re.compile(r"[0-9a-fA-F]+")
_FILE_MODES = {pygit2.GIT_FILEMODE_BLOB, pygit2.GIT_FILEMODE_BLOB_EXECUTABLE}
_LINK_MODE = pygit2.GIT_FILEMODE_LINK
STATUS_ATTEMPTS = 5  # worktree scans raced by git itself (see GitRepo._status_settled)
STATUS_RETRY_S = 0.02


def discover_root(start: Path) -> Path | None:
    """The worktree root of the repository containing ``start``, or None.

    Linked worktrees resolve to their own root; bare repositories count as none.
    """
    try:
        git_dir = pygit2.discover_repository(str(start))
    except (pygit2.GitError, OSError):
        return None
    if git_dir is None:
        return None
    try:
        repo = pygit2.Repository(git_dir)
    except (pygit2.GitError, OSError):
        return None
    if repo.is_bare or repo.workdir is None:
        return None
    return Path(repo.workdir).resolve()


def init_repository(path: Path) -> Path:
    """``git init`` at ``path`` (used by ``ragit init --git-init``)."""
    repo = pygit2.init_repository(str(path), initial_head="main")
    return Path(repo.workdir or path).resolve()


@dataclass(frozen=True)
class HeadInfo:
    """Where HEAD points: ``sha`` is None for an unborn branch."""

    sha: str | None
    branch: str | None
    detached: bool

    @property
    def unborn(self) -> bool:
        return self.sha is None


@dataclass(frozen=True)
class TreeFile:
    """A regular file (or a symlink) in a commit's tree."""

    path: str
    blob_sha: str
    is_symlink: bool


@dataclass(frozen=True)
class CommitInfo:
    """One commit of a history walk."""

    sha: str
    subject: str
    author_name: str
    authored_at: str


@dataclass(frozen=True)
class Change:
    """One path-level difference between two commits (``status`` in A, M, D, R)."""

    status: str
    old_path: str | None
    new_path: str | None


class GitRepo:
    """A repository opened at its worktree root."""

    def __init__(self, root: Path) -> None:
        try:
            self._repo = pygit2.Repository(str(root))
        except (pygit2.GitError, OSError) as exc:
            raise NotAGitRepository(str(root)) from exc
        self.root = root

    # ------------------------------------------------------------ HEAD
    def head(self) -> HeadInfo:
        """The current HEAD (fresh read every call)."""
        repo = self._repo
        detached = bool(repo.head_is_detached)
        branch: str | None = None
        if not detached:
            try:
                target = repo.references["HEAD"].target
            except (KeyError, pygit2.GitError):
                target = None
            if isinstance(target, str) and target.startswith("refs/heads/"):
                branch = target[len("refs/heads/") :]
        if repo.head_is_unborn:
            return HeadInfo(sha=None, branch=branch, detached=False)
        try:
            sha = str(repo.head.target)
        except pygit2.GitError:
            return HeadInfo(sha=None, branch=branch, detached=detached)
        return HeadInfo(sha=sha, branch=branch, detached=detached)

    # ------------------------------------------------------------ refs
    def resolve_read_ref(self, ref: str) -> str:
        """Resolve a snapshot ref for reads: ``HEAD``, a full SHA or a unique hex prefix (4+).

        Raises:
            SnapshotRefInvalid: anything else, or no such commit.
            SnapshotRefAmbiguous: a prefix that matches several commits.
        """
        if ref == "HEAD":
            head = self.head()
            if head.sha is None:
                raise SnapshotRefInvalid(ref, "HEAD has no commit yet")
            return head.sha
        if not _HEX.fullmatch(ref) or not 4 <= len(ref) <= 40:
            raise SnapshotRefInvalid(ref, resolved_sha=self._resolvable(ref))
        ref = ref.lower()
        try:
            obj = self._repo.revparse_single(ref)
        except KeyError as exc:
            raise SnapshotRefInvalid(ref, "no commit matches") from exc
        except ValueError as exc:
            if "ambiguous" in str(exc).lower():
                raise SnapshotRefAmbiguous(ref, self._commits_with_prefix(ref)) from exc
            raise SnapshotRefInvalid(ref) from exc
        except pygit2.GitError as exc:
            if "ambiguous" in str(exc).lower():
                raise SnapshotRefAmbiguous(ref, self._commits_with_prefix(ref)) from exc
            raise SnapshotRefInvalid(ref) from exc
        if obj.type != pygit2.GIT_OBJECT_COMMIT or not str(obj.id).startswith(ref):
            raise SnapshotRefInvalid(ref, "not a commit")
        return str(obj.id)

    def _resolvable(self, ref: str) -> str | None:
        """The commit a ref read selection refuses would name (a branch, a tag, ``HEAD~2``),
        or None: the refusal then names the SHA to ask for instead."""
        try:
            return self.resolve_commitish(ref)
        except SnapshotRefInvalid:
            return None

    def _commits_with_prefix(self, prefix: str) -> list[str]:
        out: list[str] = []
        for oid in self._repo.odb:  # enumerating objects is only done on the rare ambiguity path
            text = str(oid)
            if text.startswith(prefix):
                obj = self._repo.get(oid)
                if obj is not None and obj.type == pygit2.GIT_OBJECT_COMMIT:
                    out.append(text)
        return sorted(out) or [prefix]

    def resolve_commitish(self, ref: str) -> str:
        """Resolve any commit-ish git understands (``HEAD~1``, a branch, a tag, a SHA).

        Raises:
            SnapshotRefInvalid: it does not name a commit.
        """
        if not ref or ref.startswith("-"):
            raise SnapshotRefInvalid(ref, "not a commit-ish")
        try:
            obj = self._repo.revparse_single(ref)
            commit = obj.peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError) as exc:
            raise SnapshotRefInvalid(ref, "git cannot resolve it to a commit") from exc
        return str(commit.id)

    def has_commit(self, sha: str) -> bool:
        try:
            obj = self._repo.get(sha)
        except (ValueError, pygit2.GitError):
            return False
        return obj is not None and obj.type == pygit2.GIT_OBJECT_COMMIT

    def _commit(self, sha: str) -> pygit2.Commit:
        obj = self._repo.get(sha)
        if obj is None or obj.type != pygit2.GIT_OBJECT_COMMIT:
            raise SnapshotRefInvalid(sha, "not a commit")
        return cast("pygit2.Commit", obj)

    def _blob(self, sha: str) -> pygit2.Blob:
        obj = self._repo.get(sha)
        if obj is None or obj.type != pygit2.GIT_OBJECT_BLOB:
            raise SnapshotRefInvalid(sha, "not a blob")
        return cast("pygit2.Blob", obj)

    # ------------------------------------------------------------ history
    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        """True when ``ancestor`` is ``descendant`` or one of its ancestors."""
        if ancestor == descendant:
            return True
        return bool(self._repo.descendant_of(descendant, ancestor))

    def first_parents(self, sha: str, limit: int = 10_000) -> Iterator[str]:
        """``sha``'s first-parent ancestors, nearest first (``sha`` excluded)."""
        commit: pygit2.Commit | None = self._commit(sha)
        count = 0
        while commit is not None and commit.parent_ids and count < limit:
            parent_id = commit.parent_ids[0]
            yield str(parent_id)
            parent = self._repo.get(parent_id)
            is_commit = parent is not None and parent.type == pygit2.GIT_OBJECT_COMMIT
            commit = cast("pygit2.Commit", parent) if is_commit else None
            count += 1

    def first_parent_root(self, sha: str, known: Mapping[str, str] | None = None) -> str | None:
        """The root of ``sha``'s first-parent history (the commit with no parent it ends
        at); None in a shallow clone, whose history is cut before its root.

        ``known``: commits whose root is already known (commit → root); the walk stops at the
        first of them it meets, so a history walked before costs only its new commits.
        """
        if self._repo.is_shallow:
            return None
        walker = self._repo.walk(self._commit(sha).id, pygit2.enums.SortMode.NONE)
        walker.simplify_first_parent()
        root: str | None = None
        for commit in walker:
            root = str(commit.id)
            if known and root in known:
                return known[root]
        return root

    def is_root_commit(self, sha: str) -> bool:
        """Whether ``sha`` is a commit of this repository without parents."""
        try:
            return not self._commit(sha).parent_ids
        except (SnapshotRefInvalid, ValueError):
            return False

    def first_parent_log(self, tip: str, hide: str | None, limit: int) -> Iterator[CommitInfo]:
        """``tip`` and its first-parent ancestors, newest first, without ``hide``'s history.

        ``hide`` (the left side of ``A..B``) removes every commit reachable from it.
        """
        walker = self._repo.walk(self._commit(tip).id, pygit2.enums.SortMode.TOPOLOGICAL)
        walker.simplify_first_parent()
        if hide is not None:
            walker.hide(self._commit(hide).id)
        for count, commit in enumerate(walker):
            if count >= limit:
                return
            author = commit.author
            offset = timezone(timedelta(minutes=int(author.offset)))
            moment = datetime.fromtimestamp(int(author.time), offset)
            yield CommitInfo(
                sha=str(commit.id),
                subject=str(commit.message).split("\n", 1)[0],
                author_name=str(author.name),
                authored_at=moment.isoformat().replace("+00:00", "Z"),
            )

    def blob_at(self, sha: str, path: str) -> str | None:
        """The blob id of ``path`` in ``sha``'s tree, or None (absent, or not a file)."""
        try:
            entry = self._commit(sha).tree[path]
        except (KeyError, ValueError):
            return None
        if entry.filemode not in _FILE_MODES and entry.filemode != _LINK_MODE:
            return None
        return str(entry.id)

    def blobs_at(self, sha: str, paths: list[str]) -> dict[str, str | None]:
        """:meth:`blob_at` for many paths: each directory's tree is looked up once."""
        root = self._commit(sha).tree
        trees: dict[str, pygit2.Tree | None] = {"": root}
        out: dict[str, str | None] = {}
        for path in paths:
            folder, _, name = path.rpartition("/")
            if folder not in trees:
                try:
                    found = root[folder]
                except (KeyError, ValueError):
                    found = None
                trees[folder] = found if isinstance(found, pygit2.Tree) else None
            tree = trees[folder]
            try:
                entry = tree[name] if tree is not None and name else None
            except (KeyError, ValueError):
                entry = None
            if entry is None or (
                entry.filemode not in _FILE_MODES and entry.filemode != _LINK_MODE
            ):
                out[path] = None
            else:
                out[path] = str(entry.id)
        return out

    def entry_id(self, sha: str, path: str) -> str | None:
        """The object id of ``path`` (a file, link or directory) in ``sha``'s tree, or None."""
        try:
            return str(self._commit(sha).tree[path.rstrip("/")].id)
        except (KeyError, ValueError):
            return None

    def parent(self, sha: str) -> str | None:
        commit = self._commit(sha)
        if not commit.parent_ids:
            return None
        return str(commit.parent_ids[0])

    def commit_time(self, sha: str) -> int:
        """Committer time of ``sha`` (seconds since the epoch)."""
        return int(self._commit(sha).commit_time)

    # ------------------------------------------------------------ trees and blobs
    def tree_files(self, sha: str) -> list[TreeFile]:
        """Every regular file and symlink in the commit's tree, sorted by path."""
        out: list[TreeFile] = []
        stack: list[tuple[str, pygit2.Tree]] = [("", self._commit(sha).tree)]
        while stack:
            prefix, tree = stack.pop()
            for entry in tree:
                path = f"{prefix}{entry.name}"
                if entry.filemode == pygit2.GIT_FILEMODE_TREE:
                    sub = self._repo.get(entry.id)
                    if sub is not None and sub.type == pygit2.GIT_OBJECT_TREE:
                        stack.append((path + "/", cast("pygit2.Tree", sub)))
                elif entry.filemode in _FILE_MODES:
                    out.append(TreeFile(path, str(entry.id), False))
                elif entry.filemode == _LINK_MODE:
                    out.append(TreeFile(path, str(entry.id), True))
        out.sort(key=lambda f: f.path)
        return out

    def read_blob(self, blob_sha: str) -> bytes:
        return bytes(self._blob(blob_sha).data)

    def blob_size(self, blob_sha: str) -> int:
        return int(self._blob(blob_sha).size)

    def changes(self, base: str, target: str) -> list[Change]:
        """Path changes from ``base`` to ``target`` with rename detection."""
        a = self._commit(base).tree
        b = self._commit(target).tree
        diff = a.diff_to_tree(b)
        diff.find_similar()
        out: list[Change] = []
        for delta in diff.deltas:
            status = delta.status_char()
            old = delta.old_file.path
            new = delta.new_file.path
            if status == "A":
                out.append(Change("A", None, new))
            elif status == "D":
                out.append(Change("D", old, None))
            elif status == "R":
                out.append(Change("R", old, new))
            else:
                out.append(Change("M", old, new))
        return out

    # ------------------------------------------------------------ worktree
    def dirty_paths(self) -> dict[str, str]:
        """Paths whose index or worktree differs from HEAD, untracked ones included.

        Values: ``modified``, ``staged``, ``untracked``, ``deleted``, and ``removed`` for a
        deletion already staged (nothing left to ``git add``). Ignored files are skipped.
        """
        out: dict[str, str] = {}
        status = self._status_settled()
        if status is None:
            return out
        for path, flags in status.items():
            if flags & pygit2.GIT_STATUS_IGNORED:
                continue
            if flags & pygit2.GIT_STATUS_INDEX_DELETED and not flags & pygit2.GIT_STATUS_WT_NEW:
                out[path] = "removed"
            elif flags & (pygit2.GIT_STATUS_WT_DELETED | pygit2.GIT_STATUS_INDEX_DELETED):
                out[path] = "deleted"
            elif flags & pygit2.GIT_STATUS_WT_NEW and not flags & pygit2.GIT_STATUS_INDEX_NEW:
                out[path] = "untracked"
            elif flags & (
                pygit2.GIT_STATUS_WT_MODIFIED
                | pygit2.GIT_STATUS_WT_RENAMED
                | pygit2.GIT_STATUS_WT_TYPECHANGE
            ):
                out[path] = "modified"
            elif flags & (
                pygit2.GIT_STATUS_INDEX_NEW
                | pygit2.GIT_STATUS_INDEX_MODIFIED
                | pygit2.GIT_STATUS_INDEX_RENAMED
                | pygit2.GIT_STATUS_INDEX_TYPECHANGE
            ):
                out[path] = "staged"
        return out

    def _status_settled(self) -> dict[str, int] | None:
        """``git status`` flags, retried while git changes the worktree under the scan.

        libgit2 hashes a file whose stat differs from the index; a checkout, a delete or an
        editor replacing that file between the stat and the read fails the scan ("error
        reading file for hashing", or the file not found). Such a scan is retried a few
        times; None when libgit2 cannot read the repository's status at all.

        Raises:
            RepositoryStateChanged: the worktree kept changing under every attempt.
            FilesystemUnusable: a file of the worktree cannot be read (permission denied).
        """
        last: Exception | None = None
        for attempt in range(STATUS_ATTEMPTS):
            try:
                return dict(self._repo.status(untracked_files="all", ignored=False))
            except (OSError, pygit2.GitError) as exc:
                if not isinstance(exc, (OSError, pygit2.NotFoundError)):
                    return None  # not a race: an unreadable index or repository
                denied = self._denied(exc)
                if denied is not None:
                    raise denied from None  # not a race either: no retry makes it readable
                last = exc
                time.sleep(STATUS_RETRY_S * (attempt + 1))
        head = self.head().sha
        raise RepositoryStateChanged(
            head,
            head,
            STATUS_ATTEMPTS,
            message="the worktree changed while its status was being read "
            f"({last}); retry when the repository is quiet",
        )

    def _denied(self, exc: Exception) -> FilesystemUnusable | None:
        """libgit2's "Permission denied" (an OSError without an errno) as the typed error,
        naming the file it could not read; None for any other failure."""
        text = str(exc)
        if "permission denied" not in text.lower():
            return None
        quoted = re.search(r"'([^']+)'", text)
        where = shown_path(quoted.group(1), self.root) if quoted else None
        return FilesystemUnusable(where, FilesystemUnusable.PERMISSION_DENIED, errno_name="EACCES")

    def operation_in_progress(self) -> str | None:
        """The name of a rebase, merge, cherry-pick or revert git is in the middle of, or None."""
        try:
            state = int(self._repo.state())
        except (pygit2.GitError, AttributeError):
            return None
        if state == 0:
            return None
        names = {int(s): s.name.lower() for s in pygit2.enums.RepositoryState}
        return names.get(state, "operation")

    def is_dirty(self) -> bool:
        """Any uncommitted change (untracked directories are not walked file by file)."""
        try:
            status = self._repo.status(untracked_files="normal", ignored=False)
        except (OSError, pygit2.NotFoundError):
            return True  # a file changed under the scan: the worktree is being changed
        except pygit2.GitError:
            return False
        return any(not flags & pygit2.GIT_STATUS_IGNORED for flags in status.values())

    # ------------------------------------------------------------ hooks support
    @property
    def common_dir(self) -> Path:
        """The git dir shared by all worktrees (where ``hooks/`` lives by default)."""
        git_dir = Path(self._repo.path)
        # pygit2 has no commondir: a linked worktree's git dir names it in a `commondir` file.
        try:
            pointer = (git_dir / "commondir").read_text(encoding="utf-8").strip()
        except (FileNotFoundError, NotADirectoryError):
            return git_dir.resolve()
        return (git_dir / pointer).resolve()

    def is_ignored(self, path: str) -> bool:
        """Whether the repo-relative ``path`` is ignored (.gitignore, info/exclude, excludesFile).

        A directory is given with a trailing ``/``.
        """
        try:
            return bool(self._repo.path_is_ignored(path))
        except (pygit2.GitError, OSError):
            return False

    def config_value(self, key: str) -> str | None:
        try:
            return str(self._repo.config[key])
        except (KeyError, pygit2.GitError):
            return None
