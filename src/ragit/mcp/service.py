"""Tool calls of ``ragit-mcp``: validate, call the shared core, wrap in the MCP envelope.

:class:`ToolService` knows nothing about the transport. Every call returns a
:class:`ToolResult` — never raises for anything a client sends: invalid
arguments and unknown tools become ``MCP_INVALID_INPUT``, typed operational
errors keep their own code, and anything unexpected becomes
``MCP_INTERNAL_ERROR`` with the traceback on stderr only.

Result bound (contract §11): the serialized envelope (compact JSON, the text of
``content[0]``) may hold at most :data:`~ragit.mcp.tools.RESULT_TOKEN_LIMIT`
tokens of :func:`ragit.text.tokens.token_estimate`, which counts at least as many
as the tokenizers of the models reading it. Over it, a query's ``full``-view hit
texts are cut to the largest common number of words that fits (each cut hit gets
``truncated: true``) and a warning is added; if the result still does not fit,
trailing hits are dropped with another warning. A context pack's passages are
never cut (contract §8): its trailing hits are dropped whole, and ``usedTokens`` (the
sum of the hits' ``tokens``, the same estimate), ``selectedHits`` and ``selection`` are
updated to count what is returned.
"""

from __future__ import annotations

import json
import re
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragit import __version__
from ragit.contract.errors import RagitError
from ragit.contract.mcp_errors import McpInternalError, McpInvalidInput
from ragit.mcp import arguments as arg
from ragit.mcp.tools import (
    CONTEXT_PACK,
    MCP_MAX_BUDGET,
    MCP_MAX_TOP_K,
    QUERY,
    RESULT_TOKEN_LIMIT,
    STATUS,
    tool_definitions,
)
from ragit.security.output import mask_error, mask_in_place
from ragit.text.tokens import token_estimate
from ragit.workspace import Workspace

_WORD = re.compile(r"\S+")
# Room kept for the warnings that trimming adds.
_WARNING_ROOM = 128
TRIM_WARNING = (
    "result trimmed to the MCP limit of {limit} tokens: the text of {count} hit(s) was cut "
    "(truncated: true); ask for fewer hits, a smaller budget or view default"
)
DROP_WARNING = "result trimmed to the MCP limit of {limit} tokens: {count} trailing hit(s) dropped"
PACK_DROP_WARNING = (
    "context pack trimmed to the MCP limit of {limit} tokens: {count} trailing passage(s) "
    "dropped whole; ask for a smaller budget"
)


@dataclass(frozen=True)
class ToolResult:
    """One tool call's answer: the envelope, its JSON text and whether it is a failure."""

    envelope: dict[str, Any]
    text: str
    is_error: bool


def dumps(value: Any) -> str:
    """The serialization of ``content[0].text``: compact JSON, non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class ToolService:
    """The three tools over one repository, fixed at construction."""

    def __init__(self, root: Path) -> None:
        self.ws = Workspace(root)
        self.cwd = str(root)
        self._engine: Any = None

    # ------------------------------------------------------------ public
    def definitions(self) -> list[dict[str, Any]]:
        """The ``tools/list`` entries."""
        return tool_definitions()

    def call(self, name: object, arguments: object) -> ToolResult:
        """Run one tool call; never raises for anything the client sent."""
        tool = arg.clean_name(name)
        try:
            if not isinstance(name, str) or name not in arg.PARSERS:
                raise McpInvalidInput(
                    "name",
                    "unknown tool; the tools are ragit_status, ragit_query and ragit_context_pack",
                )
            data = self._run(name, arguments)
        except RagitError as exc:
            return self.failure(tool, exc)
        except Exception as exc:
            from ragit.contract.fs_errors import filesystem_error

            typed = filesystem_error(exc, self.ws.root)
            if typed is not None:  # a full disk, no permission: the machine's, typed
                return self.failure(tool, typed)
            self._log_internal(tool)
            self._drop_engine()
            return self.failure(tool, McpInternalError())
        warnings = [str(w) for w in data.get("warnings", [])] if name != STATUS else []
        # Contract §7: everything a tool returns is masked again (paths, warnings too).
        mask_in_place(data)
        mask_in_place(warnings)
        env: dict[str, Any] = {
            "ok": True,
            "tool": name,
            "version": __version__,
            "cwd": self.cwd,
            "data": data,
            "warnings": warnings,
        }
        return ToolResult(env, bound_result(env), is_error=False)

    def invalid(self, tool: str | None, field: str, reason: str) -> ToolResult:
        """An ``MCP_INVALID_INPUT`` result (also for requests the transport found malformed)."""
        return self.failure(tool, McpInvalidInput(field, reason))

    def failure(self, tool: str | None, error: RagitError) -> ToolResult:
        """The failure envelope of ``error`` (masked: contract §3)."""
        mask_error(error)
        env: dict[str, Any] = {
            "ok": False,
            "tool": tool,
            "version": __version__,
            "cwd": self.cwd,
            "data": None,
            "warnings": [],
            "error": error.payload(),
        }
        return ToolResult(env, dumps(env), is_error=True)

    def close(self) -> None:
        """Release the open store reader."""
        self._drop_engine()

    # ------------------------------------------------------------ tools
    def _run(self, name: str, arguments: object) -> dict[str, Any]:
        if name == STATUS:
            arg.parse_status(arguments)
            from ragit.ops.status.report import repository_status

            return repository_status(self.ws)
        if name == QUERY:
            return self._query(arg.parse_query(arguments))
        assert name == CONTEXT_PACK
        return self._pack(arg.parse_pack(arguments))

    def _engine_for_reads(self) -> Any:
        if self._engine is None:
            from ragit.retrieve.query import Engine

            self._engine = Engine(self.ws, mode="mcp")
        return self._engine

    def _query(self, args: arg.QueryArgs) -> dict[str, Any]:
        from ragit.retrieve.query import QueryRequest, check_query, run_query

        top_k = args.top_k
        if top_k is None:
            from ragit.config import load_config

            top_k = min(load_config(self.ws).retrieval.top_k, MCP_MAX_TOP_K)
        req = QueryRequest(
            question=args.question,
            top_k=top_k,
            at=args.at,
            scope=args.scope,
            explain=args.explain,
            view=args.view,
        )
        check_query(req, max_top_k=MCP_MAX_TOP_K)
        return run_query(self.ws, req, self._engine_for_reads())

    def _pack(self, args: arg.PackArgs) -> dict[str, Any]:
        from ragit.retrieve.query import PackRequest, check_pack, run_context_pack

        req = PackRequest(
            goal=args.goal, budget=args.budget, at=args.at, scope=args.scope, view=args.view
        )
        check_pack(req, max_budget=MCP_MAX_BUDGET)
        return run_context_pack(self.ws, req, self._engine_for_reads())

    # ------------------------------------------------------------ internals
    def _drop_engine(self) -> None:
        engine, self._engine = self._engine, None
        if engine is not None:
            try:
                engine.close()
            except Exception:
                self._log_internal("close")

    @staticmethod
    def _log_internal(tool: str | None) -> None:
        sys.stderr.write(f"[ragit-mcp] internal error in {tool or 'tool call'}:\n")
        traceback.print_exc(file=sys.stderr)
        sys.stderr.flush()


# ---------------------------------------------------------------- result bound


def _cut_words(text: str, words: int) -> str:
    if words <= 0:
        return ""
    end = 0
    for n, match in enumerate(_WORD.finditer(text), 1):
        end = match.end()
        if n == words:
            break
    return text[:end]


def bound_result(env: dict[str, Any]) -> str:
    """Serialize ``env``, trimming hits first when it exceeds the token limit."""
    text = dumps(env)
    if token_estimate(text) <= RESULT_TOKEN_LIMIT:
        return text
    data = env["data"]
    hits = data.get("hits") if isinstance(data, dict) else None
    if not isinstance(hits, list) or not hits:
        return text
    target = RESULT_TOKEN_LIMIT - _WARNING_ROOM
    if "usedTokens" in data:
        return _bound_pack(env, data, hits, target)
    notes: list[str] = []
    originals = [h.get("text") if isinstance(h.get("text"), str) else None for h in hits]
    sizes = [token_estimate(t) if t is not None else 0 for t in originals]
    if any(sizes):

        def apply(cap: int) -> int:
            for hit, original, size in zip(hits, originals, sizes, strict=True):
                if original is None:
                    continue
                if size > cap:
                    hit["text"] = _cut_words(original, cap)
                    hit["truncated"] = True
                else:
                    hit["text"] = original
                    hit.pop("truncated", None)
            return token_estimate(dumps(env))

        low, high = 0, max(sizes)
        while low < high:
            mid = (low + high + 1) // 2
            if apply(mid) <= target:
                low = mid
            else:
                high = mid - 1
        apply(low)
        cut = sum(1 for size in sizes if size > low)
        notes.append(TRIM_WARNING.format(limit=RESULT_TOKEN_LIMIT, count=cut))
    dropped = 0
    while hits and token_estimate(dumps(env)) > target:
        hits.pop()
        dropped += 1
    if dropped:
        notes.append(DROP_WARNING.format(limit=RESULT_TOKEN_LIMIT, count=dropped))
    env["warnings"].extend(notes)
    if isinstance(data.get("warnings"), list):
        data["warnings"].extend(notes)
    return dumps(env)


def _family(hit: dict[str, Any]) -> str:
    if hit.get("originType") == "artifact" and hit.get("artifactId"):
        prefix = "evidence" if hit.get("scope") == "evidence" else "artifact"
        return f"{prefix}:{hit['artifactId']}"
    return f"document:{hit.get('path')}"


def _bound_pack(env: dict[str, Any], data: dict[str, Any], hits: list[Any], target: int) -> str:
    """Drop a context pack's trailing passages whole until the result fits."""
    dropped = 0
    total = token_estimate(dumps(env))
    while hits and total > target:
        hit = hits.pop()
        dropped += 1
        data["usedTokens"] -= int(hit.get("tokens", 0))
        data["selectedHits"] = len(hits)
        selection = data.get("selection")
        if isinstance(selection, dict):
            selection["budgetRejectedHits"] = selection.get("budgetRejectedHits", 0) + 1
            selection["selectedSources"] = len({_family(h) for h in hits})
        # The estimate is additive over the JSON values; check the whole once it seems to fit.
        total -= token_estimate(dumps(hit)) + 1
        if total <= target:
            total = token_estimate(dumps(env))
    if dropped:
        note = PACK_DROP_WARNING.format(limit=RESULT_TOKEN_LIMIT, count=dropped)
        env["warnings"].append(note)
        if isinstance(data.get("warnings"), list):
            data["warnings"].append(note)
    return dumps(env)
