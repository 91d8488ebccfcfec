"""A real PostgreSQL with pgvector for the shared-store tests.

The server is the one the ``pgserver`` wheel ships (PostgreSQL 16 with the pgvector
extension; the machine's own PostgreSQL has no pgvector): one per test session (per xdist
worker), on a temporary data directory, listening only on a unix socket in that directory,
stopped and deleted at the end; ``fsync`` is off (nothing on it must survive a crash of the
machine). Each test gets a database of its own (``database``), named
by ``RAGIT_DATABASE_URL`` for the code under test, and dropped afterwards.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

psycopg = pytest.importorskip(
    "psycopg", reason="LOUD SKIP: psycopg is not installed (pip install 'ragit-cli[postgres]')"
)


@dataclass
class Server:
    handle: Any
    pgdata: Path
    admin_url: str

    def url(self, database: str) -> str:
        return self.admin_url.replace("/postgres?", f"/{database}?", 1)

    def admin(self) -> Any:
        return psycopg.connect(self.admin_url, autocommit=True)

    def restart(self, mode: str = "fast") -> None:
        """``pg_ctl restart -m <mode>``: every connection is terminated, the server comes
        back on the same socket (``immediate``: the backends stop at once, the server
        recovers from its log)."""
        from pgserver._commands import pg_ctl

        pg_ctl(
            ["-w", "-m", mode, "restart"],
            pgdata=self.pgdata,
            user=self.handle.system_user,
            timeout=60,
        )

    def stop(self) -> None:
        """``pg_ctl stop -m fast``: nothing listens on the socket until :meth:`start`."""
        from pgserver._commands import pg_ctl

        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=self.pgdata, user=self.handle.system_user)

    def start(self) -> None:
        """Start the stopped server again on the same socket, as pgserver first started it."""
        from urllib.parse import parse_qs, urlsplit

        from pgserver._commands import pg_ctl

        socket_dir = parse_qs(urlsplit(self.admin_url).query)["host"][0]
        log = str(self.pgdata / "log")
        pg_ctl(
            ["-w", "-o", '-h ""', "-o", f"-k {socket_dir}", "-l", log, "start"],
            pgdata=self.pgdata,
            user=self.handle.system_user,
            timeout=60,
        )


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Server]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import pgserver
    except ImportError as exc:  # pragma: no cover - the test environment installs it
        pytest.skip(f"LOUD SKIP: the pgserver wheel is not installed ({exc})")
    # A short path: a unix socket's path is limited to ~107 bytes.
    base = Path(tempfile.mkdtemp(prefix="ragit-pg-"))
    try:
        handle = pgserver.get_server(base, cleanup_mode="delete")
    except Exception as exc:  # pragma: no cover - depends on the machine
        shutil.rmtree(base, ignore_errors=True)
        pytest.skip(f"LOUD SKIP: PostgreSQL from the pgserver wheel did not start: {exc!r}")
    server = Server(handle=handle, pgdata=base, admin_url=handle.get_uri())
    try:
        # A throwaway server: commits and CREATE/DROP DATABASE need not wait for the disk
        # (a crash of the server itself, as the restart tests cause, recovers as before).
        with server.admin() as admin:
            admin.execute("ALTER SYSTEM SET fsync = off")
            admin.execute("SELECT pg_reload_conf()")
        yield server
    finally:
        # Stop whatever postmaster runs on the directory now: pgserver stops only the one it
        # started, and a test's restart replaced it (that one would outlive the session).
        from pgserver._commands import pg_ctl

        with contextlib.suppress(Exception):  # already stopped
            pg_ctl(["-w", "-m", "fast", "stop"], pgdata=base, user=handle.system_user, timeout=60)
        handle.cleanup()
        shutil.rmtree(base, ignore_errors=True)


_names = itertools.count()


@pytest.fixture
def database(pg_server: Server, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A fresh, empty database; ``RAGIT_DATABASE_URL`` names it (no ``PG*`` variable set)."""
    name = f"ragit_t{os.getpid()}_{next(_names)}"
    with pg_server.admin() as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    url = pg_server.url(name)
    for var in list(os.environ):
        if var.startswith("PG"):
            monkeypatch.delenv(var)
    monkeypatch.setenv("RAGIT_DATABASE_URL", url)
    yield url
    with pg_server.admin() as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
