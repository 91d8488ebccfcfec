"""The conformance runner and its black-box engine, against fake implementations."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.engine import CaseResult, run_case
from conformance.environment import Impl
from conformance.fixture_cache import FixtureCache
from conformance.report import classify
from conformance.runner import main
from conformance.suite import REPO_ROOT, Suite, load_case

CaseBuilder = Callable[..., dict[str, Any]]
ENVELOPE = {
    "command": "status",
    "ok": True,
    "version": "<VERSION>",
    "cwd": "<CWD>",
    "data": {"count": 1},
    "warnings": [],
}


@pytest.fixture
def fixtures() -> Iterator[FixtureCache]:
    cache = FixtureCache(REPO_ROOT / "fixtures" / "build.py")
    yield cache
    cache.close()


def _run(
    tmp_path: Path,
    fixtures: FixtureCache,
    data: dict[str, Any],
    cli: list[str],
    mcp: list[str] | None = None,
) -> CaseResult:
    path = tmp_path / "cases" / "cli" / f"{data['id']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    impl = Impl(cli=tuple(cli), mcp=tuple(mcp) if mcp else None)
    return run_case(load_case(path), impl, fixtures)


def test_case_the_implementation_meets_passes(
    tmp_path: Path, fixtures: FixtureCache, fake_cli: list[str], cli_case: CaseBuilder
) -> None:
    """Exit status, stdout mode, golden envelope and fs expectations all hold (suite rule)."""
    data = cli_case(
        "meets",
        ["status"],
        {"exit": 0, "stdout": "envelope", "envelope": ENVELOPE, "fs": "unchanged"},
    )
    result = _run(tmp_path, fixtures, data, fake_cli)
    assert (result.status, result.reasons) == ("pass", [])


def test_mismatches_are_reported_with_json_paths(
    tmp_path: Path, fixtures: FixtureCache, fake_cli: list[str], cli_case: CaseBuilder
) -> None:
    """A failing case names each broken expectation (suite rule)."""
    golden = {**ENVELOPE, "data": {"count": 2}, "version": "<SHA40>"}
    data = cli_case("mismatch", ["status"], {"exit": 3, "stdout": "envelope", "envelope": golden})
    result = _run(tmp_path, fixtures, data, fake_cli)
    assert result.status == "fail"
    assert result.reasons[:3] == [
        "exit: expected 3, got 0",
        'envelope: $.version: expected <SHA40>, got "1.2.3"',
        "envelope: $.data.count: expected 2, got 1",
    ]


def test_text_plus_envelope_needs_the_separator_line(
    tmp_path: Path, fixtures: FixtureCache, fake_cli: list[str], cli_case: CaseBuilder
) -> None:
    """'both' output is text, a '---' line, then the envelope as the last line (contract §2)."""
    golden = {**ENVELOPE, "command": "<STRING>", "data": {}}
    good = cli_case("both", ["both"], {"exit": 0, "stdout": "text+envelope", "envelope": golden})
    assert _run(tmp_path, fixtures, good, fake_cli).status == "pass"
    bad = cli_case("nosep", ["nosep"], {"exit": 0, "stdout": "text+envelope"})
    result = _run(tmp_path, fixtures, bad, fake_cli)
    assert result.status == "fail"
    assert result.reasons == ["stdout: no `---` line between the text and the JSON envelope"]
    assert "human text" in result.detail["excerpt"]


def test_text_mode_rejects_an_envelope_on_stdout(
    tmp_path: Path, fixtures: FixtureCache, fake_cli: list[str], cli_case: CaseBuilder
) -> None:
    """'text' output must not carry the envelope (contract §2)."""
    result = _run(
        tmp_path, fixtures, cli_case("t", ["both"], {"exit": 0, "stdout": "text"}), fake_cli
    )
    assert result.status == "fail"
    assert "stdout: expected human text only, found an envelope line" in result.reasons


def test_fs_unchanged_catches_a_rewrite_with_identical_bytes(
    tmp_path: Path, fixtures: FixtureCache, fake_cli: list[str], cli_case: CaseBuilder
) -> None:
    """Byte preservation includes mtimes (contract §11; suite rule for fs: unchanged)."""
    data = cli_case(
        "rewrite",
        ["rewrite", "note.md"],
        {"exit": 0, "stdout": "envelope", "fs": "unchanged"},
        setup=[{"write": {"path": "note.md", "content": "same\n"}}],
    )
    result = _run(tmp_path, fixtures, data, fake_cli)
    assert result.status == "fail"
    assert result.reasons[0] == "fs: touched note.md, expected no change"


def test_fs_object_form_requires_and_bounds_the_changes(
    tmp_path: Path, fixtures: FixtureCache, fake_cli: list[str], cli_case: CaseBuilder
) -> None:
    """Created paths must appear; nothing outside the listed patterns may change (suite rule)."""
    ok = cli_case(
        "creates",
        ["write", "out/a.txt", "x"],
        {
            "exit": 0,
            "stdout": "envelope",
            "fs": {"created": ["out/*.txt"]},
            "files": [{"path": "out/a.txt", "equals": "x"}],
        },
        setup=[{"mkdir": "out"}],
    )
    assert _run(tmp_path, fixtures, ok, fake_cli).status == "pass"
    wrong = cli_case(
        "creates-elsewhere",
        ["write", "b.txt", "x"],
        {"exit": 0, "stdout": "envelope", "fs": {"created": ["out/**"]}},
    )
    result = _run(tmp_path, fixtures, wrong, fake_cli)
    assert result.reasons[:2] == [
        "fs: expected a created path matching 'out/**', got ['b.txt']",
        "fs: unexpected created path b.txt",
    ]


def test_environment_is_hermetic(
    tmp_path: Path,
    fixtures: FixtureCache,
    fake_cli: list[str],
    cli_case: CaseBuilder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No inherited GIT_* or RAGIT_* variable reaches the implementation (suite rule)."""
    monkeypatch.setenv("GIT_DIR", "/somewhere/else")
    monkeypatch.setenv("RAGIT_DEBUG", "1")
    data = cli_case(
        "env",
        ["env"],
        {
            "exit": 0,
            "stdout": "envelope",
            "envelope": {
                **ENVELOPE,
                "command": "env",
                "data": {
                    "GIT_CONFIG_NOSYSTEM": "1",
                    "LC_ALL": "C.UTF-8",
                    "HOME": "<STRING>",
                    "CASE_VAR": "<CWD>/x",
                    "...": "<ANY>",
                },
            },
        },
        step={"argv": ["env"], "env": {"CASE_VAR": "${REPO}/x"}},
    )
    result = _run(tmp_path, fixtures, data, fake_cli)
    assert result.status == "pass", result.reasons
    seen = json.loads(result.detail["stdout"])["data"]
    assert "GIT_DIR" not in seen and "RAGIT_DEBUG" not in seen
    assert not seen["HOME"].startswith(str(Path.home()))


def test_stdin_is_passed_to_the_step(
    tmp_path: Path, fixtures: FixtureCache, fake_cli: list[str], cli_case: CaseBuilder
) -> None:
    """step.stdin reaches the implementation's standard input (suite rule)."""
    golden = {**ENVELOPE, "command": "stdin", "data": {"stdin": '{"question": "x"}'}}
    data = cli_case(
        "stdin",
        ["stdin"],
        {"exit": 0, "stdout": "envelope", "envelope": golden},
        step={"argv": ["stdin"], "stdin": '{"question": "x"}'},
    )
    assert _run(tmp_path, fixtures, data, fake_cli).status == "pass"


def test_a_traceback_on_stderr_fails_the_case(
    tmp_path: Path, fixtures: FixtureCache, fake_cli: list[str], cli_case: CaseBuilder
) -> None:
    """Unexpected errors print one line, never a traceback unless RAGIT_DEBUG=1 (contract §2)."""
    result = _run(
        tmp_path, fixtures, cli_case("crash", ["crash"], {"exit": 1, "stdout": "any"}), fake_cli
    )
    assert "stderr: a traceback leaked (only RAGIT_DEBUG=1 may print one)" in result.reasons


def test_failed_setup_step_is_an_error_naming_the_step_its_exit_and_the_words(
    tmp_path: Path, fixtures: FixtureCache, fake_cli: list[str], cli_case: CaseBuilder
) -> None:
    """A setup run that exits unexpectedly never reached the rule: ERROR, not FAIL (suite rule)."""
    data = cli_case(
        "setup", ["status"], {"exit": 0, "stdout": "envelope"}, setup=[{"run": ["fail"]}]
    )
    result = _run(tmp_path, fixtures, data, fake_cli)
    assert result.status == "error"
    assert result.reasons == ["setup failed: setup[0] `fail` exited 3, expected 0"]
    assert result.detail["words"] == "[ragit] operational error"
    assert classify(result, {"setup": "listed"}) == "ERROR"


def test_judged_setup_step_that_fails_is_a_failure_of_the_rule(
    tmp_path: Path, fixtures: FixtureCache, fake_cli: list[str], cli_case: CaseBuilder
) -> None:
    """A step marked judged is part of what the rule promises: its failure is a FAIL."""
    data = cli_case(
        "judged",
        ["status"],
        {"exit": 0, "stdout": "envelope"},
        setup=[{"run": ["broken"], "judged": True}],
    )
    result = _run(tmp_path, fixtures, data, fake_cli)
    assert result.status == "fail"
    assert result.reasons == ["setup[0] `broken` exited 3, expected 0"]
    assert result.detail["words"] == "STATE_BROKEN: the state is broken"


def test_recover_runs_the_printed_recovery_with_ragit_as_the_implementation(
    tmp_path: Path, fixtures: FixtureCache, fake_cli: list[str], cli_case: CaseBuilder
) -> None:
    """A recovery runs as printed, through sh, `ragit` being the CLI under test (suite rule)."""
    fix = "ragit write 'fixed file.txt' repaired && test -s 'fixed file.txt'"
    data = cli_case(
        "recover",
        ["status"],
        {
            "exit": 0,
            "stdout": "envelope",
            "files": [{"path": "fixed file.txt", "equals": "repaired"}],
        },
        setup=[
            {"run": ["broken", fix], "expectExit": 3, "capture": "broken"},
            {"recover": {"capture": "broken"}, "judged": True},
        ],
    )
    assert _run(tmp_path, fixtures, data, fake_cli).status == "pass"


def test_recover_without_a_recovery_command_fails_a_judged_step(
    tmp_path: Path, fixtures: FixtureCache, fake_cli: list[str], cli_case: CaseBuilder
) -> None:
    """A null recovery cannot be run: a FAIL when the step is judged (suite rule)."""
    data = cli_case(
        "norecover",
        ["status"],
        {"exit": 0, "stdout": "envelope"},
        setup=[
            {"run": ["broken"], "expectExit": 3, "capture": "broken"},
            {"recover": {"capture": "broken"}, "judged": True},
        ],
    )
    result = _run(tmp_path, fixtures, data, fake_cli)
    assert result.status == "fail"
    assert result.reasons == [
        "setup[1]: capture 'broken' has no recovery command at 'error.recovery.command' "
        "(found null)"
    ]
    assert result.detail["words"] == "STATE_BROKEN: the state is broken"


def test_captured_values_reach_later_steps(
    tmp_path: Path, fixtures: FixtureCache, fake_cli: list[str], cli_case: CaseBuilder
) -> None:
    """${CAPTURE:name:path} puts a captured value into strings and, whole, into JSON."""
    data = cli_case(
        "captured",
        ["status"],
        {
            "exit": 0,
            "stdout": "envelope",
            "files": [
                {"path": "a.json", "json": {"version": "1.2.3", "data": {"count": 1}}},
                {"path": "b.txt", "equals": "v1.2.3"},
            ],
        },
        setup=[
            {"run": ["status"], "capture": "first"},
            {
                "write": {
                    "path": "a.json",
                    "json": {
                        "version": "${CAPTURE:first:version}",
                        "data": "${CAPTURE:first:data}",
                    },
                }
            },
            {"run": ["write", "b.txt", "v${CAPTURE:first:version}"]},
        ],
    )
    assert _run(tmp_path, fixtures, data, fake_cli).status == "pass"
    data["setup"][1]["write"]["json"]["data"] = "${CAPTURE:first:nosuch}"
    data["id"] = "captured-missing"
    result = _run(tmp_path, fixtures, data, fake_cli)
    assert (result.status, result.reasons) == (
        "error",
        ["setup failed: ${CAPTURE:first:nosuch}: capture 'first' has no 'nosuch'"],
    )


def test_mcp_case_is_skipped_without_an_mcp_implementation(
    tmp_path: Path, fixtures: FixtureCache, fake_cli: list[str], cli_case: CaseBuilder
) -> None:
    """MCP cases need --mcp-impl; without it they are reported as SKIP (suite rule)."""
    data = cli_case("m", [], {"mcp": {"isError": False}}, step={"mcp": {"listTools": True}})
    result = _run(tmp_path, fixtures, data, fake_cli)
    assert (result.status, result.reasons) == ("skip", ["needs an MCP implementation (--mcp-impl)"])


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("good", []),
        ("mismatch", ["mcp: content[0].text and structuredContent differ"]),
        ("iserror", ["mcp: isError is True but the envelope has ok=True"]),
        ("banner", ["mcp: stdout carried a line that is not JSON-RPC: b'fake server ready\\n'"]),
    ],
)
def test_mcp_driver_enforces_the_tool_result_contract(
    tmp_path: Path,
    fixtures: FixtureCache,
    fake_cli: list[str],
    fake_mcp: list[str],
    cli_case: CaseBuilder,
    mode: str,
    expected: list[str],
) -> None:
    """Tool results: text == structuredContent, isError iff not ok, JSON-RPC only (contract §11)."""
    data = cli_case(
        f"mcp-{mode}",
        [],
        {
            "mcp": {"isError": mode == "iserror"},
            "envelope": {
                "ok": True,
                "tool": "ragit_status",
                "version": "<VERSION>",
                "cwd": "<CWD>",
                "data": {"a": 1},
                "warnings": [],
            },
            "fs": "unchanged",
        },
    )
    data["step"] = {
        "mcp": {"tool": "ragit_status", "arguments": {"a": 1}},
        "env": {"FAKE_MCP_MODE": mode},
    }
    result = _run(tmp_path, fixtures, data, fake_cli, fake_mcp)
    assert [r for r in result.reasons if not r.startswith("(server stderr")] == expected


def test_expected_failures_classify_outcomes() -> None:
    """Listed failure is XFAIL, listed pass is XPASS (stale), errors never excused (suite rule)."""
    listed = {"x": "known gap"}
    assert classify(CaseResult("x", "cli", "fail"), listed) == "XFAIL"
    assert classify(CaseResult("x", "cli", "pass"), listed) == "XPASS"
    assert classify(CaseResult("x", "cli", "error"), listed) == "ERROR"
    assert classify(CaseResult("x", "cli", "skip"), listed) == "SKIP"
    assert classify(CaseResult("y", "cli", "fail"), listed) == "FAIL"
    assert classify(CaseResult("y", "cli", "pass"), listed) == "PASS"


def test_runner_exit_status_follows_the_burn_down(
    make_suite: Callable[..., Suite],
    cli_case: CaseBuilder,
    fake_cli: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """XFAIL keeps the run green; a stale entry (XPASS or unknown id) turns it red (suite rule)."""
    passing = cli_case("passing", ["status"], {"exit": 0, "stdout": "envelope"})
    failing = cli_case("failing", ["status"], {"exit": 3, "stdout": "envelope"})
    suite = make_suite({"cli/passing.json": passing, "cli/failing.json": failing})
    impl = " ".join(fake_cli)
    base = ["--impl", impl, "--suite", str(suite.root), "-j", "2"]
    ef = tmp_path / "ef.json"

    ef.write_text(json.dumps({"failing": "known gap"}), encoding="utf-8")
    report = tmp_path / "report.json"
    assert main([*base, "--expected-failures", str(ef), "--json", str(report), "-v"]) == 0
    out = capsys.readouterr().out
    assert "PASS   cli/passing" in out and "XFAIL  cli/failing" in out
    outcomes = {
        c["id"]: c["outcome"] for c in json.loads(report.read_text(encoding="utf-8"))["cases"]
    }
    assert outcomes == {"failing": "XFAIL", "passing": "PASS"}

    ef.write_text(json.dumps({"failing": "known gap", "passing": "stale"}), encoding="utf-8")
    assert main([*base, "--expected-failures", str(ef)]) == 1
    assert "[XPASS] cli/passing [TST-001, contract §0] passes now: remove its expected-failure" in (
        capsys.readouterr().out
    )

    ef.write_text(json.dumps({"failing": "known gap", "gone": "renamed case"}), encoding="utf-8")
    assert main([*base, "--expected-failures", str(ef)]) == 1
    assert "expected-failure entries that name no case: gone" in capsys.readouterr().out

    assert main([*base, "--no-expected-failures", "--run", "pass*"]) == 0
    assert main([*base, "--no-expected-failures"]) == 1
    assert "cli/failing [TST-001, contract §0] exit: expected 3, got 0" in capsys.readouterr().out


def test_not_contains_expectations_catch_a_leaked_string(
    tmp_path: Path, fixtures: FixtureCache, fake_cli: list[str], cli_case: CaseBuilder
) -> None:
    """*NotContains expectations fail a case whose stream carries the string (suite rule)."""
    step = {"argv": ["stdin"], "stdin": "sk-proj-LEAKED"}
    leaked = cli_case(
        "leak",
        ["stdin"],
        {"exit": 0, "stdout": "envelope", "stdoutNotContains": ["sk-proj-LEAKED", "absent"]},
        step=step,
    )
    result = _run(tmp_path, fixtures, leaked, fake_cli)
    assert result.status == "fail"
    assert result.reasons[0] == "stdout: contains 'sk-proj-LEAKED', which must not appear"
    clean = cli_case(
        "clean",
        ["fail"],
        {"exit": 3, "stdout": "empty", "stderrNotContains": ["sk-proj-LEAKED"]},
    )
    assert _run(tmp_path, fixtures, clean, fake_cli).status == "pass"
    noisy = cli_case(
        "noisy", ["fail"], {"exit": 3, "stdout": "empty", "stderrNotContains": ["operational"]}
    )
    assert _run(tmp_path, fixtures, noisy, fake_cli).reasons[0] == (
        "stderr: contains 'operational', which must not appear"
    )


def test_hostname_is_substituted_in_written_files(
    tmp_path: Path, fixtures: FixtureCache, fake_cli: list[str], cli_case: CaseBuilder
) -> None:
    """${HOSTNAME} becomes this machine's host name in setup files (suite rule)."""
    import socket

    data = cli_case(
        "host",
        ["status"],
        {
            "exit": 0,
            "stdout": "envelope",
            "files": [{"path": "h.txt", "equals": socket.gethostname()}],
        },
        setup=[{"write": {"path": "h.txt", "content": "${HOSTNAME}"}}],
    )
    assert _run(tmp_path, fixtures, data, fake_cli).status == "pass"


def test_level_selects_cases_and_junit_names_the_broken_requirement(
    make_suite: Callable[..., Suite],
    cli_case: CaseBuilder,
    fake_cli: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--level contract runs only contract cases; JUnit failures carry the requirement id."""
    import xml.etree.ElementTree as ET

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
    failing = cli_case("failing", ["status"], {"exit": 3, "stdout": "envelope"})
    ext = cli_case(
        "ext",
        ["status"],
        {"exit": 0, "stdout": "envelope"},
        level="extension",
        requirements=["EXT-001"],
    )
    suite = make_suite({"cli/failing.json": failing, "cli/ext.json": ext}, requirements)
    base = ["--impl", " ".join(fake_cli), "--suite", str(suite.root), "-j", "1"]
    junit = tmp_path / "junit.xml"
    assert main([*base, "--level", "contract", "--junit", str(junit)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("RAGit conformance: FAIL in ")
    assert "level contract" in out
    assert "TST-001 contract §0, 1 of 1: A rule." in out
    root = ET.fromstring(junit.read_text(encoding="utf-8"))
    assert root.get("tests") == "1" and root.get("failures") == "1"
    failure = root.find("./testsuite/testcase/failure")
    assert failure is not None and failure.get("type") == "TST-001"
    assert failure.get("message") == "exit: expected 3, got 0"

    assert main([*base, "--level", "extension", "--format", "junit"]) == 0
    root = ET.fromstring(capsys.readouterr().out)
    assert [c.get("name") for c in root.iter("testcase")] == ["ext"]
    assert root.find("./testsuite/testcase").get("classname") == "cli.extension"  # type: ignore[union-attr]


def test_console_opens_with_the_verdict_and_gives_each_failure_and_error_in_full(
    make_suite: Callable[..., Suite],
    cli_case: CaseBuilder,
    fake_cli: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Verdict and run time first; one wrapped line per FAIL and ERROR, nothing cut (suite rule)."""
    long_message = "the state is broken " + "and here is why " * 12 + "END"
    failing = cli_case("failing", ["broken", "", long_message], {"exit": 0, "stdout": "envelope"})
    erroring = cli_case(
        "erroring", ["status"], {"exit": 0, "stdout": "envelope"}, setup=[{"run": ["fail"]}]
    )
    passing = cli_case("passing", ["status"], {"exit": 0, "stdout": "envelope"})
    suite = make_suite(
        {"cli/failing.json": failing, "cli/erroring.json": erroring, "cli/passing.json": passing}
    )
    base = ["--impl", " ".join(fake_cli), "--suite", str(suite.root), "-j", "2"]
    assert main(base) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert re.match(
        r"RAGit conformance: FAIL in \d+\.\d s: 1 pass, 1 fail, 1 error of 3 cases$",
        lines[0],
    )
    assert all(len(line) <= 100 for line in lines)
    assert "…" not in out
    flat = " ".join(out.split())
    assert (
        "cli/failing [TST-001, contract §0] exit: expected 0, got 3 — it said: STATE_BROKEN: "
        + long_message
    ) in flat
    assert (
        "cli/erroring [TST-001, contract §0] setup failed: setup[0] `fail` exited 3, expected 0 "
        "— it said: [ragit] operational error"
    ) in flat
    assert "Errors (1), cases that could not reach their rule" in flat

    assert main([*base, "--summary"]) == 1
    summary = capsys.readouterr().out.splitlines()
    assert summary[0].startswith("RAGit conformance: FAIL in ")
    assert summary[-1].startswith("all ")
    assert not any(case in line for line in summary for case in ("cli/failing", "cli/erroring"))
    assert not any(line.startswith(("Failures", "Errors")) for line in summary)
