"""Strict validation of MCP tool arguments (contract §4 and §11).

Any JSON value can arrive as ``arguments``; everything that does not follow the
tool's input schema becomes :class:`~ragit.contract.mcp_errors.McpInvalidInput`
naming the first offending field (unknown keys first, then the fields in schema
order). Values are never echoed. The integer rule is the CLI's (contract §4):
booleans, strings, fractions and integral floats such as ``5.0`` are refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ragit.contract.command_spec import SCOPES, VIEWS
from ragit.contract.inputs import has_control_chars
from ragit.contract.mcp_errors import McpInvalidInput
from ragit.mcp.tools import (
    CONTEXT_PACK,
    CONTEXT_PACK_INPUT,
    MAX_REF_CHARS,
    MAX_TEXT_CHARS,
    MCP_MAX_BUDGET,
    MCP_MAX_TOP_K,
    QUERY,
    QUERY_INPUT,
    STATUS,
    STATUS_INPUT,
)
from ragit.retrieve.query import DEFAULT_BUDGET

MAX_FIELD_NAME_CHARS = 64


@dataclass(frozen=True)
class QueryArgs:
    """Validated ``ragit_query`` arguments (``top_k`` None = the configured default)."""

    question: str
    top_k: int | None
    at: str | None
    scope: str
    view: str
    explain: bool


@dataclass(frozen=True)
class PackArgs:
    """Validated ``ragit_context_pack`` arguments."""

    goal: str
    budget: int
    at: str | None
    scope: str
    view: str


def clean_name(value: object) -> str | None:
    """``value`` if it is a short string safe to repeat in a result, else None."""
    if (
        isinstance(value, str)
        and 0 < len(value) <= MAX_FIELD_NAME_CHARS
        and not has_control_chars(value)
        and value.isprintable()
    ):
        return value
    return None


def _object(arguments: object) -> dict[str, Any]:
    if arguments is None:
        return {}
    if not isinstance(arguments, dict):
        raise McpInvalidInput("arguments", "must be a JSON object")
    return arguments


def _no_unknown(args: dict[str, Any], schema: dict[str, Any]) -> None:
    allowed = schema["properties"]
    for key in args:
        if key not in allowed:
            raise McpInvalidInput(clean_name(key) or "arguments", "unknown field")


def _text(args: dict[str, Any], key: str, limit: int, *, required: bool) -> str | None:
    if key not in args:
        if required:
            raise McpInvalidInput(key, "is required")
        return None
    value = args[key]
    if not isinstance(value, str):
        raise McpInvalidInput(key, "must be a string")
    if not value.strip():
        raise McpInvalidInput(key, "must not be empty or blank")
    if has_control_chars(value):
        raise McpInvalidInput(key, "control characters are not allowed")
    if len(value) > limit:
        raise McpInvalidInput(key, f"must be at most {limit} characters")
    return value


def _integer(args: dict[str, Any], key: str, maximum: int) -> int | None:
    if key not in args:
        return None
    value = args[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise McpInvalidInput(key, "must be an integer")
    if not 1 <= value <= maximum:
        raise McpInvalidInput(key, f"must be between 1 and {maximum}")
    return value


def _choice(args: dict[str, Any], key: str, choices: tuple[str, ...], default: str) -> str:
    if key not in args:
        return default
    value = args[key]
    if not isinstance(value, str) or value not in choices:
        raise McpInvalidInput(key, f"must be one of {', '.join(choices)}")
    return value


def _flag(args: dict[str, Any], key: str) -> bool:
    if key not in args:
        return False
    value = args[key]
    if not isinstance(value, bool):
        raise McpInvalidInput(key, "must be a boolean")
    return value


def parse_status(arguments: object) -> None:
    """``ragit_status`` takes exactly ``{}`` (a missing ``arguments`` counts as ``{}``).

    Raises:
        McpInvalidInput: a non-object or any field.
    """
    _no_unknown(_object(arguments), STATUS_INPUT)


def parse_query(arguments: object) -> QueryArgs:
    """Validate ``ragit_query`` arguments.

    Raises:
        McpInvalidInput: naming the first offending field.
    """
    args = _object(arguments)
    _no_unknown(args, QUERY_INPUT)
    question = _text(args, "question", MAX_TEXT_CHARS, required=True)
    assert question is not None
    return QueryArgs(
        question=question,
        top_k=_integer(args, "topK", MCP_MAX_TOP_K),
        at=_text(args, "at", MAX_REF_CHARS, required=False),
        scope=_choice(args, "scope", SCOPES, "durable"),
        view=_choice(args, "view", VIEWS, "default"),
        explain=_flag(args, "explain"),
    )


def parse_pack(arguments: object) -> PackArgs:
    """Validate ``ragit_context_pack`` arguments.

    Raises:
        McpInvalidInput: naming the first offending field.
    """
    args = _object(arguments)
    _no_unknown(args, CONTEXT_PACK_INPUT)
    goal = _text(args, "goal", MAX_TEXT_CHARS, required=True)
    assert goal is not None
    budget = _integer(args, "budget", MCP_MAX_BUDGET)
    return PackArgs(
        goal=goal,
        budget=DEFAULT_BUDGET if budget is None else budget,
        at=_text(args, "at", MAX_REF_CHARS, required=False),
        scope=_choice(args, "scope", SCOPES, "durable"),
        view=_choice(args, "view", VIEWS, "default"),
    )


PARSERS = {STATUS: parse_status, QUERY: parse_query, CONTEXT_PACK: parse_pack}
