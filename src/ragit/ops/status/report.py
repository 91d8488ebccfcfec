"""`ragit status` core: a read-only summary that never fails on a missing snapshot.

It never writes anything and never opens the canonical store: store facts come
from RAGit's own metadata (``.ragit/store/meta.json``). The same function serves
the CLI and the MCP ``ragit_status`` tool.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ragit import _json
from ragit.contract.errors import (
    FIRST_COMMIT_RECOVERY,
    CorruptError,
    RagitError,
    SnapshotManifestInvalid,
)
from ragit.contract.recovery import commit_recovery
from ragit.ops.status.worktree import dirty_candidates, worktree_changes
from ragit.snapshot._git import GitRepo
from ragit.snapshot.manifest import list_manifest_shas, load_manifest, parse_manifest
from ragit.snapshot.selection import ingest_running, nearest_indexed_ancestor
from ragit.store.backend import SharedSource, store_backend
from ragit.workspace import Workspace

if TYPE_CHECKING:
    from ragit.config import RagitConfig


class SharedStore:
    """The shared store's answer for ``status`` and ``doctor`` (``store.backend =
    "postgres"``): its facts (:meth:`ragit.store.backend.PostgresSource.health`) or the typed
    error reaching it, and the manifests it holds — all over one connection, closed by
    :meth:`close`."""

    name = "postgres"

    def __init__(self, ws: Workspace, cfg: RagitConfig) -> None:
        from ragit.snapshot.repository import store_repository

        self.ws = ws
        self.repository: str | None = None  # None: unknown (a shallow clone, unnamed)
        self.facts: dict[str, Any] | None = None
        self.error: RagitError | None = None
        self._source: SharedSource | None = None
        try:
            self.repository = store_repository(ws, cfg)
            self._source = store_backend(cfg.store.backend).server(ws, self.repository)
            self.facts = self._source.health()
        except RagitError as exc:
            self.error = exc

    def close(self) -> None:
        if self._source is not None:
            self._source.close()

    @property
    def readable(self) -> bool:
        return self.facts is not None and self.facts["snapshots"] is not None

    def problem(self) -> str | None:
        if self.error is not None:
            return self.error.message
        assert self.facts is not None
        if self.facts["snapshots"] is None:
            return (
                f"the shared store's schema is version {self.facts['schemaVersion']}, this "
                f"RAGit reads version {self.facts['targetSchemaVersion']}"
            )
        return None

    def indexed_shas(self) -> list[str]:
        if not self.readable:
            return []
        assert self.facts is not None
        return [s["commitSha"] for s in self.facts["snapshots"]]

    def manifest(self, sha: str) -> bytes | None:
        if sha not in self.indexed_shas():
            return None
        assert self._source is not None  # readable: reached
        return self._source.manifest(sha)

    def require(self, sha: str | None = None) -> dict[str, Any]:
        """The facts, or the typed error reaching the store (naming ``sha``).

        Raises:
            SnapshotStoreUnavailable: the server cannot be reached, refuses, or has a schema
                this RAGit does not read.
        """
        from ragit.contract.errors import SnapshotStoreUnavailable

        error = self.error
        if isinstance(error, SnapshotStoreUnavailable) and error.details.get("resolvedSha") is None:
            raise SnapshotStoreUnavailable(sha, str(error.details.get("reason")))
        if error is not None:
            raise error
        problem = self.problem()
        if problem is not None:
            raise SnapshotStoreUnavailable(sha, problem)
        assert self.facts is not None
        return self.facts

    def unstored(self) -> dict[str, list[str]]:
        """The chunk ids each snapshot of the repository names that the server lacks, by
        commit (only while the store is readable: :attr:`readable`)."""
        if not self.readable:
            return {}
        assert self._source is not None  # readable: reached
        return self._source.unstored()

    def block(self, head_sha: str | None) -> dict[str, Any]:
        """The ``store`` object of ``status`` for the shared store."""
        out: dict[str, Any] = {"backend": "postgres", "repository": self.repository}
        if self.error is not None:
            out.update(
                present=False, readable=False, errorCode=self.error.code, reason=self.error.message
            )
            return out
        assert self.facts is not None
        shas = self.indexed_shas()
        out.update(
            present=True,
            readable=self.readable,
            schemaVersion=self.facts["schemaVersion"],
            targetSchemaVersion=self.facts["targetSchemaVersion"],
            pgvector=self.facts["pgvector"]["installed"],
            snapshotCount=len(shas),
            headIndexed=head_sha is not None and head_sha in shas,
        )
        problem = self.problem()
        if problem is not None:
            out["reason"] = problem
        return out


def open_shared(ws: Workspace) -> SharedStore | None:
    """The shared store when the repository's config names it (``store.backend =
    "postgres"``), reached once; None for the embedded store, or a config that cannot be read
    (local manifests then decide, as they always did). The caller closes it."""
    from ragit.config import load_config

    try:
        cfg = load_config(ws)
    except RagitError:
        return None
    if not store_backend(cfg.store.backend).shared:
        return None
    return SharedStore(ws, cfg)


@contextmanager
def shared_for(ws: Workspace, shared: SharedStore | None = None) -> Iterator[SharedStore | None]:
    """``shared`` when the caller already reached it; otherwise the store :func:`open_shared`
    reaches (None for the embedded store), closed on exit."""
    if shared is not None:
        yield shared
        return
    owned = open_shared(ws)
    try:
        yield owned
    finally:
        if owned is not None:
            owned.close()


def shared_manifest(ws: Workspace, sha: str, shared: SharedStore | None) -> Any:
    """The manifest of an indexed ``sha``: the local file, or with ``shared`` the server's.

    Raises:
        SnapshotManifestInvalid, SnapshotSchemaUnsupported: as :func:`load_manifest`.
        SnapshotStoreUnavailable: the server no longer holds the commit.
    """
    if shared is None:
        return load_manifest(ws, sha)
    raw = shared.manifest(sha)
    if raw is None:  # gone since the list was read
        from ragit.contract.errors import SnapshotStoreUnavailable

        raise SnapshotStoreUnavailable(sha, "the shared store has no snapshot of the commit")
    return parse_manifest(sha, raw, f"postgres:{sha}")


def _snapshot_block(
    ws: Workspace, git: GitRepo, dirty: dict[str, str], shared: SharedStore | None = None
) -> dict[str, Any]:
    head = git.head()
    block: dict[str, Any] = {
        "requestedRef": "HEAD",
        "resolvedSha": head.sha,
        "selection": "head-exact",
        "status": "missing",
        "branch": head.branch,
        "detached": head.detached,
        "worktreeDirty": bool(dirty),
    }
    if head.sha is None:
        block["reason"] = "HEAD has no commit yet"
        # The first commit makes HEAD; an ingest then names any document left to commit.
        block["recovery"] = "ragit init --yes" if not ws.is_initialized() else FIRST_COMMIT_RECOVERY
        return block
    if shared is not None and shared.problem() is not None:
        block["status"] = "store-unavailable"
        block["reason"] = shared.problem()
        block["recovery"] = "ragit doctor --format json"
        return block
    try:
        manifest = _load(ws, head.sha, shared)
    except FileNotFoundError:
        block["reason"] = "no manifest for HEAD"
        running = ingest_running(ws, head.sha, is_head=True)
        if running is not None:
            block["reason"] = (
                f"no manifest for HEAD yet: an ingest of it is running (pid {running.get('pid')}, "
                f"started {running.get('startedAt')})"
            )
            block["ingestRunning"] = True
        ancestor = nearest_indexed_ancestor(ws, git, head.sha, shared)
        block["nearestIndexedAncestor"] = ancestor
        block["recovery"] = f"ragit ingest --since {ancestor}" if ancestor else "ragit ingest --all"
        candidates = dirty_candidates(ws, dirty)
        block["dirtyCandidates"] = candidates
        if candidates:
            block["reason"] = (
                f"no manifest for HEAD, and {len(candidates)} document candidate(s) have "
                "uncommitted changes that block ingest"
            )
            removed = [p for p in candidates if dirty.get(p) == "removed"]
            block["recovery"] = commit_recovery(candidates, removed)
        if not ws.is_initialized():
            block["recovery"] = "ragit init --yes"  # an ingest would fail with NOT_INITIALIZED
        elif running is not None:
            block["recovery"] = "ragit ingest --wait"
        return block
    except (SnapshotManifestInvalid, CorruptError) as exc:
        block["status"] = "invalid"
        block["reason"] = exc.message
        block["errorCode"] = exc.code
        block["recovery"] = exc.recovery
        return block
    except RagitError as exc:
        if shared is None:
            raise
        block["status"] = "store-unavailable"  # the server went away between two reads
        block["reason"] = exc.message
        block["recovery"] = "ragit doctor --format json"
        return block
    block["documents"] = len(manifest.docs)
    block["chunks"] = len(manifest.durable_chunk_ids())
    block["coverage"] = _coverage_block(git, head.sha, manifest)
    store_problem = None if shared is not None else _store_problem(ws)
    if store_problem:
        block["status"] = "store-unavailable"
        block["reason"] = store_problem
        block["recovery"] = "ragit doctor --format json"
    else:
        block["status"] = "indexed"
    return block


def _coverage_block(git: GitRepo, sha: str, manifest: Any) -> dict[str, Any] | None:
    """The commit's markdown against the snapshot (contract §6): ``{markdown, indexed,
    outsideSurface, warning}``; None when the committed config is not valid."""
    from ragit.snapshot.coverage import snapshot_coverage

    try:
        coverage, warning = snapshot_coverage(git, sha, manifest)
    except RagitError:
        return None
    return {
        "markdown": coverage.markdown,
        "indexed": coverage.indexed,
        "outsideSurface": coverage.report(),
        "warning": warning,
    }


def _load(ws: Workspace, sha: str, shared: SharedStore | None) -> Any:
    """The manifest of ``sha``: the local file, or the shared store's (FileNotFoundError:
    not indexed there)."""
    if shared is None:
        return load_manifest(ws, sha)
    raw = shared.manifest(sha)
    if raw is None:
        raise FileNotFoundError(sha)
    return parse_manifest(sha, raw, f"postgres:{sha}")


def _store_problem(ws: Workspace) -> str | None:
    from ragit.store.meta import read_meta

    try:
        meta = read_meta(ws)
    except RagitError as exc:
        return exc.message
    if meta is None:
        return "the store does not exist (.ragit/store is missing)"
    if not (ws.store_dir / "chunks").is_dir():
        return "the store's chunk collection is missing"
    # A store migrated to another embedding profile still serves every snapshot: chunk
    # ids do not depend on the profile, so the manifest's profile is history, not a key.
    return None


def repository_status(ws: Workspace, shared: SharedStore | None = None) -> dict[str, Any]:
    """Everything `status` reports (camelCase, JSON-ready).

    ``shared``: the shared store already reached by the caller (``doctor``, which then
    connects once); otherwise it is reached here when the config names it, and closed.
    """
    from ragit.config import load_config, unknown_keys

    git = GitRepo(ws.root)
    head = git.head()
    dirty = git.dirty_paths()
    config_block: dict[str, Any] = {"path": ws.relative(ws.config_path), "valid": True}
    try:
        cfg = load_config(ws)
        config_block["unknownKeys"] = unknown_keys(ws)
        config_block["worktreeDiffers"] = _worktree_differs(ws, cfg)
    except RagitError as exc:
        cfg = None
        config_block.update(valid=False, errorCode=exc.code, reason=exc.message)
    # The shared store answers for snapshots and the store; the local store is not needed.
    owned = None
    if shared is None and cfg is not None and store_backend(cfg.store.backend).shared:
        shared = owned = SharedStore(ws, cfg)
    try:
        return _repository_status(ws, git, head, dirty, cfg, config_block, shared)
    finally:
        if owned is not None:
            owned.close()


def _worktree_differs(ws: Workspace, cfg: Any) -> list[str]:
    """Snapshot-deciding keys the working-tree config changes against HEAD's committed one."""
    from ragit.snapshot.config_at import worktree_differences

    try:
        return worktree_differences(ws, cfg)
    except RagitError:
        return []


def _repository_status(
    ws: Workspace,
    git: GitRepo,
    head: Any,
    dirty: dict[str, str],
    cfg: Any,
    config_block: dict[str, Any],
    shared: SharedStore | None,
) -> dict[str, Any]:
    from ragit.ops.authority.summary import read_index_summary

    data: dict[str, Any] = {
        "root": str(ws.root),
        "initialized": ws.is_initialized(),
        "branch": head.branch,
        "head": head.sha,
        "detached": head.detached,
        "worktreeDirty": bool(dirty),
        "worktreeChanges": worktree_changes(ws, dirty),
        "snapshot": _snapshot_block(ws, git, dirty, shared),
        "manifests": len(list_manifest_shas(ws)),
    }
    data["searchReady"] = data["snapshot"]["status"] == "indexed"
    data["config"] = config_block
    data["store"] = _store_block(ws) if shared is None else shared.block(head.sha)
    data["embedding"] = _embedding_block(ws, cfg, shared)
    data["writerLock"] = _lock_block(ws)
    data["hooks"] = {"lastRun": last_hook_run(ws), "log": ws.relative(ws.runtime_dir / HOOKS_LOG)}
    data["memoryLock"] = _memory_lock_block(ws)
    data["transactions"] = _transactions_block(ws)
    data["docsAuthority"] = read_index_summary(ws)
    if cfg is not None:
        data["security"] = {
            "maskingConfigured": cfg.security.secret_masking,
            "outputRemasking": True,
            "remoteEmbeddingPolicy": cfg.security.remote_embedding_policy,
            "admissionMode": cfg.security.admission_mode,
        }
    return data


HOOKS_LOG = "hooks.log"


def last_hook_run(ws: Workspace) -> dict[str, Any] | None:
    """The last outcome a hook-triggered ingest appended to ``.ragit/runtime/hooks.log``:
    ``{recordedAt, hook, outcome (ok|failed|coalesced|skipped), code, commitSha, recovery,
    warnings}``, or ``None`` when no hook has run. Reads only the end of the log."""

    path = ws.runtime_dir / HOOKS_LOG
    try:
        with path.open("rb") as log:
            size = log.seek(0, 2)
            log.seek(max(0, size - 65536))
            tail = log.read().decode("utf-8", "replace")
    except OSError:
        return None
    for line in reversed(tail.splitlines()):
        try:
            record = _json.loads(line)
        except ValueError:
            continue  # a line the hook's interpreter printed (a traceback, a warning)
        if not isinstance(record, dict) or "hook" not in record or "ok" not in record:
            continue
        if record.get("ok") is not True:
            outcome = "failed"
        elif "coalesced" in record:
            outcome = "coalesced"
        elif "skipped" in record:
            outcome = "skipped"
        else:
            outcome = "ok"
        warnings = record.get("warnings")
        return {
            "recordedAt": record.get("recordedAt"),
            "hook": record.get("hook"),
            "outcome": outcome,
            "code": record.get("code"),
            "commitSha": record.get("commitSha"),
            "recovery": record.get("recovery"),
            "warnings": list(warnings) if isinstance(warnings, list) else [],
        }
    return None


def _store_block(ws: Workspace) -> dict[str, Any]:
    from ragit.store.meta import read_meta

    try:
        meta = read_meta(ws)
    except RagitError as exc:
        return {"present": True, "readable": False, "errorCode": exc.code, "reason": exc.message}
    if meta is None:
        return {"present": False}
    return {
        "present": True,
        "readable": True,
        "backend": "zvec",
        "schemaVersion": meta.schema_version,
        "storeId": meta.store_id,
        "generation": meta.generation,
        "chunkCount": meta.chunk_count,
        "publishedAt": meta.published_at,
    }


def _embedding_block(ws: Workspace, cfg: Any, shared: SharedStore | None = None) -> dict[str, Any]:
    """Configured profile, the store's profile, readiness and the cache (never calls a provider).

    On the shared store, ``store`` names the embedding namespaces of the repository's snapshots
    on the server (``{"backend": "postgres", "namespaces": [...]}``; the server keeps no
    provider or model), and ``needsMigration`` is whether one of them is not the configured
    profile's (`ragit migrate embeddings` moves them).
    """
    import os

    from ragit.store.meta import read_meta

    out: dict[str, Any] = {"configured": None, "store": None}
    meta = None
    served: set[str] = set()
    if shared is not None:
        if shared.readable:
            assert shared.facts is not None
            served = {str(s["namespace"]) for s in shared.facts["snapshots"]}
            out["store"] = {"backend": "postgres", "namespaces": sorted(served)}
    else:
        try:
            meta = read_meta(ws)
        except RagitError:
            meta = None
        out["store"] = dict(meta.embedding) if meta is not None else None
    if cfg is None:
        out.update(ready=False, needsMigration=False)
        return out
    from ragit.embed.profile import missing_credential, resolve_profile
    from ragit.embed.summary import dry_run_cache_summary

    try:
        profile = resolve_profile(cfg.embedding)
    except RagitError as exc:
        out.update(ready=False, needsMigration=False, errorCode=exc.code, reason=exc.message)
        return out
    out["configured"] = {
        **profile.as_dict(),
        "egress": profile.egress,
        "timeoutMs": cfg.embedding.timeout_ms,
        "cacheEnabled": cfg.embedding.cache_enabled,
        "cacheDir": cfg.embedding.cache_dir,
    }
    needs_migration = bool(served - {profile.namespace_id}) or bool(
        meta is not None
        and meta.chunk_count > 0
        and meta.embedding.get("namespaceId") != profile.namespace_id
    )
    credential = missing_credential(profile, os.environ)
    out["needsMigration"] = needs_migration
    out["credentialMissing"] = credential
    out["ready"] = credential is None and not needs_migration
    try:
        out["cache"] = dry_run_cache_summary(
            ws.root, cfg.embedding, cfg.security, timeout_ms=cfg.embedding.timeout_ms
        )
    except RagitError as exc:
        out["cache"] = {"enabled": False, "errorCode": exc.code, "reason": exc.message}
        out["ready"] = False
    return out


def _lock_block(ws: Workspace) -> dict[str, Any]:
    # ragit.store.lock.inspect_lock without the writer's lock class (read-only, as above).
    from ragit._lock import inspect

    info = inspect(ws.lock_path)
    return {"state": info.state, "owner": info.owner, "path": ws.relative(ws.lock_path)}


def _memory_lock_block(ws: Workspace) -> dict[str, Any]:
    from ragit._lock import inspect_flocked  # read-only (status is served by the MCP server)

    info = inspect_flocked(ws.memory_lock_path)
    return {"state": info.state, "owner": info.owner, "path": ws.relative(info.path)}


def _transactions_block(ws: Workspace) -> dict[str, Any]:
    from ragit.store.journal_scan import scan_journals

    states = scan_journals(ws)
    pending = [s for s in states if s.classification != "completed"]
    return {
        "total": len(states),
        "pending": [
            {"transactionId": s.transaction_id, "classification": s.classification} for s in pending
        ],
    }
