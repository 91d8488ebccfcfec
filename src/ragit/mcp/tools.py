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

_RECOVERY_TEXT = (
    "Failures are results with isError true; read error.code and error.recovery.command. "
    "MCP_INVALID_INPUT: fix the argument named in error.details.field. "
    "SNAPSHOT_NOT_INDEXED: the commit has no index; ask the user to commit and run the "
    "recovery command (for example `ragit ingest --all`) outside MCP, then retry. "
    "SNAPSHOT_REF_INVALID / SNAPSHOT_REF_AMBIGUOUS: pass HEAD, a full SHA or a longer "
    "unique prefix. SNAPSHOT_MANIFEST_INVALID / SNAPSHOT_STORE_UNAVAILABLE: ask the user "
    "to run `ragit doctor --format json`. MCP_REMOTE_EMBEDDING_CACHE_MISS: the question "
    "needs a remote embedding that is not cached; ask the user to run the same query "
    "with the ragit CLI, then retry. STORE_READ_BUSY and MCP_INTERNAL_ERROR are "
    "retryable once. This server never writes, ingests or repairs anything."
)

_SCOPE_TEXT = (
    "Which knowledge to search: durable (default) = committed documents of the snapshot "
    "(ADRs, PRDs, specs, plans, promoted memory); session, harness, evidence = reviewed "
    "agent artifacts of that kind; all = everything."
)
_VIEW_TEXT = (
    "Shape of each hit: minimal = path, section title, score, citation and a 120-character "
    "excerpt; default = minimal plus vector/keyword scores and a 200-character excerpt; "
    "full = the whole passage text instead of the excerpt (long texts are trimmed so a "
    "result stays under 20,000 tokens; a trimmed hit has truncated: true)."
)
_AT_TEXT = (
    "Snapshot to read instead of HEAD's: HEAD, a full 40-hex commit SHA, or a unique hex "
    "prefix of at least 4 characters. Branch names, tags and rev expressions are refused. "
    "The commit must have been indexed."
)

STATUS_DESCRIPTION = (
    "Report this repository's RAGit state without changing anything: whether RAGit is "
    "initialized, branch and HEAD, whether HEAD's snapshot is indexed and searchable "
    "(data.searchReady, data.snapshot.status and its recovery command), the store, the "
    "writer lock and pending transactions. Call it first in a session, or when a query "
    "fails with SNAPSHOT_NOT_INDEXED or SNAPSHOT_STORE_UNAVAILABLE, to see what is wrong. "
    "It takes no arguments: pass {}. It works on an uninitialized repository too and "
    "never calls an embedding provider."
)

QUERY_DESCRIPTION = (
    "Search the repository's committed knowledge (ADRs, PRDs, specs, plans, promoted "
    "memory) as of one exact git commit and get ranked hits, each with a citation "
    "(path, section, commit SHA). Use it for a specific question ('why did we choose "
    "X?', 'what does the spec say about Y?'); use ragit_context_pack instead when you "
    "need a budgeted set of whole passages to read before a task. Results reflect the "
    "indexed snapshot of HEAD (or `at`), never uncommitted edits; a warning says when "
    "the working tree is dirty. Cite hits by citation.id and path. " + _RECOVERY_TEXT
)

CONTEXT_PACK_DESCRIPTION = (
    "Assemble a token-budgeted, citation-diverse pack of whole passages for a goal, from "
    "the repository's committed knowledge at one exact commit: it retrieves the 30 best "
    "passages, skips duplicate citations, takes one passage per source first and fills "
    "the rest of the budget in rank order; passages are never cut to fit (usedTokens <= "
    "budget; a whitespace-word estimate). Use it before starting a task to load the "
    "relevant decisions and specs; use ragit_query for a quick lookup. " + _RECOVERY_TEXT
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
        "question": _text(
            "The question, in natural language (English, Korean or mixed). Required; "
            "not blank; no control characters.",
            MAX_TEXT_CHARS,
        ),
        "topK": {
            "type": "integer",
            "minimum": 1,
            "maximum": MCP_MAX_TOP_K,
            "description": (
                "How many hits to return, 1-50. Default: the repository's retrieval.top_k "
                "(5 unless configured), capped at 50."
            ),
        },
        "at": _text(_AT_TEXT, MAX_REF_CHARS),
        "scope": _scope(),
        "view": _view(),
        "explain": {
            "type": "boolean",
            "default": False,
            "description": "Add scoreBreakdown to each hit (how the final score was made); "
            "never changes the ranking.",
        },
    },
    "required": ["question"],
    "additionalProperties": False,
}

CONTEXT_PACK_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "goal": _text(
            "What you are about to do, in natural language. Required; not blank; no "
            "control characters.",
            MAX_TEXT_CHARS,
        ),
        "budget": {
            "type": "integer",
            "minimum": 1,
            "maximum": MCP_MAX_BUDGET,
            "default": DEFAULT_BUDGET,
            "description": "Token budget for the passages, 1-32000 (whitespace words; "
            f"default {DEFAULT_BUDGET}).",
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
            "properties": {"command": {"type": ["string", "null"]}},
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
        "transactions": {"type": "object"},
    },
    "required": ["root", "initialized", "head", "snapshot", "searchReady"],
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
        "hits": {"type": "array", "items": _HIT},
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
