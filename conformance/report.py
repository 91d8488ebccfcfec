"""What a run of the suite tells a person and a machine.

- :func:`console` — the report a person reads: the verdict and run time first, the
  table of outcomes per target and level, the rules broken, then one line per
  failing case (the case, its rule and contract section, what is wrong, and what
  the implementation said in its own words) and one per case that could not run
  (ERROR: the setup step that failed, its exit status and the implementation's
  words). Long lines wrap; nothing is cut.
- :func:`summary` — the verdict and the table alone (``--summary``).
- :func:`case_lines` — the ``-v`` lines of one case: outcome, every reason, and the
  excerpt of the step's output.
- :func:`json_report` / :func:`junit_report` — the machine reports (``--json``,
  ``--junit``, ``--format json|junit``).

A failing case is reported under its first cited requirement (the rule it is about).
"""

from __future__ import annotations

import textwrap
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


@dataclass(frozen=True)
class Rule:
    """A requirement as the report names it: its text, contract section and level."""

    text: str = ""
    section: str = ""
    level: str = "contract"

    @property
    def where(self) -> str:
        """``contract §5`` (or ``extension §12`` for this implementation's own choices)."""
        if not self.section:
            return self.level
        return f"{self.level} §{self.section}"


@dataclass
class Judged:
    """A case result with its final outcome after applying the expected failures."""

    case: Case
    result: CaseResult
    outcome: str
    expected_reason: str | None = None

    @property
    def words(self) -> str | None:
        """What the implementation said (error message or first stderr line), if anything."""
        words = self.result.detail.get("words")
        return str(words) if words else None


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


def _wrap(text: str, indent: str = "  ", more: str = "      ") -> list[str]:
    """One logical line, wrapped at WIDTH columns (never cut)."""
    return textwrap.wrap(
        " ".join(text.split()),
        WIDTH,
        initial_indent=indent,
        subsequent_indent=more,
        break_long_words=False,
        break_on_hyphens=False,
    )


def short_reason(item: Judged) -> str:
    """One short reason: what the case found missing or wrong."""
    if item.outcome == "XPASS":
        return "passes now: remove its expected-failure entry"
    reasons = item.result.reasons
    return reasons[0] if reasons else "(no reason recorded)"


def failure_line(item: Judged, rules: dict[str, Rule]) -> str:
    """The one line of a FAIL, XPASS or ERROR: case, rule and section, reason, own words."""
    rid = item.case.primary_requirement
    rule = rules.get(rid, Rule())
    reason = short_reason(item)
    extra = len(item.result.reasons) - 1 if item.outcome != "XPASS" else 0
    if extra > 0:
        reason += f" (+{extra} more: -v)"
    line = f"{item.case.target}/{item.case.id} [{rid}, {rule.where}] {reason}"
    if item.outcome != "XPASS" and item.words:
        line += f" — it said: {item.words}"
    return line


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
        if item.words:
            lines.append(f"    it said: {item.words}")
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


def _order(item: Judged) -> tuple[int, str, str]:
    return (TARGETS.index(item.case.target), item.case.primary_requirement, item.case.id)


def _rules_broken(judged: list[Judged], rules: dict[str, Rule]) -> list[str]:
    """Each requirement with a FAIL or XPASS: how many of its cases fail, and its text."""
    failing = [i for i in judged if i.outcome in ("FAIL", "XPASS")]
    if not failing:
        return []
    citing = Counter(i.case.primary_requirement for i in judged)
    broken = Counter(i.case.primary_requirement for i in failing)
    lines = [f"Rules broken ({len(broken)}): rule, section, failing cases of those about it, text"]
    for rid in sorted(broken):
        rule = rules.get(rid, Rule())
        head = f"{rid} {rule.where}, {broken[rid]} of {citing[rid]}:"
        lines += _wrap(f"{head} {rule.text}", "  ", "      ")
    return lines


def _failures(judged: list[Judged], rules: dict[str, Rule], outcomes: tuple[str, ...]) -> list[str]:
    lines: list[str] = []
    for item in sorted((i for i in judged if i.outcome in outcomes), key=_order):
        tag = "" if item.outcome in ("FAIL", "ERROR") else f"[{item.outcome}] "
        lines += _wrap(tag + failure_line(item, rules))
    return lines


def verdict(judged: list[Judged], stale: list[str], elapsed: float | None = None) -> str:
    """``FAIL in 12.3 s: 3 pass, 6 fail, 0 error of 9 cases; 2 skip``: the first line of a report.

    PASS, FAIL and ERROR are always counted; the other outcomes only when they occur.
    """
    counts = Counter(item.outcome for item in judged)
    failing = sum(counts.get(name, 0) for name in BAD_OUTCOMES)
    word = "FAIL" if failing or stale else "OK"
    took = f" in {_duration(elapsed)}" if elapsed is not None else ""
    main = ", ".join(f"{counts.get(name, 0)} {name.lower()}" for name in ("PASS", "FAIL", "ERROR"))
    others = [
        f"{counts[name]} {name.lower()}"
        for name in OUTCOMES
        if name not in ("PASS", "FAIL", "ERROR") and counts.get(name)
    ]
    rest = f"; {', '.join(others)}" if others else ""
    return f"{word}{took}: {main} of {len(judged)} cases{rest}"


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s"


def _head(
    judged: list[Judged],
    stale: list[str],
    impl: Impl,
    level: str,
    backend: str,
    elapsed: float | None,
) -> list[str]:
    mcp = " ".join(impl.mcp) if impl.mcp else "(none: MCP cases skip)"
    return [
        f"RAGit conformance: {verdict(judged, stale, elapsed)}",
        f"  level {level}, store backend {backend}",
        *_wrap(f"cli: {' '.join(impl.cli)}"),
        *_wrap(f"mcp: {mcp}"),
        "",
        *_table(judged),
    ]


def summary(
    judged: list[Judged],
    stale: list[str],
    impl: Impl,
    *,
    level: str = "all",
    backend: str = "zvec",
    elapsed: float | None = None,
) -> str:
    """The verdict and the table alone (``--summary``)."""
    return "\n".join(_head(judged, stale, impl, level, backend, elapsed))


def console(
    judged: list[Judged],
    stale: list[str],
    impl: Impl,
    rules: dict[str, Rule],
    *,
    level: str = "all",
    verbose: bool = False,
    backend: str = "zvec",
    elapsed: float | None = None,
) -> str:
    """The report a person reads (see the module docstring)."""
    lines = _head(judged, stale, impl, level, backend, elapsed)
    groups = _na_groups(judged)
    if groups:
        lines += ["", f"n/a on the {backend} backend:"]
        lines += [f"  {count:>4}  {_clip(why, WIDTH - 8)}" for why, count in groups]
    broken = _rules_broken(judged, rules)
    if broken:
        lines += ["", *broken]
    failures = _failures(judged, rules, ("FAIL", "XPASS"))
    if failures:
        count = sum(1 for i in judged if i.outcome in ("FAIL", "XPASS"))
        lines += [
            "",
            *_wrap(
                f"Failures ({count}), one per case: target/case [rule, section] what is wrong "
                "— what the implementation said",
                "",
                "  ",
            ),
            *failures,
        ]
    errors = _failures(judged, rules, ("ERROR",))
    if errors:
        count = sum(1 for i in judged if i.outcome == "ERROR")
        lines += [
            "",
            *_wrap(
                f"Errors ({count}), cases that could not reach their rule (no verdict on it): "
                "the step that failed, its exit status — what the implementation said",
                "",
                "  ",
            ),
            *errors,
        ]
    if verbose:
        excused = _failures(judged, rules, ("XFAIL",))
        if excused:
            lines += ["", "Expected failures (XFAIL):", *excused]
    if stale:
        lines += ["", "expected-failure entries that name no case: " + ", ".join(stale)]
    if failures or errors or stale:
        lines += ["", verdict(judged, stale, elapsed)]
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
    judged: list[Judged],
    stale: list[str],
    impl: Impl,
    backend: str = "zvec",
    elapsed: float | None = None,
) -> dict[str, Any]:
    """The ``--json`` report."""
    per_target: dict[str, Counter[str]] = defaultdict(Counter)
    for item in judged:
        per_target[item.case.target][item.outcome] += 1
    bad = any(item.outcome in BAD_OUTCOMES for item in judged)
    return {
        "verdict": "FAIL" if bad or stale else "OK",
        "durationMs": round(elapsed * 1000) if elapsed is not None else None,
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
            if item.words:
                body += f"\nit said: {item.words}"
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
