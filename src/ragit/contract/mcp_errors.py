"""The errors only ``ragit-mcp`` reports (contract.md §3): a tool's invalid arguments, a
remote provider's vectors missing from the read-only cache, an unexpected failure."""

from __future__ import annotations

from ragit.contract.errors import InvalidInputError, NotReadyError, TransientError


class McpInvalidInput(InvalidInputError):
    code = "MCP_INVALID_INPUT"

    def __init__(self, field: str | None = None, reason: str | None = None) -> None:
        message = "MCP tool input is invalid."
        if field:
            message = f"MCP tool input is invalid: {field}" + (f" ({reason})" if reason else "")
        super().__init__(
            message,
            details={"field": field} if field else {},
            hint="Correct the tool arguments and retry.",
        )


class McpRemoteEmbeddingCacheMiss(NotReadyError):
    code = "MCP_REMOTE_EMBEDDING_CACHE_MISS"

    def __init__(self, provider: str, model: str, missing_count: int) -> None:
        super().__init__(
            "The read-only remote embedding cache is incomplete.",
            details={"provider": provider, "model": model, "missingCount": missing_count},
            hint=(
                "Run the same query with the ragit CLI outside MCP to fill the cache, then retry."
            ),
        )


class McpInternalError(TransientError):
    code = "MCP_INTERNAL_ERROR"

    def __init__(self) -> None:
        super().__init__("The MCP tool failed unexpectedly.", details={}, recovery="ragit doctor")
