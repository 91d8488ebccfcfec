"""What a run of the suite tells a person and a machine.

- :func:`console` — the report a person reads: a table of outcomes per target and
  level, then, per target, the requirements it breaks (failing cases of each) with
  one short reason per failing case. One screen per target for any implementation
  that mostly conforms.
- :func:`case_lines` — the ``-v`` lines of one case: outcome, every reason, and the
  excerpt of the step's output.
- :func:`json_report` / :func:`junit_report` — the machine reports (``--json``,
  ``--junit``, ``--format json|junit``).

A failing case is reported under its first cited requirement (the rule it is about).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

from conformance.engine import CaseResult
from conformance.environment import Impl
from conformance.suite import LEVELS, TARGETS, Case

# N/A: the case does not apply to the run's store backend (conformance.backends).
OUTCOMES = ("PASS", "FAIL", "XFAIL", "XPASS", "SKIP", "N/A", "ERROR")
BAD_OUTCOMES = ("FAIL", "XPASS", "ERROR")
WIDTH = 100
SHOWN_PER_REQUIREMENT = 4


@dataclass
class Judged:
    """A case result with its final outcome after applying the expected failures."""

    case: Case
    result: CaseResult
    outcome: str
    expected_reason: str | None = None


def classify(result: CaseResult, expected: dict[str, str]) -> str:
    """The outcome of a case: PASS, FAIL, XFAIL, XPASS, SKIP, N/A or ERROR."""
    listed = result.case_id in expected
    if result.status == "n/a":
        return "N/A"
    if result.status == "skip":
        return "SKIP"
    if result.status == "error":
        return "ERROR"
    if result.status == "pass":
        return "XPASS" if listed else "PASS"
    return "XFAIL" if listed else "FAIL"


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def short_reason(item: Judged) -> str:
    """One short reason: what the case found missing or wrong."""
    if item.outcome == "XPASS":
        return "passes now: remove its expected-failure entry"
    reasons = item.result.reasons
    return reasons[0] if reasons else "(no reason recorded)"


def case_lines(item: Judged, verbose: bool = False) -> str:
    """The line(s) of one judged case: all reasons and, with ``verbose``, the output excerpt."""
    head = f"{item.outcome:<6} {item.case.target}/{item.case.id}  ({item.result.duration:.1f}s)"
    lines = [head]
    if item.outcome == "XPASS":
        lines.append(
            f"    - stale expected failure ({item.expected_reason}): the case passes now; "
            "remove it from the expected failures"
        )
    elif item.outcome in ("FAIL", "ERROR") or (
        verbose and item.outcome in ("XFAIL", "SKIP", "N/A")
    ):
        if item.outcome == "XFAIL":
            lines.append(f"    expected failure: {item.expected_reason}")
        lines += [f"    - {reason}" for reason in item.result.reasons]
        excerpt = item.result.detail.get("excerpt")
        if verbose and excerpt:
            lines.append(f"    output: {excerpt}")
    if "tmp" in item.result.detail:
        lines.append(f"    kept: {item.result.detail['tmp']}")
    return "\n".join(lines)


def _table(judged: list[Judged]) -> list[str]:
    header = f"{'target':<9} {'level':<10} {'cases':>5} " + " ".join(
        f"{name.lower():>5}" for name in OUTCOMES
    )
    rows = [header]
    groups: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for item in judged:
        groups[(item.case.target, item.case.level)][item.outcome] += 1
        groups[("all", item.case.level)][item.outcome] += 1
    for target in (*TARGETS, "all"):
        first = True
        for level in LEVELS:
            counts = groups.get((target, level))
            if not counts:
                continue
            label = target if first else ""
            first = False
            cells = " ".join(f"{counts.get(name, 0):>5}" for name in OUTCOMES)
            rows.append(f"{label:<9} {level:<10} {sum(counts.values()):>5} {cells}")
    return rows


def _broken(judged: list[Judged], target: str, texts: dict[str, str], verbose: bool) -> list[str]:
    """The requirements one target breaks, each with its failing cases and one reason each."""
    bad = [i for i in judged if i.case.target == target and i.outcome in BAD_OUTCOMES]
    if not bad:
        return []
    citing: Counter[str] = Counter(
        i.case.primary_requirement for i in judged if i.case.target == target
    )
    by_req: dict[str, list[Judged]] = defaultdict(list)
    for item in bad:
        by_req[item.case.primary_requirement].append(item)
    lines = [
        f"{target}: {len(bad)} failing case{'s' * (len(bad) != 1)} under "
        f"{len(by_req)} requirement{'s' * (len(by_req) != 1)}"
    ]
    for rid in sorted(by_req):
        items = by_req[rid]
        head = f"  {rid:<8} {len(items)} of {citing[rid]} case{'s' * (citing[rid] != 1)}  "
        lines.append(head + _clip(texts.get(rid, ""), WIDTH - len(head)))
        shown = items if verbose else items[:SHOWN_PER_REQUIREMENT]
        for item in shown:
            tag = "" if item.outcome == "FAIL" else f"[{item.outcome}] "
            lead = f"    - {item.case.id}: {tag}"
            lines.append(lead + _clip(short_reason(item), WIDTH - len(lead)))
        if len(items) > len(shown):
            lines.append(f"    … and {len(items) - len(shown)} more (-v lists them all)")
    return lines


def console(
    judged: list[Judged],
    stale: list[str],
    impl: Impl,
    requirements: dict[str, str],
    *,
    level: str = "all",
    verbose: bool = False,
    backend: str = "zvec",
) -> str:
    """The report a person reads (see the module docstring)."""
    mcp = " ".join(impl.mcp) if impl.mcp else "(none: MCP cases skip)"
    lines = [
        f"RAGit conformance: {len(judged)} cases, level {level}, store backend {backend}",
        f"  cli: {' '.join(impl.cli)}",
        f"  mcp: {mcp}",
        "",
        *_table(judged),
    ]
    groups = _na_groups(judged)
    if groups:
        lines += ["", f"n/a on the {backend} backend:"]
        lines += [f"  {count:>4}  {_clip(why, WIDTH - 8)}" for why, count in groups]
    for target in TARGETS:
        section = _broken(judged, target, requirements, verbose)
        if section:
            lines += ["", *section]
    if stale:
        lines += ["", "expected-failure entries that name no case: " + ", ".join(stale)]
    counts = Counter(item.outcome for item in judged)
    failing = sum(counts.get(name, 0) for name in BAD_OUTCOMES)
    verdict = "FAIL" if failing or stale else "OK"
    parts = ", ".join(f"{counts.get(name, 0)} {name.lower()}" for name in OUTCOMES)
    lines += ["", f"{verdict}: {parts}"]
    return "\n".join(lines)


def _na_groups(judged: list[Judged]) -> list[tuple[str, int]]:
    """N/A cases grouped: those that touch no store, and those marked for other backends."""
    from conformance.backends import NO_STORE_REASON

    groups: Counter[str] = Counter()
    for item in judged:
        if item.outcome != "N/A":
            continue
        reason = item.result.reasons[0] if item.result.reasons else ""
        other = "marked for other backends (-v: each reason)"
        groups[reason if reason == NO_STORE_REASON else other] += 1
    return sorted(groups.items(), key=lambda pair: -pair[1])


def json_report(
    judged: list[Judged], stale: list[str], impl: Impl, backend: str = "zvec"
) -> dict[str, Any]:
    """The ``--json`` report."""
    per_target: dict[str, Counter[str]] = defaultdict(Counter)
    for item in judged:
        per_target[item.case.target][item.outcome] += 1
    return {
        "backend": backend,
        "impl": list(impl.cli),
        "mcpImpl": list(impl.mcp) if impl.mcp else None,
        "summary": dict(Counter(item.outcome for item in judged)),
        "targets": {target: dict(counts) for target, counts in per_target.items()},
        "unknownExpectedFailures": stale,
        "cases": [
            {
                "id": item.case.id,
                "target": item.case.target,
                "level": item.case.level,
                "requirements": item.case.requirements,
                "outcome": item.outcome,
                "expectedFailure": item.expected_reason,
                "reasons": item.result.reasons,
                "durationMs": round(item.result.duration * 1000),
                "detail": item.result.detail,
            }
            for item in judged
        ],
    }


def junit_report(judged: list[Judged], stale: list[str]) -> str:
    """JUnit XML: one testsuite per target, one testcase per case (classname target.level)."""
    root = ET.Element("testsuites", name="ragit-conformance")
    totals: Counter[str] = Counter()
    for target in TARGETS:
        items = [i for i in judged if i.case.target == target]
        if not items:
            continue
        suite = ET.SubElement(root, "testsuite", name=target)
        counts: Counter[str] = Counter()
        for item in items:
            case = ET.SubElement(
                suite,
                "testcase",
                classname=f"{target}.{item.case.level}",
                name=item.case.id,
                time=f"{item.result.duration:.3f}",
            )
            body = "\n".join(item.result.reasons)
            excerpt = item.result.detail.get("excerpt")
            if excerpt:
                body += f"\noutput: {excerpt}"
            rid = item.case.primary_requirement
            if item.outcome in ("FAIL", "XPASS"):
                counts["failures"] += 1
                node = ET.SubElement(case, "failure", message=short_reason(item), type=rid)
                node.text = body or short_reason(item)
            elif item.outcome == "ERROR":
                counts["errors"] += 1
                node = ET.SubElement(case, "error", message=short_reason(item), type=rid)
                node.text = body
            elif item.outcome in ("XFAIL", "SKIP", "N/A"):
                counts["skipped"] += 1
                why = f"expected failure: {item.expected_reason}" if item.outcome == "XFAIL" else ""
                ET.SubElement(case, "skipped", message=why or short_reason(item))
        suite.set("tests", str(len(items)))
        for key in ("failures", "errors", "skipped"):
            suite.set(key, str(counts[key]))
        suite.set("time", f"{sum(i.result.duration for i in items):.3f}")
        totals.update(counts)
        totals["tests"] += len(items)
    if stale:
        suite = ET.SubElement(root, "testsuite", name="expected-failures", tests="1", failures="1")
        case = ET.SubElement(suite, "testcase", classname="expected-failures", name="entries")
        ET.SubElement(case, "failure", message="entries that name no case: " + ", ".join(stale))
        totals["tests"] += 1
        totals["failures"] += 1
    for key in ("tests", "failures", "errors", "skipped"):
        root.set(key, str(totals[key]))
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
