"""Collect the conformance cases as pytest items: one test per case, named by its id.

The cases run against the ``ragit`` of the running environment (the ``ragit``
script next to ``sys.executable``, else ``python -m ragit``) and ``ragit-mcp``
likewise. Entries of ``expected-failures.json`` become strict xfails, so a case
that starts passing fails the run until its entry is removed. Every case builds
its own temporary directories, so the items are safe under pytest-xdist.

Each case runs on the zvec store backend (item ``<id>``) and, when it touches a
store, on the PostgreSQL backend too (item ``<id>[postgres]``; ``-k postgres``
selects them): one server per process (per xdist worker), started from the
``pgserver`` wheel on the first such item, migrated once, stopped at the end
(``RAGIT_CONFORMANCE_DATABASE_URL`` names an existing server instead). Without
pgserver or psycopg those items skip, saying so; a case marked for other backends
is a skip with its reason (conformance.backends). A leading run of setup steps several
cases share runs once per process (conformance.setup_cache); on PostgreSQL against a
database of its own, copied for each case (conformance.backends.Databases).
"""

from __future__ import annotations

import contextlib
import functools
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.backends import (
    DEFAULT_BACKEND,
    NO_STORE_REASON,
    Backend,
    not_applicable,
    open_backend,
    postgres_missing,
)
from conformance.engine import run_case
from conformance.environment import CaseError, Impl, hermetic_env
from conformance.fixture_cache import FixtureCache
from conformance.launcher import installed_ragit
from conformance.setup_cache import SetupCache
from conformance.suite import TARGETS, Case, Suite, load_case

SUITE = Suite()


class CaseFailed(AssertionError):
    """The implementation did not meet the case's expectations."""


class CaseNotRunnable(Exception):
    """The case could not reach its rule (a setup step failed, a fixture did not build, a bad
    path): an error, never an expected failure."""


@functools.cache
def local_impl() -> Impl:
    """The implementation installed next to the running interpreter, its commands forked by
    this process's server (conformance.launcher) unless ``RAGIT_TEST_EXEC`` is set: then
    every command starts as a new program."""
    bindir = Path(sys.executable).parent
    cli = bindir / "ragit"
    mcp = bindir / "ragit-mcp"
    return Impl(
        cli=(str(cli),) if cli.is_file() else (sys.executable, "-m", "ragit"),
        mcp=(str(mcp),) if mcp.is_file() else (sys.executable, "-m", "ragit.mcp"),
        launcher=installed_ragit(hermetic_env(Path(tempfile.gettempdir()))),
    )


@functools.cache
def _fixtures() -> FixtureCache:
    """This process's fixture templates, built on first use (each xdist worker has its own)."""
    return FixtureCache(SUITE.fixture_builder)


@functools.cache
def _setups() -> SetupCache:
    """This process's shared setup prefixes (conformance.setup_cache); items run in turn."""
    return SetupCache(SUITE.load_cases())


@functools.cache
def _expected_failures() -> dict[str, str]:
    return SUITE.load_expected_failures()


_BACKENDS = contextlib.ExitStack()


@functools.cache
def _backend(name: str) -> Backend | str:
    """This process's backend ``name`` (its server started once), or why it cannot run."""
    if name != DEFAULT_BACKEND:
        missing = postgres_missing()
        if missing is not None:
            return f"LOUD SKIP: the {name} backend cannot run here: {missing}"
    try:
        return _BACKENDS.enter_context(open_backend(name, local_impl(), copies=True))
    except CaseError as exc:
        return f"the {name} backend did not start: {exc}"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Stop the servers started and remove the fixture templates built by this process."""
    _BACKENDS.close()
    if _fixtures.cache_info().currsize:
        _fixtures().close()
    if _setups.cache_info().currsize:
        _setups().close()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """Turn ``cases/<target>/<id>.json`` into a :class:`CaseFile`."""
    if (
        file_path.suffix == ".json"
        and file_path.parent.parent == SUITE.cases_dir
        and file_path.parent.name in TARGETS
    ):
        return CaseFile.from_parent(parent, path=file_path)
    return None


class CaseFile(pytest.File):
    """One case file, holding exactly one item."""

    def collect(self) -> Iterator[CaseItem]:
        case = load_case(self.path)
        for backend in ("zvec", "postgres"):
            why_not = not_applicable(case, backend)
            if why_not == NO_STORE_REASON:
                continue  # the same on every backend: runs once, on zvec
            name = case.id if backend == DEFAULT_BACKEND else f"{case.id}[{backend}]"
            item = CaseItem.from_parent(self, name=name, case=case, backend=backend)
            if why_not is not None:
                item.add_marker(pytest.mark.skip(reason=why_not))
            reason = _expected_failures().get(case.id)
            if reason is not None:
                item.add_marker(pytest.mark.xfail(reason=reason, strict=True, raises=CaseFailed))
            yield item


class CaseItem(pytest.Item):
    """Runs one case against the local implementation, on one store backend."""

    def __init__(self, *, case: Case, backend: str = DEFAULT_BACKEND, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.backend = backend

    def runtest(self) -> None:
        backend = _backend(self.backend)
        if isinstance(backend, str):
            if backend.startswith("LOUD SKIP"):
                pytest.skip(backend)
            raise CaseNotRunnable(backend)
        result = run_case(self.case, local_impl(), _fixtures(), backend=backend, setups=_setups())
        reasons = "\n".join(f"  - {reason}" for reason in result.reasons)
        if result.detail.get("words"):
            reasons += f"\n  it said: {result.detail['words']}"
        if result.status == "skip":
            pytest.skip(reasons)
        if result.status == "error":
            raise CaseNotRunnable(f"case {self.case.id} could not run:\n{reasons}")
        if result.status == "fail":
            raise CaseFailed(f"case {self.case.id} ({self.case.title}):\n{reasons}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, (CaseFailed, CaseNotRunnable)):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo, style=style))

    def reportinfo(self) -> tuple[Path, int, str]:
        where = "" if self.backend == DEFAULT_BACKEND else f" on {self.backend}"
        return self.path, 0, f"conformance case {self.case.target}/{self.case.id}{where}"
