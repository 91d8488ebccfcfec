"""Secrets never leave ``ragit-mcp``: a secret ``at`` and a secret file name, over raw stdio.

The real process reads raw JSON-RPC lines and every byte it writes (stdout and stderr)
is searched for the secret (contract §3: nothing secret in an error's message or
details; contract §7: every output is masked again).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from _mcp_helpers import RAGIT_MCP, make_repo

TOKEN = "ghp_FAKEmcpfilename000000000000000000001"
RANDOM_TOKEN = "Fk3mQ9xLz2VbTn8RwPq4Ys7Kd1Hg"
INITIALIZE = (
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
    '"capabilities":{},"clientInfo":{"name":"secrets","version":"1"}}}'
)
INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}'


def _call(call_id: int, tool: str, arguments: dict[str, Any]) -> str:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": call_id,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }
    )


def _exchange(root: Path, env: dict[str, str], lines: list[str]) -> tuple[dict[int, Any], str]:
    proc = subprocess.run(
        [RAGIT_MCP, "--cwd", str(root)],
        cwd=root,
        env=env,
        input=("\n".join(lines) + "\n").encode("utf-8"),
        capture_output=True,
        timeout=120,
        check=False,
    )
    raw = proc.stdout.decode("utf-8") + proc.stderr.decode("utf-8", "replace")
    answers = {}
    for line in proc.stdout.decode("utf-8").splitlines():
        message = json.loads(line)
        if "id" in message:
            answers[message["id"]] = message
    return answers, raw


def _envelope(answer: Any) -> dict[str, Any]:
    envelope: dict[str, Any] = json.loads(answer["result"]["content"][0]["text"])
    return envelope


def test_a_secret_at_and_a_secret_file_name_never_leave_the_server(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """Contract-mandated (contract §3, §7): the ref is masked in message and
    details.requestedRef, the file name in every hit path."""
    root = make_repo(
        tmp_path,
        env,
        files={f"docs/{TOKEN}.md": "# Rotation\n\nThe rotation runbook for ledgers.\n"},
    )
    lines = [
        INITIALIZE,
        INITIALIZED,
        _call(2, "ragit_query", {"question": "rotation runbook", "at": TOKEN}),
        _call(3, "ragit_context_pack", {"goal": "rotation runbook", "at": RANDOM_TOKEN}),
        _call(4, "ragit_query", {"question": "rotation runbook", "view": "full"}),
        _call(5, "ragit_context_pack", {"goal": "rotation runbook"}),
        _call(6, "ragit_status", {}),
    ]
    answers, raw = _exchange(root, env, lines)
    assert TOKEN not in raw
    assert RANDOM_TOKEN not in raw
    for call_id, shown in ((2, "ghp_FA***"), (3, "Fk3m***")):
        error = _envelope(answers[call_id])["error"]
        assert error["code"] == "SNAPSHOT_REF_INVALID"
        assert error["details"]["requestedRef"] == shown
        assert shown in error["message"]
    query = _envelope(answers[4])["data"]
    paths = [hit["path"] for hit in query["hits"]]
    assert "docs/ghp_FA***.md" in paths
    assert query["redactionSummary"]["maskedCount"] >= 1
    pack = _envelope(answers[5])["data"]
    assert "docs/ghp_FA***.md" in json.dumps(pack)
    assert _envelope(answers[6])["ok"] is True
