"""`tools/list`: exactly three read-only tools with strict schemas (contract §11)."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from _mcp_helpers import McpServer
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension

from ragit.mcp.tools import tool_definitions

READ_ONLY = {
    "readOnlyHint": True,
    "destructiveHint": False,
    "idempotentHint": True,
    "openWorldHint": False,
}


@pytest.fixture
def listed(shared_server: McpServer) -> list[dict[str, Any]]:
    result = shared_server.list_tools()
    return [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in result.tools]


def test_tools_list_matches_the_golden(
    listed: list[dict[str, Any]], snapshot: SnapshotAssertion
) -> None:
    """Contract §11: names, descriptions, schemas and annotations are pinned by a golden."""
    assert listed == snapshot(extension_class=JSONSnapshotExtension)


def test_exactly_three_tools_all_annotated_read_only(listed: list[dict[str, Any]]) -> None:
    """Contract §11: exactly ragit_status, ragit_query, ragit_context_pack, all read-only."""
    assert [t["name"] for t in listed] == ["ragit_status", "ragit_query", "ragit_context_pack"]
    for tool in listed:
        assert {k: tool["annotations"][k] for k in READ_ONLY} == READ_ONLY


def test_the_server_lists_the_definitions_of_ragit_mcp_tools(
    listed: list[dict[str, Any]],
) -> None:
    """Implementation choice: the wire list is exactly ragit.mcp.tools.tool_definitions()."""
    assert listed == tool_definitions()


def test_input_schemas_are_strict_and_valid_json_schema(listed: list[dict[str, Any]]) -> None:
    """Contract §11 / docs/mcp.md: strict object schemas with the seed's bounds and enums."""
    by_name = {t["name"]: t for t in listed}
    for tool in listed:
        schema = tool["inputSchema"]
        jsonschema.Draft202012Validator.check_schema(schema)
        jsonschema.Draft202012Validator.check_schema(tool["outputSchema"])
        assert schema["type"] == "object"
        assert schema["additionalProperties"] is False
        assert "cwd" not in schema["properties"]
    assert by_name["ragit_status"]["inputSchema"]["properties"] == {}
    query = by_name["ragit_query"]["inputSchema"]
    assert query["required"] == ["question"]
    assert (query["properties"]["topK"]["minimum"], query["properties"]["topK"]["maximum"]) == (
        1,
        50,
    )
    assert query["properties"]["scope"]["enum"] == [
        "durable",
        "session",
        "harness",
        "evidence",
        "all",
    ]
    assert query["properties"]["scope"]["default"] == "durable"
    assert query["properties"]["view"]["enum"] == ["minimal", "default", "full"]
    assert query["properties"]["explain"]["type"] == "boolean"
    pack = by_name["ragit_context_pack"]["inputSchema"]
    assert pack["required"] == ["goal"]
    assert pack["properties"]["budget"]["maximum"] == 32000
    assert set(pack["properties"]) == {"goal", "budget", "at", "scope", "view"}


def test_output_schema_accepts_success_and_failure_envelopes(
    listed: list[dict[str, Any]],
) -> None:
    """Contract §11: the outputSchema is the MCP envelope; a failure carries error, data null."""
    schema = {t["name"]: t["outputSchema"] for t in listed}["ragit_query"]
    validator = jsonschema.Draft202012Validator(schema)
    failure = {
        "ok": False,
        "tool": "ragit_query",
        "version": "0.1.0",
        "cwd": "/r",
        "data": None,
        "warnings": [],
        "error": {
            "code": "MCP_INVALID_INPUT",
            "category": "invalid_input",
            "message": "m",
            "retryable": False,
            "details": {"field": "topK"},
            "recovery": {"command": None, "hint": "Correct the tool arguments and retry."},
        },
    }
    assert validator.is_valid(failure)
    assert not validator.is_valid({**failure, "error": None})
    assert not validator.is_valid({**failure, "ok": True})
    assert not validator.is_valid({**failure, "extra": 1})


def test_descriptions_tell_an_agent_when_to_call_and_how_to_recover(
    listed: list[dict[str, Any]],
) -> None:
    """Contract §11: descriptions are for an agent (which tool, scope/view, recovery)."""
    by_name = {t["name"]: t for t in listed}
    assert "{}" in by_name["ragit_status"]["description"]
    assert "recovery" in by_name["ragit_status"]["description"]
    assert "error.recovery.command" in by_name["ragit_query"]["description"]
    assert "ragit_query" in by_name["ragit_context_pack"]["description"]
    for name in ("ragit_query", "ragit_context_pack"):
        props = by_name[name]["inputSchema"]["properties"]
        assert "durable" in props["scope"]["description"]
        assert "truncated" in props["view"]["description"]
    assert "ragit_context_pack" in by_name["ragit_query"]["description"]
    assert "ragit_query" in by_name["ragit_context_pack"]["description"]


def _descriptions(value: Any) -> list[str]:
    if isinstance(value, dict):
        own = [value["description"]] if isinstance(value.get("description"), str) else []
        return own + [t for k, v in value.items() if k != "description" for t in _descriptions(v)]
    if isinstance(value, list):
        return [t for v in value for t in _descriptions(v)]
    return []


def test_tool_descriptions_cost_half_what_they_did(listed: list[dict[str, Any]]) -> None:
    """Implementation choice: every agent carries these in its context. Measured as characters/4:
    the description strings of tools/list were 5,384 characters (~1,346 tokens) and what
    a client puts in the agent's context (name, description, inputSchema) 6,983 (~1,745)."""
    described = sum(len(t) for t in _descriptions(listed))
    in_context = sum(
        len(t["name"])
        + len(t["description"])
        + len(json.dumps(t["inputSchema"], separators=(",", ":")))
        for t in listed
    )
    assert described <= 5_384 // 2, described
    assert in_context <= 6_983 * 3 // 5, in_context
    # No paragraph repeated across tools.
    sentences = [s.strip() for t in listed for s in t["description"].split(". ") if len(s) > 40]
    assert len(sentences) == len(set(sentences))
