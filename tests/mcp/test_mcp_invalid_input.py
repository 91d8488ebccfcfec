"""Every bad tool argument is an MCP_INVALID_INPUT result naming the field (contract §4, §11).

All calls of the table go to one long-lived server over an indexed repository, and
each call is checked to leave the repository byte- and mtime-identical.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _mcp_helpers import McpServer, assert_unchanged, raw_exchange, tree_state

RECOVERY = {"command": None, "hint": "Correct the tool arguments and retry."}
Q = {"question": "double entry"}
G = {"goal": "double entry"}

CASES: list[tuple[str, dict[str, Any], str]] = [
    # ragit_status takes exactly {}
    ("ragit_status", {"path": "/"}, "path"),
    ("ragit_status", {"cwd": "."}, "cwd"),
    ("ragit_status", {"explain": False}, "explain"),
    # question
    ("ragit_query", {}, "question"),
    ("ragit_query", {"question": ""}, "question"),
    ("ragit_query", {"question": "   \t\n "}, "question"),
    ("ragit_query", {"question": 5}, "question"),
    ("ragit_query", {"question": None}, "question"),
    ("ragit_query", {"question": ["double entry"]}, "question"),
    ("ragit_query", {"question": {"text": "double entry"}}, "question"),
    ("ragit_query", {"question": "double\u0000entry"}, "question"),
    ("ragit_query", {"question": "bell\u0007"}, "question"),
    ("ragit_query", {"question": "vertical\u000btab"}, "question"),
    ("ragit_query", {"question": "form\u000cfeed"}, "question"),
    ("ragit_query", {"question": "unit\u001fsep"}, "question"),
    ("ragit_query", {"question": "delete\u007f"}, "question"),
    ("ragit_query", {"question": "x" * 8193}, "question"),
    # topK
    ("ragit_query", {**Q, "topK": 0}, "topK"),
    ("ragit_query", {**Q, "topK": -1}, "topK"),
    ("ragit_query", {**Q, "topK": 51}, "topK"),
    ("ragit_query", {**Q, "topK": 10**30}, "topK"),
    ("ragit_query", {**Q, "topK": 1.5}, "topK"),
    ("ragit_query", {**Q, "topK": 5.0}, "topK"),
    ("ragit_query", {**Q, "topK": True}, "topK"),
    ("ragit_query", {**Q, "topK": "5"}, "topK"),
    ("ragit_query", {**Q, "topK": None}, "topK"),
    ("ragit_query", {**Q, "topK": [5]}, "topK"),
    # at
    ("ragit_query", {**Q, "at": ""}, "at"),
    ("ragit_query", {**Q, "at": "  "}, "at"),
    ("ragit_query", {**Q, "at": 5}, "at"),
    ("ragit_query", {**Q, "at": None}, "at"),
    ("ragit_query", {**Q, "at": "HEAD\u0000"}, "at"),
    ("ragit_query", {**Q, "at": "a" * 257}, "at"),
    # scope / view / explain
    ("ragit_query", {**Q, "scope": "Durable"}, "scope"),
    ("ragit_query", {**Q, "scope": ""}, "scope"),
    ("ragit_query", {**Q, "scope": 1}, "scope"),
    ("ragit_query", {**Q, "scope": None}, "scope"),
    ("ragit_query", {**Q, "scope": ["durable"]}, "scope"),
    ("ragit_query", {**Q, "view": "compact"}, "view"),
    ("ragit_query", {**Q, "view": "FULL"}, "view"),
    ("ragit_query", {**Q, "view": True}, "view"),
    ("ragit_query", {**Q, "explain": "true"}, "explain"),
    ("ragit_query", {**Q, "explain": 1}, "explain"),
    ("ragit_query", {**Q, "explain": None}, "explain"),
    # unknown fields come first, named when printable
    ("ragit_query", {**Q, "cwd": "/"}, "cwd"),
    ("ragit_query", {**Q, "top_k": 5}, "top_k"),
    ("ragit_query", {**Q, "budget": 10}, "budget"),
    ("ragit_query", {"question": "", "bogus": 1}, "bogus"),
    ("ragit_query", {**Q, "a\u0001b": 1}, "arguments"),
    ("ragit_query", {**Q, "k" * 100: 1}, "arguments"),
    ("ragit_query", {**Q, "": 1}, "arguments"),
    # ragit_context_pack
    ("ragit_context_pack", {}, "goal"),
    ("ragit_context_pack", {"goal": " "}, "goal"),
    ("ragit_context_pack", {"goal": 1}, "goal"),
    ("ragit_context_pack", {**G, "budget": 0}, "budget"),
    ("ragit_context_pack", {**G, "budget": 32001}, "budget"),
    ("ragit_context_pack", {**G, "budget": 1.5}, "budget"),
    ("ragit_context_pack", {**G, "budget": True}, "budget"),
    ("ragit_context_pack", {**G, "budget": "1200"}, "budget"),
    ("ragit_context_pack", {**G, "at": ""}, "at"),
    ("ragit_context_pack", {**G, "scope": "everything"}, "scope"),
    ("ragit_context_pack", {**G, "view": "x"}, "view"),
    ("ragit_context_pack", {**G, "explain": True}, "explain"),
    ("ragit_context_pack", {**G, "topK": 5}, "topK"),
    ("ragit_context_pack", {"question": "double entry"}, "question"),
]


def _assert_invalid(envelope: dict[str, Any], tool: str | None, field: str) -> None:
    assert envelope["ok"] is False
    assert envelope["tool"] == tool
    assert envelope["data"] is None
    assert envelope["warnings"] == []
    error = envelope["error"]
    assert error["code"] == "MCP_INVALID_INPUT"
    assert error["category"] == "invalid_input"
    assert error["retryable"] is False
    assert error["details"] == {"field": field}
    assert error["recovery"] == RECOVERY


@pytest.mark.parametrize(
    ("tool", "arguments", "field"),
    CASES,
    ids=[f"{t}-{f}-{i}" for i, (t, _, f) in enumerate(CASES)],
)
def test_bad_arguments_are_mcp_invalid_input_naming_the_field(
    shared_server: McpServer, tool: str, arguments: dict[str, Any], field: str
) -> None:
    """Contract §4/§11: strict input; each violation is a tool result, not a protocol error."""
    call = shared_server.call(tool, arguments)
    assert call.is_error
    _assert_invalid(call.envelope, tool, field)


@pytest.mark.parametrize("name", ["ragit_ingest", "RAGIT_STATUS", "ragit_status ", "status"])
def test_unknown_tool_names_are_mcp_invalid_input(shared_server: McpServer, name: str) -> None:
    """docs/mcp.md: an unknown tool name is MCP_INVALID_INPUT (field name), not a protocol error."""
    call = shared_server.call(name, {})
    _assert_invalid(call.envelope, name, "name")


def test_an_empty_tool_name_is_reported_without_a_tool(shared_server: McpServer) -> None:
    """Implementation choice: a name that cannot be repeated safely gives tool: null."""
    _assert_invalid(shared_server.call("", {}).envelope, None, "name")


def test_invalid_values_are_never_echoed(shared_server: McpServer) -> None:
    """Contract §3: no private query text in message or details, even for rejected input."""
    secret = "sk-proj-TOPSECRETVALUE1234567890"
    for arguments in (
        {"question": secret + "\u0000"},
        {"question": "ok", "at": secret + "\u0007"},
        {"question": "ok", "scope": secret},
        {"question": "ok", "topK": secret},
    ):
        call = shared_server.call("ragit_query", arguments)
        assert call.code == "MCP_INVALID_INPUT"
        assert "TOPSECRET" not in json.dumps(call.envelope)


def test_omitted_arguments_count_as_an_empty_object(shared_server: McpServer) -> None:
    """MCP allows omitting arguments: status succeeds, query names its missing question."""
    assert shared_server.call("ragit_status", None).envelope["ok"] is True
    _assert_invalid(shared_server.call("ragit_query", None).envelope, "ragit_query", "question")


def test_non_object_arguments_and_names_are_tool_results_not_protocol_errors(
    indexed_repo: tuple[Path, dict[str, str]],
) -> None:
    """Contract §11: non-object arguments and non-string names still give MCP_INVALID_INPUT."""
    root, env = indexed_repo
    requests: list[tuple[dict[str, Any], str | None, str]] = [
        ({"name": "ragit_query", "arguments": []}, "ragit_query", "arguments"),
        ({"name": "ragit_query", "arguments": "double entry"}, "ragit_query", "arguments"),
        ({"name": "ragit_status", "arguments": 5}, "ragit_status", "arguments"),
        ({"name": "ragit_status", "arguments": True}, "ragit_status", "arguments"),
        (
            {"name": "ragit_context_pack", "arguments": [{"goal": "x"}]},
            "ragit_context_pack",
            "arguments",
        ),
        ({"name": 5, "arguments": {}}, None, "name"),
        ({"name": None, "arguments": {}}, None, "name"),
        ({"arguments": {}}, None, "name"),
        ({"name": "nope\u0000", "arguments": []}, None, "arguments"),
    ]
    before = tree_state(root)
    answers, lines = raw_exchange(
        root, env, [{"method": "tools/call", "params": params} for params, _, _ in requests]
    )
    assert_unchanged(before, tree_state(root))
    for line in lines:
        assert json.loads(line)["jsonrpc"] == "2.0"
    for n, (_, tool, field) in enumerate(requests, 1):
        answer = answers[n]
        assert "error" not in answer, answer
        result = answer["result"]
        assert result["isError"] is True
        assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
        _assert_invalid(result["structuredContent"], tool, field)
