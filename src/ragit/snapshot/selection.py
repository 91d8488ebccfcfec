"""Snapshot selection for every read command (contract §5).

No ``at`` means exactly the current HEAD (``head-exact``): HEAD is read before
and after the manifest is loaded and the selection is retried once if it moved.
An explicit ``at`` accepts only ``HEAD``, a full SHA or a unique hex prefix
(``explicit-exact``). The manifest must exist for exactly that commit; the
nearest indexed first-parent ancestor is reported in the error, never used.
Selection happens before any embedding call or store access.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from ragit.contract.errors import (
    RepositoryStateChanged,
    SnapshotIngestRunning,
    SnapshotNotIndexed,
)
from ragit.snapshot._git import GitRepo, HeadInfo
from ragit.snapshot.manifest import Manifest, load_manifest, manifest_exists, parse_manifest
from ragit.workspace import Workspace

DIRTY_WARNING = (
    "the worktree has uncommitted changes; results come from the committed snapshot "
    "and do not include them"
)


def dirty_documents(ws: Workspace, git: GitRepo) -> list[str]:
    """Uncommitted paths an ingest would index (the configured document surface), sorted."""
    from ragit.config import load_config
    from ragit.contract.errors import RagitError
    from ragit.snapshot.surface import SurfaceMatcher

    dirty = git.dirty_paths()
    if not dirty:
        return []
    try:
        cfg = load_config(ws)
        head = git.head().sha
        if head is not None:  # the surface the next ingest reads: HEAD's committed config
            from ragit.snapshot.config_at import config_for_commit

            cfg = config_for_commit(git, head, cfg)
    except RagitError:
        return sorted(dirty)
    surface = SurfaceMatcher(cfg.ingest.doc_globs, cfg.ingest.include, cfg.ingest.exclude)
    return sorted(path for path in dirty if surface.matches(path))


def dirty_warning(ws: Workspace, git: GitRepo) -> str:
    """The warning of a read on a dirty worktree (contract §5), naming dirty documents.

    The text always begins with :data:`DIRTY_WARNING`; when documents the snapshot would
    hold have uncommitted changes, the first ten are named after it.
    """
    docs = dirty_documents(ws, git)
    if not docs:
        return DIRTY_WARNING
    more = f" and {len(docs) - 10} more" if len(docs) > 10 else ""
    return f"{DIRTY_WARNING}: {', '.join(docs[:10])}{more}"


class ManifestSource(Protocol):
    """Where manifests come from when they are not the files of ``.ragit/manifest`` (the
    shared store: ``ragit.store.backend.PostgresSource``)."""

    name: str

    def manifest(self, sha: str) -> bytes | None: ...
    def indexed_shas(self) -> list[str]: ...


@dataclass(frozen=True)
class Selection:
    """A resolved, loaded snapshot."""

    requested_ref: str
    resolved_sha: str
    selection: str
    head: HeadInfo
    worktree_dirty: bool
    manifest: Manifest

    def block(self, status: str = "indexed") -> dict[str, Any]:
        """The ``snapshot`` object of query/context pack/recall data."""
        return {
            "requestedRef": self.requested_ref,
            "resolvedSha": self.resolved_sha,
            "selection": self.selection,
            "status": status,
            "branch": self.head.branch,
            "detached": self.head.detached,
            "worktreeDirty": self.worktree_dirty,
        }


def nearest_indexed_ancestor(
    ws: Workspace, git: GitRepo, sha: str, source: ManifestSource | None = None
) -> str | None:
    """The closest first-parent ancestor of ``sha`` that has a manifest (with ``source``:
    that the source has indexed)."""
    if source is not None:
        indexed = set(source.indexed_shas())
        return next((c for c in git.first_parents(sha) if c in indexed), None)
    for candidate in git.first_parents(sha):
        if manifest_exists(ws, candidate):
            return candidate
    return None


def _fault(phase: str) -> None:
    from ragit._faults import reach

    reach(phase)


def ingest_running(ws: Workspace, sha: str, *, is_head: bool) -> dict[str, Any] | None:
    """Who is indexing ``sha`` right now, else ``None``: a live writer lock taken by an ingest
    of exactly ``sha``, or, when ``sha`` is HEAD, the worktree's hook runner (it always ingests
    the newest HEAD; while it plans it holds no writer lock yet).

    Read-only: owner records read through the lock primitive, a non-blocking ``flock`` probe.
    """
    from ragit import _lock

    info = _lock.inspect(ws.lock_path)
    owner = info.owner
    if (
        info.state == "active"
        and owner is not None
        and owner.get("command") == "ingest"
        and owner.get("headSha") == sha
    ):
        return owner
    if is_head:
        runner = _lock.inspect_flocked(ws.hook_run_path)
        if runner.state == "active":
            return {**(runner.owner or {"command": "hook-ingest"}), "headSha": sha}
        return _hook_spawned(ws, sha)
    return None


# How long a managed hook's word that it started the runner counts while the runner has not
# taken its lock yet (the interpreter starting); a runner killed before that is forgotten.
SPAWN_GRACE_S = 10.0


def _hook_spawned(ws: Workspace, sha: str) -> dict[str, Any] | None:
    """A hook that has just started the runner for ``sha`` (HEAD), before the runner holds its
    lock: the owner as the runner would report it, else None."""
    import time
    from datetime import datetime, timezone

    path = ws.hook_spawned_path
    try:
        named = path.read_text(encoding="utf-8").strip()
        written = path.stat().st_mtime
    except (OSError, UnicodeDecodeError):
        return None
    if named != sha or not 0 <= time.time() - written < SPAWN_GRACE_S:
        return None
    started = datetime.fromtimestamp(written, timezone.utc).isoformat(timespec="seconds")
    return {"pid": None, "command": "hook-ingest", "startedAt": started, "headSha": sha}


def select_snapshot(
    ws: Workspace,
    git: GitRepo,
    at: str | None,
    source: ManifestSource | None = None,
    *,
    wait_s: float = 0.0,
) -> Selection:
    """Resolve and load the exact snapshot for a read.

    ``source``: where the manifests are (None: the files of ``.ragit/manifest``); the rules
    are the same, with the source's indexed commits as the candidates.

    ``wait_s``: how long to wait, reading only, for a running ingest of the selected commit
    (a hook's, seconds after a commit) to publish its manifest before
    ``SNAPSHOT_INGEST_RUNNING``.

    Raises:
        SnapshotRefInvalid, SnapshotRefAmbiguous: a bad ``at``.
        SnapshotNotIndexed: no manifest for exactly that commit (or an unborn HEAD).
        SnapshotManifestInvalid, SnapshotSchemaUnsupported: a corrupt or future manifest.
        RepositoryStateChanged: HEAD moved twice while selecting.
    """
    if at is not None and at != "HEAD":
        sha = git.resolve_read_ref(at)
        manifest = _load_or_not_indexed(
            ws, git, sha, head_selected=False, source=source, wait_s=wait_s
        )
        head = git.head()
        return Selection(at, sha, "explicit-exact", head, git.is_dirty(), manifest)
    requested = at or "HEAD"
    attempts = 0
    first_head: str | None = None
    while True:
        attempts += 1
        before = git.head()
        if before.sha is None:
            unborn = SnapshotNotIndexed(None)
            if not ws.is_initialized():
                unborn.human_next = "ragit init --yes"
            raise unborn
        if first_head is None:
            first_head = before.sha
        manifest = _load_or_not_indexed(
            ws, git, before.sha, head_selected=True, source=source, wait_s=wait_s
        )
        _fault("selection-loaded")
        after = git.head()
        if after.sha == before.sha:
            selection = "head-exact" if at is None else "explicit-exact"
            return Selection(requested, before.sha, selection, after, git.is_dirty(), manifest)
        if attempts >= 2:
            raise RepositoryStateChanged(first_head, after.sha, attempts)


# Manifests parsed from a source, by (source name, sha): the bytes and their parse. A source
# that keeps a snapshot returns the same bytes object while it stands (the shared store's
# kept snapshot), so a warm read parses nothing and the engine's caches keyed by the parsed
# manifest (keyword statistics, the store check) hold; other bytes are parsed again.
_PARSED: dict[tuple[str, str], tuple[bytes, Manifest]] = {}
_PARSED_SIZE = 4


def _load(ws: Workspace, sha: str, source: ManifestSource | None) -> Manifest:
    if source is None:
        return load_manifest(ws, sha)
    raw = source.manifest(sha)
    if raw is None:
        raise FileNotFoundError(sha)
    key = (source.name, sha)
    kept = _PARSED.get(key)
    if kept is not None and kept[0] is raw:
        return kept[1]
    # A local source's manifests may name chunk-id packs (indexVersion 2); the shared store's
    # never do.
    packs = getattr(source, "packs", None)
    manifest = parse_manifest(sha, raw, f"{source.name}:{sha}", packs=packs)
    _PARSED.pop(key, None)
    if len(_PARSED) >= _PARSED_SIZE:
        _PARSED.pop(next(iter(_PARSED)))
    _PARSED[key] = (raw, manifest)
    return manifest


WAIT_POLL_S = 0.1


def _wait_for_manifest(
    ws: Workspace, sha: str, source: ManifestSource | None, wait_s: float, *, is_head: bool
) -> Manifest | None:
    """Poll, reading only, for the manifest a running ingest of ``sha`` publishes; None when
    ``wait_s`` ends or the ingest stops first without one."""
    import time

    deadline = time.monotonic() + wait_s
    while True:
        time.sleep(max(0.0, min(WAIT_POLL_S, deadline - time.monotonic())))
        try:
            return _load(ws, sha, source)
        except FileNotFoundError:
            pass
        if time.monotonic() >= deadline or ingest_running(ws, sha, is_head=is_head) is None:
            try:  # the ingest may have published between the two looks
                return _load(ws, sha, source)
            except FileNotFoundError:
                return None


def _load_or_not_indexed(
    ws: Workspace,
    git: GitRepo,
    sha: str,
    *,
    head_selected: bool,
    source: ManifestSource | None = None,
    wait_s: float = 0.0,
) -> Manifest:
    try:
        return _load(ws, sha, source)
    except FileNotFoundError:
        is_head = head_selected or sha == git.head().sha
        running = ingest_running(ws, sha, is_head=is_head)
        if running is not None and wait_s > 0:
            waited = _wait_for_manifest(ws, sha, source, wait_s, is_head=is_head)
            if waited is not None:
                return waited
            running = ingest_running(ws, sha, is_head=is_head)
        if running is not None:
            raise SnapshotIngestRunning(sha, running) from None
        error = SnapshotNotIndexed(
            sha,
            nearest_indexed_ancestor=nearest_indexed_ancestor(ws, git, sha, source),
            head_selected=head_selected,
        )
        if not ws.is_initialized():
            error.recovery = "ragit init --yes"  # an ingest would fail with NOT_INITIALIZED
        raise error from None
