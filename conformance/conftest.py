"""Collect the conformance cases as pytest items: one test per case, named by its id.

The cases run against the ``ragit`` of the running environment (the ``ragit``
script next to ``sys.executable``, else ``python -m ragit``) and ``ragit-mcp``
likewise. Entries of ``expected-failures.json`` become strict xfails, so a case
that starts passing fails the run until its entry is removed. Every case builds
its own temporary directories, so the items are safe under pytest-xdist.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.engine import run_case
from conformance.environment import Impl
from conformance.fixture_cache import FixtureCache
from conformance.suite import TARGETS, Case, Suite, load_case

SUITE = Suite()


class CaseFailed(AssertionError):
    """The implementation did not meet the case's expectations."""


class CaseNotRunnable(Exception):
    """The case could not run (fixture build failure, bad path); never an expected failure."""


def local_impl() -> Impl:
    """The implementation installed next to the running interpreter."""
    bindir = Path(sys.executable).parent
    cli = bindir / "ragit"
    mcp = bindir / "ragit-mcp"
    return Impl(
        cli=(str(cli),) if cli.is_file() else (sys.executable, "-m", "ragit"),
        mcp=(str(mcp),) if mcp.is_file() else (sys.executable, "-m", "ragit.mcp"),
    )


@functools.cache
def _fixtures() -> FixtureCache:
    """This process's fixture templates, built on first use (each xdist worker has its own)."""
    return FixtureCache(SUITE.fixture_builder)


@functools.cache
def _expected_failures() -> dict[str, str]:
    return SUITE.load_expected_failures()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Remove the fixture templates built by this process."""
    if _fixtures.cache_info().currsize:
        _fixtures().close()


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
        item = CaseItem.from_parent(self, name=case.id, case=case)
        reason = _expected_failures().get(case.id)
        if reason is not None:
            item.add_marker(pytest.mark.xfail(reason=reason, strict=True, raises=CaseFailed))
        yield item


class CaseItem(pytest.Item):
    """Runs one case against the local implementation."""

    def __init__(self, *, case: Case, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case

    def runtest(self) -> None:
        result = run_case(self.case, local_impl(), _fixtures())
        reasons = "\n".join(f"  - {reason}" for reason in result.reasons)
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
        return self.path, 0, f"conformance case {self.case.target}/{self.case.id}"
