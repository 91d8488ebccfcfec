"""Snapshot manifests: `.ragit/manifest/<full sha>.json` (contract §5).

A manifest lists the documents of one commit and the content-addressed chunk
ids each one is made of; no document text is copied into it (the text lives in
the store and, immutably, in git). Manifests are published atomically (temp
file, fsync, rename) and read strictly; a read never rewrites one.

``docs[].chunkIds`` is the authoritative list of a document's chunks. To keep
manifests small, ``chunkScopes.durable`` lists only durable chunks that belong
to no document entry (normally none); the durable scope of a snapshot is
``docs[].chunkIds ∪ chunkScopes.durable``. The other scopes list artifact chunks.
"""

from __future__ import annotations

import gc
import json
import os
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from ragit import _json
from ragit._fs import atomic_write_bytes
from ragit.contract.errors import SnapshotManifestInvalid, SnapshotSchemaUnsupported
from ragit.workspace import Workspace

INDEX_VERSION = 1
# Whether ``load_manifest`` moves every object alive to the collector's permanent generation
# (``gc.freeze``) once a manifest is parsed. The manifest's objects (one per chunk id and
# document) live until the process ends, and each full collection would traverse them again:
# a cold `query` spends 50 ms (N=1,000) to 85 ms (N=10,000) on that. Frozen objects are still
# freed by reference counting; only a reference cycle that becomes garbage after the freeze is
# never collected, which does not matter for a short-lived process. The MCP server, which
# lives long, turns it off at start.
FREEZE_GC_AFTER_LOAD = True
# Parsed manifests of this process, keyed by path and (inode, size, mtime): manifests are
# only ever replaced by rename, so a rewrite always changes the key. A long-lived reader
# (the MCP server) then parses each manifest once.
_CACHE_SIZE = 8
_CACHE: dict[str, tuple[tuple[int, int, int], Manifest]] = {}
_SHA40 = re.compile(r"[0-9a-f]{40}")


class _ManifestModel(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="allow", frozen=True
    )


class ManifestEmbedding(_ManifestModel):
    namespace_id: str
    provider: str
    model: str
    dimensions: int


class ManifestDoc(_ManifestModel):
    path: str
    document_id: str
    version_id: str
    doc_type: str
    blob_sha: str
    chunk_ids: list[str]


class ChunkScopes(_ManifestModel):
    durable: list[str] = Field(default_factory=list)
    session: list[str] = Field(default_factory=list)
    harness: list[str] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)


class Manifest(_ManifestModel):
    index_version: int
    commit_sha: str
    parent_sha: str | None
    created_at: str
    embedding: ManifestEmbedding
    docs: list[ManifestDoc]
    chunk_scopes: ChunkScopes = Field(default_factory=ChunkScopes)
    artifact_entries: list[dict[str, Any]] = Field(default_factory=list)

    def durable_chunk_ids(self) -> set[str]:
        ids = {cid for doc in self.docs for cid in doc.chunk_ids}
        ids.update(self.chunk_scopes.durable)
        return ids

    def all_chunk_ids(self) -> set[str]:
        ids = self.durable_chunk_ids()
        for scope in (
            self.chunk_scopes.session,
            self.chunk_scopes.harness,
            self.chunk_scopes.evidence,
        ):
            ids.update(scope)
        return ids

    def to_json_bytes(self) -> bytes:
        # No exclude_none: a root commit's parentSha is null, not absent (required on read).
        data = self.model_dump(mode="json", by_alias=True)
        return (json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def manifest_exists(ws: Workspace, sha: str) -> bool:
    return ws.manifest_path(sha).is_file()


def list_manifest_shas(ws: Workspace) -> list[str]:
    """SHAs that have a manifest file (names only; contents are not read)."""
    try:
        names = [p.name for p in ws.manifest_dir.iterdir()]
    except FileNotFoundError:
        return []
    return sorted(n[:-5] for n in names if n.endswith(".json") and _SHA40.fullmatch(n[:-5]))


def load_manifest(ws: Workspace, sha: str) -> Manifest:
    """Read and validate the manifest of ``sha``.

    Raises:
        FileNotFoundError: there is none.
        SnapshotManifestInvalid: invalid JSON, missing fields, or a commitSha ≠ file name.
        SnapshotSchemaUnsupported: an ``indexVersion`` newer than this ragit supports.
    """
    path = ws.manifest_path(sha)
    rel = ws.relative(path)
    try:
        with path.open("rb") as handle:
            info = os.fstat(handle.fileno())
            key = (info.st_ino, info.st_size, info.st_mtime_ns)
            cached = _CACHE.get(str(path))
            if cached is not None and cached[0] == key:
                return cached[1]
            raw = handle.read()
    except FileNotFoundError:
        raise
    except OSError as exc:  # a directory, no permission, an I/O error
        raise SnapshotManifestInvalid(sha, rel, f"unreadable ({type(exc).__name__})") from exc
    manifest = parse_manifest(sha, raw, rel, what="the file name")
    if FREEZE_GC_AFTER_LOAD:
        gc.freeze()
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[str(path)] = (key, manifest)
    return manifest


def parse_manifest(sha: str, raw: bytes, where: str, *, what: str = "the commit") -> Manifest:
    """Validate the manifest bytes of ``sha``; ``where`` names their origin in errors (a file
    of the manifest directory, or the shared store), ``what`` what names the commit there.

    Raises:
        SnapshotManifestInvalid, SnapshotSchemaUnsupported: as :func:`load_manifest`.
    """
    # Parsing allocates one object per chunk id and document and makes no reference cycle:
    # garbage collections midway only traverse them again (at N=10,000, 176k chunk ids:
    # 77-85 ms with the collector running, 42-43 ms without).
    collecting = gc.isenabled()
    gc.disable()
    try:
        manifest = _parse(sha, where, raw)
    finally:
        if collecting:
            gc.enable()
    if manifest.index_version < 1:
        raise SnapshotManifestInvalid(sha, where, "indexVersion must be a positive integer")
    if manifest.commit_sha != sha:
        raise SnapshotManifestInvalid(sha, where, f"commitSha does not match {what}")
    return manifest


def _parse(sha: str, rel: str, raw: bytes) -> Manifest:
    try:
        data = _json.loads(raw.decode("utf-8"))
    except _json.JsonTooDeep as exc:
        raise SnapshotManifestInvalid(sha, rel, "JSON nested too deeply to read") from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SnapshotManifestInvalid(sha, rel, "not valid JSON (truncated or corrupt)") from exc
    if not isinstance(data, dict):
        raise SnapshotManifestInvalid(sha, rel, "not a JSON object")
    version = data.get("indexVersion")
    if isinstance(version, int) and not isinstance(version, bool) and version > INDEX_VERSION:
        raise SnapshotSchemaUnsupported(rel, version, INDEX_VERSION)
    try:
        return Manifest.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(p) for p in first["loc"])
        raise SnapshotManifestInvalid(sha, rel, f"{where}: {first['msg']}") from None


def write_manifest(ws: Workspace, manifest: Manifest) -> Path:
    """Publish ``manifest`` atomically; returns its path."""
    path = ws.manifest_path(manifest.commit_sha)
    atomic_write_bytes(path, manifest.to_json_bytes())
    return path
