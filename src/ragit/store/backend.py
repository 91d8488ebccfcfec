"""The store backend boundary, reading half: where the snapshots of a repository are read.

``store.backend`` (config) chooses the backend:

* ``zvec`` (the default): the embedded store under ``.ragit/store``; manifests are the files
  of ``.ragit/manifest``, a snapshot is read through the reader copy of the latest published
  generation (:class:`ragit.store.reader.StoreReader`), exactly as before the boundary;
* ``postgres``: the shared store (docs/team.md); manifests and chunk ids come from the
  server (:class:`ragit.store.postgres.read.PgReader`), so a clone that never ingested reads
  what another machine published. Its modules (and psycopg) are imported only when this
  backend is chosen.

:func:`store_backend` is the one place a backend name becomes a :class:`StoreBackend`: the
layers above ask it for capabilities (``shared``: a server store) and sources, never compare
names. Adding a backend is a class here (and its writer in :mod:`ragit.store.backend_write`)
plus one entry of :data:`_REGISTRY`.

A :class:`SnapshotSource` answers the questions a read asks, in the order it asks them:
which commits are indexed (the candidates of snapshot selection), the manifest of one
commit, and that commit's chunks as the store the retrieval engine ranks
(:class:`SnapshotStore`, the interface of ``StoreReader``). Writing is the other half,
:mod:`ragit.store.backend_write`, which the read-only MCP server never imports.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from ragit.contract.errors import CorruptError, RagitError, SnapshotStoreUnavailable
from ragit.workspace import Workspace

_SHA40 = re.compile(r"[0-9a-f]{40}")


class SnapshotStore(Protocol):
    """One snapshot's chunks as :func:`ragit.retrieve.engine.retrieve_durable` reads them."""

    @property
    def store_id(self) -> str: ...
    @property
    def generation(self) -> int: ...
    @property
    def chunk_count(self) -> int: ...
    @property
    def embedding(self) -> dict[str, Any]: ...

    def vector_search(self, vector: Sequence[float], topk: int) -> list[tuple[str, float]]: ...
    def terms(self) -> Any: ...
    def fetch(self, ids: Sequence[str]) -> dict[str, Any]: ...
    def fetch_vectors(self, ids: Sequence[str]) -> dict[str, list[float]]: ...
    def embedded_texts(self, ids: Sequence[str]) -> dict[str, str]: ...


class SnapshotSource(Protocol):
    """Where a read finds snapshots (one per backend)."""

    name: str

    def indexed_shas(self) -> list[str]:
        """The commits with a published snapshot (selection's candidates), sorted."""
        ...

    def manifest(self, sha: str) -> bytes | None:
        """The manifest bytes of ``sha`` (None: not indexed)."""
        ...

    def snapshot(self, sha: str) -> SnapshotStore:
        """The chunks of ``sha``'s snapshot, ready for the retrieval engine."""
        ...

    def close(self) -> None: ...


class SharedSnapshot(Protocol):
    """One published snapshot on a server store, as a security audit, a purge and a
    migration of embeddings read it."""

    @property
    def snapshot_id(self) -> int:
        """The publication's id (republishing the commit gives it a new one)."""
        ...

    @property
    def commit_sha(self) -> str: ...
    @property
    def namespace(self) -> str: ...
    @property
    def namespace_id(self) -> int: ...
    @property
    def dimensions(self) -> int: ...
    @property
    def manifest(self) -> bytes: ...
    @property
    def chunk_ids(self) -> tuple[str, ...]: ...
    @property
    def embedding(self) -> dict[str, Any]:
        """The embedding profile the snapshot's vectors are in (a fresh dict)."""
        ...


class PublishedSnapshot(Protocol):
    """A published snapshot's listing row, without its manifest."""

    @property
    def commit_sha(self) -> str: ...


class SharedReader(Protocol):
    """A read-only connection to a server store (:meth:`StoreBackend.open_reader`): what a
    migration of embeddings and a security purge read, each call one read-only transaction."""

    def published(self, repository_id: str) -> Sequence[PublishedSnapshot]:
        """The repository's published snapshots, oldest publication first."""
        ...

    def snapshot(self, repository_id: str, commit_sha: str) -> SharedSnapshot | None:
        """The commit's published snapshot (None: not published)."""
        ...

    def snapshots(self, repository_id: str) -> Sequence[SharedSnapshot]:
        """Every published snapshot of the repository, with its manifest and chunk ids."""
        ...

    def stored(self, namespace: str, chunk_ids: Iterable[str]) -> set[str]:
        """The ids of ``chunk_ids`` the server stores in ``namespace``."""
        ...

    def chunk_texts(
        self, namespace_id: int, chunk_ids: Iterable[str]
    ) -> dict[str, dict[str, str]]: ...

    def orphan_chunks(self, snapshot_ids: Sequence[int]) -> dict[int, list[str]]:
        """The chunks, by namespace id, that deleting these snapshots leaves unused."""
        ...

    def cited_elsewhere(self, repository_id: str, chunks: Mapping[int, Iterable[str]]) -> int:
        """How many of ``chunks`` snapshots of other repositories cite."""
        ...

    def close(self) -> None: ...


class SharedSource(SnapshotSource, Protocol):
    """A server store's source: what ingest, doctor, status and audit ask of it beyond a
    read."""

    def stored(
        self, namespace: str, chunk_ids: Iterable[str], sha: str | None = None
    ) -> set[str]: ...
    def unstored(self) -> dict[str, list[str]]: ...
    def health(self) -> dict[str, Any]: ...
    def snapshots(self) -> Sequence[SharedSnapshot]: ...
    def chunk_texts(
        self, namespace_id: int, chunk_ids: Iterable[str]
    ) -> dict[str, dict[str, str]]: ...


class ZvecSource:
    """The embedded store: manifest files and the reader copy of the latest generation.

    The reader stays open across calls (the MCP server keeps one source) and is reopened only
    when the published store generation changes.
    """

    name = "zvec"

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.packs = ws.chunk_packs_dir  # the chunk-id packs its manifests name
        self._reader: Any = None

    def indexed_shas(self) -> list[str]:
        try:
            names = [p.name for p in self.ws.manifest_dir.iterdir()]
        except FileNotFoundError:
            return []
        return sorted(n[:-5] for n in names if n.endswith(".json") and _SHA40.fullmatch(n[:-5]))

    def manifest(self, sha: str) -> bytes | None:
        try:
            return self.ws.manifest_path(sha).read_bytes()
        except FileNotFoundError:
            return None

    def snapshot(self, sha: str) -> SnapshotStore:
        """The open reader copy of the latest published generation.

        Raises:
            SnapshotStoreUnavailable: no store, or no usable copy.
            StoreReadBusy: a writer is active and no copy exists yet.
            CorruptError: corrupt or future store metadata (naming ``sha``).
        """
        from ragit.store.meta import read_meta
        from ragit.store.reader import StoreReader

        try:
            meta = read_meta(self.ws)
        except CorruptError as exc:
            # A corrupt or future store metadata file is exit 4, as it says; name the snapshot.
            if "resolvedSha" in exc.details and exc.details["resolvedSha"] is None:
                exc.details["resolvedSha"] = sha
            raise
        except RagitError as exc:
            raise SnapshotStoreUnavailable(sha, exc.message) from exc
        if meta is None:
            raise SnapshotStoreUnavailable(sha, "the store does not exist")
        reader = self._reader
        if reader is not None and (
            reader.store_id == meta.store_id and reader.generation == meta.generation
        ):
            return reader  # type: ignore[no-any-return]
        self.close()
        try:
            self._reader = StoreReader.open_latest(self.ws)
        except SnapshotStoreUnavailable as exc:
            raise SnapshotStoreUnavailable(sha, str(exc.details.get("reason"))) from exc
        return self._reader  # type: ignore[no-any-return]

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None


class PostgresSource:
    """The shared store: snapshots the server holds for ``repository``, read in read-only
    ``REPEATABLE READ`` transactions. The connection opens on the first call and stays open
    (the MCP server keeps one source); a lost connection is opened again on the next call."""

    name = "postgres"

    def __init__(self, repository: str) -> None:
        self.repository = repository
        self._reader: Any = None
        self._snapshots: dict[str, Any] = {}

    def _pg(self, sha: str | None) -> Any:
        if self._reader is None:
            from ragit.store.postgres import client_required

            with client_required(sha):
                from ragit.store.postgres.read import PgReader
            try:
                self._reader = PgReader.open()
            except SnapshotStoreUnavailable as exc:
                raise exc.naming(sha) from None
        return self._reader

    def indexed_shas(self) -> list[str]:
        try:
            shas: list[str] = self._pg(None).snapshot_shas(self.repository)
        except SnapshotStoreUnavailable as exc:
            raise exc from None
        return shas

    def _published(self, sha: str) -> Any:
        cached = self._snapshots.get(sha)
        if cached is not None:
            return cached[0]
        try:
            found = self._pg(sha).snapshot(self.repository, sha)
        except SnapshotStoreUnavailable as exc:
            raise exc.naming(sha) from None
        if found is not None:
            # One snapshot kept (with its view, whose keyword index keeps the postings it
            # read): the MCP server's next call on the commit reads neither again.
            self._snapshots = {sha: (found, self._pg(sha).view(found))}
        return found

    def manifest(self, sha: str) -> bytes | None:
        cached = self._snapshots.get(sha)
        if cached is not None:
            # A new read selects again: the kept snapshot answers only while the commit's
            # published snapshot is the same one (republishing gives it a new id).
            try:
                current = self._pg(sha).snapshot_id(self.repository, sha)
            except SnapshotStoreUnavailable as exc:
                raise exc.naming(sha) from None
            if current != cached[0].snapshot_id:
                self._snapshots.pop(sha, None)
        found = self._published(sha)
        # The kept snapshot's own bytes object: selection parses it once (it keeps the parse
        # while it is handed the same object), so a warm call parses nothing.
        return None if found is None else found.manifest

    def stored(self, namespace: str, chunk_ids: Iterable[str], sha: str | None = None) -> set[str]:
        """The ids of ``chunk_ids`` the server stores in ``namespace`` (read-only).

        Raises:
            SnapshotStoreUnavailable: no server, refused (naming ``sha``).
            StoreReadBusy: the connection was lost (retryable).
        """
        try:
            found: set[str] = self._pg(sha).stored(namespace, chunk_ids)
        except SnapshotStoreUnavailable as exc:
            raise exc.naming(sha) from None
        return found

    def unstored(self) -> dict[str, list[str]]:
        """The chunk ids each of the repository's snapshots names that the server does not
        store, by commit (:meth:`ragit.store.postgres.read.PgReader.unstored`; read-only).

        Raises:
            SnapshotStoreUnavailable: no server, refused.
            StoreReadBusy: the connection was lost (retryable).
        """
        try:
            found: dict[str, list[str]] = self._pg(None).unstored(self.repository)
        except SnapshotStoreUnavailable as exc:
            raise exc from None
        return found

    def snapshots(self) -> Sequence[SharedSnapshot]:
        """Every published snapshot of the repository with its manifest and chunk ids
        (:meth:`ragit.store.postgres.read.PgReader.snapshots`; read-only).

        Raises:
            SnapshotStoreUnavailable: no server, refused, or the client missing.
            StoreReadBusy: the connection was lost (retryable).
        """
        found: Sequence[SharedSnapshot] = self._pg(None).snapshots(self.repository)
        return found

    def chunk_texts(self, namespace_id: int, chunk_ids: Iterable[str]) -> dict[str, dict[str, str]]:
        """Every stored string of ``chunk_ids`` in a namespace, by id: what a security audit
        scans (:meth:`ragit.store.postgres.read.PgReader.chunk_texts`; read-only).

        Raises:
            StoreReadBusy: the connection was lost (retryable).
        """
        texts: dict[str, dict[str, str]] = self._pg(None).chunk_texts(namespace_id, chunk_ids)
        return texts

    def health(self) -> dict[str, Any]:
        """The shared store's facts for ``doctor`` and ``status``: the server (no user, no
        password), schema and pgvector versions, each namespace's index state and the
        repository's indexed commits (:func:`ragit.store.postgres.health.health`), read over
        this source's connection, which later calls reuse when the schema is the one this
        RAGit reads (``doctor`` and ``status`` connect once).

        Raises:
            SnapshotStoreUnavailable: no server configured, refused, or the client missing.
            StoreReadBusy: the connection was lost (retryable).
        """
        if self._reader is not None:
            facts: dict[str, Any] = self._reader.health(self.repository)
            return facts
        from ragit.store.postgres import client_required

        with client_required():
            from ragit.store.postgres.read import PgReader
            from ragit.store.postgres.steps import SCHEMA_VERSION
        reader = PgReader()  # not `open`: a schema of another version is a fact to report
        try:
            facts = reader.health(self.repository)
        except BaseException:
            reader.close()
            raise
        if facts["schemaVersion"] == SCHEMA_VERSION:
            self._reader = reader  # what `open` would have checked
        else:
            reader.close()
        return facts

    def snapshot(self, sha: str) -> SnapshotStore:
        found = self._published(sha)
        if found is None:
            raise SnapshotStoreUnavailable(sha, "the shared store has no snapshot of the commit")
        view: SnapshotStore = self._snapshots[sha][1]
        return view

    def close(self) -> None:
        self._snapshots = {}
        if self._reader is not None:
            self._reader.close()
            self._reader = None


class StoreBackend(Protocol):
    """One storage backend, as the layers above the store see it (:func:`store_backend`)."""

    @property
    def name(self) -> str:
        """The ``store.backend`` value that chooses it."""
        ...

    @property
    def shared(self) -> bool:
        """A server store: snapshots and their manifests live on the server (no local store
        directory, no reader copies); ingest, doctor, status, repair, audit and purge take
        their shared-store paths."""
        ...

    def source(self, ws: Workspace, repository: str = "") -> SnapshotSource:
        """Where a read finds snapshots (nothing is opened before the first call)."""
        ...

    def server(self, ws: Workspace, repository: str) -> SharedSource:
        """A shared backend's source for ``repository``, with what ingest, doctor and status
        ask beyond a read (only when :attr:`shared`).

        Raises:
            InputInvalid: a local store (it has no server).
        """
        ...

    def open_reader(self) -> SharedReader:
        """A shared backend's read-only connection, opened (and its schema checked) now:
        what a migration of embeddings and a security purge read (only when :attr:`shared`;
        the writes they make are :mod:`ragit.store.backend_write`'s).

        Raises:
            SnapshotStoreUnavailable: no server, refused, another schema, the client missing.
            InputInvalid: a local store (it has no server).
        """
        ...


class ZvecBackend:
    """The embedded store under ``.ragit/store`` (the default)."""

    name = "zvec"
    shared = False

    def source(self, ws: Workspace, repository: str = "") -> SnapshotSource:
        return ZvecSource(ws)

    def server(self, ws: Workspace, repository: str) -> SharedSource:
        from ragit.contract.errors import InputInvalid

        raise InputInvalid("store.backend", "the embedded store has no server")

    def open_reader(self) -> SharedReader:
        from ragit.contract.errors import InputInvalid

        raise InputInvalid("store.backend", "the embedded store has no server")


class PostgresBackend:
    """The shared store on PostgreSQL (docs/team.md); psycopg is imported on first use."""

    name = "postgres"
    shared = True

    def source(self, ws: Workspace, repository: str = "") -> SnapshotSource:
        return PostgresSource(repository)

    def server(self, ws: Workspace, repository: str) -> SharedSource:
        return PostgresSource(repository)

    def open_reader(self) -> SharedReader:
        from ragit.store.postgres import client_required

        with client_required():
            from ragit.store.postgres.read import PgReader
        reader: SharedReader = PgReader.open()
        return reader


_REGISTRY: dict[str, StoreBackend] = {"zvec": ZvecBackend(), "postgres": PostgresBackend()}
BACKENDS = tuple(_REGISTRY)


def store_backend(name: str = "zvec") -> StoreBackend:
    """The backend ``store.backend`` names (the configuration's one choice of backend).

    Raises:
        InputInvalid: an unknown backend.
    """
    found = _REGISTRY.get(name)
    if found is None:
        from ragit.contract.errors import InputInvalid

        raise InputInvalid("store.backend", f"must be one of {', '.join(BACKENDS)}")
    return found


def masked(text: str) -> str:
    """``text`` with every password and URI user information masked, as the shared store's
    own messages are (unchanged when its client is not installed: nothing to mask then)."""
    try:
        from ragit.store.postgres.connection import mask
    except ImportError:
        return text
    return mask(text)
