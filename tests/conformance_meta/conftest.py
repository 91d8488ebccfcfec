"""Helpers for testing the conformance suite's own machinery against fake implementations."""

from __future__ import annotations

import json
import shutil
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conformance.suite import REPO_ROOT, SUITE_ROOT, Suite

FAKE_CLI = textwrap.dedent(
    """
    import json, os, sys
    from pathlib import Path

    args = sys.argv[1:]
    cmd = args[0] if args else ""

    def envelope(data, ok=True):
        print(json.dumps({"command": cmd, "ok": ok, "version": "1.2.3", "cwd": os.getcwd(),
                          "data": data, "warnings": []}))

    if cmd == "status":
        envelope({"count": 1})
    elif cmd == "both":
        print("human text")
        print("---")
        envelope({})
    elif cmd == "nosep":
        print("human text")
        envelope({})
    elif cmd == "write":
        Path(args[1]).write_text(args[2], encoding="utf-8")
        envelope({})
    elif cmd == "rewrite":
        path = Path(args[1])
        path.write_bytes(path.read_bytes())
        os.utime(path, ns=(1_000_000_000, 1_000_000_000))
        envelope({})
    elif cmd == "env":
        envelope(dict(os.environ))
    elif cmd == "stdin":
        envelope({"stdin": sys.stdin.read()})
    elif cmd == "fail":
        sys.stderr.write("[ragit] operational error\\n")
        sys.exit(3)
    elif cmd == "broken":
        recovery = args[1] if len(args) > 1 and args[1] else None
        message = args[2] if len(args) > 2 else "the state is broken"
        print(json.dumps({"command": cmd, "ok": False, "version": "1.2.3", "cwd": os.getcwd(),
                          "data": None, "warnings": [],
                          "error": {"code": "STATE_BROKEN", "message": message,
                                    "recovery": {"command": recovery}}}))
        sys.exit(3)
    elif cmd == "crash":
        raise RuntimeError("boom")
    else:
        sys.exit(2)
    """
)

FAKE_MCP = textwrap.dedent(
    """
    import json, os, sys

    mode = os.environ.get("FAKE_MCP_MODE", "good")
    if mode == "banner":
        print("fake server ready", flush=True)

    def send(message):
        sys.stdout.write(json.dumps(message) + "\\n")
        sys.stdout.flush()

    for line in sys.stdin:
        message = json.loads(line)
        method = message.get("method")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": message["id"], "result": {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}}, "serverInfo": {"name": "fake", "version": "1"}}})
        elif method == "tools/list":
            tools = [{"name": "ragit_status"}]
            send({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": tools}})
        elif method == "tools/call":
            env = {"ok": True, "tool": message["params"]["name"], "version": "1.2.3",
                   "cwd": os.getcwd(), "data": message["params"]["arguments"], "warnings": []}
            text = dict(env, data={}) if mode == "mismatch" else env
            send({"jsonrpc": "2.0", "id": message["id"], "result": {
                "content": [{"type": "text", "text": json.dumps(text)}],
                "structuredContent": env, "isError": mode == "iserror"}})
    """
)


@pytest.fixture
def fake_cli(tmp_path: Path) -> list[str]:
    """argv prefix of a fake CLI implementation (see FAKE_CLI)."""
    script = tmp_path / "fake_cli.py"
    script.write_text(FAKE_CLI, encoding="utf-8")
    return [sys.executable, str(script)]


@pytest.fixture
def fake_mcp(tmp_path: Path) -> list[str]:
    """argv prefix of a fake MCP stdio server (see FAKE_MCP)."""
    script = tmp_path / "fake_mcp.py"
    script.write_text(FAKE_MCP, encoding="utf-8")
    return [sys.executable, str(script)]


SuiteFactory = Callable[..., Suite]


@pytest.fixture
def make_suite(tmp_path: Path) -> SuiteFactory:
    """Build a throwaway suite: the shipped schema, the given cases and requirements."""

    def build(
        cases: dict[str, dict[str, Any]],
        requirements: list[dict[str, Any]] | None = None,
        expected: dict[str, str] | None = None,
        contract_fields: dict[str, Any] | None = None,
    ) -> Suite:
        root = tmp_path / "suite"
        root.mkdir()
        shutil.copy(SUITE_ROOT / "case.schema.json", root / "case.schema.json")
        reqs = requirements or [
            {"id": "TST-001", "section": "0", "text": "A test rule.", "status": "implemented"}
        ]
        reqs = [{"level": "contract", **req} for req in reqs]
        (root / "requirements.json").write_text(
            json.dumps({"requirements": reqs}), encoding="utf-8"
        )
        fields = contract_fields or {"data": {}, "errorDetails": {}}
        (root / "contract-fields.json").write_text(json.dumps(fields), encoding="utf-8")
        (root / "expected-failures.json").write_text(json.dumps(expected or {}), encoding="utf-8")
        for rel, data in cases.items():
            path = root / "cases" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(data), encoding="utf-8")
        return Suite(root=root, fixtures_dir=REPO_ROOT / "fixtures")

    return build


def _cli_case(
    case_id: str, argv: list[str], expect: dict[str, Any], **extra: Any
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": case_id,
        "title": f"case {case_id}",
        "level": "contract",
        "requirements": ["TST-001"],
        "fixture": "empty",
        "step": {"argv": argv},
        "expect": expect,
    }
    data.update(extra)
    return data


@pytest.fixture
def cli_case() -> Callable[..., dict[str, Any]]:
    """Builder of a minimal valid case dict running ``argv`` on the ``empty`` fixture."""
    return _cli_case
