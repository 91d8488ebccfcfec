"""`harness capture|verify|run|pack|promote`: suites, deterministic rules and promotion."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from _memkit import Repo, tree_state

PY = sys.executable


def _case(title: str, code: str, **extra: Any) -> dict[str, Any]:
    return {"kind": "case", "title": title, "input": {"args": ["-c", code]}, **extra}


CAPTURE: dict[str, Any] = {
    "goal": "cli prints its version",
    "resources": [
        _case(
            "prints version",
            "import sys; print('ragit 1.0'); print('note', file=sys.stderr)",
            expected={
                "exitCode": 0,
                "mustInclude": ["ragit"],
                "mustNotInclude": ["Traceback"],
                "stderrMustInclude": ["note"],
                "stderrMustNotInclude": ["fatal"],
            },
        ),
        _case(
            "emits json",
            "import json; print(json.dumps({'ok': True, 'n': [1, 2]}))",
            oracleRefs=["json oracle"],
        ),
        {"kind": "oracle", "title": "json oracle", "expected": {"jsonSubset": {"ok": True}}},
        _case("exits three", "raise SystemExit(3)", expected={"exitCode": 0}),
        {"kind": "fixture", "title": "sample data", "summary": "three rows of sample data"},
    ],
}


def _capture(repo: Repo, payload: dict[str, Any] = CAPTURE, *flags: str) -> dict[str, Any]:
    run = repo.input("harness", "capture", *flags, payload=payload)
    assert run.code == 0, run.output
    data: dict[str, Any] = run.data
    return data


def _run(repo: Repo, suite: str, *flags: str, **executor: Any) -> Any:
    payload = {"suiteRef": suite, "executor": {"kind": "command", "argv": [PY], **executor}}
    return repo.input("harness", "run", *flags, payload=payload)


def test_capture_stores_resources_and_synthesizes_a_suite(repo: Repo) -> None:
    """Contract-mandated (docs/reference/harness.md): per-kind files, captured status, synthesized
    suite."""
    data = _capture(repo)
    assert len(data["artifactIds"]) == 6
    suite = data["suiteId"]
    assert suite.startswith("art_harness_suite_")
    record = repo.read_json(f".ragit/artifacts/harness/suite/{suite}.json")
    assert record["title"] == "cli prints its version suite"
    assert len(record["payload"]["resourceRefs"]) == 5
    by_title = {a["title"]: a["artifactId"] for a in data["artifacts"]}
    case = repo.read_json(f".ragit/artifacts/harness/case/{by_title['emits json']}.json")
    assert case["payload"]["oracleRefs"] == [by_title["json oracle"]]
    assert case["searchPolicy"] == "harness" and case["status"] == "captured"
    assert "## Input" in case["text"]
    fixture = repo.read_json(f".ragit/artifacts/harness/fixture/{by_title['sample data']}.json")
    assert fixture["searchPolicy"] == "evidence"


def test_capture_dry_run_writes_nothing(repo: Repo) -> None:
    """Contract-mandated: dry-run writes nothing."""
    before = tree_state(repo.root)
    data = _capture(repo, CAPTURE, "--dry-run")
    assert data["dryRun"] is True and len(data["artifactIds"]) == 6
    assert tree_state(repo.root) == before


@pytest.mark.parametrize(
    ("resource", "field"),
    [
        ({"kind": "spaceship", "title": "x"}, "resources[0].kind"),
        (
            {"kind": "case", "title": "x", "expected": {"exitCode": "0"}},
            "resources[0].expected.exitCode",
        ),
        (
            {"kind": "case", "title": "x", "expected": {"mustInclude": "ragit"}},
            "resources[0].expected.mustInclude",
        ),
        ({"kind": "case", "title": "x", "input": {"args": "-c"}}, "resources[0].input.args"),
        ({"kind": "case", "title": "x", "input": {"env": {"A B": "1"}}}, "resources[0].input.env"),
        ({"kind": "case", "title": "x", "input": {"timeoutMs": 0}}, "resources[0].input.timeoutMs"),
        ({"kind": "case", "title": "x", "bogus": 1}, "resources[0].bogus"),
    ],
)
def test_bad_capture_payloads_are_input_invalid(
    repo: Repo, resource: dict[str, Any], field: str
) -> None:
    """Contract-mandated: strict input; rule fields are typed."""
    run = repo.input("harness", "capture", payload={"goal": "g", "resources": [resource]})
    assert run.code == 2, run.output
    assert run.error["details"]["field"] == field


def test_verify_checks_structure_without_executing(repo: Repo) -> None:
    """Contract-mandated (docs/reference/harness.md): structural preflight only; writes nothing."""
    suite = _capture(repo)["suiteId"]
    before = tree_state(repo.root)
    run = repo.ragit("harness", "verify", "--suite", suite, "--format", "json")
    assert run.code == 0
    assert run.data["hasFailure"] is False
    names = [c["name"] for c in run.data["checks"]]
    assert "suite-has-cases" in names and sum(n.startswith("case-bindings:") for n in names) == 3
    by_path = repo.ragit(
        "harness",
        "verify",
        "--suite",
        f".ragit/artifacts/harness/suite/{suite}.json",
        "--format",
        "json",
    )
    assert by_path.data == run.data
    assert tree_state(repo.root) == before


def test_verify_flags_a_case_without_rules(repo: Repo) -> None:
    """Contract-mandated: cases must declare oracle/evidence bindings."""
    suite = _capture(repo, {"goal": "g", "resources": [_case("bare", "print(1)")]})["suiteId"]
    run = repo.ragit("harness", "verify", "--suite", suite, "--format", "json")
    assert run.data["hasFailure"] is True
    failing = [c["name"] for c in run.data["checks"] if not c["ok"]]
    assert len(failing) == 1 and failing[0].startswith("case-bindings:")
    refused = _run(repo, suite)
    assert refused.code == 2 and refused.error["details"]["field"] == "suiteRef"
    assert _run(repo, suite, "--dry-run").code == 0


@pytest.mark.parametrize(
    "ref",
    [
        "art_harness_suite_0123456789abcdef",
        "art_harness_case_0123456789abcdef",
        "../../etc/passwd",
        ".ragit/artifacts/harness/../../config.toml",
        "/etc/passwd",
        ".ragit/config.toml",
    ],
)
def test_unknown_or_unsafe_suite_refs_are_input_invalid(repo: Repo, ref: str) -> None:
    """Implementation choice: a suite ref is an id or a record under .ragit/artifacts/harness."""
    run = repo.ragit("harness", "verify", "--suite", ref, "--format", "json")
    assert run.code == 2, run.output
    assert run.error["code"] == "INPUT_INVALID"


def test_run_evaluates_rules_and_records_the_run(repo: Repo) -> None:
    """Contract-mandated (docs/reference/harness.md): command executor, deterministic rules, run
    record."""
    captured = _capture(repo)
    run = _run(repo, captured["suiteId"], env={"HARNESS_TOKEN": "s3cr3t-env-value-123"})
    assert run.code == 0, run.output
    data = run.data
    assert data["summary"] == {"total": 3, "passed": 2, "failed": 1, "errored": 0, "skipped": 0}
    assert data["hasFailure"] is True
    results = {r["title"]: r for r in data["caseResults"]}
    assert results["prints version"]["status"] == "passed"
    assert len(results["prints version"]["checkResults"]) == 5
    assert results["emits json"]["checkResults"][0]["name"] == "jsonSubset"
    assert results["emits json"]["structuredOutputSummary"] == {
        "type": "object",
        "keys": ["n", "ok"],
    }
    failed = results["exits three"]
    assert failed["status"] == "failed" and failed["exitCode"] == 3
    (failure_id,) = failed["failureArtifactIds"]
    failure = repo.read_json(f".ragit/artifacts/harness/failure/{failure_id}.json")
    assert failure["searchPolicy"] == "evidence" and failure["status"] == "captured"
    record = repo.read_json(data["runPath"])
    assert record["executor"]["envKeys"] == ["HARNESS_TOKEN"]
    assert record["summary"] == data["summary"]
    assert "s3cr3t-env-value-123" not in repo.all_text()
    assert "s3cr3t-env-value-123" not in run.output


def test_run_kills_a_case_at_its_timeout(repo: Repo) -> None:
    """Contract-mandated: per-case timeouts; a timed-out case is errored."""
    payload = {
        "goal": "g",
        "resources": [
            _case("sleeps", "import time; time.sleep(600)", expected={"exitCode": 0}),
        ],
    }
    payload["resources"][0]["input"]["timeoutMs"] = 200
    suite = _capture(repo, payload)["suiteId"]
    run = _run(repo, suite)
    (result,) = run.data["caseResults"]
    assert result["status"] == "errored" and result["timedOut"] is True
    assert result["exitCode"] is None


def test_run_dry_run_executes_nothing_and_writes_nothing(repo: Repo) -> None:
    """Contract-mandated: --dry-run plans without executing or writing."""
    marker = "made-by-case.txt"
    payload = {
        "goal": "g",
        "resources": [
            _case("writes", f"open({marker!r}, 'w').write('x')", expected={"exitCode": 0}),
        ],
    }
    suite = _capture(repo, payload)["suiteId"]
    before = tree_state(repo.root)
    run = _run(repo, suite, "--dry-run")
    assert run.code == 0
    assert [r["status"] for r in run.data["caseResults"]] == ["skipped"]
    assert tree_state(repo.root) == before
    assert _run(repo, suite).data["summary"]["passed"] == 1
    assert (repo.root / marker).is_file()


@pytest.mark.parametrize(
    ("executor", "field"),
    [
        ({"kind": "shell", "argv": ["sh"]}, "executor.kind"),
        ({"kind": "command", "argv": []}, "executor.argv"),
        ({"kind": "command", "argv": ["x"], "cwd": "../"}, "executor.cwd"),
        ({"kind": "command", "argv": ["x"], "timeoutMs": 1.5}, "executor.timeoutMs"),
        ({"kind": "command", "argv": ["x"], "env": {"BAD NAME": "1"}}, "executor.env.BAD NAME"),
    ],
)
def test_bad_run_payloads_are_input_invalid(
    repo: Repo, executor: dict[str, Any], field: str
) -> None:
    """Contract-mandated: v1 command executor only, repo-relative cwd, strict fields."""
    suite = _capture(repo)["suiteId"]
    run = repo.input("harness", "run", payload={"suiteRef": suite, "executor": executor})
    assert run.code == 2, run.output
    assert run.error["details"]["field"] == field


def test_run_is_sequential_only(repo: Repo) -> None:
    """Contract-mandated: v1 runs one case at a time (concurrency 1)."""
    suite = _capture(repo)["suiteId"]
    payload = {"suiteRef": suite, "executor": {"kind": "command", "argv": [PY]}, "concurrency": 2}
    run = repo.input("harness", "run", payload=payload)
    assert run.code == 2 and run.error["details"]["field"] == "concurrency"


def test_pack_lists_the_suite_resources(repo: Repo) -> None:
    """Contract-mandated (docs/reference/harness.md): read-only packet of resources."""
    captured = _capture(repo)
    before = tree_state(repo.root)
    run = repo.ragit("harness", "pack", captured["suiteId"])
    assert run.code == 0
    data = run.data
    assert data["suiteId"] == captured["suiteId"]
    assert data["goal"] == "cli prints its version"
    assert [r["kind"] for r in data["resources"]] == ["case", "case", "oracle", "case", "fixture"]
    assert data["redactionSummary"]["applied"] is False
    assert tree_state(repo.root) == before


def test_promote_writes_reviewed_harness_artifacts_only(repo: Repo) -> None:
    """Contract-mandated (docs/reference/harness.md): reviewed only; docs/harness/...; ingested
    false."""
    captured = _capture(repo)
    by_title = {a["title"]: a["artifactId"] for a in captured["artifacts"]}
    review = {
        "updates": [
            {"artifactId": by_title["prints version"], "nextStatus": "reviewed"},
            {"artifactId": captured["suiteId"], "nextStatus": "reviewed"},
        ]
    }
    assert repo.input("artifact", "review", payload=review).code == 0
    refs = [by_title["prints version"], captured["suiteId"], by_title["emits json"]]
    dry = repo.input("harness", "promote", "--dry-run", payload={"artifactRefs": refs})
    assert dry.data["plannedFiles"] == [
        "docs/harness/specs/prints-version.md",
        "docs/harness/plans/cli-prints-its-version-suite.md",
    ]
    run = repo.input("harness", "promote", payload={"artifactRefs": refs})
    assert run.code == 0
    assert run.data["createdFiles"] == dry.data["plannedFiles"]
    assert run.data["ingested"] is False
    assert any(by_title["emits json"] in w for w in run.envelope["warnings"])
    spec = (repo.root / "docs/harness/specs/prints-version.md").read_text(encoding="utf-8")
    assert spec.startswith("---\ntype: spec\n")
    assert f'source_artifact: "{by_title["prints version"]}"' in spec
    assert "## Acceptance Criteria" in spec
    record = repo.read_json(f".ragit/artifacts/harness/case/{by_title['prints version']}.json")
    assert (record["status"], record["tier"], record["authority"]) == (
        "promoted",
        "durable",
        "promoted_durable",
    )
    again = repo.input("harness", "promote", payload={"artifactRefs": refs[:1]})
    assert again.data["createdFiles"] == []
    assert any("promoted" in w for w in again.envelope["warnings"])
