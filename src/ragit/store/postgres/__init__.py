"""The shared store on PostgreSQL + pgvector (issue 21): chunks keyed by embedding namespace
and content id, keyword postings for per-snapshot BM25, snapshots bound to commits.

* :mod:`~ragit.store.postgres.connection` — the connection from the environment only
  (``RAGIT_DATABASE_URL`` or libpq's ``PG*`` variables), masked in every error, and the
  typed errors of a refused or lost connection;
* :mod:`~ragit.store.postgres.steps` / :mod:`~ragit.store.postgres.migrate` — the
  versioned schema and applying it;
* :mod:`~ragit.store.postgres.write` — idempotent chunk upserts and atomic snapshot
  publication under a per-(repository, namespace) advisory lock;
* :mod:`~ragit.store.postgres.read` — read-only transactions: snapshots, their chunks,
  vector search and the keyword index of one snapshot.

psycopg and pgvector are the optional extra ``ragit[postgres]``; nothing outside this
package imports them.
"""
