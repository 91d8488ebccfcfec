"""Ingest planning: the new snapshot computed from git objects, reading only (contract §6).

Knowledge is read from the target commit's tree (HEAD, or any commit given with
``at``), never from the working tree. Every mode computes the same thing — the
snapshot of the implicit surface at the target — and differs only in which base
it requires and where unchanged documents are carried over from:

* ``all``: no base required; unchanged documents are still reused from the
  target's own manifest or the nearest indexed ancestor (content addressing
  makes that exact), so a second ``--all`` writes nothing;
* ``since``: the base must be an indexed ancestor of the target;
* targeted (``files``/``paths``): start from the target's manifest, else its
  parent's, and re-evaluate only the selected paths;
* ``auto`` (no selector, used by hooks): ``since`` the nearest indexed
  first-parent ancestor, else ``all``.

The plan reads only: it admits, masks, types and chunks each new document
(rows from :mod:`ragit.ingest.rows`), carries reused ones over, and with
``--scope all`` binds the reviewed artifacts into the snapshot.
:mod:`ragit.ingest.apply` writes it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ragit.config import RagitConfig
from ragit.contract.errors import (
    ConfigInvalid,
    IngestBaseNotAncestor,
    IngestBaseNotIndexed,
    IngestCandidatesDirty,
    InputInvalid,
    NotInitialized,
    RagitError,
    SnapshotManifestInvalid,
    SnapshotNotIndexed,
    SnapshotStoreUnavailable,
)
from ragit.contract.inputs import escape_non_utf8, is_unicode_text
from ragit.ingest import ids
from ragit.ingest.request import IngestRequest
from ragit.ingest.rows import chunk_rows, decode_text, unit_rows
from ragit.snapshot._git import GitRepo, TreeFile
from ragit.snapshot.config_at import (
    CONFIG_PATH,
    committed_settings,
    config_for_commit,
    drift_message,
    settings_of,
    worktree_differences,
)
from ragit.snapshot.coverage import coverage_warning, measure
from ragit.snapshot.manifest import (
    Manifest,
    ManifestDoc,
    load_manifest,
    manifest_exists,
    parse_manifest,
)
from ragit.snapshot.selection import ManifestSource
from ragit.workspace import Workspace

NON_UTF8_NAME = "file name is not valid UTF-8 (rename the file to index it)"

Progress = Callable[[str], None]


@dataclass
class DocPlan:
    entry: ManifestDoc
    reused: bool
    rows: list[Any] = field(default_factory=list)  # ragit.store.ChunkRow for new chunks


@dataclass
class IngestPlan:
    target: str
    target_is_head: bool
    base_sha: str | None
    base_mode: str
    docs: list[DocPlan]
    removed_ids: list[str]
    dirty: list[str]
    skipped: list[dict[str, str]]
    masked: int
    admission: Any
    blockers: list[dict[str, Any]]
    existing_target: Manifest | None
    warnings: list[str]
    reuse_sources: list[Manifest]
    artifact_entries: list[dict[str, Any]] = field(default_factory=list)
    artifact_scopes: dict[str, list[str]] = field(default_factory=dict)
    artifact_rows: list[Any] = field(default_factory=list)
    # The markdown of the commit the snapshot leaves out (snapshot.coverage), and where the
    # snapshot-deciding configuration came from (snapshot.config_at).
    outside: dict[str, Any] = field(default_factory=dict)
    config_source: dict[str, Any] = field(default_factory=dict)


def _resolve_target(git: GitRepo, at: str | None) -> tuple[str, bool]:
    head = git.head()
    if at is None:
        if head.sha is None:
            raise SnapshotNotIndexed(None)
        return head.sha, True
    target = git.resolve_commitish(at)
    return target, target == head.sha


class _Indexed:
    """The indexed manifests planning reads: the files of ``.ragit/manifest`` and, with the
    shared store (``server``), the snapshots the server holds for commits the clone has no
    file of — a fresh clone (a CI job) finds its base there. A local file is always read
    first; the server is asked once for its indexed commits, then per manifest.

    Every server failure is ``SNAPSHOT_STORE_UNAVAILABLE`` naming ``target``.
    """

    def __init__(self, ws: Workspace, server: ManifestSource | None, target: str) -> None:
        self.ws = ws
        self.server = server
        self.target = target
        self._server_shas: set[str] | None = None

    def _on_server(self, sha: str) -> bool:
        if self.server is None:
            return False
        if self._server_shas is None:
            try:
                self._server_shas = set(self.server.indexed_shas())
            except SnapshotStoreUnavailable as exc:
                raise exc.naming(self.target) from None
        return sha in self._server_shas

    def exists(self, sha: str) -> bool:
        return manifest_exists(self.ws, sha) or self._on_server(sha)

    def load(self, sha: str | None) -> Manifest | None:
        """The manifest of ``sha`` (None: indexed neither locally nor on the server).

        Raises:
            SnapshotManifestInvalid, SnapshotSchemaUnsupported: as ``load_manifest``.
            SnapshotStoreUnavailable: the server failed (naming the target).
        """
        if sha is None:
            return None
        if manifest_exists(self.ws, sha):
            return load_manifest(self.ws, sha)
        if self.server is None or not self._on_server(sha):
            return None
        try:
            raw = self.server.manifest(sha)
        except SnapshotStoreUnavailable as exc:
            raise exc.naming(self.target) from None
        if raw is None:
            return None
        return parse_manifest(sha, raw, f"{self.server.name}:{sha}")

    def load_reusable(self, sha: str | None) -> Manifest | None:
        """Like :meth:`load`, but a corrupt manifest counts as absent.

        Used where a manifest is only a source of reuse (the target itself, the nearest
        ancestor of a full build): a truncated file must not block rebuilding it.
        """
        try:
            return self.load(sha)
        except SnapshotManifestInvalid:
            return None

    def nearest(self, git: GitRepo, sha: str) -> str | None:
        """The closest first-parent ancestor of ``sha`` indexed locally or on the server."""
        for candidate in git.first_parents(sha):
            if self.exists(candidate):
                return candidate
        return None


def _candidate_files(
    cfg: RagitConfig, tree: list[TreeFile], req: IngestRequest
) -> tuple[list[TreeFile], list[dict[str, str]], Callable[[str], bool]]:
    """Tree files selected by the request, the skipped ones, and the path predicate used."""
    from ragit.snapshot.surface import SurfaceMatcher, is_markdown

    skipped: list[dict[str, str]] = []
    if req.mode == "partial":
        # The globs given are paths (exact case); what they select need not be markdown
        # (a non-markdown file is reported as skipped).
        glob_matcher = SurfaceMatcher(["**"], req.files, []) if req.files else None
        wanted = set(req.paths)

        def selected(path: str) -> bool:
            if path.startswith(".ragit/"):
                return False
            return path in wanted or (glob_matcher is not None and glob_matcher.matches(path))

    else:
        surface = SurfaceMatcher(cfg.ingest.doc_globs, cfg.ingest.include, cfg.ingest.exclude)
        selected = surface.matches

    out: list[TreeFile] = []
    for item in tree:
        if not selected(item.path):
            continue
        if not is_unicode_text(item.path):
            skipped.append({"path": escape_non_utf8(item.path), "reason": NON_UTF8_NAME})
            continue
        if item.is_symlink:
            skipped.append(
                {"path": item.path, "reason": "symlink (only regular files are ingested)"}
            )
            continue
        if not is_markdown(item.path):
            skipped.append({"path": item.path, "reason": "not a markdown document"})
            continue
        out.append(item)
    return out, skipped, selected


def _process_doc(
    git: GitRepo, item: TreeFile, cfg: RagitConfig, *, explicit: bool, admission: Any
) -> tuple[DocPlan | None, dict[str, str] | None, int]:
    """Read, admit, mask, type and chunk one document."""
    from ragit.ingest.doctype import detect_doc_type
    from ragit.security.admission import BLOCKED_SENTINEL, evaluate

    size = git.blob_size(item.blob_sha)
    if size > cfg.ingest.max_file_bytes:
        return (
            None,
            {"path": item.path, "reason": f"larger than ingest.max_file_bytes ({size} B)"},
            0,
        )
    text, problem = decode_text(git.read_blob(item.blob_sha))
    if text is None:
        return None, {"path": item.path, "reason": problem or "unreadable"}, 0
    decision = evaluate(text, source_ref=item.path, surface="ingest.document", path=item.path)
    admission.record(decision, operation="ingest")
    if decision.action == "block" and cfg.security.admission_mode == "enforce":
        if explicit:
            raise InputInvalid(
                "paths",
                "blocked by admission control",
                path=item.path,
                reasonCodes=list(decision.reason_codes),
            )
        return None, {"path": item.path, "reason": "blocked by admission control"}, 0
    masked_text = decision.masked_text
    if masked_text == BLOCKED_SENTINEL:
        return None, {"path": item.path, "reason": "blocked by admission control"}, 0
    doc_type = detect_doc_type(item.path, masked_text)
    doc_id = ids.document_id(item.path)
    rows = chunk_rows(masked_text)
    chunk_ids = [row.chunk_id for row in rows]
    entry = ManifestDoc(
        path=item.path,
        document_id=doc_id,
        version_id=ids.version_id(doc_id, item.blob_sha),
        doc_type=doc_type,
        blob_sha=item.blob_sha,
        chunk_ids=chunk_ids,
    )
    return DocPlan(entry=entry, reused=False, rows=rows), None, decision.masked_count


def _stored_chunk_ids(ws: Workspace) -> set[str] | None:
    """The chunk ids the store's writes recorded as stored for committed manifests
    (``referenced.ids``), or None when it has no record (a store of an older RAGit).

    A manifest entry whose chunk ids are not all there was not written by an ingest of this
    store (edited, or copied from elsewhere): carrying it over would keep chunks that exist
    nowhere, so its document is read and chunked again instead."""
    from ragit.store.meta import read_referenced

    recorded = read_referenced(ws.store_dir)
    return recorded or None


def plan_ingest(
    ws: Workspace,
    cfg: RagitConfig,
    req: IngestRequest,
    progress: Progress,
    *,
    reuse_documents: bool = True,
    server: ManifestSource | None = None,
) -> IngestPlan:
    """Compute the new snapshot without writing anything.

    ``server``: the shared store's snapshots (``store.backend = "postgres"``); a base or
    target manifest the clone has no file of is read from there, so a fresh clone plans
    exactly as one that ingested the earlier commits itself.

    ``reuse_documents=False``: every candidate document is read and chunked again, none is
    carried over from an indexed manifest (the shared store lacks chunks the local manifests
    name: they were stored elsewhere).

    Raises:
        typed errors for bad refs, bases and dirty candidates (apply mode only; a
        dry-run records apply preconditions as blockers instead).
    """
    from ragit.security.admission import AdmissionSummary

    git = GitRepo(ws.root)
    target, target_is_head = _resolve_target(git, req.at)
    blockers: list[dict[str, Any]] = []
    warnings: list[str] = []
    # The keys that decide a snapshot come from the target commit (contract §6).
    differs = worktree_differences(ws, cfg)
    if differs:
        warnings.append(drift_message(differs))
    worktree_cfg = cfg
    cfg = config_for_commit(git, target, cfg)
    config_source: dict[str, Any] = {
        "commitSha": target,
        "committed": git.blob_at(target, CONFIG_PATH) is not None,
        "worktreeDiffers": differs,
    }

    def block(error: RagitError) -> None:
        if not req.dry_run:
            raise error
        blockers.append({"code": error.code, "details": error.details})

    if not ws.is_initialized():
        # Without init, .ragit/ is not git-ignored and every write would dirty the worktree.
        block(NotInitialized(str(ws.root)))

    indexed = _Indexed(ws, server, target)
    existing_target = indexed.load_reusable(target)
    base_sha: str | None = None
    base_mode = req.mode
    reuse_from: list[Manifest] = []
    base: Manifest | None = None
    if req.mode == "since":
        assert req.since is not None
        base_sha = git.resolve_commitish(req.since)
        if not git.is_ancestor(base_sha, target):
            block(IngestBaseNotAncestor(base_sha, target))
        elif not indexed.exists(base_sha):
            block(IngestBaseNotIndexed(base_sha, target))
        else:
            base = indexed.load(base_sha)
    elif req.mode == "partial":
        if existing_target is not None:
            base, base_sha, base_mode = existing_target, target, "partial-head"
        else:
            parent = git.parent(target)
            base = indexed.load(parent)
            if base is None:
                block(IngestBaseNotIndexed(parent, target))
            else:
                base_sha, base_mode = parent, "partial-parent"
    else:
        ancestor = indexed.nearest(git, target)
        base = indexed.load_reusable(ancestor)
        if req.mode == "auto":
            if existing_target is not None:
                base_sha, base_mode = target, "auto-head"
            elif base is not None:
                base_sha, base_mode = ancestor, "since"
            else:
                base_mode = "full"
    for manifest in (existing_target, base):
        if manifest is not None and manifest not in reuse_from:
            reuse_from.append(manifest)
    reuse: dict[tuple[str, str], ManifestDoc] = {}
    stored = _stored_chunk_ids(ws) if server is None else None
    # A document is carried over only from a snapshot made under the same snapshot-deciding
    # settings: a smaller size limit or a stricter admission must judge it again.
    same_rules = [m for m in reuse_from if _same_rules(git, m.commit_sha, cfg)]
    for manifest in reversed(same_rules if reuse_documents else []):
        for doc in manifest.docs:
            if doc.version_id != ids.version_id(doc.document_id, doc.blob_sha):
                continue  # chunked by an older chunker: chunk it again
            if stored is not None and not stored.issuperset(doc.chunk_ids):
                continue  # names chunks no write of this store recorded: derive it again
            reuse[(doc.path, doc.blob_sha)] = doc

    tree = git.tree_files(target)
    candidates, skipped, selected = _candidate_files(cfg, tree, req)
    dirty: list[str] = []
    if target_is_head:
        states = {
            p: state for p, state in git.dirty_paths().items() if selected(p) and is_unicode_text(p)
        }
        dirty = sorted(states)
        if dirty and req.committed_only:
            shown = ", ".join(dirty[:10]) + (", …" if len(dirty) > 10 else "")
            warnings.append(
                f"{len(dirty)} document(s) have uncommitted changes that this snapshot does not "
                f"include (it indexes the commit): {shown}"
            )
        elif dirty:
            removed = [p for p, state in states.items() if state == "removed"]
            block(IngestCandidatesDirty(dirty, already_staged=removed))

    admission = AdmissionSummary(mode=cfg.security.admission_mode)
    if not cfg.security.secret_masking:
        block(
            ConfigInvalid(
                ".ragit/config.toml",
                "security.secret_masking",
                "must be true to ingest (masking is applied before anything is stored)",
            )
        )
    explicit = req.mode == "partial"
    plans: dict[str, DocPlan] = {}
    masked = 0
    if explicit and base is not None:
        for doc in base.docs:
            if not selected(doc.path):
                plans[doc.path] = DocPlan(entry=doc, reused=True)
    started = time.monotonic()
    for n, item in enumerate(candidates, 1):
        if n % 16 == 0 or n == len(candidates):
            progress(f"plan: {n}/{len(candidates)} documents ({time.monotonic() - started:.1f}s)")
        known = reuse.get((item.path, item.blob_sha))
        if known is not None:
            plans[item.path] = DocPlan(entry=known, reused=True)
            continue
        plan, skip, count = _process_doc(git, item, cfg, explicit=explicit, admission=admission)
        masked += count
        if skip is not None:
            skipped.append(skip)
        if plan is not None:
            plans[item.path] = plan
    if explicit:
        seen = {c.path for c in candidates} | {s["path"] for s in skipped}
        known_paths = {d.path for d in base.docs} if base is not None else set()
        for path in req.paths:
            if path not in seen and path not in known_paths:
                warnings.append(f"{path}: not in the target commit; nothing to index")
    previous_ids = {d.document_id for d in (base.docs if base else [])}
    current_ids = {p.entry.document_id for p in plans.values()}
    removed = sorted(previous_ids - current_ids) if base is not None else []
    docs = [plans[path] for path in sorted(plans)]
    entries, scopes, artifact_rows = (
        _artifact_bindings(ws, target) if req.scope == "all" else ([], {}, [])
    )
    coverage = measure(
        target,
        (item.path for item in tree),
        (plan.entry.path for plan in docs),
        (item["path"] for item in skipped),
        cfg.ingest.exclude,
    )
    partial = coverage_warning(coverage, cfg.ingest.include, cfg.ingest.doc_globs)
    if partial is not None:
        warnings.append(partial)
    if differs and req.dry_run:
        # What the working-tree config would index once committed (a preview; the plan
        # itself is the committed config's).
        config_source["worktreeDocuments"] = _surface_count(worktree_cfg, tree)
    return IngestPlan(
        artifact_entries=entries,
        artifact_scopes=scopes,
        artifact_rows=artifact_rows,
        target=target,
        target_is_head=target_is_head,
        base_sha=base_sha,
        base_mode=base_mode,
        docs=docs,
        removed_ids=removed,
        dirty=dirty,
        skipped=sorted(skipped, key=lambda s: s["path"]),
        masked=masked,
        admission=admission,
        blockers=blockers,
        existing_target=existing_target,
        warnings=warnings,
        reuse_sources=reuse_from,
        outside=coverage.report(),
        config_source=config_source,
    )


def _same_rules(git: GitRepo, sha: str, cfg: RagitConfig) -> bool:
    """Whether the snapshot of ``sha`` was made under ``cfg``'s snapshot-deciding settings
    (its commit's config; one that is no longer valid is not the same)."""
    try:
        return committed_settings(git, sha) == settings_of(cfg)
    except RagitError:
        return False


def _surface_count(cfg: RagitConfig, tree: list[TreeFile]) -> int:
    """How many markdown files of ``tree`` the surface of ``cfg`` selects (0 when one of its
    globs is invalid: the commit step would then be refused by `config set` first)."""
    from ragit.snapshot.surface import SurfaceMatcher, is_markdown

    try:
        surface = SurfaceMatcher(cfg.ingest.doc_globs, cfg.ingest.include, cfg.ingest.exclude)
    except InputInvalid:
        return 0
    return sum(1 for item in tree if surface.matches(item.path) and is_markdown(item.path))


def _artifact_bindings(
    ws: Workspace, target: str
) -> tuple[list[dict[str, Any]], dict[str, list[str]], list[Any]]:
    """Reviewed artifacts ``--scope all`` binds into the snapshot: entries, scope lists, rows.

    Each searchable unit (an artifact body or an evidence excerpt, already masked)
    becomes one chunk whose id is content-addressed like a document chunk.
    """
    from ragit.artifacts.binding import pending_bindings

    entries: list[dict[str, Any]] = []
    scopes: dict[str, list[str]] = {"session": [], "harness": [], "evidence": []}
    rows: list[Any] = []
    for binding in pending_bindings(ws, target):
        chunk_ids: list[str] = []
        for unit, row in unit_rows(binding.get("units", [])):
            rows.append(row)
            chunk_ids.append(row.chunk_id)
            scope = str(unit.get("scope", "session"))
            scopes.setdefault(scope, [])
            if row.chunk_id not in scopes[scope]:
                scopes[scope].append(row.chunk_id)
        entry = {k: v for k, v in binding.items() if k != "units"}
        entry["chunkIds"] = chunk_ids
        entries.append(entry)
    entries.sort(key=lambda e: str(e.get("artifactId")))
    return entries, {k: sorted(v) for k, v in scopes.items()}, rows
