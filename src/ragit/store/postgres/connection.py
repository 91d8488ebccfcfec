"""The connection to the shared store: taken only from the environment, never shown.

The server is named by ``RAGIT_DATABASE_URL`` (a ``postgresql://`` URI or a libpq
``key=value`` string); without it, by libpq's own ``PG*`` variables (``PGHOST``,
``PGDATABASE``, ``PGUSER``, ``PGPASSWORD``, ``PGSERVICE``, ...), which libpq reads itself.
Nothing here writes the connection anywhere, and no message RAGit makes from a connection
failure carries a password or the user information of a URI: every text that leaves this
package passes :func:`mask`.

Failures are typed (:mod:`ragit.contract.errors`):

* misconfiguration — no server configured, a host name that does not resolve, the server
  refusing who connects (a wrong password, no ``pg_hba.conf`` entry, an unknown role or
  database) → ``SNAPSHOT_STORE_UNAVAILABLE`` (not ready, not retryable: the configuration
  or the server must change);
* a server that is not there right now — nothing listening (stopped, restarting), starting
  up or shutting down, out of connection slots, a timeout or a network that drops the
  connection (:func:`unreachable`) — and an operation the server interrupts (a connection
  lost to a restart, a terminated backend or a network cut; a deadlock or serialization
  failure: psycopg's ``OperationalError``, or a connection found closed) →
  ``STORE_READ_BUSY`` for a reader and ``STORE_WRITE_BUSY`` (``lockState``
  ``"unreachable"`` or ``"interrupted"``) for a writer, both ``transient`` and retryable:
  the same call succeeds once the server is back.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import conninfo

from ragit.contract.errors import SnapshotStoreUnavailable, StoreReadBusy, StoreWriteBusy

ENV_URL = "RAGIT_DATABASE_URL"
# libpq variables that name a server (any one of them is a configuration).
_PG_VARS = ("PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGUSER", "PGSERVICE")
MASK = "***"
_USERINFO = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)[^/@\s?#]*@", re.IGNORECASE)
_PASSWORD_KV = re.compile(r"(?P<key>password\s*=\s*)(?:'(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)
_PASSWORD_QS = re.compile(r"(?P<key>[?&]password=)[^&\s]*", re.IGNORECASE)
CONNECT_TIMEOUT_S = 10


def configured(env: Mapping[str, str] | None = None) -> bool:
    """Whether the environment names a server (``RAGIT_DATABASE_URL`` or a ``PG*`` variable)."""
    env = os.environ if env is None else env
    return bool(env.get(ENV_URL)) or any(env.get(name) for name in _PG_VARS)


def _secrets(env: Mapping[str, str]) -> list[str]:
    found: list[str] = []
    url = env.get(ENV_URL, "")
    if url:
        try:
            password = conninfo.conninfo_to_dict(url).get("password")
        except psycopg.ProgrammingError:
            password = None
        if password:
            found.append(str(password))
    if env.get("PGPASSWORD"):
        found.append(env["PGPASSWORD"])
    return sorted(set(found), key=len, reverse=True)


def mask(text: str, env: Mapping[str, str] | None = None) -> str:
    """``text`` with every password and the user information of every URI replaced by
    ``***``: the configured passwords wherever they occur, ``scheme://user:pass@`` and
    ``password=...`` (conninfo and query-string forms) whatever their value."""
    env = os.environ if env is None else env
    out = _USERINFO.sub(lambda m: f"{m.group('scheme')}{MASK}@", text)
    out = _PASSWORD_KV.sub(lambda m: f"{m.group('key')}{MASK}", out)
    out = _PASSWORD_QS.sub(lambda m: f"{m.group('key')}{MASK}", out)
    for secret in _secrets(env):
        out = out.replace(secret, MASK)
    return out


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return mask(text)


def unavailable(reason: str) -> SnapshotStoreUnavailable:
    """``SNAPSHOT_STORE_UNAVAILABLE`` for the shared store (``reason`` is masked)."""
    return SnapshotStoreUnavailable(None, f"the PostgreSQL store: {mask(reason)}")


def lost(exc: BaseException, *, writer: bool) -> StoreReadBusy | StoreWriteBusy:
    """The typed, retryable error for an operation the server interrupted: the connection
    lost (a restart, a terminated backend), a deadlock or serialization failure."""
    if writer:
        return StoreWriteBusy(
            "interrupted",
            None,
            reason=(
                f"the PostgreSQL store interrupted the write ({_reason(exc)}); retrying is safe: "
                "chunk writes are idempotent and a snapshot is published whole or not at all"
            ),
        )
    return StoreReadBusy(
        0, reason=f"the PostgreSQL store interrupted the read ({_reason(exc)}); retry"
    )


# What libpq says when no server answers now (as opposed to one that answers and refuses):
# nothing listening on the socket or port, a server starting up or shutting down, no free
# connection slot, a timeout, a network that drops or resets the connection.
_UNREACHABLE = (
    "connection refused",
    "no such file or directory",
    "timeout expired",
    "connection timed out",
    "server closed the connection unexpectedly",
    "the database system is starting up",
    "the database system is shutting down",
    "the database system is in recovery mode",
    "the database system is not yet accepting connections",
    "the database system is not accepting connections",
    "sorry, too many clients already",
    "remaining connection slots are reserved",
    "network is unreachable",
    "no route to host",
    "connection reset by peer",
    "could not receive data from server",
    "could not send data to server",
)


def unreachable(exc: BaseException) -> bool:
    """Whether a failure to connect means the server is not there right now (transient),
    not that it refuses this configuration."""
    text = str(exc).lower()
    return any(needle in text for needle in _UNREACHABLE)


def not_reached(exc: BaseException, *, writer: bool) -> StoreReadBusy | StoreWriteBusy:
    """The typed, retryable error for a server that does not answer right now."""
    reason = (
        f"the PostgreSQL store cannot be reached right now ({_reason(exc)}); retry once the "
        "server is back"
    )
    if writer:
        return StoreWriteBusy("unreachable", None, reason=reason)
    return StoreReadBusy(0, reason=reason)


def connect(*, read_only: bool, autocommit: bool = False) -> psycopg.Connection[Any]:
    """A new connection to the configured server (pgvector's types registered when the
    extension exists). A reader's connection opens every transaction read-only
    (``default_transaction_read_only``), so no statement it runs can write.

    Raises:
        SnapshotStoreUnavailable: nothing is configured, or the server refused.
        StoreReadBusy, StoreWriteBusy: no server answers right now (read-only or not).
    """
    env = os.environ
    if not configured(env):
        raise unavailable(
            f"no server is configured: set {ENV_URL} (or libpq's PG* variables) in the environment"
        )
    options = "-c default_transaction_read_only=on" if read_only else ""
    try:
        conn = psycopg.connect(
            env.get(ENV_URL, ""),
            autocommit=autocommit,
            connect_timeout=CONNECT_TIMEOUT_S,
            options=options,
            application_name="ragit-reader" if read_only else "ragit-writer",
        )
    except psycopg.Error as exc:
        if unreachable(exc):
            raise not_reached(exc, writer=not read_only) from None
        raise unavailable(f"cannot connect ({_reason(exc)})") from None
    try:
        if read_only:
            conn.read_only = True
        register_vector(conn)
    except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
        conn.close()
        raise lost(exc, writer=not read_only) from None
    return conn


def register_vector(conn: psycopg.Connection[Any]) -> None:
    """pgvector's adapters on ``conn`` when the extension is installed (before the first
    migration it is not; the migration itself registers them afterwards)."""
    from pgvector.psycopg import register_vector as _register

    with conn.cursor() as cur:
        cur.execute("SELECT 1 FROM pg_type WHERE typname = 'vector'")
        present = cur.fetchone() is not None
    if not conn.autocommit:
        conn.rollback()
    if present:
        _register(conn)


@contextmanager
def translated(*, writer: bool) -> Iterator[None]:
    """Turn psycopg failures inside the block into RAGit's typed errors (masked): a lost
    connection is transient; any other server error is the store being unavailable."""
    try:
        yield
    except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
        # InterfaceError: the connection was found closed (lost to a restart meanwhile).
        raise lost(exc, writer=writer) from None
    except psycopg.errors.InsufficientPrivilege as exc:
        raise unavailable(
            f"the role cannot {'write to' if writer else 'read'} the shared store "
            f"({_reason(exc)}); see the store's roles in docs/team.md"
        ) from None
    except psycopg.Error as exc:
        raise unavailable(_reason(exc)) from None
