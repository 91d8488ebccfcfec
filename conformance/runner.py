"""Run the conformance cases against an implementation: ``python -m conformance.runner``.

Usage::

    python -m conformance.runner --impl "ragit" [--mcp-impl "ragit-mcp"]
        [--run GLOB]... [--skip GLOB]... [--target cli,snapshot,...]
        [--expected-failures PATH | --no-expected-failures]
        [--json report.json] [-j N] [--keep] [--pass-env NAME]... [-v]

Each case prints one line: PASS, FAIL, XFAIL (a failure listed in the expected
failures), XPASS (a listed case that now passes: the entry is stale and must be
removed), SKIP or ERROR (the case could not run). The exit status is 0 only when
there is no FAIL, XPASS or ERROR and every expected-failure entry names a case.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import sys
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.engine import CaseResult, run_case
from conformance.environment import CaseError, Impl, resolve_command
from conformance.fixture_cache import FixtureCache
from conformance.suite import TARGETS, Case, Suite, SuiteError

BAD_OUTCOMES = ("FAIL", "XPASS", "ERROR")


@dataclass
class Judged:
    """A case result with its final outcome after applying the expected failures."""

    case: Case
    result: CaseResult
    outcome: str
    expected_reason: str | None = None


def classify(result: CaseResult, expected: dict[str, str]) -> str:
    """The outcome of a case: PASS, FAIL, XFAIL, XPASS, SKIP or ERROR."""
    listed = result.case_id in expected
    if result.status == "skip":
        return "SKIP"
    if result.status == "error":
        return "ERROR"
    if result.status == "pass":
        return "XPASS" if listed else "PASS"
    return "XFAIL" if listed else "FAIL"


def select(
    cases: Iterable[Case],
    run: list[str] | None = None,
    skip: list[str] | None = None,
    targets: list[str] | None = None,
) -> list[Case]:
    """Filter cases by id globs (matched against ``id`` and ``target/id``) and targets."""

    def hit(case: Case, globs: list[str]) -> bool:
        names = (case.id, f"{case.target}/{case.id}")
        return any(fnmatch.fnmatchcase(name, glob) for glob in globs for name in names)

    chosen = []
    for case in cases:
        if targets and case.target not in targets:
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
) -> list[Judged]:
    """Run ``cases`` (``jobs`` at a time) and judge each; ``on_result`` sees them in order."""

    def one(case: Case) -> CaseResult:
        return run_case(case, impl, fixtures, keep=keep, pass_env=pass_env)

    judged: list[Judged] = []
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for case, result in zip(cases, pool.map(one, cases), strict=True):
            item = Judged(case, result, classify(result, expected), expected.get(case.id))
            judged.append(item)
            if on_result is not None:
                on_result(item)
    return judged


def format_line(item: Judged, verbose: bool = False) -> str:
    """The report line(s) of one judged case."""
    head = f"{item.outcome:<6} {item.case.target}/{item.case.id}  ({item.result.duration:.1f}s)"
    lines = [head]
    if item.outcome == "XPASS":
        lines.append(
            f"    - stale expected failure ({item.expected_reason}): the case passes now; "
            "remove it from the expected failures"
        )
    elif item.outcome in ("FAIL", "ERROR") or (verbose and item.outcome in ("XFAIL", "SKIP")):
        if item.outcome == "XFAIL":
            lines.append(f"    expected failure: {item.expected_reason}")
        lines += [f"    - {reason}" for reason in item.result.reasons]
    if "tmp" in item.result.detail:
        lines.append(f"    kept: {item.result.detail['tmp']}")
    return "\n".join(lines)


def summary(judged: list[Judged], stale: list[str]) -> str:
    """One line of counts, plus the stale expected-failure ids."""
    counts = Counter(item.outcome for item in judged)
    parts = [
        f"{counts.get(name, 0)} {label}"
        for name, label in (
            ("PASS", "passed"),
            ("FAIL", "failed"),
            ("XFAIL", "expected failures"),
            ("XPASS", "stale expected failures"),
            ("SKIP", "skipped"),
            ("ERROR", "errors"),
        )
    ]
    text = f"{len(judged)} cases: " + ", ".join(parts)
    if stale:
        text += "\nexpected-failure entries that name no case: " + ", ".join(stale)
    return text


def report(judged: list[Judged], stale: list[str], impl: Impl) -> dict[str, Any]:
    """The ``--json`` report."""
    return {
        "impl": list(impl.cli),
        "mcpImpl": list(impl.mcp) if impl.mcp else None,
        "summary": dict(Counter(item.outcome for item in judged)),
        "unknownExpectedFailures": stale,
        "cases": [
            {
                "id": item.case.id,
                "target": item.case.target,
                "outcome": item.outcome,
                "expectedFailure": item.expected_reason,
                "reasons": item.result.reasons,
                "durationMs": round(item.result.duration * 1000),
                "detail": item.result.detail,
            }
            for item in judged
        ],
    }


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
    parser.add_argument("--json", type=Path, metavar="PATH", help="write a JSON report")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--keep", action="store_true", help="keep each case's temp directory")
    parser.add_argument("--pass-env", action="append", default=[], metavar="NAME")
    parser.add_argument("--suite", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--fixtures", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("-v", "--verbose", action="store_true")
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
    cases = select(all_cases, args.run, args.skip, targets)
    fixtures = FixtureCache(suite.fixture_builder)
    try:
        judged = run_cases(
            cases,
            impl,
            fixtures,
            expected,
            jobs=args.jobs,
            keep=args.keep,
            pass_env=tuple(args.pass_env),
            on_result=lambda item: print(format_line(item, args.verbose), flush=True),
        )
    finally:
        fixtures.close()
    print(summary(judged, stale))
    if args.json is not None:
        args.json.write_text(
            json.dumps(report(judged, stale, impl), indent=2) + "\n", encoding="utf-8"
        )
    bad = any(item.outcome in BAD_OUTCOMES for item in judged)
    return 1 if bad or stale else 0


if __name__ == "__main__":
    sys.exit(main())
