"""Envelope goldens (contract §11).

Failure envelopes are pinned exactly, with the repository path, version, commit SHAs and
message text (not part of the contract) replaced by tokens. Success envelopes are pinned
by shape: every key, the JSON type of every value, and the literal value of the keys that
name a contract enumeration (``ok``, ``tool``, ``scope``, ``status``, ...); the values
themselves are covered by the parity tests.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _mcp_helpers import McpServer, make_repo
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension

StartServer = Callable[..., McpServer]
SHA = re.compile(r"\b[0-9a-f]{40}\b")
LITERAL = {
    "ok",
    "tool",
    "scope",
    "selection",
    "status",
    "requestedRef",
    "strategy",
    "originType",
    "authority",
    "sourceType",
    "mode",
    "explain",
    "initialized",
    "searchReady",
    "detached",
    "worktreeDirty",
    "truncated",
}


def shape(value: Any, key: str | None = None) -> Any:
    """Keys, JSON types and enumeration literals of ``value``."""
    if isinstance(value, dict):
        return {k: shape(v, k) for k, v in sorted(value.items())}
    if isinstance(value, list):
        shapes: list[Any] = []
        for item in value:
            s = shape(item, key)
            if s not in shapes:
                shapes.append(s)
        return shapes
    if key in LITERAL and isinstance(value, (str, bool)):
        return value
    if isinstance(value, bool):
        return "<bool>"
    if isinstance(value, int):
        return "<int>"
    if isinstance(value, float):
        return "<number>"
    if isinstance(value, str):
        return "<str>"
    return value


def normalize_failure(envelope: dict[str, Any], root: Path) -> dict[str, Any]:
    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, str):
            return SHA.sub("<SHA>", value.replace(str(root), "<CWD>"))
        return value

    out: dict[str, Any] = walk(envelope)
    out["version"] = "<VERSION>"
    out["error"]["message"] = "<MESSAGE>"
    return out


SUCCESSES: list[tuple[str, str, dict[str, Any]]] = [
    ("status", "ragit_status", {}),
    ("query-default", "ragit_query", {"question": "double entry"}),
    ("query-minimal", "ragit_query", {"question": "double entry", "view": "minimal"}),
    (
        "query-full-explain",
        "ragit_query",
        {"question": "double entry", "view": "full", "explain": True},
    ),
    ("context-pack-default", "ragit_context_pack", {"goal": "double entry"}),
    ("context-pack-full", "ragit_context_pack", {"goal": "double entry", "view": "full"}),
]

FAILURES: list[tuple[str, str, dict[str, Any]]] = [
    ("invalid-topk", "ragit_query", {"question": "double entry", "topK": 51}),
    ("invalid-unknown-field", "ragit_status", {"cwd": "/"}),
    ("invalid-tool", "ragit_ingest", {}),
    ("ref-invalid", "ragit_query", {"question": "double entry", "at": "main"}),
    ("ref-not-indexed", "ragit_context_pack", {"goal": "double entry", "at": "aae262a9"}),
]


@pytest.mark.parametrize(("name", "tool", "args"), SUCCESSES, ids=[s[0] for s in SUCCESSES])
def test_success_envelope_shapes_match_the_goldens(
    shared_server: McpServer,
    snapshot: SnapshotAssertion,
    name: str,
    tool: str,
    args: dict[str, Any],
) -> None:
    """Contract §11: {ok, tool, version, cwd, data, warnings} with the CLI's data keys."""
    call = shared_server.call(tool, args)
    assert call.envelope["ok"] is True
    assert shape(call.envelope) == snapshot(extension_class=JSONSnapshotExtension)


@pytest.mark.parametrize(("name", "tool", "args"), FAILURES, ids=[f[0] for f in FAILURES])
def test_failure_envelopes_match_the_goldens(
    shared_server: McpServer,
    indexed_repo: tuple[Path, dict[str, str]],
    snapshot: SnapshotAssertion,
    name: str,
    tool: str,
    args: dict[str, Any],
) -> None:
    """Contract §11: failures are {ok: false, data: null, warnings, error{...}}, isError true."""
    root, _ = indexed_repo
    call = shared_server.call(tool, args)
    assert call.is_error
    assert normalize_failure(call.envelope, root) == snapshot(extension_class=JSONSnapshotExtension)


def test_status_of_an_uninitialized_repository_creates_nothing(
    tmp_path: Path, env: dict[str, str], start_server: StartServer, snapshot: SnapshotAssertion
) -> None:
    """Seed: ragit_status does not initialize a repository (no .ragit) and reports it."""
    root = make_repo(tmp_path, env, init=False, ingest=False)
    server = start_server(root, env)
    call = server.call("ragit_status", {})
    assert call.data["initialized"] is False and call.data["searchReady"] is False
    assert not (root / ".ragit").exists()
    assert shape(call.envelope) == snapshot(extension_class=JSONSnapshotExtension)
