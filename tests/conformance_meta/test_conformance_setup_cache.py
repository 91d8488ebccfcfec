"""The shared setup prefixes of the pytest plugin (conformance.setup_cache)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.engine import CaseResult, run_case
from conformance.environment import Impl
from conformance.fixture_cache import FixtureCache
from conformance.setup_cache import SetupCache, cacheable_prefix
from conformance.suite import REPO_ROOT, load_case

CaseBuilder = Callable[..., dict[str, Any]]


@pytest.fixture
def fixtures() -> Iterator[FixtureCache]:
    cache = FixtureCache(REPO_ROOT / "fixtures" / "build.py")
    yield cache
    cache.close()


@pytest.fixture
def setups() -> Iterator[SetupCache]:
    cache = SetupCache()
    yield cache
    cache.close()


@pytest.fixture
def logged_cli(tmp_path: Path, fake_cli: list[str]) -> tuple[list[str], Path]:
    """The fake CLI behind a wrapper that appends each command line and its cwd to a log."""
    log = tmp_path / "calls.log"
    wrapper = tmp_path / "logged_cli.py"
    wrapper.write_text(
        "import json, os, subprocess, sys\n"
        f"with open({str(log)!r}, 'a', encoding='utf-8') as out:\n"
        "    out.write(json.dumps([os.getcwd(), *sys.argv[1:]]) + '\\n')\n"
        f"sys.exit(subprocess.run([*{fake_cli!r}, *sys.argv[1:]]).returncode)\n",
        encoding="utf-8",
    )
    return [sys.executable, str(wrapper)], log


def _run(
    tmp_path: Path,
    fixtures: FixtureCache,
    setups: SetupCache | None,
    data: dict[str, Any],
    cli: list[str],
) -> CaseResult:
    path = tmp_path / "cases" / "cli" / f"{data['id']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return run_case(load_case(path), Impl(cli=tuple(cli)), fixtures, setups=setups)


def _calls(log: Path) -> list[list[str]]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def test_a_shared_setup_prefix_runs_once_and_each_case_starts_from_what_it_left(
    tmp_path: Path,
    fixtures: FixtureCache,
    setups: SetupCache,
    logged_cli: tuple[list[str], Path],
    cli_case: CaseBuilder,
) -> None:
    """Implementation choice: cases with the same leading setup steps share one run of them;
    what a case's own step writes never reaches the next case."""
    cli, log = logged_cli
    prefix = [{"run": ["write", "made-by-setup.txt", "from setup"]}]
    first = cli_case(
        "first",
        ["write", "made-by-step.txt", "from the step"],
        {"exit": 0, "files": [{"path": "made-by-setup.txt", "equals": "from setup"}]},
        setup=prefix,
    )
    second = cli_case(
        "second",
        ["status"],
        {
            "exit": 0,
            "files": [
                {"path": "made-by-setup.txt", "equals": "from setup"},
                {"path": "made-by-step.txt", "exists": False},
            ],
        },
        setup=prefix,
    )
    for data in (first, second):
        result = _run(tmp_path, fixtures, setups, data, cli)
        assert (result.status, result.reasons) == ("pass", [])
    calls = _calls(log)
    assert [call[1] for call in calls] == ["write", "write", "status"]
    assert calls[0][0] == calls[1][0] == calls[2][0], "every run sees the directory it was built in"


def test_a_failing_setup_prefix_is_not_cached_and_each_case_reports_it(
    tmp_path: Path,
    fixtures: FixtureCache,
    setups: SetupCache,
    fake_cli: list[str],
    cli_case: CaseBuilder,
) -> None:
    """Implementation choice: a prefix that fails is run by each case itself: the same ERROR
    naming the step as without the cache."""
    data = cli_case(
        "setup", ["status"], {"exit": 0, "stdout": "envelope"}, setup=[{"run": ["fail"]}]
    )
    for _ in range(2):
        result = _run(tmp_path, fixtures, setups, data, fake_cli)
        assert result.status == "error"
        assert result.reasons == ["setup failed: setup[0] `fail` exited 3, expected 0"]
        assert result.detail["words"] == "[ragit] operational error"


def test_only_directory_steps_on_the_embedded_store_are_shared(
    tmp_path: Path, cli_case: CaseBuilder
) -> None:
    """Implementation choice: a capture, an environment change, a judged step or hooks end
    the shareable prefix; on the shared store, only a run that copies the server's state
    shares one."""

    def prefix(setup: list[dict[str, Any]], backend: str = "zvec", copies: bool = False) -> int:
        data = cli_case("prefix", ["status"], {"exit": 0}, setup=setup)
        path = tmp_path / "prefix.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        return cacheable_prefix(load_case(path), backend, server_copies=copies)

    init = {"run": ["init", "--yes"]}
    commit = {"git": ["commit", "--quiet", "-m", "x"]}
    assert prefix([init, commit, {"run": ["ingest"], "capture": "i"}]) == 2
    assert prefix([init, {"env": {"A": "1"}}, commit]) == 1
    assert prefix([init, {"run": ["ingest"], "judged": True}]) == 1
    assert prefix([{"write": {"path": "a", "content": "${HEAD}"}}, init]) == 0
    assert prefix([commit]) == 0, "a prefix without a run of the implementation is not worth it"
    assert prefix([init], backend="postgres") == 0
    assert prefix([init, commit], backend="postgres", copies=True) == 2
    assert prefix([init, {"run": ["hooks", "install"]}]) == 0


def test_a_case_shares_the_longest_prefix_another_case_also_starts_with(
    tmp_path: Path, cli_case: CaseBuilder
) -> None:
    """Implementation choice: a prefix only one case has is not built for it; that case
    shares the longest prefix it has in common with another."""
    init = {"run": ["init", "--yes"]}
    add = {"git": ["add", "--all"]}
    ingest = {"run": ["ingest", "--all"]}
    setups = [[init, add, ingest], [init, add, ingest], [init, add], [init, {"run": ["x"]}]]
    cases = []
    for number, setup in enumerate(setups):
        path = tmp_path / f"case-{number}.json"
        data = cli_case(f"case-{number}", ["status"], {"exit": 0}, setup=setup)
        path.write_text(json.dumps(data), encoding="utf-8")
        cases.append(load_case(path))
    cache = SetupCache(cases)
    assert [cache.prefix(case, "zvec") for case in cases] == [3, 3, 2, 1]
    assert [SetupCache().prefix(case, "zvec") for case in cases] == [3, 3, 2, 2]
    assert cache.prefix(cases[0], "postgres") == 0
    assert [cache.prefix(case, "postgres", server_copies=True) for case in cases] == [3, 3, 2, 1]
