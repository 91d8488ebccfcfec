"""The shared store on PostgreSQL + pgvector (docs/team.md): chunks keyed by embedding namespace
and content id, keyword postings for per-snapshot BM25, snapshots bound to commits.

* :mod:`~ragit.store.postgres.connection` — the connection from the environment only
  (``RAGIT_DATABASE_URL`` or libpq's ``PG*`` variables), masked in every error, and the
  typed errors of a refused or lost connection;
* :mod:`~ragit.store.postgres.steps` / :mod:`~ragit.store.postgres.migrate` — the
  versioned schema and applying it;
* :mod:`~ragit.store.postgres.write` — idempotent chunk upserts and atomic snapshot
  publication under a per-(repository, namespace) advisory lock (the roles' grants checked
  first: :mod:`~ragit.store.postgres.privileges`); :mod:`~ragit.store.postgres.builder` and
  :mod:`~ragit.store.postgres.graph` — the detached HNSW graph build after a bulk load;
* :mod:`~ragit.store.postgres.purge` — a security purge, the one writer that deletes (what
  it may delete: :mod:`~ragit.store.postgres.citations`);
* :mod:`~ragit.store.postgres.read` — read-only transactions: snapshots, their chunks and
  vector search; :mod:`~ragit.store.postgres.term_index` — the keyword index of one
  snapshot; :mod:`~ragit.store.postgres.health` — what doctor and status report.

psycopg and pgvector are the optional extra ``ragit-cli[postgres]``; nothing outside this
package imports them, and every import of its modules from outside goes through
:func:`client_required`, which turns a missing client into one typed error.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ragit.contract.errors import StoreClientMissing

EXTRA = "postgres"
# Top-level packages of the extra: an ImportError naming one of them means "not installed".
_CLIENT_PACKAGES = frozenset({"psycopg", "psycopg_binary", "psycopg_c", "pgvector"})


def client_missing(resolved_sha: str | None = None) -> StoreClientMissing:
    """``SNAPSHOT_STORE_UNAVAILABLE`` naming ``pip install 'ragit-cli[postgres]'``."""
    return StoreClientMissing("postgres", EXTRA, resolved_sha)


@contextmanager
def client_required(resolved_sha: str | None = None) -> Iterator[None]:
    """Import this package's modules inside the block: a missing psycopg or pgvector becomes
    :func:`client_missing` (any other ImportError is a bug and propagates).

    Raises:
        StoreClientMissing: the extra is not installed.
    """
    try:
        yield
    except ImportError as exc:
        if (exc.name or "").split(".")[0] not in _CLIENT_PACKAGES:
            raise
        raise client_missing(resolved_sha) from None
