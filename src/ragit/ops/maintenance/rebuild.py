"""Store rebuild and embedding migration from the union of all manifests.

Possible because RAGit never indexes the working tree: every manifest names
each document's blob, and git keeps blobs forever. Each document version is read
back from git, masked and chunked exactly as ingest did, its chunk ids are
checked against the manifest (a mismatch means the chunker changed; that
document is reported, not guessed), the chunks are embedded with the configured
profile and written to a new store that is verified and swapped in atomically
(``ragit.store.replace``). Manifests are never rewritten.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

from ragit.config import RagitConfig
from ragit.contract.errors import RagitError
from ragit.workspace import Workspace

Progress = Callable[[str], None]
EMBED_BATCH = 256


def _manifests(ws: Workspace) -> tuple[dict[str, Any], list[dict[str, str]]]:
    from ragit.snapshot.manifest import list_manifest_shas, load_manifest

    good: dict[str, Any] = {}
    bad: list[dict[str, str]] = []
    for sha in list_manifest_shas(ws):
        try:
            good[sha] = load_manifest(ws, sha)
        except RagitError as exc:
            bad.append({"sha": sha, "code": exc.code, "reason": exc.message})
    return good, bad


def plan_rebuild(ws: Workspace) -> dict[str, Any]:
    """Count what a rebuild would regenerate (reads manifests only)."""
    manifests, bad = _manifests(ws)
    versions: dict[str, Any] = {}
    chunk_ids: set[str] = set()
    for manifest in manifests.values():
        for doc in manifest.docs:
            versions.setdefault(doc.version_id, doc)
            chunk_ids.update(doc.chunk_ids)
    return {
        "manifests": len(manifests),
        "invalidManifests": bad,
        "documents": len(versions),
        "chunks": len(chunk_ids),
    }


def _regenerate(
    ws: Workspace, cfg: RagitConfig, manifests: dict[str, Any], progress: Progress
) -> tuple[list[Any], list[dict[str, str]], set[str]]:
    """Chunk rows for every chunk a manifest names, from git objects."""
    from ragit.ingest.ids import version_id
    from ragit.ingest.rows import process_blob
    from ragit.snapshot._git import GitRepo

    git = GitRepo(ws.root)
    versions: dict[str, Any] = {}
    expected: set[str] = set()
    for manifest in manifests.values():
        for doc in manifest.docs:
            versions.setdefault(doc.version_id, doc)
            expected.update(doc.chunk_ids)
    rows: dict[str, Any] = {}
    problems: list[dict[str, str]] = []
    for n, doc in enumerate(versions.values(), 1):
        try:
            produced = process_blob(git, doc.path, doc.blob_sha, cfg)
        except RagitError as exc:
            problems.append({"path": doc.path, "versionId": doc.version_id, "reason": exc.message})
            continue
        if produced is None:
            problems.append(
                {
                    "path": doc.path,
                    "versionId": doc.version_id,
                    "reason": "the blob can no longer be read as a document",
                }
            )
            continue
        ids = [row.chunk_id for row in produced]
        older = doc.version_id != version_id(doc.document_id, doc.blob_sha)
        if older or ids != list(doc.chunk_ids):
            problems.append(
                {
                    "path": doc.path,
                    "versionId": doc.version_id,
                    "reason": "re-chunking gives other chunk ids ("
                    + ("chunker changed" if older else "the manifest names other chunks")
                    + ")",
                }
            )
            continue
        for row in produced:
            rows.setdefault(row.chunk_id, row)
        if n % 500 == 0:
            progress(f"read: {n}/{len(versions)} document versions")
    _regenerate_artifacts(ws, manifests, rows, expected, problems)
    return list(rows.values()), problems, expected


def _regenerate_artifacts(
    ws: Workspace,
    manifests: dict[str, Any],
    rows: dict[str, Any],
    expected: set[str],
    problems: list[dict[str, str]],
) -> None:
    """Bound artifact chunks come back from the control-plane records they were made of."""
    from ragit.artifacts.catalog import load_artifact, searchable_units
    from ragit.ingest.rows import unit_rows

    seen: set[str] = set()
    for manifest in manifests.values():
        for entry in manifest.artifact_entries:
            artifact_id = str(entry.get("artifactId"))
            wanted = [str(c) for c in entry.get("chunkIds", [])]
            expected.update(wanted)
            if artifact_id in seen:
                continue
            seen.add(artifact_id)
            record = load_artifact(ws, artifact_id)
            produced = {
                row.chunk_id: row
                for _u, row in unit_rows(searchable_units(record) if record else [])
            }
            lost = [c for c in wanted if c not in produced]
            if lost:
                problems.append(
                    {
                        "path": str(entry.get("path")),
                        "versionId": artifact_id,
                        "reason": "the artifact record changed or is gone",
                    }
                )
            for cid in wanted:
                if cid in produced:
                    rows.setdefault(cid, produced[cid])


def _embedded_batches(
    rows: Sequence[Any], embedder: Any, progress: Progress
) -> Iterator[list[Any]]:
    started = time.monotonic()
    last = started
    for start in range(0, len(rows), EMBED_BATCH):
        batch = rows[start : start + EMBED_BATCH]
        vectors = embedder.embed([row.search_en for row in batch])
        yield [replace(row, vector=vec) for row, vec in zip(batch, vectors, strict=True)]
        now = time.monotonic()
        done = start + len(batch)
        if now - last >= 0.1 or done == len(rows):
            rate = done / max(now - started, 1e-6)
            progress(
                f"embed: {done}/{len(rows)} chunks ({rate:.0f}/s, "
                f"ETA {(len(rows) - done) / max(rate, 1e-6):.0f}s)"
            )
            last = now


def rebuild_store(
    ws: Workspace,
    cfg: RagitConfig,
    *,
    command: str,
    progress: Progress,
    dry_run: bool = False,
) -> dict[str, Any]:
    """Regenerate the whole store from all manifests with the configured embedding profile.

    Document versions that cannot be regenerated (built by an older chunker, or a blob
    that no longer decodes) leave their snapshots stale: they are listed in
    ``staleSnapshots`` with the ``ragit ingest --all --at <sha>`` that re-indexes each.

    Raises:
        SnapshotStoreUnavailable: the rebuilt store fails verification (the live store is
            then left untouched).
        StoreWriteBusy, StoreWriteLockStale: another writer holds the lock.
    """
    from ragit.embed import build_embedder
    from ragit.store.lock import WriterLock
    from ragit.store.replace import build_replacement, recover_swap, swap_in
    from ragit.store.space import require_space

    plan = plan_rebuild(ws)
    embedder = build_embedder(
        ws.root, cfg.embedding, cfg.security, mode="dry-run" if dry_run else "cli"
    )
    plan["targetEmbedding"] = embedder.profile.as_dict()
    if dry_run:
        embedder.close()
        return {**plan, "mode": "dry-run", "problems": []}
    manifests, _bad = _manifests(ws)
    started = time.monotonic()
    with WriterLock.acquire(ws, command=command, head_sha=None) as lock:
        warnings = list(lock.warnings) + recover_swap(ws, lock)
        rows, problems, expected = _regenerate(ws, cfg, manifests, progress)
        stale_versions = {p["versionId"] for p in problems}
        stale = sorted(
            sha
            for sha, m in manifests.items()
            if any(d.version_id in stale_versions for d in m.docs)
        )
        for sha in stale:
            warnings.append(
                f"snapshot {sha} names chunks its documents do not give (an older chunker, "
                f"or an edited manifest) and cannot be regenerated; re-index it with: "
                f"ragit ingest --all --at {sha}"
            )
        good_ids = {row.chunk_id for row in rows}
        expected &= good_ids
        require_space(ws, len(rows), int(embedder.profile.dimensions))
        progress(f"embed: 0/{len(rows)} chunks with {embedder.profile.provider}")
        profile = embedder.profile.as_dict()
        build_replacement(
            ws,
            lock,
            embedding=profile,
            batches=_embedded_batches(rows, embedder, progress),
            expected_ids=expected,
        )
        published = swap_in(ws, lock)
        _close_out_journals(ws)
    embedder.close()
    return {
        **plan,
        "mode": "apply",
        "problems": problems,
        "staleSnapshots": stale,
        "chunks": published.chunk_count,
        "storeId": published.store_id,
        "generation": published.generation,
        "warnings": warnings,
        "totalMs": int((time.monotonic() - started) * 1000),
    }


def _close_out_journals(ws: Workspace) -> None:
    """After a full rebuild every manifest is consistent again: drop finished journals."""
    from ragit.store.journal_scan import scan_journals

    for state in scan_journals(ws):
        if state.classification in ("completed", "precommit-incomplete", "inconsistent"):
            state.path.unlink(missing_ok=True)
