"""`ragit session materialize`, `artifact review` and `harness capture|verify|run|pack|promote`."""

from __future__ import annotations

from typing import Any

from ragit.cli.commands.memory import read_memory_input
from ragit.cli.invocation import Invocation, Outcome


def _header(title: str, data: dict[str, Any]) -> list[str]:
    return [f"{title} ({'dry-run' if data.get('dryRun') else 'apply'})"]


def _tail(data: dict[str, Any]) -> list[str]:
    return [f"warning: {w}" for w in data.get("warnings", [])]


def run_session_materialize(inv: Invocation) -> Outcome:
    """Handler for `ragit session materialize`."""
    from ragit.memory.materialize import materialize
    from ragit.memory.models import SessionMaterializeInput, validate_input

    ws = inv.workspace()
    payload = validate_input(SessionMaterializeInput, read_memory_input(inv))
    data = materialize(ws, inv.config(), payload, dry_run=inv.dry_run)

    def text() -> str:
        lines = _header(f"session materialize {data['sessionId']}", data)
        lines.append(f"- transcript: {data['transcriptPath']}")
        lines.append(f"- turns: {data['turns']}  tool traces: {data['toolTraces']}")
        for item in data["artifacts"]:
            lines.append(f"- {item['artifactId']} [{item['kind']}] {item['title']}")
        return "\n".join(lines + _tail(data))

    return Outcome(data=data, text=text, warnings=list(data["warnings"]))


def run_artifact_review(inv: Invocation) -> Outcome:
    """Handler for `ragit artifact review`."""
    from ragit.memory.models import ArtifactReviewInput, validate_input
    from ragit.memory.review import review

    ws = inv.workspace()
    payload = validate_input(ArtifactReviewInput, read_memory_input(inv))
    data = review(ws, inv.config(), payload, dry_run=inv.dry_run)

    def text() -> str:
        lines = _header("artifact review", data)
        for item in data["updated"]:
            lines.append(f"- {item['artifactId']}: {item['previousStatus']} -> {item['status']}")
        return "\n".join(lines + _tail(data))

    return Outcome(data=data, text=text, warnings=list(data["warnings"]))


def run_harness_capture(inv: Invocation) -> Outcome:
    """Handler for `ragit harness capture`."""
    from ragit.harness.capture import capture
    from ragit.harness.models import HarnessCaptureInput
    from ragit.memory.models import validate_input

    ws = inv.workspace()
    payload = validate_input(HarnessCaptureInput, read_memory_input(inv))
    data = capture(ws, inv.config(), payload, dry_run=inv.dry_run)

    def text() -> str:
        lines = _header(f"harness capture (suite {data['suiteId']})", data)
        for item in data["artifacts"]:
            lines.append(f"- {item['artifactId']} [{item['kind']}] {item['title']}")
        return "\n".join(lines + _tail(data))

    return Outcome(data=data, text=text, warnings=list(data["warnings"]))


def _suite_param(inv: Invocation, name: str) -> str:
    from ragit.contract.inputs import required_text

    return required_text(str(inv.params.get(name) or ""), name)


def run_harness_verify(inv: Invocation) -> Outcome:
    """Handler for `ragit harness verify`."""
    from ragit.harness.verify import verify

    ws = inv.workspace()
    data = verify(ws, _suite_param(inv, "suite"))

    def text() -> str:
        lines = [f"harness verify {data['suiteId']}: {'FAIL' if data['hasFailure'] else 'ok'}"]
        for check in data["checks"]:
            lines.append(
                f"- [{'ok' if check['ok'] else 'FAIL'}] {check['name']}: {check['detail']}"
            )
        return "\n".join(lines)

    return Outcome(data=data, text=text)


def run_harness_run(inv: Invocation) -> Outcome:
    """Handler for `ragit harness run`."""
    from ragit.harness.models import HarnessRunInput
    from ragit.harness.run import run
    from ragit.memory.models import validate_input

    ws = inv.workspace()
    payload = validate_input(HarnessRunInput, read_memory_input(inv))
    data = run(ws, inv.config(), payload, dry_run=inv.dry_run)

    def text() -> str:
        s = data["summary"]
        lines = _header(f"harness run {data['runId']} (suite {data['suiteId']})", data)
        lines.append(
            f"- total {s['total']}: passed {s['passed']}, failed {s['failed']}, "
            f"errored {s['errored']}, skipped {s['skipped']}"
        )
        for result in data["caseResults"]:
            lines.append(f"- [{result['status']}] {result['title']} ({result['caseId']})")
            for check in result["checkResults"]:
                if not check["ok"]:
                    lines.append(f"  FAIL {check['name']}: {check['detail']}")
        lines.append(f"- record: {data['runPath']}")
        return "\n".join(lines + _tail(data))

    return Outcome(data=data, text=text, warnings=list(data["warnings"]))


def run_harness_pack(inv: Invocation) -> Outcome:
    """Handler for `ragit harness pack`."""
    from ragit.harness.pack import pack

    ws = inv.workspace()
    data = pack(ws, _suite_param(inv, "suite_ref"))

    def text() -> str:
        lines = [f"harness pack {data['suiteId']}: {data['title']}"]
        for item in data["resources"]:
            lines.append(
                f"- {item['artifactId']} [{item['kind']}, {item['status']}] {item['title']}"
            )
        for ref in data["missingRefs"]:
            lines.append(f"- missing: {ref}")
        return "\n".join(lines)

    return Outcome(data=data, text=text)


def run_harness_promote(inv: Invocation) -> Outcome:
    """Handler for `ragit harness promote`."""
    from ragit.harness.models import HarnessPromoteInput
    from ragit.harness.promote import promote
    from ragit.memory.models import validate_input

    ws = inv.workspace()
    payload = validate_input(HarnessPromoteInput, read_memory_input(inv))
    data = promote(ws, inv.config(), payload, dry_run=inv.dry_run)

    def text() -> str:
        lines = _header("harness promote", data)
        for path in data["createdFiles"] if not data["dryRun"] else data["plannedFiles"]:
            lines.append(f"- {'created' if not data['dryRun'] else 'would create'} {path}")
        lines.append(f"- ingested: {str(data['ingested']).lower()}")
        return "\n".join(lines + _tail(data))

    return Outcome(data=data, text=text, warnings=list(data["warnings"]))
