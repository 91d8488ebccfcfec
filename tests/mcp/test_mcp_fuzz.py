"""Property-based fuzzing of tool arguments against ONE long-lived server (contract §4, §11).

Any JSON value in any field yields either a valid result or MCP_INVALID_INPUT — never a
crash, a hang, an internal error or a changed file — and MCP_INVALID_INPUT appears exactly
when the arguments violate the published input schema (checked with ``jsonschema``; the
only deliberate difference is that integral floats such as ``5.0`` are refused for integer
fields, as the CLI refuses them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest
from _mcp_helpers import McpServer, git
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragit.mcp.tools import tool_definitions

SCHEMAS = {t["name"]: t["inputSchema"] for t in tool_definitions()}
VALIDATORS = {name: jsonschema.Draft202012Validator(s) for name, s in SCHEMAS.items()}
INTEGER_FIELDS = ("topK", "budget")
# Operational outcomes a schema-valid request may still have (refs are checked by git).
REF_ERRORS = {"SNAPSHOT_REF_INVALID", "SNAPSHOT_REF_AMBIGUOUS", "SNAPSHOT_NOT_INDEXED"}
FUZZ = settings(
    max_examples=150,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)
texts = st.sampled_from(["double entry", "ledger 원장", "  ", "", "posting\u0000api"]) | st.text(
    max_size=40
)


def _field_values(head: str) -> dict[str, st.SearchStrategy[Any]]:
    refs = st.sampled_from(["HEAD", head, head[:7], head[:4], "0000", "main", "HEAD~1", " "])
    return {
        "question": texts | json_values,
        "goal": texts | json_values,
        "topK": st.integers(min_value=-2, max_value=55) | st.sampled_from([5.0, 1.5]) | json_values,
        "budget": st.integers(min_value=-2, max_value=32_005) | json_values,
        "at": refs | st.text(max_size=12) | json_values,
        "scope": st.sampled_from(["durable", "session", "harness", "evidence", "all", "ALL"])
        | json_values,
        "view": st.sampled_from(["minimal", "default", "full", "compact"]) | json_values,
        "explain": st.booleans() | json_values,
    }


def _arguments(head: str, tool: str) -> st.SearchStrategy[dict[str, Any]]:
    values = _field_values(head)
    own = list(SCHEMAS[tool]["properties"])
    # Mostly the tool's own fields, sometimes a field of another tool or an unknown key.
    optional = {k: values[k] for k in own}
    stray = st.dictionaries(
        st.sampled_from(["cwd", "path", "top_k", *values]) | st.text(max_size=6),
        json_values,
        max_size=1,
    )
    return st.builds(
        lambda known, extra, use_extra: {**known, **extra} if use_extra else known,
        st.fixed_dictionaries({}, optional=optional),
        stray,
        st.integers(min_value=0, max_value=4).map(lambda n: n == 0),
    )


def _schema_valid(tool: str, args: dict[str, Any]) -> bool:
    if not VALIDATORS[tool].is_valid(args):
        return False
    return not any(isinstance(args.get(k), float) for k in INTEGER_FIELDS)


def _check(server: McpServer, tool: str, args: dict[str, Any]) -> None:
    call = server.call(tool, args)  # also: repository unchanged, text == structuredContent
    code = call.code
    assert code != "MCP_INTERNAL_ERROR", server.stderr()[-3000:]
    if _schema_valid(tool, args):
        assert code is None or code in REF_ERRORS, (args, call.envelope)
        if code is None:
            assert call.envelope["ok"] is True and call.envelope["tool"] == tool
    else:
        assert code == "MCP_INVALID_INPUT", (args, call.envelope)
        field = call.envelope["error"]["details"]["field"]
        assert field in args or field in SCHEMAS[tool].get("required", []) or field == "arguments"


@pytest.fixture(scope="module")
def head(indexed_repo: tuple[Path, dict[str, str]]) -> str:
    root, env = indexed_repo
    return git(root, env, "rev-parse", "HEAD")


@pytest.mark.parametrize("tool", ["ragit_query", "ragit_context_pack", "ragit_status"])
def test_any_json_in_any_field_is_a_result_or_mcp_invalid_input(
    shared_server: McpServer, head: str, tool: str
) -> None:
    """Contract §4/§11: fuzzed arguments never crash, hang, write or leak an internal error."""

    @FUZZ
    @given(args=_arguments(head, tool))
    def run(args: dict[str, Any]) -> None:
        _check(shared_server, tool, args)

    run()


@FUZZ
@given(
    name=st.text(max_size=20), args=st.dictionaries(st.text(max_size=6), json_values, max_size=2)
)
def test_unknown_tool_names_never_crash_the_server(
    shared_server: McpServer, name: str, args: dict[str, Any]
) -> None:
    """docs/mcp.md: any other tool name is MCP_INVALID_INPUT on field name."""
    call = shared_server.call(name, args)
    if name in SCHEMAS:
        assert call.code != "MCP_INTERNAL_ERROR"
    else:
        assert call.code == "MCP_INVALID_INPUT"
        assert call.envelope["error"]["details"] == {"field": "name"}


def test_the_long_lived_server_still_answers_after_the_fuzzing(shared_server: McpServer) -> None:
    """Implementation choice: one server survives every fuzzed call (no state is poisoned)."""
    call = shared_server.call("ragit_query", {"question": "double entry", "topK": 3})
    assert call.envelope["ok"] is True and len(call.data["hits"]) == 3
