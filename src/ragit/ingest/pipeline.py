"""Commit-bound ingest: plan from git objects, then apply under the writer lock (contract §6).

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

The plan phase reads only. Apply takes the writer lock, recovers leftover
journals, embeds new chunks with zvec closed, then inserts, verifies, publishes
the manifest atomically and publishes a new store generation.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import Field, StrictBool

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
)
from ragit.contract.models import InputModel
from ragit.ingest import ids
from ragit.snapshot._git import GitRepo, TreeFile
from ragit.snapshot.manifest import (
    INDEX_VERSION,
    ChunkScopes,
    Manifest,
    ManifestDoc,
    ManifestEmbedding,
    load_manifest,
    manifest_exists,
)
from ragit.snapshot.selection import nearest_indexed_ancestor
from ragit.workspace import Workspace

Progress = Callable[[str], None]
PRECHECK_MIN_ROWS = 64


class IngestInput(InputModel):
    """The ``--input`` JSON of `ragit ingest`."""

    all: StrictBool | None = None
    since: str | None = Field(default=None, min_length=1)
    files: str | list[str] | None = None
    paths: list[str] | None = None
    at: str | None = Field(default=None, min_length=1)
    scope: Literal["durable", "all"] | None = None


@dataclass
class IngestRequest:
    """What to ingest; built from flags or from :class:`IngestInput`."""

    all: bool = False
    since: str | None = None
    files: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    at: str | None = None
    scope: str = "durable"
    dry_run: bool = False

    @property
    def mode(self) -> str:
        if self.all:
            return "full"
        if self.since is not None:
            return "since"
        if self.files or self.paths:
            return "partial"
        return "auto"


@dataclass
class _DocPlan:
    entry: ManifestDoc
    reused: bool
    rows: list[Any] = field(default_factory=list)  # ragit.store.ChunkRow for new chunks


@dataclass
class _Plan:
    target: str
    target_is_head: bool
    base_sha: str | None
    base_mode: str
    docs: list[_DocPlan]
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


def request_from_input(payload: IngestInput, *, dry_run: bool) -> IngestRequest:
    """Translate the JSON request into an :class:`IngestRequest`."""
    from ragit.ingest.surface import split_globs

    files: list[str] = []
    if isinstance(payload.files, str):
        files = split_globs(payload.files)
    elif payload.files:
        files = list(payload.files)
    return IngestRequest(
        all=bool(payload.all),
        since=payload.since,
        files=files,
        paths=list(payload.paths or []),
        at=payload.at,
        scope=payload.scope or "durable",
        dry_run=dry_run,
    )


def validate_request(req: IngestRequest) -> None:
    """Reject contradictory selectors and unsafe globs/paths.

    Raises:
        InputInvalid: several modes at once, or a glob/path that escapes the repository.
    """
    from ragit.ingest.surface import validate_repo_glob, validate_repo_path

    chosen = [
        name
        for name, on in (
            ("all", req.all),
            ("since", req.since is not None),
            ("files/paths", bool(req.files or req.paths)),
        )
        if on
    ]
    if len(chosen) > 1:
        raise InputInvalid("mode", f"choose one of --all, --since, --files/--path (got {chosen})")
    for glob in req.files:
        validate_repo_glob(glob, "files")
    for path in req.paths:
        validate_repo_path(path, "paths")
    if req.scope not in ("durable", "all"):
        raise InputInvalid("scope", "must be durable or all")


# ---------------------------------------------------------------- planning


def _resolve_target(git: GitRepo, at: str | None) -> tuple[str, bool]:
    head = git.head()
    if at is None:
        if head.sha is None:
            raise SnapshotNotIndexed(None)
        return head.sha, True
    target = git.resolve_commitish(at)
    return target, target == head.sha


def _load_optional(ws: Workspace, sha: str | None) -> Manifest | None:
    if sha is None or not manifest_exists(ws, sha):
        return None
    return load_manifest(ws, sha)


def _load_reusable(ws: Workspace, sha: str | None) -> Manifest | None:
    """Like :func:`_load_optional`, but a corrupt manifest counts as absent.

    Used where a manifest is only a source of reuse (the target itself, the nearest
    ancestor of a full build): a truncated file must not block rebuilding it.
    """
    try:
        return _load_optional(ws, sha)
    except SnapshotManifestInvalid:
        return None


def _candidate_files(
    cfg: RagitConfig, tree: list[TreeFile], req: IngestRequest
) -> tuple[list[TreeFile], list[dict[str, str]], Callable[[str], bool]]:
    """Tree files selected by the request, the skipped ones, and the path predicate used."""
    from ragit.ingest.surface import SurfaceMatcher, is_markdown

    skipped: list[dict[str, str]] = []
    if req.mode == "partial":
        glob_matcher = SurfaceMatcher(req.files, ["**"], []) if req.files else None
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


def _decode(raw: bytes) -> tuple[str | None, str | None]:
    if b"\x00" in raw[:8192]:
        return None, "binary content"
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError:
        return None, "not valid UTF-8"


def _process_doc(
    git: GitRepo, item: TreeFile, cfg: RagitConfig, *, explicit: bool, admission: Any
) -> tuple[_DocPlan | None, dict[str, str] | None, int]:
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
    text, problem = _decode(git.read_blob(item.blob_sha))
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
    return _DocPlan(entry=entry, reused=False, rows=rows), None, decision.masked_count


def chunk_rows(masked_text: str) -> list[Any]:
    """Store rows (without vectors) for the chunks of one masked document text."""
    from ragit.ingest.chunking import chunk_markdown, normalize_for_id
    from ragit.store import ChunkRow

    rows: list[Any] = []
    for chunk in chunk_markdown(masked_text):
        cid = ids.chunk_id(tuple(chunk.heading_path), normalize_for_id(chunk.text))
        search_text = chunk.indexed_text
        rows.append(
            ChunkRow(
                chunk_id=cid,
                text=chunk.text,
                search_en=search_text,
                search_cjk=ids.cjk_runs(search_text),
                section_title=chunk.section_title,
                heading_path=" > ".join(chunk.heading_path),
                token_count=chunk.token_count,
                vector=(),
            )
        )
    return rows


def process_blob(git: GitRepo, path: str, blob_sha: str, cfg: RagitConfig) -> list[Any] | None:
    """Rows of a document version already in a manifest, regenerated from git (rebuild).

    Masking is applied exactly as ingest did; admission is not re-decided (the manifest
    records that the document was admitted). None when the blob is not a text document.
    """
    from ragit.security.masking import mask_text

    text, _problem = _decode(git.read_blob(blob_sha))
    if text is None:
        return None
    return chunk_rows(mask_text(text).text)


def plan_ingest(ws: Workspace, cfg: RagitConfig, req: IngestRequest, progress: Progress) -> _Plan:
    """Compute the new snapshot without writing anything.

    Raises:
        typed errors for bad refs, bases and dirty candidates (apply mode only; a
        dry-run records apply preconditions as blockers instead).
    """
    from ragit.security.admission import AdmissionSummary

    git = GitRepo(ws.root)
    target, target_is_head = _resolve_target(git, req.at)
    blockers: list[dict[str, Any]] = []
    warnings: list[str] = []

    def block(error: RagitError) -> None:
        if not req.dry_run:
            raise error
        blockers.append({"code": error.code, "details": error.details})

    if not ws.is_initialized():
        # Without init, .ragit/ is not git-ignored and every write would dirty the worktree.
        block(NotInitialized(str(ws.root)))

    existing_target = _load_reusable(ws, target)
    base_sha: str | None = None
    base_mode = req.mode
    reuse_from: list[Manifest] = []
    base: Manifest | None = None
    if req.mode == "since":
        assert req.since is not None
        base_sha = git.resolve_commitish(req.since)
        if not git.is_ancestor(base_sha, target):
            block(IngestBaseNotAncestor(base_sha, target))
        elif not manifest_exists(ws, base_sha):
            block(IngestBaseNotIndexed(base_sha, target))
        else:
            base = load_manifest(ws, base_sha)
    elif req.mode == "partial":
        if existing_target is not None:
            base, base_sha, base_mode = existing_target, target, "partial-head"
        else:
            parent = git.parent(target)
            base = _load_optional(ws, parent)
            if base is None:
                block(IngestBaseNotIndexed(parent, target))
            else:
                base_sha, base_mode = parent, "partial-parent"
    else:
        ancestor = nearest_indexed_ancestor(ws, git, target)
        base = _load_reusable(ws, ancestor)
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
    for manifest in reversed(reuse_from):
        for doc in manifest.docs:
            if doc.version_id == ids.version_id(doc.document_id, doc.blob_sha):
                reuse[(doc.path, doc.blob_sha)] = doc

    tree = git.tree_files(target)
    candidates, skipped, selected = _candidate_files(cfg, tree, req)
    dirty: list[str] = []
    if target_is_head:
        dirty = sorted(p for p, _state in git.dirty_paths().items() if selected(p))
        if dirty:
            block(IngestCandidatesDirty(dirty))

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
    plans: dict[str, _DocPlan] = {}
    masked = 0
    if explicit and base is not None:
        for doc in base.docs:
            if not selected(doc.path):
                plans[doc.path] = _DocPlan(entry=doc, reused=True)
    started = time.monotonic()
    for n, item in enumerate(candidates, 1):
        known = reuse.get((item.path, item.blob_sha))
        if known is not None:
            plans[item.path] = _DocPlan(entry=known, reused=True)
            continue
        plan, skip, count = _process_doc(git, item, cfg, explicit=explicit, admission=admission)
        masked += count
        if skip is not None:
            skipped.append(skip)
        if plan is not None:
            plans[item.path] = plan
        if n % 500 == 0:
            progress(f"planned {n}/{len(candidates)} documents ({time.monotonic() - started:.1f}s)")
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
    return _Plan(
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
    )


# ---------------------------------------------------------------- apply


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")[:-4] + "Z"


def unit_rows(units: list[dict[str, Any]]) -> list[tuple[dict[str, Any], Any]]:
    """One store row per searchable artifact unit (texts are masked by the memory writers)."""
    from ragit.ingest.chunking import normalize_for_id
    from ragit.store import ChunkRow

    out: list[tuple[dict[str, Any], Any]] = []
    for unit in units:
        text = normalize_for_id(str(unit["text"]))
        if not text.strip():
            continue
        title = str(unit.get("sectionTitle") or unit.get("sourceId"))
        cid = ids.chunk_id(("artifact", str(unit["sourceType"]), str(unit["sourceId"])), text)
        search = f"{title}\n\n{text}"
        row = ChunkRow(
            chunk_id=cid,
            text=text,
            search_en=search,
            search_cjk=ids.cjk_runs(search),
            section_title=title,
            heading_path=title,
            token_count=len(text.split()),
            vector=(),
        )
        out.append((unit, row))
    return out


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


def _build_manifest(plan: _Plan, git: GitRepo, profile: Any) -> Manifest:
    info = profile.as_dict()
    return Manifest(
        index_version=INDEX_VERSION,
        commit_sha=plan.target,
        parent_sha=git.parent(plan.target),
        created_at=_now(),
        embedding=ManifestEmbedding(
            namespace_id=info["namespaceId"],
            provider=info["provider"],
            model=info["model"],
            dimensions=info["dimensions"],
        ),
        docs=[p.entry for p in plan.docs],
        chunk_scopes=ChunkScopes(
            session=plan.artifact_scopes.get("session", []),
            harness=plan.artifact_scopes.get("harness", []),
            evidence=plan.artifact_scopes.get("evidence", []),
        ),
        artifact_entries=plan.artifact_entries,
    )


def _same_docs(a: Manifest, b: Manifest) -> bool:
    return (
        [d.model_dump() for d in a.docs] == [d.model_dump() for d in b.docs]
        and a.chunk_scopes == b.chunk_scopes
        and a.artifact_entries == b.artifact_entries
    )


def _embed_rows(rows: list[Any], embedder: Any, progress: Progress) -> list[Any]:
    """Attach vectors to ``rows`` (each unique chunk embedded once).

    Each vector is kept as an ``array('f')`` (1 KiB at 256 dimensions instead of about
    8 KiB as a list of Python floats); the store holds float32 anyway, and a double
    narrows to the same float32 here as in zvec.
    """
    from array import array
    from dataclasses import replace

    out: list[Any] = []
    batch = 256
    started = time.monotonic()
    last = started
    for i in range(0, len(rows), batch):
        part = rows[i : i + batch]
        vectors = embedder.embed([r.search_en for r in part])
        out.extend(replace(r, vector=array("f", v)) for r, v in zip(part, vectors, strict=True))
        now = time.monotonic()
        if now - last >= 2.0 and i + batch < len(rows):
            done = i + batch
            rate = done / max(now - started, 1e-6)
            eta = (len(rows) - done) / max(rate, 1e-6)
            progress(f"embedded {done}/{len(rows)} chunks ({rate:.0f}/s, ETA {eta:.0f}s)")
            last = now
    return out


def run_ingest(
    ws: Workspace, cfg: RagitConfig, req: IngestRequest, progress: Progress
) -> dict[str, Any]:
    """Plan and (unless dry-run) apply an ingest; returns the `ingest` data (contract §6).

    Raises:
        typed RAGit errors for every precondition of contract §6.
    """
    from ragit.embed import build_embedder

    t_start = time.monotonic()
    validate_request(req)
    plan = plan_ingest(ws, cfg, req, progress)
    git = GitRepo(ws.root)
    embedder = build_embedder(
        ws.root, cfg.embedding, cfg.security, mode="dry-run" if req.dry_run else "cli"
    )
    new_rows: dict[str, Any] = {}
    for doc in plan.docs:
        for row in doc.rows:
            new_rows.setdefault(row.chunk_id, row)
    for row in plan.artifact_rows:
        new_rows.setdefault(row.chunk_id, row)
    manifest = _build_manifest(plan, git, embedder.profile)
    _check_store_profile(ws, embedder.profile.as_dict(), plan, dry_run=req.dry_run)
    noop = plan.existing_target is not None and _same_docs(plan.existing_target, manifest)
    data: dict[str, Any] = {
        "mode": "dry-run" if req.dry_run else "apply",
        "commitSha": plan.target,
        "manifestPath": ws.relative(ws.manifest_path(plan.target)),
        "fullSnapshot": req.mode != "partial",
        "baseMode": plan.base_mode,
        "baseSha": plan.base_sha,
        "scope": req.scope,
        "documents": len(plan.docs),
        "processed": sum(1 for d in plan.docs if not d.reused),
        "reused": sum(1 for d in plan.docs if d.reused),
        "skipped": len(plan.skipped),
        "skippedFiles": plan.skipped,
        "embedded": 0,
        "masked": plan.masked,
        "plannedFiles": sorted(d.entry.path for d in plan.docs if not d.reused),
        "deletedDocumentIds": plan.removed_ids,
        "dirtyCandidates": plan.dirty,
        "wouldFail": bool(plan.blockers),
        "blockers": plan.blockers,
        "noop": noop,
        "admission": plan.admission.dump(),
        "boundArtifactIds": [str(e["artifactId"]) for e in plan.artifact_entries],
        "timings": {"totalMs": 0, "embedMs": 0, "storeMs": 0},
        "warnings": list(plan.warnings),
    }
    if req.dry_run:
        _dry_run_lock_blockers(ws, data)
        data["embedded"] = _count_missing(ws, list(new_rows))
        data["wouldFail"] = bool(data["blockers"])
        data["timings"]["totalMs"] = int((time.monotonic() - t_start) * 1000)
        return data
    if noop:
        if _residue_left(ws):
            # The snapshot is unchanged, but a crashed writer may have committed this very
            # manifest without publishing its chunks: only a writer finishes that.
            data["warnings"].extend(_recover_residue(ws, plan.target))
        data["timings"]["totalMs"] = int((time.monotonic() - t_start) * 1000)
        return data
    known_ids: set[str] = set()
    for source in plan.reuse_sources:
        known_ids |= source.all_chunk_ids()
    embed_ms, store_ms, embedded, lock_warnings = _apply(
        ws, plan, manifest, list(new_rows.values()), embedder, progress, known_ids
    )
    data["warnings"].extend(lock_warnings)
    if plan.artifact_entries:
        from ragit.artifacts.binding import mark_bound

        bound = [str(e["artifactId"]) for e in plan.artifact_entries]
        mark_bound(ws, bound, plan.target)
    data["embedded"] = embedded
    data["timings"] = {
        "totalMs": int((time.monotonic() - t_start) * 1000),
        "embedMs": embed_ms,
        "storeMs": store_ms,
    }
    return data


def _check_store_profile(
    ws: Workspace, profile: dict[str, Any], plan: _Plan, *, dry_run: bool
) -> None:
    """A store holding another embedding profile must be migrated before any ingest."""
    from ragit.contract.errors import EmbeddingMigrationRequired
    from ragit.store import read_meta

    try:
        meta = read_meta(ws)
    except RagitError:
        return  # a corrupt store is the writer's and doctor's business
    if meta is None or meta.chunk_count == 0:
        return
    if meta.embedding.get("namespaceId") == profile["namespaceId"]:
        return
    error = EmbeddingMigrationRequired(dict(meta.embedding), profile)
    if not dry_run:
        raise error
    plan.blockers.append({"code": error.code, "details": error.details})


def _dry_run_lock_blockers(ws: Workspace, data: dict[str, Any]) -> None:
    from ragit.store import inspect_lock, scan_journals

    info = inspect_lock(ws)
    if info.state == "active":
        data["blockers"].append(
            {"code": "STORE_WRITE_BUSY", "details": {"lockState": info.state, "owner": info.owner}}
        )
    elif info.state == "unknown":
        data["blockers"].append(
            {
                "code": "STORE_WRITE_LOCK_STALE",
                "details": {
                    "lockState": info.state,
                    "owner": info.owner,
                    "path": ws.relative(ws.lock_path),
                },
            }
        )
    bad = [s.transaction_id for s in scan_journals(ws) if s.classification == "inconsistent"]
    if bad:
        data["blockers"].append(
            {"code": "INGEST_RECOVERY_REQUIRED", "details": {"transactions": bad}}
        )


def _residue_left(ws: Workspace) -> bool:
    """Whether a crashed writer left a lock or an unfinished journal (read-only check)."""
    from ragit.store import inspect_lock, scan_journals

    if inspect_lock(ws).state == "stale":
        return True
    return any(s.classification not in ("completed", "invalid") for s in scan_journals(ws))


def _recover_residue(ws: Workspace, target: str) -> list[str]:
    """Take the writer lock only to recover a crashed writer's residue; returns warnings."""
    from ragit.store import WriterLock, recover
    from ragit.store.replace import recover_swap

    with WriterLock.acquire(ws, command="ingest", head_sha=target) as lock:
        warnings = list(lock.warnings) + recover_swap(ws, lock)
        warnings.extend(recover(ws, lock, lambda sha: manifest_exists(ws, sha)).warnings)
    return warnings


def _count_missing(ws: Workspace, chunk_ids: list[str]) -> int:
    """How many of ``chunk_ids`` the published store lacks (read-only, via the reader copy)."""
    from ragit.store import StoreReader, read_meta

    if not chunk_ids:
        return 0
    if read_meta(ws) is None:
        return len(chunk_ids)
    try:
        reader = StoreReader.open_latest(ws, wait_ms=0)
    except RagitError:
        return len(chunk_ids)
    try:
        return len(chunk_ids) - len(reader.fetch(chunk_ids))
    finally:
        reader.close()


def _apply(
    ws: Workspace,
    plan: _Plan,
    manifest: Manifest,
    rows: list[Any],
    embedder: Any,
    progress: Progress,
    known_ids: set[str],
) -> tuple[int, int, int, list[str]]:
    from ragit.contract.errors import EmbeddingMigrationRequired, IngestStoreWriteUnverified
    from ragit.snapshot.manifest import write_manifest
    from ragit import _faults as faults
    from ragit.store import Journal, StoreWriter, WriterLock, publish, read_meta, recover
    from ragit.store.replace import recover_swap
    from ragit.store.writer import check_canonical_intact

    profile = embedder.profile.as_dict()
    with WriterLock.acquire(ws, command="ingest", head_sha=plan.target) as lock:
        check_canonical_intact(ws, lock)  # never publish damaged canonical files
        # Finish a store swap a crashed rebuild, migration or purge left half done first.
        warnings = list(lock.warnings) + recover_swap(ws, lock)
        warnings.extend(recover(ws, lock, lambda sha: manifest_exists(ws, sha)).warnings)
        meta = read_meta(ws)
        if (
            meta is not None
            and meta.chunk_count > 0
            and (meta.embedding.get("namespaceId") != profile["namespaceId"])
        ):
            raise EmbeddingMigrationRequired(meta.embedding, profile)
        # The journal comes before the first change to a canonical file (zvec rewrites some
        # on every read-write open, the pre-check's too): an interruption from here on is
        # recovered, and republished, by the next writer.
        tx = Journal.begin(
            ws,
            lock,
            kind="ingest",
            target_sha=plan.target,
            base_sha=plan.base_sha,
            manifest_path=ws.relative(ws.manifest_path(plan.target)),
            document_version_ids=[d.version_id for d in manifest.docs],
        )
        t0 = time.monotonic()
        candidates = [r for r in rows if r.chunk_id not in known_ids]
        if meta is not None and len(candidates) > PRECHECK_MIN_ROWS:
            # Worth one extra short open: skip embedding chunks another snapshot already stored.
            writer = StoreWriter.open(ws, lock, embedding=profile, dimensions=profile["dimensions"])
            try:
                present = writer.existing([r.chunk_id for r in candidates])
            finally:
                writer.close()
            candidates = [r for r in candidates if r.chunk_id not in present]
        store_ms = int((time.monotonic() - t0) * 1000)
        t1 = time.monotonic()
        if candidates:
            progress(f"embedding {len(candidates)} new chunks with {profile['provider']}")
        embedded_rows = _embed_rows(candidates, embedder, progress)
        embed_ms = int((time.monotonic() - t1) * 1000)
        t2 = time.monotonic()
        compaction = "single"
        # Chunks carried over from indexed manifests are in the store (doctor checks that
        # invariant); the ones this ingest adds are written and read back.
        unknown = sorted(manifest.all_chunk_ids() - known_ids)
        opened = bool(unknown) or meta is None
        if opened:
            writer = StoreWriter.open(ws, lock, embedding=profile, dimensions=profile["dimensions"])
            try:
                present = writer.existing([r.chunk_id for r in embedded_rows])
                embedded_rows = [r for r in embedded_rows if r.chunk_id not in present]
                writer.insert(embedded_rows)
                tx.advance("store-written")
                compaction = writer.compact()
                gone = writer.verify(unknown)
                if gone:
                    raise IngestStoreWriteUnverified(len(gone))
                tx.advance("store-verified")
            finally:
                writer.close()
        else:
            tx.advance("store-written")
            tx.advance("store-verified")
        if opened:  # zvec changes the canonical files on every read-write open
            # Publish the store generation before the manifest: a reader that sees the new
            # manifest always finds its chunks in the published reader copy.
            publish(ws, lock)
            faults.reach("store-published")
        write_manifest(ws, manifest)
        tx.advance("manifest-committed")
        tx.advance("published")
        tx.complete()
        store_ms += int((time.monotonic() - t2) * 1000)
    if compaction == "deferred":
        from ragit.store.compact import start_background

        start_background(ws.root)
    return embed_ms, store_ms, len(embedded_rows), warnings
