"""The store backend a run of the suite targets: ``zvec`` (default) or ``postgres``.

The same cases run against both (docs/conformance.md, "Store backends"). With
``postgres`` the runner provides one PostgreSQL server with pgvector for the whole
run (``--database-url``, or a server it starts from the ``pgserver`` wheel on a
temporary data directory and a unix socket), applies the implementation's own
``migrate store`` once, and then, for every case:

- every subprocess gets ``RAGIT_DATABASE_URL`` naming the server;
- as soon as the case's repository has a ``.ragit/config.toml`` without a
  ``[store]`` table (after the setup step that ran ``init``), the runner appends
  ``[store] backend = "postgres"`` and ``repository = "<unique per case run>"``, so
  cases never see each other's snapshots;
- a command that creates ``.ragit/store`` (the embedded store) fails the case.

Which cases run where:

- a case may declare ``"backends": {"only": [...], "reason": "..."}`` (it checks the
  embedded store's own files, or configures a backend itself): on another backend it
  is ``N/A``, with the reason, and counts as neither a pass nor a failure;
- a case runs on ``postgres`` only when it touches a store: a setup step runs
  ``init`` and the step under test reads or writes snapshots or reports on the store
  (:data:`STORE_COMMANDS`) or calls the MCP server. Any other case (help, config,
  describe, completion, errors before ``init``, memory files…) is the same on every
  backend; it runs once, in the ``zvec`` run, and is ``N/A`` in the ``postgres`` run.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import subprocess
import tempfile
import urllib.parse
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.environment import DEFAULT_TIMEOUT, CaseError, Impl, hermetic_env
from conformance.suite import Case

BACKENDS = ("zvec", "postgres")
DEFAULT_BACKEND = "zvec"
# Commands whose answer depends on the store backend (`store.backend`): they read or write
# snapshots, or report on the store. A command is its first words (options skipped).
STORE_COMMANDS = frozenset(
    {
        ("ingest",),
        ("query",),
        ("context",),
        ("status",),
        ("doctor",),
        ("memory", "recall"),
        ("security", "audit"),
        ("security", "purge"),
        ("migrate", "embeddings"),
        ("drift",),
        ("repair",),
        ("log",),
        ("narrative",),
    }
)
# Global options that take a value (skipped to find a command's words).
_VALUED_OPTIONS = frozenset({"--cwd", "--format"})
STORE_DIR = ".ragit/store"
NO_STORE_REASON = "touches no store: the same on every backend, runs in the zvec run"


def _command_words(argv: list[Any]) -> list[str]:
    out: list[str] = []
    words = iter(str(word) for word in argv)
    for word in words:
        if word in _VALUED_OPTIONS:
            next(words, None)
        elif not word.startswith("-"):
            out.append(word)
    return out


def _is_store_command(argv: list[Any]) -> bool:
    words = _command_words(argv)
    return any(tuple(words[: len(command)]) == command for command in STORE_COMMANDS)


def touches_store(case: Case) -> bool:
    """Whether ``case`` initializes a repository in its setup and its step under test reads
    or writes the store: a :data:`STORE_COMMANDS` command or a call of the MCP server."""
    initialized = any(
        isinstance(step, dict)
        and isinstance(step.get("run"), list)
        and step.get("impl", "cli") == "cli"
        and _command_words(step["run"])[:1] == ["init"]
        for step in case.data.get("setup", [])
    )
    step = case.data.get("step", {})
    if not initialized or not isinstance(step, dict):
        return False
    if "mcp" in step or step.get("impl") == "mcp":
        return True
    argv = step.get("argv")
    return isinstance(argv, list) and _is_store_command(argv)


def not_applicable(case: Case, backend: str) -> str | None:
    """Why ``case`` does not run on ``backend`` (None: it runs)."""
    declared = case.data.get("backends")
    if isinstance(declared, dict) and backend not in declared.get("only", BACKENDS):
        return f"not applicable to the {backend} backend: {declared.get('reason', '')}".strip()
    if backend != DEFAULT_BACKEND and not touches_store(case):
        return NO_STORE_REASON
    return None


class Databases:
    """Copies of the server's state, for setup prefixes shared by cases (conformance.setup_cache).

    A prefix runs against a database of its own, created from a migrated empty one (the
    implementation's own ``migrate store``, run once, when the first prefix needs it). What
    the prefix leaves on the server is kept as a template (``CREATE DATABASE … TEMPLATE``),
    and each case with that prefix gets a fresh copy under the very name, so the very URL,
    the prefix was built with; the copy is dropped when the case ends. Names carry this
    process's id: the pytest workers may share one server.
    """

    def __init__(self, admin_url: str, impl: Impl, pass_env: tuple[str, ...] = ()) -> None:
        self.admin_url = admin_url
        self.impl = impl
        self.pass_env = pass_env
        self.stem = f"ragit_conformance_{os.getpid()}_"
        self._schema: str | None = None
        self._made: set[str] = set()

    def url(self, database: str) -> str:
        """``admin_url`` naming ``database`` instead."""
        parts = urllib.parse.urlsplit(self.admin_url)
        return urllib.parse.urlunsplit(parts._replace(path=f"/{database}"))

    def _execute(self, *statements: str) -> None:
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as admin:
            for statement in statements:
                admin.execute(statement)

    def _copy(self, database: str, template: str) -> None:
        self._made.add(database)
        self._execute(
            f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)',
            f'CREATE DATABASE "{database}" TEMPLATE "{template}"',
        )

    def fresh(self, key: str) -> dict[str, str]:
        """A migrated, empty database for the prefix ``key``: the environment naming it.

        Raises:
            CaseError: the server refused, or ``migrate store`` failed.
        """
        try:
            if self._schema is None:
                schema = f"{self.stem}schema"
                self._made.add(schema)
                self._execute(
                    f'DROP DATABASE IF EXISTS "{schema}" WITH (FORCE)',
                    f'CREATE DATABASE "{schema}"',
                )
                migrate(self.impl, self.url(schema), self.pass_env)
                self._schema = schema
            self._copy(self.stem + key, self._schema)
        except Exception as exc:
            if isinstance(exc, CaseError):
                raise
            raise CaseError(f"cannot create a database for a setup prefix: {exc}") from exc
        return {"RAGIT_DATABASE_URL": self.url(self.stem + key)}

    def save(self, key: str) -> bool:
        """Keep what the prefix ``key`` left on the server as its template; False when the
        server refused (a process of the prefix still holds a connection to it)."""
        try:
            self._copy(f"{self.stem}{key}_saved", self.stem + key)
        except Exception:
            return False
        return True

    def restore(self, key: str) -> dict[str, str]:
        """A fresh copy of the prefix ``key``'s template, under the name it was built with.

        Raises:
            CaseError: the server refused.
        """
        try:
            self._copy(self.stem + key, f"{self.stem}{key}_saved")
        except Exception as exc:
            raise CaseError(f"cannot copy the database of a setup prefix: {exc}") from exc
        return {"RAGIT_DATABASE_URL": self.url(self.stem + key)}

    def discard(self, key: str) -> None:
        """Drop the prefix ``key``'s working copy (its processes are disconnected)."""
        with contextlib.suppress(Exception):
            self._execute(f'DROP DATABASE IF EXISTS "{self.stem + key}" WITH (FORCE)')

    def close(self) -> None:
        """Drop every database this object created."""
        for database in sorted(self._made):
            with contextlib.suppress(Exception):
                self._execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        self._made.clear()
        self._schema = None


@dataclass
class Backend:
    """What a run on one backend adds to every case: environment and repository config;
    ``databases``, when the server's state can be copied for shared setup prefixes."""

    name: str = DEFAULT_BACKEND
    env: dict[str, str] = field(default_factory=dict)
    databases: Databases | None = None

    def repository_name(self, case: Case) -> str:
        """A name on the shared store no other case run uses."""
        return f"conformance/{case.id}/{uuid.uuid4().hex[:12]}"

    def prepare(self, repo: Path, repository: str) -> None:
        """Point the repository's config at the shared store, once it has a config."""
        if self.name != "postgres":
            return
        config = repo / ".ragit" / "config.toml"
        if not config.is_file() or config.is_symlink():
            return
        text = config.read_text(encoding="utf-8", errors="replace")
        if any(line.strip() == "[store]" for line in text.splitlines()):
            return
        lead = "" if text.endswith("\n") or not text else "\n"
        with config.open("a", encoding="utf-8") as handle:
            handle.write(
                f'{lead}\n[store]\nbackend = "postgres"\nrepository = {json.dumps(repository)}\n'
            )


def postgres_missing() -> str | None:
    """Why this Python cannot start the ``postgres`` run's server (None: it can)."""
    for module, what in (("pgserver", "the pgserver wheel"), ("psycopg", "psycopg")):
        if importlib.util.find_spec(module) is None:
            return f"{what} is not installed (pip install pgserver 'ragit-cli[postgres]')"
    return None


def migrate(impl: Impl, url: str, pass_env: tuple[str, ...] = ()) -> None:
    """Run the implementation's ``migrate store`` against ``url`` once.

    Raises:
        CaseError: the command failed.
    """
    tmp = Path(tempfile.mkdtemp(prefix="ragit-conformance-migrate-"))
    try:
        (tmp / "home").mkdir()
        env = {**hermetic_env(tmp, pass_env), "RAGIT_DATABASE_URL": url}
        done = subprocess.run(
            [*impl.cli, "migrate", "store", "--format", "json"],
            cwd=tmp,
            env=env,
            capture_output=True,
            check=False,
            timeout=DEFAULT_TIMEOUT,
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if done.returncode != 0:
        out = (done.stdout + done.stderr).decode("utf-8", "replace")[-800:]
        raise CaseError(f"`migrate store` on the server exited {done.returncode}: {out}")


def without_fsync(url: str) -> None:
    """Turn ``fsync`` off on the server at ``url`` (its superuser's): for a throwaway server,
    whose data need not survive a crash of the machine. Every commit, and every database
    created or dropped, then skips the wait for the disk; a crash of the server itself still
    recovers from its log as before."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute("ALTER SYSTEM SET fsync = off")
        admin.execute("SELECT pg_reload_conf()")


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """A PostgreSQL with pgvector from the ``pgserver`` wheel: its URL, until the block ends.

    The data directory is temporary and the server listens only on a unix socket in it;
    ``fsync`` is off (:func:`without_fsync`).

    Raises:
        CaseError: the wheel is missing or the server did not start.
    """
    missing = postgres_missing()
    if missing is not None:
        raise CaseError(f"the postgres backend needs a server: {missing}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver  # type: ignore[import-not-found,unused-ignore]
    # A short path: a unix socket's path is limited to ~107 bytes.
    base = Path(tempfile.mkdtemp(prefix="ragit-cpg-"))
    try:
        handle = pgserver.get_server(base, cleanup_mode="delete")
    except Exception as exc:
        shutil.rmtree(base, ignore_errors=True)
        raise CaseError(f"PostgreSQL from the pgserver wheel did not start: {exc!r}") from exc
    try:
        url = str(handle.get_uri())
        try:
            without_fsync(url)
        except Exception as exc:
            raise CaseError(f"the server from the pgserver wheel refused a setting: {exc}") from exc
        yield url
    finally:
        with contextlib.suppress(Exception):
            handle.cleanup()
        shutil.rmtree(base, ignore_errors=True)


@contextlib.contextmanager
def open_backend(
    name: str,
    impl: Impl,
    *,
    database_url: str | None = None,
    pass_env: tuple[str, ...] = (),
    copies: bool = False,
) -> Iterator[Backend]:
    """The backend of a run: for ``postgres``, a migrated server for the whole block; with
    ``copies``, its :class:`Databases` too (dropped when the block ends).

    Raises:
        CaseError: the server cannot be started or migrated.
    """
    if name == DEFAULT_BACKEND:
        yield Backend(name)
        return
    if name not in BACKENDS:
        raise CaseError(f"unknown backend {name!r} (one of {', '.join(BACKENDS)})")
    with contextlib.ExitStack() as stack:
        url = database_url or os.environ.get("RAGIT_CONFORMANCE_DATABASE_URL")
        if not url:
            url = stack.enter_context(postgres_server())
        migrate(impl, url, pass_env)
        databases = None
        if copies:
            databases = Databases(url, impl, pass_env)
            stack.callback(databases.close)
        yield Backend(name, {"RAGIT_DATABASE_URL": url}, databases)
