"""Snapshot manifests: `.ragit/manifest/<full sha>.json` (contract §5).

A manifest lists the documents of one commit and the content-addressed chunk
ids each one is made of; no document text is copied into it (the text lives in
the store and, immutably, in git). Manifests are published atomically (temp
file, fsync, rename) and read strictly; a read never rewrites one.

``docs[].chunkIds`` is the authoritative list of a document's chunks. To keep
manifests small, ``chunkScopes.durable`` lists only durable chunks that belong
to no document entry (normally none); the durable scope of a snapshot is
``docs[].chunkIds ∪ chunkScopes.durable``. The other scopes list artifact chunks.

A manifest file is written as ``indexVersion`` 2: its ``docs[].chunkIds`` are positions in
the chunk-id packs they name (:mod:`ragit.snapshot.chunk_packs`), resolved to ids on read, so a
:class:`Manifest` always holds chunk ids. Version 1 (ids written out, self-contained) is still
read, and is the form :meth:`Manifest.to_json_bytes` gives the shared store, whose readers have
no packs.
"""

from __future__ import annotations

import gc
import json
import os
import re
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from ragit import _json, _process
from ragit._fs import atomic_write_bytes
from ragit.contract.errors import SnapshotManifestInvalid, SnapshotSchemaUnsupported
from ragit.snapshot.chunk_packs import Packs, base_packs, pack_docs
from ragit.workspace import Workspace

INDEX_VERSION = 2
# The self-contained form: every chunk id written out (the shared store's manifests).
SELF_CONTAINED_VERSION = 1
# Parsed manifests of this process, keyed by path and (inode, size, mtime): manifests are
# only ever replaced by rename, so a rewrite always changes the key. A long-lived reader
# (the MCP server) then parses each manifest once.
_CACHE_SIZE = 8
_CACHE: dict[str, tuple[tuple[int, int, int], Manifest]] = {}
_SHA40 = re.compile(r"[0-9a-f]{40}")


class _Record:
    """A manifest object: its fields (declared in ``_FIELDS`` as snake_case name, wire name,
    exact type, required, default factory) as attributes, unknown wire keys kept as they were
    read. Immutable once made. Plain classes, not pydantic models: a cold `query` parses a
    manifest without importing pydantic (docs/benchmarks.md, "Where the time goes")."""

    _FIELDS: ClassVar[tuple[tuple[str, str, Any, bool, Any], ...]] = ()
    __slots__ = ("_extra",)
    _extra: dict[str, Any]

    def __init__(self, **values: Any) -> None:
        for name, _wire, _kind, required, default in self._FIELDS:
            if name in values:
                value = values.pop(name)
            elif required:
                raise TypeError(f"{type(self).__name__} needs {name}")
            else:
                value = default()
            object.__setattr__(self, name, value)
        object.__setattr__(self, "_extra", values)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.model_dump() == other.model_dump()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model_dump()!r})"

    @property
    def model_extra(self) -> dict[str, Any]:
        """The wire keys this object was read with that it does not declare."""
        return dict(self._extra)

    def model_dump(self, *, mode: str = "python", by_alias: bool = False) -> dict[str, Any]:
        """The fields as plain data (wire names with ``by_alias``), unknown keys last."""
        out: dict[str, Any] = {}
        for name, wire, _kind, _required, _default in self._FIELDS:
            out[wire if by_alias else name] = _dumped(getattr(self, name), by_alias)
        out.update(self._extra)
        return out

    def model_copy(self: _R, *, update: dict[str, Any] | None = None) -> _R:
        """A copy with the fields of ``update`` replaced."""
        values = {name: getattr(self, name) for name, *_ in self._FIELDS}
        values.update(self._extra)
        values.update(update or {})
        return type(self)(**values)


_R = TypeVar("_R", bound=_Record)


def _dumped(value: Any, by_alias: bool) -> Any:
    if isinstance(value, _Record):
        return value.model_dump(by_alias=by_alias)
    if isinstance(value, list):
        return [_dumped(v, by_alias) for v in value]
    return value


class ManifestEmbedding(_Record):
    _FIELDS = (
        ("namespace_id", "namespaceId", str, True, None),
        ("provider", "provider", str, True, None),
        ("model", "model", str, True, None),
        ("dimensions", "dimensions", int, True, None),
    )
    __slots__ = ("dimensions", "model", "namespace_id", "provider")
    namespace_id: str
    provider: str
    model: str
    dimensions: int


class ManifestDoc(_Record):
    _FIELDS = (
        ("path", "path", str, True, None),
        ("document_id", "documentId", str, True, None),
        ("version_id", "versionId", str, True, None),
        ("doc_type", "docType", str, True, None),
        ("blob_sha", "blobSha", str, True, None),
        ("chunk_ids", "chunkIds", list, True, None),
    )
    __slots__ = ("blob_sha", "chunk_ids", "doc_type", "document_id", "path", "version_id")
    path: str
    document_id: str
    version_id: str
    doc_type: str
    blob_sha: str
    chunk_ids: list[str]


class ChunkScopes(_Record):
    _FIELDS = (
        ("durable", "durable", list, False, list),
        ("session", "session", list, False, list),
        ("harness", "harness", list, False, list),
        ("evidence", "evidence", list, False, list),
    )
    __slots__ = ("durable", "evidence", "harness", "session")
    durable: list[str]
    session: list[str]
    harness: list[str]
    evidence: list[str]


class Manifest(_Record):
    _FIELDS = (
        ("index_version", "indexVersion", int, True, None),
        ("commit_sha", "commitSha", str, True, None),
        ("parent_sha", "parentSha", (str, None), True, None),
        ("created_at", "createdAt", str, True, None),
        ("embedding", "embedding", ManifestEmbedding, True, None),
        ("docs", "docs", ManifestDoc, True, None),
        ("chunk_scopes", "chunkScopes", ChunkScopes, False, ChunkScopes),
        ("artifact_entries", "artifactEntries", dict, False, list),
    )
    __slots__ = (
        "artifact_entries",
        "chunk_scopes",
        "commit_sha",
        "created_at",
        "docs",
        "embedding",
        "index_version",
        "parent_sha",
    )
    index_version: int
    commit_sha: str
    parent_sha: str | None
    created_at: str
    embedding: ManifestEmbedding
    docs: list[ManifestDoc]
    chunk_scopes: ChunkScopes
    artifact_entries: list[dict[str, Any]]

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
        """The self-contained form (``indexVersion`` 1): every chunk id written out."""
        # No exclude_none: a root commit's parentSha is null, not absent (required on read).
        data = self.model_dump(mode="json", by_alias=True)
        data["indexVersion"] = SELF_CONTAINED_VERSION
        return _encoded(data)

    def to_packed_bytes(self, refs: list[list[str]]) -> bytes:
        """The ``indexVersion`` 2 form: ``docs[].chunkIds`` as ``refs``, runs of positions in
        chunk-id packs (:func:`ragit.snapshot.chunk_packs.pack_docs`)."""
        data = self.model_dump(mode="json", by_alias=True)
        data["indexVersion"] = INDEX_VERSION
        for doc, doc_refs in zip(data["docs"], refs, strict=True):
            doc["chunkIds"] = doc_refs
        return _encoded(data)


def _encoded(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


_LISTS = {"docs": ManifestDoc, "artifact_entries": dict}
_NOT_EXACT = object()


_DOC_WIRE = tuple(wire for _name, wire, *_ in ManifestDoc._FIELDS)
_DOC_NAMES = tuple(name for name, *_ in ManifestDoc._FIELDS)


def _exact_docs(items: list[Any]) -> Any:
    """The ``docs`` list as :class:`ManifestDoc` records when every entry is exactly what
    RAGit writes, else :data:`_NOT_EXACT`: the one loop a manifest has per document, kept to
    C-level checks (a manifest of 10,000 documents is read by every cold query)."""
    out: list[ManifestDoc] = []
    make = ManifestDoc.__new__
    put = object.__setattr__
    for item in items:
        if type(item) is not dict:
            return _NOT_EXACT
        try:
            values = [item[wire] for wire in _DOC_WIRE]
        except KeyError:
            return _NOT_EXACT
        ids = values[5]
        if (
            type(values[0]) is not str
            or type(values[1]) is not str
            or type(values[2]) is not str
            or type(values[3]) is not str
            or type(values[4]) is not str
            or type(ids) is not list
            or not set(map(type, ids)) <= {str}
        ):
            return _NOT_EXACT
        doc = make(ManifestDoc)
        for name, value in zip(_DOC_NAMES, values, strict=True):
            put(doc, name, value)
        put(doc, "_extra", {k: v for k, v in item.items() if k not in _DOC_WIRE})
        out.append(doc)
    return out


def _exact(cls: type[_Record], data: Any) -> Any:
    """``data`` as a ``cls`` when every field has exactly its declared JSON type (what RAGit
    writes), else :data:`_NOT_EXACT` (pydantic's lax rules decide, :func:`_checked`)."""
    if type(data) is not dict:
        return _NOT_EXACT
    values: dict[str, Any] = {}
    rest = dict(data)
    for name, wire, kind, required, default in cls._FIELDS:
        if wire not in rest:
            if required:
                return _NOT_EXACT
            values[name] = default()
            continue
        value = rest.pop(wire)
        if kind is list:
            if type(value) is not list or any(type(v) is not str for v in value):
                return _NOT_EXACT
        elif name in _LISTS:
            item = _LISTS[name]
            if type(value) is not list:
                return _NOT_EXACT
            if item is dict:
                if any(type(v) is not dict for v in value):
                    return _NOT_EXACT
            else:
                value = _exact_docs(value)
                if value is _NOT_EXACT:
                    return _NOT_EXACT
        elif isinstance(kind, type) and issubclass(kind, _Record):
            value = _exact(kind, value)
            if value is _NOT_EXACT:
                return _NOT_EXACT
        elif kind == (str, None):
            if value is not None and type(value) is not str:
                return _NOT_EXACT
        elif type(value) is not kind:
            return _NOT_EXACT
        values[name] = value
    values.update(rest)
    return cls(**values)


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
    except OSError as exc:
        from ragit.contract.fs_errors import filesystem_error

        typed = filesystem_error(exc, ws.root)
        if typed is not None:  # no permission, a full or failing disk: not a corrupt manifest
            raise typed from exc
        # A directory stands where the manifest belongs.
        raise SnapshotManifestInvalid(sha, rel, f"unreadable ({type(exc).__name__})") from exc
    manifest = parse_manifest(sha, raw, rel, what="the file name", packs=ws.chunk_packs_dir)
    _process.manifest_loaded()  # the entry point's policy, if any (ragit._process)
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[str(path)] = (key, manifest)
    return manifest


def parse_manifest(
    sha: str, raw: bytes, where: str, *, what: str = "the commit", packs: Path | None = None
) -> Manifest:
    """Validate the manifest bytes of ``sha``; ``where`` names their origin in errors (a file
    of the manifest directory, or the shared store), ``what`` what names the commit there.
    ``packs`` is the directory of the chunk-id packs a version-2 manifest names (the local
    manifest directory's; the shared store holds version 1 only).

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
    if manifest.index_version > INDEX_VERSION:  # written as 3.0 or "3": still a future version
        raise SnapshotSchemaUnsupported(where, manifest.index_version, INDEX_VERSION)
    if manifest.index_version < 1:
        raise SnapshotManifestInvalid(sha, where, "indexVersion must be a positive integer")
    if manifest.commit_sha != sha:
        raise SnapshotManifestInvalid(sha, where, f"commitSha does not match {what}")
    if manifest.index_version >= 2:
        _resolve(sha, where, manifest, packs)
    return manifest


def _resolve(sha: str, where: str, manifest: Manifest, packs: Path | None) -> None:
    """Replace the pack positions of a version-2 manifest (just parsed, not yet shared) by
    the chunk ids they stand for."""
    if packs is None:
        raise SnapshotManifestInvalid(
            sha, where, "names chunk-id packs, which only a local manifest directory holds"
        )
    reader = Packs(packs)
    try:
        for doc in manifest.docs:
            object.__setattr__(doc, "chunk_ids", reader.expand(doc.chunk_ids))
    except ValueError as exc:
        raise SnapshotManifestInvalid(sha, where, str(exc)) from None


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
    exact = _exact(Manifest, data)
    if exact is not _NOT_EXACT:
        return exact  # type: ignore[no-any-return]
    return _checked(sha, rel, data)


def _checked(sha: str, rel: str, data: dict[str, Any]) -> Manifest:
    """The manifest of ``data`` judged by pydantic's lax rules (a value of another JSON type
    than RAGit writes: converted as pydantic converts it, or the error pydantic names)."""
    from pydantic import ValidationError

    from ragit.snapshot._manifest_check import CheckedManifest

    try:
        checked = CheckedManifest.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(p) for p in first["loc"])
        raise SnapshotManifestInvalid(sha, rel, f"{where}: {first['msg']}") from None
    exact = _exact(Manifest, checked.model_dump(mode="json", by_alias=True))
    assert exact is not _NOT_EXACT
    return exact  # type: ignore[no-any-return]


def write_manifest(ws: Workspace, manifest: Manifest) -> Path:
    """Publish ``manifest`` atomically as ``indexVersion`` 2, its chunk-id pack first (reusing
    the packs of the parent commit's manifest); returns its path."""
    directory = ws.chunk_packs_dir
    parent_raw = None
    if manifest.parent_sha is not None:
        try:
            parent_raw = ws.manifest_path(manifest.parent_sha).read_bytes()
        except OSError:
            parent_raw = None
    refs = pack_docs(
        directory, [d.chunk_ids for d in manifest.docs], base_packs(directory, parent_raw)
    )
    path = ws.manifest_path(manifest.commit_sha)
    atomic_write_bytes(path, manifest.to_packed_bytes(refs))
    return path
