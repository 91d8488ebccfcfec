"""The three tools of ``ragit-mcp``: names, descriptions, input and output schemas (contract §11).

This module is plain data. The input schemas state the rules that
:mod:`ragit.mcp.arguments` enforces (that module, not a schema validator, is
authoritative: it also rejects integral floats such as ``5.0`` for integer
fields, as the CLI does). The output schema of every tool is the MCP envelope,
``{ok, tool, version, cwd, data, warnings[, error]}``, with the tool's ``data``.
"""

from __future__ import annotations

import copy
from typing import Any

from ragit.contract.command_spec import SCOPES, VIEWS
from ragit.retrieve.query import DEFAULT_BUDGET

STATUS = "ragit_status"
QUERY = "ragit_query"
CONTEXT_PACK = "ragit_context_pack"
TOOL_NAMES = (STATUS, QUERY, CONTEXT_PACK)

MCP_MAX_TOP_K = 50
MCP_MAX_BUDGET = 32_000
MAX_TEXT_CHARS = 8_192
MAX_REF_CHARS = 256
RESULT_TOKEN_LIMIT = 20_000

ANNOTATIONS: dict[str, Any] = {
    "readOnlyHint": True,
    "destructiveHint": False,
    "idempotentHint": True,
    "openWorldHint": False,
}

# A string holding at least one character that is neither whitespace nor one of the
# control characters of contract §4.
_CONTROL_CLASS = "\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f"
TEXT_PATTERN = f"^[^{_CONTROL_CLASS}]*[^\\s{_CONTROL_CLASS}][^{_CONTROL_CLASS}]*$"

_SCOPE_TEXT = (
    "durable (default): committed documents; session, harness, evidence: reviewed agent "
    "artifacts of that kind; all: everything."
)
_VIEW_TEXT = (
    "Per hit: minimal = path, section, score, citation, 120-char excerpt; default = also "
    "vector/keyword scores, 200-char excerpt; full = whole passage text (cut to keep a "
    "result under 20,000 tokens: truncated: true)."
)
_AT_TEXT = (
    "Indexed commit to read instead of HEAD: a full SHA or a unique hex prefix (4+). "
    "Not a branch or tag."
)

STATUS_DESCRIPTION = (
    "This repository's RAGit state; changes nothing; pass {}. Says whether RAGit is "
    "initialized, whether HEAD is indexed and searchable (data.searchReady; "
    "data.snapshot.recovery is the command that fixes it), the store, the writer lock "
    "and pending work. Call it first, or when a search fails."
)

QUERY_DESCRIPTION = (
    "Search the committed knowledge (ADRs, PRDs, specs, plans, promoted memory) as of one "
    "commit (HEAD's index, or `at`; uncommitted edits are not seen) for ranked hits with "
    "citations; cite citation.id and path. For whole passages to read before a task, use "
    "ragit_context_pack. On isError, the user should run error.recovery.command (if not "
    "null; else follow error.recovery.hint) outside MCP: this server never writes."
)

CONTEXT_PACK_DESCRIPTION = (
    "The whole passages relevant to a goal, within a token budget, from the committed "
    "knowledge at one commit, in rank order; one per source is taken before any second, "
    "none is cut, and each hit's tokens sum to usedTokens <= budget. Use it before a task, "
    "ragit_query for a lookup. Failures: as in ragit_query."
)


def _text(description: str, max_length: int) -> dict[str, Any]:
    return {
        "type": "string",
        "minLength": 1,
        "maxLength": max_length,
        "pattern": TEXT_PATTERN,
        "description": description,
    }


def _scope() -> dict[str, Any]:
    return {
        "type": "string",
        "enum": list(SCOPES),
        "default": "durable",
        "description": _SCOPE_TEXT,
    }


def _view() -> dict[str, Any]:
    return {
        "type": "string",
        "enum": list(VIEWS),
        "default": "default",
        "description": _VIEW_TEXT,
    }


STATUS_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {},
    "additionalProperties": False,
}

QUERY_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "question": _text("The question (English, Korean or mixed).", MAX_TEXT_CHARS),
        "topK": {
            "type": "integer",
            "minimum": 1,
            "maximum": MCP_MAX_TOP_K,
            "description": "Hits to return (default: retrieval.top_k, 5 unless set).",
        },
        "at": _text(_AT_TEXT, MAX_REF_CHARS),
        "scope": _scope(),
        "view": _view(),
        "explain": {
            "type": "boolean",
            "default": False,
            "description": "Add each hit's scoreBreakdown; the ranking is unchanged.",
        },
    },
    "required": ["question"],
    "additionalProperties": False,
}

CONTEXT_PACK_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "goal": _text("What you are about to do.", MAX_TEXT_CHARS),
        "budget": {
            "type": "integer",
            "minimum": 1,
            "maximum": MCP_MAX_BUDGET,
            "default": DEFAULT_BUDGET,
            "description": "Token budget for the passages (RAGit's token estimate, which "
            "counts at least as many tokens as GPT-4's tokenizer).",
        },
        "at": _text(_AT_TEXT, MAX_REF_CHARS),
        "scope": _scope(),
        "view": _view(),
    },
    "required": ["goal"],
    "additionalProperties": False,
}

# ---------------------------------------------------------------- output

_ERROR: dict[str, Any] = {
    "type": "object",
    "properties": {
        "code": {"type": "string"},
        "category": {
            "enum": ["invalid_input", "not_ready", "corrupt_or_incompatible", "transient"]
        },
        "message": {"type": "string"},
        "retryable": {"type": "boolean"},
        "details": {"type": "object"},
        "recovery": {
            "type": "object",
            "properties": {
                "command": {"type": ["string", "null"]},
                "hint": {"type": "string"},
            },
            "required": ["command"],
        },
    },
    "required": ["code", "category", "message", "retryable", "details", "recovery"],
}

_SNAPSHOT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "requestedRef": {"type": "string"},
        "resolvedSha": {"type": ["string", "null"]},
        "selection": {"type": "string"},
        "status": {"type": "string"},
        "branch": {"type": ["string", "null"]},
        "detached": {"type": "boolean"},
        "worktreeDirty": {"type": "boolean"},
    },
}

_CITATION: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "sourceType": {"type": "string"},
        "sourceId": {"type": "string"},
        "sourceVersion": {"type": "string"},
        "sourceSha": {"type": "string"},
    },
    "required": ["id", "sourceType", "sourceId", "sourceVersion", "sourceSha"],
}

_HIT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "sectionTitle": {"type": "string"},
        "scoreFinal": {"type": "number"},
        "scoreVector": {"type": "number"},
        "scoreKeyword": {"type": "number"},
        "scope": {"type": "string"},
        "citation": _CITATION,
        "excerpt": {"type": "string"},
        "text": {"type": "string"},
        "truncated": {"const": True},
        "scoreBreakdown": {"type": "object"},
    },
    "required": ["path", "sectionTitle", "scoreFinal", "citation"],
}

# A context pack's hit (contract §8): whole text and its token count in every view.
_PASSAGE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "sectionTitle": {"type": "string"},
        "scoreFinal": {"type": "number"},
        "scoreVector": {"type": "number"},
        "scoreKeyword": {"type": "number"},
        "scope": {"type": "string"},
        "originType": {"type": "string"},
        "authority": {"type": "string"},
        "citation": _CITATION,
        "text": {"type": "string"},
        "tokens": {"type": "integer", "minimum": 0},
    },
    "required": ["path", "sectionTitle", "citation", "text", "tokens"],
}

_REDACTION: dict[str, Any] = {
    "type": "object",
    "properties": {
        "applied": {"type": "boolean"},
        "maskedCount": {"type": "integer"},
        "sources": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["applied", "maskedCount", "sources"],
}

_STRINGS: dict[str, Any] = {"type": "array", "items": {"type": "string"}}

STATUS_DATA: dict[str, Any] = {
    "type": "object",
    "description": "The data of `ragit status --format json`.",
    "properties": {
        "root": {"type": "string"},
        "initialized": {"type": "boolean"},
        "branch": {"type": ["string", "null"]},
        "head": {"type": ["string", "null"]},
        "detached": {"type": "boolean"},
        "worktreeDirty": {"type": "boolean"},
        "snapshot": {"type": "object"},
        "searchReady": {"type": "boolean"},
        "manifests": {"type": "integer"},
        "config": {"type": "object"},
        "store": {"type": "object"},
        "embedding": {"type": "object"},
        "writerLock": {"type": "object"},
        "memoryLock": {"type": "object"},
        "transactions": {"type": "object"},
    },
    "required": ["root", "initialized", "head", "snapshot", "searchReady"],
}

# What ranked the answer: the snapshot's embedding profile and the re-ranking model (or null).
_RETRIEVAL: dict[str, Any] = {
    "type": "object",
    "properties": {
        "embedding": {"type": ["object", "null"]},
        "rerank": {"type": ["object", "null"]},
    },
}

QUERY_DATA: dict[str, Any] = {
    "type": "object",
    "description": "The data of `ragit query --format json` for the same request.",
    "properties": {
        "query": {"type": "string"},
        "snapshotSha": {"type": "string"},
        "snapshot": _SNAPSHOT,
        "scope": {"type": "string"},
        "explain": {"type": "boolean"},
        "hits": {"type": "array", "items": _HIT},
        "retrieval": _RETRIEVAL,
        "warnings": _STRINGS,
        "redactionSummary": _REDACTION,
    },
    "required": ["query", "snapshotSha", "snapshot", "hits", "warnings", "redactionSummary"],
}

CONTEXT_PACK_DATA: dict[str, Any] = {
    "type": "object",
    "description": "The data of `ragit context pack --format json` for the same request.",
    "properties": {
        "goal": {"type": "string"},
        "snapshotSha": {"type": "string"},
        "snapshot": _SNAPSHOT,
        "budget": {"type": "integer"},
        "usedTokens": {"type": "integer"},
        "selectedHits": {"type": "integer"},
        "selection": {"type": "object"},
        "hits": {"type": "array", "items": _PASSAGE},
        "warnings": _STRINGS,
        "redactionSummary": _REDACTION,
    },
    "required": [
        "goal",
        "snapshotSha",
        "snapshot",
        "budget",
        "usedTokens",
        "selectedHits",
        "selection",
        "hits",
        "warnings",
        "redactionSummary",
    ],
}


def envelope_schema(tool: str, data: dict[str, Any]) -> dict[str, Any]:
    """The output schema of ``tool``: the MCP envelope around its ``data``."""
    return {
        "type": "object",
        "properties": {
            "ok": {"type": "boolean"},
            "tool": {"const": tool},
            "version": {"type": "string"},
            "cwd": {"type": "string"},
            "data": {"anyOf": [data, {"type": "null"}]},
            "warnings": _STRINGS,
            "error": _ERROR,
        },
        "required": ["ok", "tool", "version", "cwd", "data", "warnings"],
        "additionalProperties": False,
        "if": {"properties": {"ok": {"const": True}}},
        "then": {"properties": {"data": data}, "not": {"required": ["error"]}},
        "else": {"properties": {"data": {"type": "null"}}, "required": ["error"]},
    }


_TOOLS: tuple[tuple[str, str, str, dict[str, Any], dict[str, Any]], ...] = (
    (STATUS, "RAGit status", STATUS_DESCRIPTION, STATUS_INPUT, STATUS_DATA),
    (QUERY, "RAGit query", QUERY_DESCRIPTION, QUERY_INPUT, QUERY_DATA),
    (
        CONTEXT_PACK,
        "RAGit context pack",
        CONTEXT_PACK_DESCRIPTION,
        CONTEXT_PACK_INPUT,
        CONTEXT_PACK_DATA,
    ),
)


def tool_definitions() -> list[dict[str, Any]]:
    """The ``tools/list`` entries (camelCase wire form), in a fixed order."""
    return [
        {
            "name": name,
            "title": title,
            "description": description,
            "inputSchema": copy.deepcopy(schema),
            "outputSchema": envelope_schema(name, copy.deepcopy(data)),
            "annotations": {"title": title, **ANNOTATIONS},
        }
        for name, title, description, schema, data in _TOOLS
    ]
