"""Run the conformance cases against an implementation: ``python -m conformance.runner``.

Usage::

    python -m conformance.runner --impl "ragit" [--mcp-impl "ragit-mcp"]
        [--level contract|extension|all] [--run GLOB]... [--skip GLOB]...
        [--target cli,snapshot,...] [--expected-failures PATH | --no-expected-failures]
        [--format text|json|junit] [--json PATH] [--junit PATH]
        [-j N] [--keep] [--pass-env NAME]... [-v | --summary]
        [--backend zvec|postgres [--database-url URL]]

Each case ends as PASS, FAIL, XFAIL (a failure listed in the expected failures),
XPASS (a listed case that now passes: the entry is stale and must be removed),
SKIP, N/A (the case does not apply to the run's store backend: conformance.backends)
or ERROR (the case could not reach its rule: a setup step failed, or the case could
not run). The console report (conformance.report) opens with the verdict and run
time, then the outcomes per target and level, the rules broken and one line per
failing or erroring case; ``--summary`` prints the verdict and table alone; ``-v``
also prints every case as it finishes, with its full reasons and output.
The exit status is 0 only when there is no FAIL, XPASS or ERROR and every
expected-failure entry names a case.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import sys
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from conformance.backends import BACKENDS, DEFAULT_BACKEND, Backend, open_backend
from conformance.engine import CaseResult, run_case
from conformance.environment import CaseError, Impl, resolve_command
from conformance.fixture_cache import FixtureCache
from conformance.report import (
    BAD_OUTCOMES,
    Judged,
    Rule,
    case_lines,
    classify,
    console,
    json_report,
    junit_report,
    summary,
)
from conformance.suite import LEVELS, TARGETS, Case, Suite, SuiteError


def select(
    cases: Iterable[Case],
    run: list[str] | None = None,
    skip: list[str] | None = None,
    targets: list[str] | None = None,
    level: str = "all",
) -> list[Case]:
    """Filter cases by id globs (matched against ``id`` and ``target/id``), targets, level."""

    def hit(case: Case, globs: list[str]) -> bool:
        names = (case.id, f"{case.target}/{case.id}")
        return any(fnmatch.fnmatchcase(name, glob) for glob in globs for name in names)

    chosen = []
    for case in cases:
        if targets and case.target not in targets:
            continue
        if level != "all" and case.level != level:
            continue
        if run and not hit(case, run):
            continue
        if skip and hit(case, skip):
            continue
        chosen.append(case)
    return chosen


def stale_entries(expected: dict[str, str], cases: Iterable[Case]) -> list[str]:
    """Expected-failure ids that name no case of the suite."""
    known = {case.id for case in cases}
    return sorted(set(expected) - known)


def run_cases(
    cases: list[Case],
    impl: Impl,
    fixtures: FixtureCache,
    expected: dict[str, str],
    *,
    jobs: int = 1,
    keep: bool = False,
    pass_env: tuple[str, ...] = (),
    on_result: Any = None,
    backend: Backend | None = None,
) -> list[Judged]:
    """Run ``cases`` (``jobs`` at a time) and judge each; ``on_result`` sees them in order."""

    def one(case: Case) -> CaseResult:
        return run_case(case, impl, fixtures, keep=keep, pass_env=pass_env, backend=backend)

    judged: list[Judged] = []
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for case, result in zip(cases, pool.map(one, cases), strict=True):
            item = Judged(case, result, classify(result, expected), expected.get(case.id))
            judged.append(item)
            if on_result is not None:
                on_result(item)
    return judged


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m conformance.runner",
        description="Run the RAGit conformance cases against an implementation.",
    )
    parser.add_argument("--impl", required=True, help='CLI command, e.g. "ragit"')
    parser.add_argument("--mcp-impl", help='MCP server command, e.g. "ragit-mcp"')
    parser.add_argument("--run", action="append", default=[], metavar="GLOB")
    parser.add_argument("--skip", action="append", default=[], metavar="GLOB")
    parser.add_argument("--target", help=f"comma-separated subset of {','.join(TARGETS)}")
    parser.add_argument("--expected-failures", type=Path, metavar="PATH")
    parser.add_argument("--no-expected-failures", action="store_true")
    parser.add_argument(
        "--level",
        choices=[*LEVELS, "all"],
        default="all",
        help="contract: only rules of the contract; extension: only this implementation's "
        "documented choices; all (default): both, reported separately",
    )
    parser.add_argument(
        "--format",
        choices=["text", "json", "junit"],
        default="text",
        help="what stdout carries: the console report (default), the JSON or the JUnit report",
    )
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default=DEFAULT_BACKEND,
        help="the store backend every case's repository uses (default zvec); postgres starts "
        "a PostgreSQL with pgvector from the pgserver wheel unless --database-url names one",
    )
    parser.add_argument(
        "--database-url",
        metavar="URL",
        help="with --backend postgres: an existing server (cases get RAGIT_DATABASE_URL=URL)",
    )
    parser.add_argument("--json", type=Path, metavar="PATH", help="write a JSON report")
    parser.add_argument("--junit", type=Path, metavar="PATH", help="write a JUnit XML report")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--keep", action="store_true", help="keep each case's temp directory")
    parser.add_argument("--pass-env", action="append", default=[], metavar="NAME")
    parser.add_argument("--suite", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--fixtures", type=Path, help=argparse.SUPPRESS)
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="print every case as it finishes, with its full reasons and output excerpt",
    )
    shown.add_argument(
        "--summary",
        action="store_true",
        help="print only the verdict, the run time and the table of outcomes",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    args = _parser().parse_args(argv)
    suite = Suite()
    if args.suite is not None:
        suite = Suite(root=args.suite.resolve(), fixtures_dir=suite.fixtures_dir)
    if args.fixtures is not None:
        suite = Suite(root=suite.root, fixtures_dir=args.fixtures.resolve())
    targets = [t.strip() for t in args.target.split(",")] if args.target else None
    if targets and set(targets) - set(TARGETS):
        print(f"unknown targets: {sorted(set(targets) - set(TARGETS))}", file=sys.stderr)
        return 2
    try:
        all_cases = suite.load_cases()
        if args.no_expected_failures:
            expected: dict[str, str] = {}
        else:
            expected = suite.load_expected_failures(args.expected_failures)
        impl = Impl(
            cli=resolve_command(args.impl),
            mcp=resolve_command(args.mcp_impl) if args.mcp_impl else None,
        )
    except (SuiteError, CaseError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for command in (impl.cli, impl.mcp):
        if command is not None and not Path(command[0]).is_file():
            print(f"error: implementation command not found: {command[0]}", file=sys.stderr)
            return 2
    stale = stale_entries(expected, all_cases)
    cases = select(all_cases, args.run, args.skip, targets, args.level)
    fixtures = FixtureCache(suite.fixture_builder)
    try:
        rules = {
            str(req.get("id")): Rule(
                text=str(req.get("text", "")),
                section=str(req.get("section", "")),
                level=str(req.get("level", "contract")),
            )
            for req in suite.load_requirements()
        }
    except SuiteError:
        rules = {}
    progress = _Progress(len(cases), args.verbose and args.format == "text")
    started = time.monotonic()
    try:
        with open_backend(
            args.backend, impl, database_url=args.database_url, pass_env=tuple(args.pass_env)
        ) as backend:
            judged = run_cases(
                cases,
                impl,
                fixtures,
                expected,
                jobs=args.jobs,
                keep=args.keep,
                pass_env=tuple(args.pass_env),
                on_result=progress,
                backend=backend,
            )
    except CaseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        fixtures.close()
        progress.done()
    elapsed = time.monotonic() - started
    if args.format == "json":
        print(json.dumps(json_report(judged, stale, impl, args.backend, elapsed), indent=2))
    elif args.format == "junit":
        print(junit_report(judged, stale), end="")
    elif args.summary:
        print(summary(judged, stale, impl, level=args.level, backend=args.backend, elapsed=elapsed))
    else:
        print(
            console(
                judged,
                stale,
                impl,
                rules,
                level=args.level,
                verbose=args.verbose,
                backend=args.backend,
                elapsed=elapsed,
            )
        )
    if args.json is not None:
        report = json_report(judged, stale, impl, args.backend, elapsed)
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if args.junit is not None:
        args.junit.write_text(junit_report(judged, stale), encoding="utf-8")
    bad = any(item.outcome in BAD_OUTCOMES for item in judged)
    return 1 if bad or stale else 0


class _Progress:
    """Reports each finished case: its full lines with ``-v``, else a counter on a terminal."""

    def __init__(self, total: int, verbose: bool) -> None:
        self.total = total
        self.verbose = verbose
        self.seen = 0
        self.live = not verbose and sys.stderr.isatty()

    def __call__(self, item: Judged) -> None:
        self.seen += 1
        if self.verbose:
            print(case_lines(item, verbose=True), flush=True)
        elif self.live:
            name = f"{item.case.target}/{item.case.id}"[:60]
            sys.stderr.write(f"\r[{self.seen}/{self.total}] {name:<60}")
            sys.stderr.flush()

    def done(self) -> None:
        if self.live and self.seen:
            sys.stderr.write("\r" + " " * 80 + "\r")
            sys.stderr.flush()


if __name__ == "__main__":
    sys.exit(main())
