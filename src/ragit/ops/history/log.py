"""`ragit log`: snapshot-centred history, newest first (docs/history.md).

For each commit of a first-parent range: whether it has a snapshot and, against the
**nearest previous snapshot** (not the previous commit), which documents were added,
modified (same document id, another version or blob) or deleted, with their doc types;
document and chunk counts; doc types tallied; and the ``semantic`` overlay of the
artifacts bound to that snapshot. Every manifest is read at most once per call; nothing
is written.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragit.contract.errors import InputInvalid, RagitError, SnapshotRefInvalid
from ragit.ops.history.records import Records, Summary, read_summary
from ragit.security.masking import RedactionSummary, mask_text
from ragit.snapshot._git import CommitInfo, GitRepo
from ragit.snapshot.manifest import list_manifest_shas
from ragit.snapshot.surface import GlobSet, validate_repo_glob
from ragit.workspace import Workspace

if TYPE_CHECKING:
    from ragit.artifacts.catalog import ArtifactRecord
    from ragit.ops.status.report import SharedStore

DEFAULT_MAX_COUNT = 20
MAX_COUNT = 10_000
# How far past the window a walk looks for the previous snapshot of the oldest entry.
_BASE_SEARCH_LIMIT = 10_000
_STATEMENT_KINDS_OPEN = frozenset({"openLoop"})


@dataclass(frozen=True)
class LogRequest:
    rev_range: str | None = None
    max_count: int = DEFAULT_MAX_COUNT
    doc_type: str | None = None
    path: str | None = None
    show_missing: bool = False
    view: str = "default"


@dataclass(frozen=True)
class RevRange:
    """A resolved ``[A..]B``: the tip and the commit whose history is excluded."""

    text: str
    tip: str | None  # None: HEAD is unborn
    hide: str | None


def validate_filters(doc_type: str | None, path: str | None) -> str | None:
    """Check ``--type`` and ``--path``; returns the normalized glob."""
    if doc_type is not None:
        from ragit.ingest.doctype import DOC_TYPES

        if doc_type not in DOC_TYPES:
            raise InputInvalid("type", f"must be one of {', '.join(DOC_TYPES)}")
    if path is None:
        return None
    return validate_repo_glob(path, "path")


def resolve_range(git: GitRepo, text: str | None) -> RevRange:
    """Resolve ``B``, ``A..B``, ``A..`` or ``..B`` (first parents of B, without A's history).

    Raises:
        InputInvalid: ``A...B`` or an empty or control-character range.
        SnapshotRefInvalid: a side git cannot resolve to a commit.
    """
    raw = "HEAD" if text is None else text
    if not raw.strip() or any(ord(c) < 32 for c in raw) or len(raw) > 512:
        raise InputInvalid("revRange", "must be a revision or a range A..B")
    if "..." in raw:
        raise InputInvalid("revRange", "symmetric ranges (A...B) are not supported; use A..B")
    if ".." in raw:
        left, right = raw.split("..", 1)
        if ".." in right:
            raise InputInvalid("revRange", "must be a revision or a range A..B")
        hide = git.resolve_commitish(left or "HEAD")
        tip_ref = right or "HEAD"
    else:
        hide = None
        tip_ref = raw
    if tip_ref == "HEAD" and git.head().sha is None:
        if hide is not None:
            raise SnapshotRefInvalid("HEAD", "HEAD has no commit yet")
        return RevRange(raw, None, None)
    return RevRange(raw, git.resolve_commitish(tip_ref), hide)


class _Manifests:
    """Each manifest read once; an unreadable one is remembered as None with a warning.

    With ``shared`` (``store.backend = "postgres"``) the indexed commits and their manifests
    are the shared store's: a clone that never ingested sees what CI indexed.
    """

    def __init__(
        self, ws: Workspace, warnings: list[str], shared: SharedStore | None = None
    ) -> None:
        self.ws = ws
        self.shared = shared
        self.known = set(shared.indexed_shas() if shared else list_manifest_shas(ws))
        self._loaded: dict[str, Summary | None] = {}
        self._warnings = warnings
        self.records = Records()

    def has(self, sha: str) -> bool:
        return sha in self.known

    def get(self, sha: str) -> Summary | None:
        if sha not in self._loaded:
            try:
                self._loaded[sha] = read_summary(self.ws, sha, self.records, self.shared)
            except (RagitError, FileNotFoundError) as exc:
                code = getattr(exc, "code", type(exc).__name__)
                self._warnings.append(f"snapshot {sha[:7]}: manifest unreadable ({code})")
                self._loaded[sha] = None
        return self._loaded[sha]


class _Tally:
    """Documents, distinct chunks and doc types of one snapshot after the filters.

    Kept current as records come and go between consecutive snapshots: a chunk id held
    by two records (the same section text twice) counts once, as in the snapshot's
    chunk set that `query` searches and `status` counts.
    """

    def __init__(self) -> None:
        self.docs = 0
        self.refs: dict[str, int] = {}
        self.types: dict[str, int] = {}

    @property
    def chunks(self) -> int:
        return len(self.refs)

    def _ids(self, ids: Iterable[str], sign: int) -> None:
        refs = self.refs
        for cid in ids:
            left = refs.get(cid, 0) + sign
            if left:
                refs[cid] = left
            else:
                del refs[cid]

    def move(
        self,
        added: list[dict[str, Any]],
        removed: list[dict[str, Any]],
        loose: tuple[Iterable[str], Iterable[str]] = ((), ()),
    ) -> None:
        """Apply the records (and loose durable chunk ids) added and removed."""
        for docs, sign in ((added, 1), (removed, -1)):
            self.docs += sign * len(docs)
            for doc in docs:
                kind = doc["docType"]
                count = self.types.get(kind, 0) + sign
                if count:
                    self.types[kind] = count
                else:
                    del self.types[kind]
                self._ids(doc["chunkIds"], sign)
        self._ids(loose[0], 1)
        self._ids(loose[1], -1)


def _is_memory_path(path: str) -> bool:
    return path.startswith("docs/memory/")


def _changes(
    current: dict[str, dict[str, Any]], previous: dict[str, dict[str, Any]] | None, view: str
) -> tuple[dict[str, int], list[dict[str, Any]]]:
    before = previous or {}
    changed: list[dict[str, Any]] = []
    counts = {"added": 0, "modified": 0, "deleted": 0}
    for doc_id, doc in current.items():
        old = before.get(doc_id)
        if old is None:
            status = "A"
            counts["added"] += 1
        elif old["versionId"] != doc["versionId"] or old["blobSha"] != doc["blobSha"]:
            status = "M"
            counts["modified"] += 1
        else:
            continue
        row: dict[str, Any] = {"path": doc["path"], "status": status, "docType": doc["docType"]}
        if view == "full":
            row["chunks"] = len(set(doc["chunkIds"]))
            row["chunkDelta"] = row["chunks"] - (len(set(old["chunkIds"])) if old else 0)
            row["memoryPath"] = _is_memory_path(doc["path"])
        changed.append(row)
    for doc_id, old in before.items():
        if doc_id in current:
            continue
        counts["deleted"] += 1
        row = {"path": old["path"], "status": "D", "docType": old["docType"]}
        if view == "full":
            row["chunks"] = 0
            row["chunkDelta"] = -len(set(old["chunkIds"]))
            row["memoryPath"] = _is_memory_path(old["path"])
        changed.append(row)
    changed.sort(key=lambda r: (r["path"], r["status"]))
    return counts, changed


def _statement(ws: Workspace, record: ArtifactRecord) -> dict[str, Any]:
    return {
        "artifactId": record.artifact_id,
        "kind": record.kind,
        "scope": record.artifact_scope,
        "status": record.status,
        "title": record.title,
        "summary": record.summary,
        "authority": record.authority,
        "confidence": record.confidence,
        "sourceSessionId": record.source_session_id,
        "goalId": record.goal_id,
        "episodeId": record.episode_id,
    }


def semantic_overlay(ws: Workspace, records: list[ArtifactRecord], view: str) -> dict[str, Any]:
    """The ``semantic`` block of one snapshot from the artifacts bound to it."""
    if not records:  # the usual case: the artifact catalog is never imported
        counts = {"beliefs": 0, "openLoops": 0, "evidence": 0, "artifacts": 0}
        empty: dict[str, Any] = {"available": False, "headline": None, "counts": counts}
        if view != "minimal":
            empty.update(beliefs=[], openLoops=[], evidence=[], artifacts=[])
        return empty
    from ragit.artifacts.catalog import EXCLUDED, relative_path

    beliefs: list[dict[str, Any]] = []
    loops: list[dict[str, Any]] = []
    evidence: list[dict[str, Any]] = []
    support: list[dict[str, Any]] = []
    for record in records:
        support.append(
            {
                "artifactId": record.artifact_id,
                "kind": record.kind,
                "tier": record.tier,
                "status": record.status,
                "bindingStatus": record.binding_status,
                "searchPolicy": record.search_policy,
                "path": relative_path(ws, record.artifact_id),
                "loaded": True,
            }
        )
        if record.status in EXCLUDED:
            continue
        if record.kind in _STATEMENT_KINDS_OPEN:
            loops.append(_statement(ws, record))
        elif record.status in ("reviewed", "promoted"):
            beliefs.append(_statement(ws, record))
        for ref in record.evidence_refs:
            evidence.append(
                {
                    "artifactId": record.artifact_id,
                    "evidenceId": ref.evidence_id,
                    "excerpt": ref.excerpt,
                }
            )
    counts = {
        "beliefs": len(beliefs),
        "openLoops": len(loops),
        "evidence": len(evidence),
        "artifacts": len(support),
    }
    headline = None
    if support:
        headline = (
            f"{counts['beliefs']} belief(s), {counts['openLoops']} open loop(s), "
            f"{counts['evidence']} evidence excerpt(s)"
        )
    block: dict[str, Any] = {"available": bool(support), "headline": headline, "counts": counts}
    if view == "minimal":
        return block
    block.update(beliefs=beliefs, openLoops=loops, evidence=evidence, artifacts=support)
    return block


def _bound_artifacts(ws: Workspace) -> dict[str, list[ArtifactRecord]]:
    by_head: dict[str, list[ArtifactRecord]] = {}
    root = ws.ragit_dir / "artifacts"
    if not any(root.glob("session/*.json")) and not any(root.glob("harness/*/*.json")):
        return by_head  # no record: the record model (pydantic) is never imported
    from ragit.artifacts.catalog import iter_artifacts

    for record in iter_artifacts(ws):
        if record.binding_status == "bound" and record.bound_head_sha:
            by_head.setdefault(record.bound_head_sha, []).append(record)
    return by_head


def collect_window(
    git: GitRepo, manifests: _Manifests, rng: RevRange, max_count: int, show_missing: bool
) -> tuple[list[CommitInfo], str | None]:
    """The commits of the window (newest first) and the snapshot before its oldest one.

    Without ``show_missing`` only indexed commits count toward ``max_count``.
    """
    if rng.tip is None:
        return [], None
    window: list[CommitInfo] = []
    base: str | None = None
    walk = git.first_parent_log(rng.tip, rng.hide, MAX_COUNT * 10)
    for info in walk:
        if len(window) >= max_count:
            if manifests.has(info.sha):
                base = info.sha
                break
            continue
        if show_missing or manifests.has(info.sha):
            window.append(info)
    else:
        # The range ended: the previous snapshot may lie beyond its left side.
        oldest = window[-1].sha if window else None
        if oldest is not None:
            for sha in git.first_parents(oldest, _BASE_SEARCH_LIMIT):
                if manifests.has(sha) and sha not in {c.sha for c in window}:
                    base = sha
                    break
    return window, base


def _snapshot_blocks(
    manifests: _Manifests,
    window: list[CommitInfo],
    indexed: list[str],
    previous_of: dict[str, str | None],
    req: LogRequest,
    glob: GlobSet | None,
) -> dict[str, dict[str, Any]]:
    """The ``snapshot`` block of every readable indexed commit of the window.

    Oldest first: each snapshot's counts are its previous one's plus the records that
    differ between the two (a difference of key sets), so the work follows the changes,
    not the window times the documents.
    """
    records = manifests.records.decoded
    for info in window:  # the read order (and the order of warnings) of a newest-first walk
        if manifests.has(info.sha) and manifests.get(info.sha) is not None:
            prev = previous_of.get(info.sha)
            if prev is not None:
                manifests.get(prev)

    def selected(keys: frozenset[bytes]) -> list[dict[str, Any]]:
        docs = [records[k] for k in keys]
        if req.doc_type is None and glob is None:
            return docs
        return [
            d
            for d in docs
            if (req.doc_type is None or d["docType"] == req.doc_type)
            and (glob is None or glob.matches(d["path"]))
        ]

    filtered = req.doc_type is not None or glob is not None

    def loose(summary: Summary) -> frozenset[str]:
        return frozenset() if filtered else summary.loose  # they belong to no document

    running: tuple[str, _Tally] | None = None
    blocks: dict[str, dict[str, Any]] = {}
    for sha in reversed(indexed):
        current = manifests.get(sha)
        if current is None:
            continue
        prev_sha = previous_of[sha]
        previous = manifests.get(prev_sha) if prev_sha is not None else None
        removed: list[dict[str, Any]] = []
        if previous is None or prev_sha is None:
            added = selected(current.keys)
            total = _Tally()
            total.move(added, removed, (loose(current), ()))
        else:
            added = selected(current.keys - previous.keys)
            removed = selected(previous.keys - current.keys)
            if running is not None and running[0] == prev_sha:
                total = running[1]
            else:
                total = _Tally()
                total.move(selected(previous.keys), [], (loose(previous), ()))
            total.move(
                added,
                removed,
                (loose(current) - loose(previous), loose(previous) - loose(current)),
            )
        running = (sha, total)
        counts, changed = _changes(
            {d["documentId"]: d for d in added},
            {d["documentId"]: d for d in removed},
            req.view,
        )
        snapshot: dict[str, Any] = {
            "status": "indexed",
            "createdAt": current.created_at,
            "previousSnapshotSha": prev_sha,
            "docs": total.docs,
            "chunks": total.chunks,
            "delta": counts,
            "types": dict(sorted(total.types.items())),
        }
        if req.view != "minimal":
            snapshot["changed"] = changed
        blocks[sha] = snapshot
    return blocks


def run_log(ws: Workspace, req: LogRequest, shared: SharedStore | None = None) -> dict[str, Any]:
    """The data of `ragit log` (reads only).

    ``shared``: the shared store already reached by the caller (``narrative``); otherwise it
    is reached here when the config names it, and closed.

    Raises:
        InputInvalid: a bad filter or range.
        SnapshotStoreUnavailable: the shared store cannot be read.
    """
    from ragit.ops.status.report import shared_for

    # Bad input is its typed error before any store is reached.
    validate_filters(req.doc_type, req.path)
    resolve_range(GitRepo(ws.root), req.rev_range)
    with shared_for(ws, shared) as reached:
        return _run_log(ws, req, reached)


def _run_log(ws: Workspace, req: LogRequest, shared: SharedStore | None) -> dict[str, Any]:
    glob_text = validate_filters(req.doc_type, req.path)
    glob = GlobSet([glob_text], field="path") if glob_text else None
    git = GitRepo(ws.root)
    rng = resolve_range(git, req.rev_range)
    warnings: list[str] = []
    if rng.tip is None:
        warnings.append("HEAD has no commit yet; the history is empty")
    if shared is not None:
        shared.require(rng.tip)
    manifests = _Manifests(ws, warnings, shared)
    window, base = collect_window(git, manifests, rng, req.max_count, req.show_missing)
    indexed = [c.sha for c in window if manifests.has(c.sha)]
    # Each indexed entry is compared with the next older indexed one; the oldest with base.
    previous_of: dict[str, str | None] = {}
    for i, sha in enumerate(indexed):
        previous_of[sha] = indexed[i + 1] if i + 1 < len(indexed) else base
    bound = _bound_artifacts(ws) if indexed else {}
    blocks = _snapshot_blocks(manifests, window, indexed, previous_of, req, glob)
    entries: list[dict[str, Any]] = []
    for info in window:
        entry: dict[str, Any] = {
            "commitSha": info.sha,
            "subject": info.subject,
            "authorName": info.author_name,
            "authoredAt": info.authored_at,
        }
        snapshot = blocks.get(info.sha)
        if snapshot is None:
            status = "invalid" if manifests.has(info.sha) else "missing"
            entry["snapshot"] = {"status": status}
            entry["semantic"] = semantic_overlay(ws, [], req.view)
        else:
            entry["snapshot"] = snapshot
            entry["semantic"] = semantic_overlay(ws, bound.get(info.sha, []), req.view)
        entries.append(entry)
    masked, count, sources = mask_cached(entries, "entries")
    redaction = RedactionSummary().merge_sources(sources, count)
    return {
        "revRange": rng.text,
        "maxCount": req.max_count,
        "showMissing": req.show_missing,
        "view": req.view,
        "filters": {"docType": req.doc_type, "path": glob_text},
        "entries": masked,
        "redactionSummary": redaction.dump(),
        "warnings": warnings,
    }


def mask_cached(value: Any, path: str) -> tuple[Any, int, list[str]]:
    """:func:`ragit.security.masking.mask_json`, masking each distinct string once.

    History repeats the same paths and doc types in many entries.
    """
    cache: dict[str, tuple[str, int]] = {}
    sources: list[str] = []
    total = 0

    def walk(item: Any, where: str) -> Any:
        nonlocal total
        if isinstance(item, str):
            hit = cache.get(item)
            if hit is None:
                result = mask_text(item)
                hit = cache[item] = (result.text, result.masked_count)
            if hit[1]:
                sources.append(where or "$")
                total += hit[1]
            return hit[0]
        if isinstance(item, dict):
            return {k: walk(v, f"{where}.{k}" if where else str(k)) for k, v in item.items()}
        if isinstance(item, (list, tuple)):
            return [walk(v, f"{where}[{i}]") for i, v in enumerate(item)]
        return item

    masked = walk(value, path)
    return masked, total, sources
