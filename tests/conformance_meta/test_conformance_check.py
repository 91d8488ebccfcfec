"""The suite's own linter: python -m conformance.check (docs/conformance.md, "Checker")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conformance.check import check_suite, main
from conformance.suite import Suite

GOOD = {"exit": 0, "stdout": "envelope"}


def test_shipped_suite_passes_its_own_checker() -> None:
    """The committed cases, requirements and expected failures are consistent (suite rule)."""
    assert check_suite(Suite()) == []


def test_checker_reports_each_broken_case_precisely(
    make_suite: Callable[..., Suite], cli_case: Callable[..., dict[str, Any]]
) -> None:
    """Every kind of broken case is named with its file and the problem (suite rule)."""
    suite = make_suite(
        {
            "cli/good.json": cli_case("good", ["status"], GOOD),
            "cli/stem-differs.json": cli_case("other-id", ["status"], GOOD),
            "cli/unknown-fixture.json": cli_case(
                "unknown-fixture", ["status"], GOOD, fixture="nosuch"
            ),
            "cli/unknown-requirement.json": cli_case(
                "unknown-requirement", ["status"], GOOD, requirements=["TST-999"]
            ),
            "cli/bad-matcher.json": cli_case(
                "bad-matcher", ["status"], {**GOOD, "envelope": {"cwd": "<PATH>"}}
            ),
            "cli/no-exit.json": cli_case("no-exit", ["status"], {"stdout": "envelope"}),
            "cli/envelope-from-text.json": cli_case(
                "envelope-from-text", ["status"], {"exit": 0, "stdout": "text", "envelope": {}}
            ),
            "cli/escaping-path.json": cli_case(
                "escaping-path",
                ["status"],
                GOOD,
                setup=[{"write": {"path": "../x", "content": ""}}],
            ),
            "nosuchtarget/good-2.json": cli_case("good-2", ["status"], GOOD),
            "store/good.json": cli_case("good", ["status"], GOOD),
        },
        expected={"no-such-case": "reason"},
    )
    problems = check_suite(suite)
    text = "\n".join(problems)
    assert (
        "cases/cli/stem-differs.json: id 'other-id' must equal the file stem 'stem-differs'" in text
    )
    assert "cases/cli/unknown-fixture.json: fixture 'nosuch' does not exist" in text
    assert "cases/cli/unknown-requirement.json: unknown requirement 'TST-999'" in text
    assert "cases/cli/bad-matcher.json: expect.envelope: .cwd: unknown matcher <PATH>" in text
    assert "cases/cli/no-exit.json: schema: at expect: 'exit' is a required property" in text
    assert "cases/cli/envelope-from-text.json: expect.envelope needs stdout" in text
    assert "cases/cli/escaping-path.json: schema: at setup/0" in text
    assert "cases/nosuchtarget/good-2.json: directory 'nosuchtarget' is not a target" in text
    assert "case id 'good' is used by 2 files" in text
    assert "expected-failures.json: 'no-such-case' names no case" in text
    assert not any("cases/cli/good.json" in p for p in problems)


def test_implemented_requirements_need_a_passing_case(
    make_suite: Callable[..., Suite], cli_case: Callable[..., dict[str, Any]]
) -> None:
    """An implemented rule needs a case expected to pass; a planned one needs none (suite rule)."""
    requirements = [
        {"id": "TST-001", "section": "0", "text": "Covered.", "status": "implemented"},
        {"id": "TST-002", "section": "0", "text": "Uncovered.", "status": "implemented"},
        {"id": "TST-003", "section": "0", "text": "Only xfail.", "status": "implemented"},
        {"id": "TST-004", "section": "0", "text": "Planned.", "status": "planned"},
        {
            "id": "TST-005",
            "section": "0",
            "text": "Elsewhere.",
            "status": "implemented",
            "outOfSuite": "Verified by the platform matrix of CI.",
        },
        {"id": "TST-006", "section": "0", "text": "Bad status.", "status": "done"},
    ]
    suite = make_suite(
        {
            "cli/a.json": cli_case("a", ["status"], GOOD),
            "cli/b.json": cli_case("b", ["status"], GOOD, requirements=["TST-003"]),
        },
        requirements=requirements,
        expected={"b": "not there yet"},
    )
    problems = check_suite(suite)
    assert any("implemented requirement TST-002 has no case" in p for p in problems)
    assert any(
        "implemented requirement TST-003 is covered only by expected failures" in p
        for p in problems
    )
    assert any("TST-006: status must be one of" in p for p in problems)
    assert not any("TST-001" in p or "TST-004" in p or "TST-005" in p for p in problems)


def test_checker_command_exits_nonzero_with_the_list(
    make_suite: Callable[..., Suite], cli_case: Callable[..., dict[str, Any]], capsys: Any
) -> None:
    """`python -m conformance.check` prints one line per problem and exits 1 (suite rule)."""
    suite = make_suite({"cli/x.json": cli_case("y", ["status"], GOOD)})
    assert main(["--suite", str(suite.root)]) == 1
    out = capsys.readouterr().out
    assert "id 'y' must equal the file stem 'x'" in out
    fine = suite.root / "cases" / "cli" / "x.json"
    fine.rename(fine.with_name("y.json"))
    assert main(["--suite", str(suite.root)]) == 0
    assert capsys.readouterr().out.startswith("ok: 1 cases")


def test_planned_requirement_with_passing_cases_fails(
    make_suite: Callable[..., Suite], cli_case: Callable[..., dict[str, Any]]
) -> None:
    """A planned rule that a case expected to pass covers must be implemented (suite rule)."""
    requirements = [
        {"id": "TST-001", "section": "0", "text": "Planned, passing.", "status": "planned"},
        {"id": "TST-002", "section": "0", "text": "Planned, xfail.", "status": "planned"},
    ]
    suite = make_suite(
        {
            "cli/a.json": cli_case("a", ["status"], GOOD),
            "cli/b.json": cli_case("b", ["status"], GOOD, requirements=["TST-002"]),
        },
        requirements=requirements,
        expected={"b": "not there yet"},
    )
    problems = check_suite(suite)
    assert any("planned requirement TST-001 has cases expected to pass (a)" in p for p in problems)
    assert not any("TST-002" in p for p in problems)


def test_out_of_suite_notes_must_cite_files_that_exist(
    make_suite: Callable[..., Suite], cli_case: Callable[..., dict[str, Any]]
) -> None:
    """A requirement verified elsewhere names files and workflows that exist (suite rule)."""
    base = {"section": "0", "text": "Elsewhere.", "status": "implemented"}
    requirements = [
        {"id": "TST-001", "section": "0", "text": "Covered.", "status": "implemented"},
        {**base, "id": "TST-002", "outOfSuite": "Verified by suite/cases/cli/a.json."},
        {**base, "id": "TST-003", "outOfSuite": "Verified by tests/nosuch/test_x.py."},
        {**base, "id": "TST-004", "outOfSuite": "Packaging rule; the release workflow."},
    ]
    suite = make_suite({"cli/a.json": cli_case("a", ["status"], GOOD)}, requirements=requirements)
    problems = check_suite(suite)
    assert any("TST-003: outOfSuite cites 'tests/nosuch/test_x.py'" in p for p in problems)
    assert any("TST-004: outOfSuite cites a workflow but names no existing" in p for p in problems)
    assert not any("TST-002" in p for p in problems)


def test_case_level_follows_its_requirements(
    make_suite: Callable[..., Suite], cli_case: Callable[..., dict[str, Any]]
) -> None:
    """Contract cases cite contract rules; an extension case leads with an extension rule."""
    requirements = [
        {"id": "TST-001", "section": "0", "text": "A rule.", "status": "implemented"},
        {
            "id": "EXT-001",
            "section": "0",
            "level": "extension",
            "text": "A choice.",
            "status": "implemented",
        },
    ]
    suite = make_suite(
        {
            "cli/a.json": cli_case("a", ["status"], GOOD),
            "cli/mixed.json": cli_case("mixed", ["x"], GOOD, requirements=["TST-001", "EXT-001"]),
            "cli/ext.json": cli_case(
                "ext", ["x"], GOOD, level="extension", requirements=["EXT-001", "TST-001"]
            ),
            "cli/mislabelled.json": cli_case("mislabelled", ["x"], GOOD, level="extension"),
        },
        requirements=requirements,
    )
    problems = check_suite(suite)
    assert any("mixed.json: a contract case cites an extension requirement" in p for p in problems)
    assert any("mislabelled.json: level 'extension' differs" in p for p in problems)
    assert not any("cli/ext.json" in p or "cli/a.json" in p for p in problems)


def test_contract_cases_pin_only_fields_the_contract_names(
    make_suite: Callable[..., Suite], cli_case: Callable[..., dict[str, Any]]
) -> None:
    """The allow-list of contract fields bounds what a contract golden may pin (suite rule)."""
    envelope = {"command": "status", "ok": False, "data": {"count": 1, "mine": {"x": 1}}}
    error = {"code": "INPUT_INVALID", "details": {"field": "x", "extra": 1}}
    fields = {
        "data": {"status": {"cite": "§12", "fields": ["count", "mine"]}},
        "errorDetails": {"INPUT_INVALID": {"cite": "§3", "fields": ["field"]}},
    }
    suite = make_suite(
        {
            "cli/a.json": cli_case(
                "a", ["status"], {**GOOD, "envelope": {**envelope, "error": error}}
            ),
            "cli/other.json": cli_case(
                "other", ["x"], {**GOOD, "envelope": {"command": "query", "data": {"hits": []}}}
            ),
        },
        contract_fields=fields,
    )
    problems = check_suite(suite)
    assert any(
        "a.json: expect.envelope pins data.mine.x, which the contract" in p for p in problems
    )
    assert any("pins error.details.extra, which the contract does not name" in p for p in problems)
    assert any("other.json: expect.envelope pins data fields of 'query'" in p for p in problems)
    assert not any("data.count" in p or "details.field" in p for p in problems)


def test_contract_goldens_are_traced_to_a_contract_rule(
    make_suite: Callable[..., Suite], cli_case: Callable[..., dict[str, Any]]
) -> None:
    """Files, MCP results, envelope keys, codes and warnings a contract case pins need a rule."""
    fields = {
        "data": {"memory wrap": {"cite": "§9", "fields": []}},
        "errorDetails": {"INPUT_INVALID": {"cite": "§3", "fields": ["field"]}},
        "files": {".ragit/memory/working/current.json": {"cite": "§9", "fields": ["openLoops"]}},
        "mcpResults": {"tools/list": {"cite": "§11", "fields": ["tools", "tools[].name"]}},
        "warnings": {"TST-002": "§9: a wrap without HEAD warns"},
    }
    requirements = [
        {"id": "TST-001", "section": "9", "text": "Wraps merge.", "status": "implemented"},
        {"id": "TST-002", "section": "9", "text": "Wraps warn.", "status": "implemented"},
    ]
    wrap = {"command": "memory wrap", "ok": True, "data": {"...": "<ANY>"}}
    current = {"openLoops": [], "sessionCount": 2, "...": "<ANY>"}
    cases = {
        "cli/file-field.json": cli_case(
            "file-field",
            ["memory", "wrap"],
            {**GOOD, "files": [{"path": ".ragit/memory/working/current.json", "json": current}]},
        ),
        "cli/unknown-file.json": cli_case(
            "unknown-file",
            ["x"],
            {**GOOD, "files": [{"path": ".ragit/manifest/${HEAD}.json", "json": {"docs": []}}]},
        ),
        "cli/warning-unpromised.json": cli_case(
            "warning-unpromised",
            ["memory", "wrap"],
            {**GOOD, "envelope": {**wrap, "warnings": {"$minLen": 1}}},
        ),
        "cli/warning-promised.json": cli_case(
            "warning-promised",
            ["memory", "wrap"],
            {**GOOD, "envelope": {**wrap, "warnings": {"$minLen": 1}}},
            requirements=["TST-001", "TST-002"],
        ),
        "cli/off-catalog.json": cli_case(
            "off-catalog",
            ["x"],
            {
                **GOOD,
                "envelope": {
                    "command": "x",
                    "ok": False,
                    "hint": "mine",
                    "error": {"code": "CONFIG_INVALID", "recovery": {"command": None, "why": 1}},
                },
            },
        ),
        "cli/tools.json": cli_case(
            "tools",
            [],
            {"mcp": {"result": {"tools": {"$each": {"name": "<STRING>", "icon": "<ANY>"}}}}},
            step={"mcp": {"listTools": True}},
        ),
    }
    problems = "\n".join(check_suite(make_suite(cases, requirements, contract_fields=fields)))
    assert (
        "file-field.json: expect.files[0].json pins .ragit/memory/working/current.json field "
        "sessionCount, which the contract does not name"
    ) in problems
    assert (
        "unknown-file.json: expect.files[0].json pins fields of .ragit/manifest/${HEAD}.json"
        in (problems)
    )
    assert (
        "warning-unpromised.json: expect.envelope requires a warning, but no requirement it cites "
        "promises one"
    ) in problems
    assert "off-catalog.json: expect.envelope pins hint, which is not a key of the envelope" in (
        problems
    )
    assert "pins error.recovery.why, which is not a key of the envelope" in problems
    assert "pins error.code CONFIG_INVALID, which is not in the contract's catalog" in problems
    assert (
        "tools.json: expect.mcp.result pins tools/list result field tools[].icon, which the "
        "contract does not name"
    ) in problems
    assert "warning-promised" not in problems and "openLoops" not in problems
    assert "tools[].name" not in problems


def test_captures_must_be_made_before_they_are_used(
    make_suite: Callable[..., Suite], cli_case: Callable[..., dict[str, Any]]
) -> None:
    """A ${CAPTURE:…} or recover step names a capture an earlier step makes (suite rule)."""
    setup = [
        {"recover": {"capture": "later"}},
        {"run": ["status"], "capture": "later"},
        {"write": {"path": "a.json", "json": {"v": "${CAPTURE:later:version}"}}},
        {"write": {"path": "b.json", "content": "${CAPTURE:nosuch:version}"}},
    ]
    suite = make_suite({"cli/c.json": cli_case("c", ["status"], GOOD, setup=setup)})
    problems = check_suite(suite)
    assert [p for p in problems if "capture" in p] == [
        "suite/cases/cli/c.json: setup[0] uses capture 'later', which no earlier setup step makes",
        "suite/cases/cli/c.json: setup[3] uses capture 'nosuch', which no earlier setup step makes",
    ]
