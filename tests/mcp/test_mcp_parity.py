"""Tool `data` equals the CLI's `data` for the same request (contract §11, MCP-005)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _mcp_helpers import RAGIT, McpServer, git, make_repo, run

StartServer = Callable[..., McpServer]


def cli_argv(tool: str, args: dict[str, Any]) -> list[str]:
    """The `ragit` command line for an MCP request."""
    if tool == "ragit_status":
        return ["status"]
    if tool == "ragit_query":
        argv = ["query", args["question"]]
        if "topK" in args:
            argv += ["--top-k", str(args["topK"])]
        if args.get("explain"):
            argv.append("--explain")
    else:
        argv = ["context", "pack", args["goal"]]
        if "budget" in args:
            argv += ["--budget", str(args["budget"])]
    for key in ("at", "scope", "view"):
        if key in args:
            argv += [f"--{key}", str(args[key])]
    return argv


def cli_envelope(root: Path, env: dict[str, str], tool: str, args: dict[str, Any]) -> Any:
    proc = run([RAGIT, *cli_argv(tool, args), "--format", "json"], cwd=root, env=env)
    return json.loads(proc.stdout)


REQUESTS: list[tuple[str, dict[str, Any]]] = [
    ("ragit_status", {}),
    ("ragit_query", {"question": "double entry"}),
    ("ragit_query", {"question": "double entry", "topK": 3, "view": "minimal"}),
    ("ragit_query", {"question": "idempotency keys", "topK": 4, "view": "full", "explain": True}),
    ("ragit_query", {"question": "posting API", "at": "HEAD", "scope": "durable"}),
    ("ragit_query", {"question": "ledger", "scope": "all", "topK": 50}),
    ("ragit_query", {"question": "ledger", "scope": "session"}),
    ("ragit_query", {"question": "이중 기입 원장"}),
    ("ragit_context_pack", {"goal": "implement posting validation"}),
    ("ragit_context_pack", {"goal": "double entry", "budget": 3000, "view": "full"}),
    ("ragit_context_pack", {"goal": "double entry", "budget": 1, "view": "minimal"}),
    ("ragit_context_pack", {"goal": "balance snapshots", "scope": "all", "budget": 3000}),
]


@pytest.mark.parametrize(
    ("tool", "args"), REQUESTS, ids=[f"{t}-{i}" for i, (t, _) in enumerate(REQUESTS)]
)
def test_tool_data_equals_cli_data(
    shared_server: McpServer,
    indexed_repo: tuple[Path, dict[str, str]],
    tool: str,
    args: dict[str, Any],
) -> None:
    """Contract §11: the same request gives the same data through MCP and the CLI."""
    root, env = indexed_repo
    call = shared_server.call(tool, args)
    cli = cli_envelope(root, env, tool, args)
    assert call.envelope["ok"] is True and cli["ok"] is True
    assert call.data == cli["data"]
    assert call.envelope["warnings"] == cli["warnings"]
    assert call.envelope["cwd"] == cli["cwd"]
    assert call.envelope["version"] == cli["version"]


def test_at_a_full_sha_and_a_prefix_equal_the_cli(
    shared_server: McpServer, indexed_repo: tuple[Path, dict[str, str]]
) -> None:
    """Contract §5/§11: `at` resolves exactly as `--at` does."""
    root, env = indexed_repo
    head = git(root, env, "rev-parse", "HEAD")
    for at in (head, head[:7]):
        for tool, args in (
            ("ragit_query", {"question": "double entry", "at": at}),
            ("ragit_context_pack", {"goal": "double entry", "at": at}),
        ):
            call = shared_server.call(tool, args)
            assert call.data == cli_envelope(root, env, tool, args)["data"]
            assert call.data["snapshotSha"] == head


def test_a_dirty_worktree_warns_in_both_faces_alike(
    tmp_path: Path, env: dict[str, str], start_server: StartServer
) -> None:
    """Contract §5/§11: results stay those of the commit and both faces warn the same way."""
    root = make_repo(tmp_path, env)
    adr = root / "docs" / "adr" / "0001-double-entry-bookkeeping.md"
    adr.write_text(adr.read_text(encoding="utf-8") + "\nUncommitted edit.\n", encoding="utf-8")
    server = start_server(root, env)
    for tool, args in (
        ("ragit_status", {}),
        ("ragit_query", {"question": "double entry"}),
        ("ragit_context_pack", {"goal": "double entry"}),
    ):
        call = server.call(tool, args)
        cli = cli_envelope(root, env, tool, args)
        assert call.data == cli["data"]
        assert call.envelope["warnings"] == cli["warnings"]
    query = server.call("ragit_query", {"question": "double entry"})
    assert query.envelope["warnings"], "a dirty worktree must be reported"
