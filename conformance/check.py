"""Lint the suite itself: ``python -m conformance.check``.

Checks that every case file is valid against ``case.schema.json`` (with
``jsonschema`` when it is installed), that ids are unique and equal their file
stems, that fixtures exist, that goldens use only known matchers, that every
cited requirement exists, that a case's level follows its requirements and that
a ``contract`` case pins only what the contract names (``contract-fields.json``:
envelope, data, error details and catalog codes, fields of repository files and
MCP results, warnings only where its cited rule promises one), that captures a
case uses are made by an earlier step,
that every implemented requirement is covered by a case that is expected to pass
(a contract rule by a contract case) while no ``planned`` one is, that the files
an out-of-suite requirement cites exist, and that every expected-failure entry
names a case. Prints one line per problem and exits 1 when there is any.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from conformance.contract_fields import ContractFields, requires_warning
from conformance.matchers import lint
from conformance.suite import LEVELS, TARGETS, Case, Suite, SuiteError, load_case, read_json

REQUIREMENT_ID = re.compile(r"^[A-Z]{2,5}-[0-9]{3}$")
REQUIREMENT_KEYS = {"id", "section", "level", "text", "status", "outOfSuite"}
STATUSES = ("implemented", "planned")
# A repository path named in an outOfSuite note: a/b, a/b.py, a/, pyproject.toml.
_CITED_PATH = re.compile(r"(?<![\w./-])(\.?[\w-]+(?:/[\w.-]*)+|[\w-]+\.(?:py|toml|json|md|ya?ml))")


def _schema_validator(suite: Suite) -> tuple[Any, list[str]]:
    try:
        schema = read_json(suite.schema_path)
    except SuiteError as exc:
        return None, [str(exc)]
    try:
        import jsonschema  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        print(
            "warning: jsonschema is not installed; case files are not schema-checked",
            file=sys.stderr,
        )
        return None, []
    validator_cls = jsonschema.Draft202012Validator
    try:
        validator_cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        return None, [f"{suite.schema_path}: invalid schema: {exc.message}"]
    return validator_cls(schema, format_checker=validator_cls.FORMAT_CHECKER), []


def _rel(suite: Suite, path: Path) -> str:
    try:
        return path.relative_to(suite.root.parent).as_posix()
    except ValueError:
        return str(path)


def _case_problems(suite: Suite, case: Case, validator: Any) -> list[str]:
    where = _rel(suite, case.path)
    data = case.data
    problems: list[str] = []
    if validator is not None:
        for error in sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path)):
            location = "/".join(str(p) for p in error.absolute_path) or "(root)"
            problems.append(f"{where}: schema: at {location}: {error.message}")
    if data.get("id") != case.path.stem:
        problems.append(
            f"{where}: id {data.get('id')!r} must equal the file stem {case.path.stem!r}"
        )
    if case.target not in TARGETS:
        problems.append(f"{where}: directory {case.target!r} is not a target {list(TARGETS)}")
    fixture = data.get("fixture")
    if isinstance(fixture, str) and not (suite.fixtures_dir / fixture / "fixture.json").is_file():
        problems.append(
            f"{where}: fixture {fixture!r} does not exist "
            f"({_rel(suite, suite.fixtures_dir / fixture / 'fixture.json')})"
        )
    raw_expect = data.get("expect")
    expect: dict[str, Any] = raw_expect if isinstance(raw_expect, dict) else {}
    goldens: list[tuple[str, Any]] = []
    if "envelope" in expect:
        goldens.append(("expect.envelope", expect["envelope"]))
    if isinstance(expect.get("mcp"), dict) and "result" in expect["mcp"]:
        goldens.append(("expect.mcp.result", expect["mcp"]["result"]))
    for index, spec in enumerate(expect.get("files", []) or []):
        if isinstance(spec, dict) and "json" in spec:
            goldens.append((f"expect.files[{index}].json", spec["json"]))
    for label, golden in goldens:
        problems += [f"{where}: {label}: {p.replace('$', '', 1)}" for p in lint(golden)]
    raw_step = data.get("step")
    step: dict[str, Any] = raw_step if isinstance(raw_step, dict) else {}
    if (
        "argv" in step
        and "envelope" in expect
        and expect.get("stdout") not in ("envelope", "text+envelope")
    ):
        problems.append(f"{where}: expect.envelope needs stdout 'envelope' or 'text+envelope'")
    captures = {s.get("capture") for s in data.get("setup", []) if isinstance(s, dict)}
    for spec in expect.get("equalCaptures", []) or []:
        if isinstance(spec, dict) and spec.get("capture") not in captures:
            problems.append(f"{where}: equalCaptures names unknown capture {spec.get('capture')!r}")
    problems += [f"{where}: {p}" for p in _capture_uses(data)]
    return problems


_CAPTURE_USE = re.compile(r"\$\{CAPTURE:([^:}]*):[^}]*\}")


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item)]
    return []


def _capture_uses(data: dict[str, Any]) -> list[str]:
    """A ${CAPTURE:name:…} or a recover step naming a capture no earlier step makes."""
    problems: list[str] = []
    made: set[str] = set()
    steps = [s for s in data.get("setup", []) if isinstance(s, dict)]
    for index, step in enumerate([*steps, data.get("step") or {}]):
        where = f"setup[{index}]" if index < len(steps) else "step"
        used = [m.group(1) for text in _strings(step) for m in _CAPTURE_USE.finditer(text)]
        recover = step.get("recover")
        if isinstance(recover, dict):
            used.append(str(recover.get("capture")))
        problems += [
            f"{where} uses capture {name!r}, which no earlier setup step makes"
            for name in dict.fromkeys(used)
            if name not in made
        ]
        if isinstance(step.get("capture"), str):
            made.add(step["capture"])
    return problems


def _requirement_problems(
    suite: Suite,
    requirements: list[Any],
    cases: list[Case],
    expected: dict[str, str],
) -> list[str]:
    where = _rel(suite, suite.requirements_path)
    problems: list[str] = []
    by_id: dict[str, dict[str, Any]] = {}
    for index, req in enumerate(requirements):
        if not isinstance(req, dict):
            problems.append(f"{where}: requirements[{index}] is not an object")
            continue
        missing = {"id", "section", "level", "text", "status"} - set(req)
        extra = set(req) - REQUIREMENT_KEYS
        if missing or extra:
            problems.append(
                f"{where}: requirements[{index}] missing {sorted(missing)}, unknown {sorted(extra)}"
            )
        rid = req.get("id")
        if not isinstance(rid, str) or not REQUIREMENT_ID.match(rid):
            problems.append(f"{where}: requirements[{index}] has a malformed id {rid!r}")
            continue
        if rid in by_id:
            problems.append(f"{where}: duplicate requirement id {rid}")
        if req.get("status") not in STATUSES:
            problems.append(f"{where}: {rid}: status must be one of {list(STATUSES)}")
        if not isinstance(req.get("text"), str) or not req.get("text", "").strip():
            problems.append(f"{where}: {rid}: text must be a non-empty string")
        if req.get("level") not in LEVELS:
            problems.append(f"{where}: {rid}: level must be one of {list(LEVELS)}")
        if "outOfSuite" in req:
            problems += [
                f"{where}: {rid}: {p}" for p in _cited_files(suite, str(req["outOfSuite"]))
            ]
        by_id[rid] = req
    cited: dict[str, list[Case]] = defaultdict(list)
    for case in cases:
        for rid in case.requirements:
            cited[rid].append(case)
            if rid not in by_id:
                problems.append(f"{_rel(suite, case.path)}: unknown requirement {rid!r}")
        problems += _level_problems(suite, case, by_id)
    for rid, req in by_id.items():
        passing = sorted(c.id for c in cited.get(rid, []) if c.id not in expected)
        if req.get("status") == "planned" and passing:
            problems.append(
                f"{where}: planned requirement {rid} has cases expected to pass "
                f"({', '.join(passing[:3])}{', ...' if len(passing) > 3 else ''}); "
                "mark it implemented"
            )
        if req.get("status") != "implemented" or "outOfSuite" in req:
            continue
        covering = cited.get(rid, [])
        if not covering:
            problems.append(f"{where}: implemented requirement {rid} has no case")
        elif not passing:
            problems.append(
                f"{where}: implemented requirement {rid} is covered only by expected failures "
                f"({', '.join(sorted(c.id for c in covering))}); mark it planned or fix the cases"
            )
        elif req.get("level") == "contract" and not any(
            c.level == "contract" and c.id not in expected for c in covering
        ):
            problems.append(
                f"{where}: contract requirement {rid} is covered only by extension cases; "
                "add a contract case (pinning only what the contract names)"
            )
    return problems


def _level_problems(suite: Suite, case: Case, by_id: dict[str, dict[str, Any]]) -> list[str]:
    """A case's level is its first requirement's; a contract case cites only contract rules."""
    where = _rel(suite, case.path)
    levels = [by_id[rid].get("level") for rid in case.requirements if rid in by_id]
    if not levels or case.data.get("level") not in LEVELS:
        return []
    if levels[0] != case.level:
        return [
            f"{where}: level {case.level!r} differs from its first requirement's "
            f"({case.primary_requirement} is {levels[0]!r})"
        ]
    if case.level == "contract" and "extension" in levels:
        return [f"{where}: a contract case cites an extension requirement; make it extension"]
    return []


def _cited_files(suite: Suite, note: str) -> list[str]:
    """Files and workflows an out-of-suite note cites that do not exist."""
    base = suite.root.parent
    cited = [rel.rstrip(".") for rel in _CITED_PATH.findall(note)]
    problems = [
        f"outOfSuite cites {rel!r}, which does not exist"
        for rel in cited
        if not (base / rel).exists()
    ]
    if re.search(r"\bworkflow", note, re.IGNORECASE) and not any(
        rel.startswith(".github/workflows/") and (base / rel).is_file() for rel in cited
    ):
        problems.append("outOfSuite cites a workflow but names no existing .github/workflows/ file")
    return problems


def _field_problems(suite: Suite, cases: list[Case]) -> list[str]:
    """Contract cases whose goldens pin what no contract rule names (contract-fields.json)."""
    where = _rel(suite, suite.contract_fields_path)
    try:
        fields, problems = ContractFields.from_json(read_json(suite.contract_fields_path))
    except SuiteError as exc:
        return [str(exc)]
    problems = [f"{where}: {p}" for p in problems]
    for case in cases:
        expect = case.data.get("expect")
        if case.level != "contract" or not isinstance(expect, dict):
            continue
        found = [f"expect.envelope {p}" for p in fields.unnamed(expect.get("envelope"))]
        for index, spec in enumerate(expect.get("files", []) or []):
            if isinstance(spec, dict) and "json" in spec:
                found += [
                    f"expect.files[{index}].json {p}"
                    for p in fields.unnamed_in_file(str(spec.get("path")), spec["json"])
                ]
        mcp = expect.get("mcp")
        step = case.data.get("step")
        if isinstance(mcp, dict) and "result" in mcp and isinstance(step, dict):
            method = "tools/list" if (step.get("mcp") or {}).get("listTools") else "tools/call"
            unnamed = fields.unnamed_in_result(method, mcp["result"])
            found += [f"expect.mcp.result {p}" for p in unnamed]
        promised = fields.warnings & set(case.requirements)
        if requires_warning(expect.get("envelope")) and not promised:
            found.append(
                "expect.envelope requires a warning, but no requirement it cites promises one "
                "(contract-fields.json warnings)"
            )
        problems += [
            f"{_rel(suite, case.path)}: {p} (drop it from the golden, or make the case extension)"
            for p in found
        ]
    return problems


def check_suite(suite: Suite) -> list[str]:
    """Return every problem of the suite at ``suite`` (empty when it is consistent)."""
    problems: list[str] = []
    validator, schema_problems = _schema_validator(suite)
    problems += schema_problems
    cases: list[Case] = []
    if suite.cases_dir.is_dir():
        for path in sorted(suite.cases_dir.rglob("*")):
            if path.is_dir():
                continue
            rel = path.relative_to(suite.cases_dir)
            if path.suffix != ".json" or len(rel.parts) != 2:
                problems.append(
                    f"{_rel(suite, path)}: stray file (cases are cases/<target>/<id>.json)"
                )
    for path in suite.case_files():
        try:
            cases.append(load_case(path))
        except SuiteError as exc:
            problems.append(str(exc))
    for case in cases:
        problems += _case_problems(suite, case, validator)
    for case_id, count in Counter(case.id for case in cases).items():
        if count > 1:
            problems.append(f"case id {case_id!r} is used by {count} files")
    try:
        expected = suite.load_expected_failures()
    except SuiteError as exc:
        problems.append(str(exc))
        expected = {}
    known = {case.id for case in cases}
    for case_id in sorted(set(expected) - known):
        problems.append(f"{_rel(suite, suite.expected_failures_path)}: {case_id!r} names no case")
    try:
        requirements = suite.load_requirements()
    except SuiteError as exc:
        problems.append(str(exc))
        requirements = []
    problems += _requirement_problems(suite, requirements, cases, expected)
    problems += _field_problems(suite, cases)
    return problems


def summary(suite: Suite) -> str:
    """Counts of cases per target and of requirements per status."""
    cases = suite.load_cases()
    per_target = Counter(case.target for case in cases)
    reqs = suite.load_requirements()
    statuses = Counter(r.get("status") for r in reqs)
    levels = Counter(case.level for case in cases)
    out_of_suite = sum(1 for r in reqs if "outOfSuite" in r)
    targets = ", ".join(f"{t} {per_target.get(t, 0)}" for t in TARGETS)
    return (
        f"ok: {len(cases)} cases ({targets}; {levels.get('contract', 0)} contract, "
        f"{levels.get('extension', 0)} extension); {len(reqs)} requirements "
        f"({statuses.get('implemented', 0)} implemented, {statuses.get('planned', 0)} planned, "
        f"{out_of_suite} verified outside the suite); "
        f"{len(suite.load_expected_failures())} expected failures"
    )


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    parser = argparse.ArgumentParser(prog="python -m conformance.check", description=__doc__)
    parser.add_argument("--suite", type=Path, help="suite directory (default: this package)")
    parser.add_argument("--fixtures", type=Path, help="fixtures directory (default: ./fixtures)")
    args = parser.parse_args(argv)
    suite = Suite()
    if args.suite is not None:
        suite = Suite(root=args.suite.resolve(), fixtures_dir=suite.fixtures_dir)
    if args.fixtures is not None:
        suite = Suite(root=suite.root, fixtures_dir=args.fixtures.resolve())
    problems = check_suite(suite)
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(summary(suite))
    return 0


if __name__ == "__main__":
    sys.exit(main())
