"""`ragit doctor`'s checks of the shared store (``store.backend = "postgres"``): the server,
its schema and pgvector versions, each namespace's HNSW index and the repository's indexed
commits, every text masked (:mod:`ragit.ops.maintenance.doctor` runs them)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ragit.contract.errors import StoreClientMissing, install_command

MIGRATE_STORE = "ragit migrate store"
# No command names the user's own server: the check carries a hint instead.
CONFIGURE_SERVER_HINT = (
    "Set RAGIT_DATABASE_URL to the shared store's server, "
    "e.g. export RAGIT_DATABASE_URL=postgresql://USER@HOST/DATABASE"
)
UPGRADE_RAGIT = install_command("postgres", upgrade=True)
# Index states that need a writer: an ingest builds the graph (a noop one as well).
_INDEX_FAILURES = ("invalid", "missing")


class _Added(Protocol):
    """The check :data:`AddCheck` recorded (a recovery may become a hint afterwards)."""

    recovery: str | None
    hint: str | None


# Records one check: (name, ok, detail, recovery, **extra) -> the check.
AddCheck = Callable[..., _Added]


def shared_store_checks(shared: Any, add: AddCheck) -> None:
    """``store.backend = "postgres"``: the server, its schema and pgvector versions, each
    namespace's HNSW index and the repository's indexed commits (every text masked)."""
    from ragit.store.backend import masked

    repository = shared.repository
    facts = shared.facts
    if facts is None:
        exc = shared.error
        assert exc is not None
        missing = isinstance(exc, StoreClientMissing)
        recovery = exc.install if missing else exc.recovery
        check = add("store.connection", False, masked(exc.message), recovery, backend="postgres")
        if not missing and "RAGIT_DATABASE_URL" in exc.message:
            check.recovery, check.hint = None, CONFIGURE_SERVER_HINT
        return
    server = facts["server"]
    where = f"{server['host']}:{server['port']}/{server['database']}"
    add(
        "store.connection",
        True,
        masked(f"connected to PostgreSQL {server['version']} at {where}"),
        backend="postgres",
    )
    version, target = int(facts["schemaVersion"]), int(facts["targetSchemaVersion"])
    versions: dict[str, Any] = {"schemaVersion": version, "targetSchemaVersion": target}
    if version == target:
        add("store.schema", True, f"schema version {version} (current)", **versions)
    elif version < target:
        add(
            "store.schema",
            False,
            f"schema version {version}, this RAGit needs {target}: apply the migrations",
            MIGRATE_STORE,
            **versions,
        )
    else:
        add(
            "store.schema",
            False,
            f"schema version {version} is newer than this RAGit's {target}: upgrade RAGit",
            UPGRADE_RAGIT,
            **versions,
        )
    vector = facts["pgvector"]
    if vector["installed"]:
        add("store.pgvector", True, f"pgvector {vector['installed']}", pgvector=vector)
    else:
        add(
            "store.pgvector",
            False,
            f"pgvector {vector['available']} is available but not installed in the database"
            if vector["available"]
            else "the server has no pgvector extension (install pgvector on the server)",
            MIGRATE_STORE,
            pgvector=vector,
        )
    if facts["namespaces"] is not None:
        _vector_index(facts["namespaces"], add)
    if facts["snapshots"] is not None:
        shas = [s["commitSha"] for s in facts["snapshots"]]
        add(
            "store.snapshots",
            True,
            masked(f"{len(shas)} snapshot(s) of {repository} on the server"),
            repository=masked(repository),
            snapshotCount=len(shas),
            indexedCommits=shas[-20:],
        )


def _vector_index(namespaces: list[dict[str, Any]], add: AddCheck) -> None:
    bad = [n for n in namespaces if n["state"] in _INDEX_FAILURES]
    if bad:
        first = bad[0]
        detail = (
            f"{len(bad)} namespace(s) lack a usable HNSW index (first {first['namespace']}: "
            f"{first['state']}); searches are exact meanwhile, an ingest builds it "
            "(also of a commit already published)"
        )
    else:
        states = ", ".join(f"{n['namespace']}: {n['state']}" for n in namespaces)
        detail = f"{len(namespaces)} namespace(s)" + (f" ({states})" if states else "")
    add(
        "store.vector-index",
        not bad,
        detail,
        "ragit ingest --all",
        namespaces=namespaces,
    )
