"""The suite's store backends: which cases run where, and what a postgres run adds to a case.

The engine is tested against a fake implementation (no server needed: the backend only adds
an environment variable and a config table); one test runs the real runner with
``--backend postgres``, which starts PostgreSQL from the pgserver wheel.
"""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.backends import NO_STORE_REASON, Backend, not_applicable, postgres_missing
from conformance.engine import CaseResult, run_case
from conformance.environment import Impl
from conformance.fixture_cache import FixtureCache
from conformance.report import classify
from conformance.runner import main
from conformance.suite import REPO_ROOT, Case, load_case

URL = "postgresql://conformance@/ragit?host=/nowhere"
# init writes a config; query reports the store settings it sees; ingest --local creates the
# embedded store's directory, as the zvec backend's first ingest does.
FAKE = textwrap.dedent(
    """
    import json, os, re, sys
    from pathlib import Path

    args = sys.argv[1:]
    cmd = args[0]
    config = Path(".ragit/config.toml")
    if cmd == "init":
        config.parent.mkdir(exist_ok=True)
        config.write_text('[project]\\nname = "fake"\\n', encoding="utf-8")
    elif cmd == "ingest" and "--local" in args:
        Path(".ragit/store").mkdir()
    text = config.read_text(encoding="utf-8") if config.exists() else ""
    found = dict(re.findall(r'^(backend|repository) = "([^"]*)"$', text, re.M))
    print(json.dumps({"command": cmd, "ok": True, "version": "1", "cwd": os.getcwd(),
                      "data": {"url": os.environ.get("RAGIT_DATABASE_URL"), **found,
                               "stores": text.count("[store]")},
                      "warnings": []}))
    """
)


@pytest.fixture
def fixtures() -> Iterator[FixtureCache]:
    cache = FixtureCache(REPO_ROOT / "fixtures" / "build.py")
    yield cache
    cache.close()


@pytest.fixture
def fake(tmp_path: Path) -> Impl:
    script = tmp_path / "fake_ragit.py"
    script.write_text(FAKE, encoding="utf-8")
    return Impl(cli=(sys.executable, str(script)))


def _case(tmp_path: Path, case_id: str, setup: list[Any], step: list[str], **extra: Any) -> Case:
    data = {
        "id": case_id,
        "title": case_id,
        "level": "contract",
        "requirements": ["CMD-001"],
        "fixture": "empty",
        "setup": setup,
        "step": {"argv": step},
        "expect": {"exit": 0, "stdout": "envelope"},
        **extra,
    }
    path = tmp_path / "cases" / "store" / f"{case_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return load_case(path)


def _postgres() -> Backend:
    return Backend("postgres", {"RAGIT_DATABASE_URL": URL})


def test_cases_run_on_postgres_only_when_they_touch_a_store(tmp_path: Path) -> None:
    init = {"run": ["init", "--yes"]}
    store = _case(tmp_path, "store", [init], ["--cwd", ".", "query", "x"])
    after_ingest = _case(tmp_path, "after-ingest", [init, {"run": ["ingest"]}], ["describe", "log"])
    recall = _case(tmp_path, "recall", [init], ["memory", "recall", "x"])
    wrap = _case(tmp_path, "wrap", [init], ["memory", "wrap", "--format", "json"])
    before_init = _case(tmp_path, "before-init", [], ["query", "x"])
    no_store = _case(tmp_path, "no-store", [init], ["config", "get", "project.name"])
    marked = _case(
        tmp_path, "marked", [init], ["query", "x"], backends={"only": ["zvec"], "reason": "why"}
    )

    assert not_applicable(store, "postgres") is None
    assert not_applicable(recall, "postgres") is None
    # what is checked is the step under test: a store command in setup is not enough
    assert not_applicable(after_ingest, "postgres") == NO_STORE_REASON
    assert not_applicable(wrap, "postgres") == NO_STORE_REASON
    assert not_applicable(before_init, "postgres") == NO_STORE_REASON
    assert not_applicable(no_store, "postgres") == NO_STORE_REASON
    assert not_applicable(marked, "postgres") == "not applicable to the postgres backend: why"
    for case in (store, before_init, no_store, marked):
        assert not_applicable(case, "zvec") is None  # the default run runs every case


def test_a_case_not_applicable_is_na_not_a_pass(tmp_path: Path, fake: Impl) -> None:
    case = _case(tmp_path, "not-here", [], ["status"])

    result = run_case(
        case, fake, FixtureCache(REPO_ROOT / "fixtures" / "build.py"), backend=_postgres()
    )

    assert (result.status, classify(result, {}), result.reasons) == (
        "n/a",
        "N/A",
        [NO_STORE_REASON],
    )


def _data(result: CaseResult) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(result.detail["stdout"])["data"]
    return data


def test_postgres_run_points_the_repository_at_the_shared_store(
    tmp_path: Path, fake: Impl, fixtures: FixtureCache
) -> None:
    """After init the config gets [store] backend postgres and a repository of its own per
    case run; every subprocess gets RAGIT_DATABASE_URL; a second init adds no second table."""
    case = _case(tmp_path, "points", [{"run": ["init"]}, {"run": ["init"]}], ["query", "x"])

    first = run_case(case, fake, fixtures, backend=_postgres())
    second = run_case(case, fake, fixtures, backend=_postgres())
    default = run_case(case, fake, fixtures, backend=Backend())

    assert first.status == "pass", first.reasons
    data = _data(first)
    assert data["url"] == URL and data["backend"] == "postgres" and data["stores"] == 1
    assert data["repository"].startswith("conformance/points/")
    assert _data(second)["repository"] != data["repository"]
    assert _data(default) == {"url": None, "stores": 0}


def test_a_case_that_configures_its_store_keeps_it(
    tmp_path: Path, fake: Impl, fixtures: FixtureCache
) -> None:
    own = {"write": {"path": ".ragit/config.toml", "content": '[store]\nbackend = "zvec"\n'}}
    case = _case(tmp_path, "own-store", [{"run": ["init"]}, own], ["query", "x"])

    result = run_case(case, fake, fixtures, backend=_postgres())

    assert _data(result) == {"url": URL, "backend": "zvec", "stores": 1}


def test_creating_the_local_store_fails_a_postgres_case(
    tmp_path: Path, fake: Impl, fixtures: FixtureCache
) -> None:
    """On the shared store no command may create .ragit/store: not the step, not a setup step."""
    in_step = _case(tmp_path, "in-step", [{"run": ["init"]}], ["ingest", "--local"])
    in_setup = _case(
        tmp_path, "in-setup", [{"run": ["init"]}, {"run": ["ingest", "--local"]}], ["query", "x"]
    )

    step = run_case(in_step, fake, fixtures, backend=_postgres())
    setup = run_case(in_setup, fake, fixtures, backend=_postgres())

    assert step.status == "fail"
    assert step.reasons == [
        "the step created .ragit/store (the postgres backend has no local store)"
    ]
    assert setup.status == "fail" and "setup[1] `ingest --local` created .ragit/store" in str(
        setup.reasons
    )
    assert run_case(in_step, fake, fixtures, backend=Backend()).status == "pass"


@pytest.mark.skipif(postgres_missing() is not None, reason=f"LOUD SKIP: {postgres_missing()}")
def test_runner_on_postgres_starts_a_server_and_reports_na(tmp_path: Path) -> None:
    """``--backend postgres``: a real server, migrated by the implementation; a store case
    passes, a case of the embedded store's files and a case that touches no store are N/A."""
    bindir = Path(sys.executable).parent
    report = tmp_path / "report.json"
    runs = [
        "status-after-ingest-indexed",
        "query-store-meta-corrupt-exit-4",
        "describe-leaf-command",
    ]

    status = main(
        [
            "--impl",
            str(bindir / "ragit"),
            "--backend",
            "postgres",
            *(arg for case_id in runs for arg in ("--run", case_id)),
            "-j",
            "1",
            "--json",
            str(report),
        ]
    )

    data = json.loads(report.read_text(encoding="utf-8"))
    outcomes = {case["id"]: case["outcome"] for case in data["cases"]}
    assert status == 0, outcomes
    assert data["backend"] == "postgres"
    assert outcomes == {
        "status-after-ingest-indexed": "PASS",
        "query-store-meta-corrupt-exit-4": "N/A",
        "describe-leaf-command": "N/A",
    }
