"""ragit-mcp start-up: arguments, runtime guard, repository binding, stdio hygiene."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from _mcp_helpers import RAGIT_MCP, McpServer, assert_unchanged, make_repo, run, tree_state

import ragit
from conformance.mcp_driver import call_mcp

StartServer = Callable[..., McpServer]

INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    }
)


def test_help_prints_usage_on_stdout_and_exits_zero(tmp_path: Path, env: dict[str, str]) -> None:
    """Contract §1/§11: `ragit-mcp --help` prints usage and exits 0."""
    proc = run([RAGIT_MCP, "--help"], cwd=tmp_path, env=env)
    assert proc.stdout.startswith("usage: ragit-mcp [--cwd <path>]")
    assert "ragit_query" in proc.stdout
    assert proc.stderr == ""


def test_version_prints_the_package_version(tmp_path: Path, env: dict[str, str]) -> None:
    """Contract §1: `ragit-mcp --version` prints the package version and exits 0."""
    proc = run([RAGIT_MCP, "--version"], cwd=tmp_path, env=env)
    assert proc.stdout == f"ragit-mcp {ragit.__version__}\n"


def test_bad_arguments_exit_two_before_the_transport_starts(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """Contract §11: unknown, repeated or empty arguments fail before any JSON-RPC is spoken."""
    root = make_repo(tmp_path, env, init=False, ingest=False)
    cases = [
        ["--frobnicate"],
        ["--cwd", str(root), "--cwd", str(root)],
        [f"--cwd={root}", "--cwd", str(root)],
        ["--cwd"],
        ["--cwd="],
        ["--cwd", "  "],
        ["--cw", str(root)],
        [str(root)],
    ]
    for argv in cases:
        proc = run([RAGIT_MCP, *argv], cwd=root, env=env, check=False, stdin=INITIALIZE + "\n")
        assert proc.returncode == 2, argv
        assert proc.stdout == "", argv
        assert "[ragit-mcp] error:" in proc.stderr, argv
        assert "Traceback" not in proc.stderr


def test_directory_outside_any_repository_exits_three_with_one_line(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """Contract §11: a non-repository is a clear stderr line and a non-zero exit, no transport."""
    outside = tmp_path / "outside"
    outside.mkdir()
    for argv, cwd in ((["--cwd", str(outside)], tmp_path), ([], outside)):
        proc = run([RAGIT_MCP, *argv], cwd=cwd, env=env, check=False, stdin=INITIALIZE + "\n")
        assert proc.returncode == 3
        assert proc.stdout == ""
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and "not inside a git repository" in lines[0]
    assert list(outside.iterdir()) == []


def test_missing_cwd_directory_exits_two(tmp_path: Path, env: dict[str, str]) -> None:
    """Implementation choice: a --cwd that is not a directory is a usage error (exit 2)."""
    proc = run([RAGIT_MCP, "--cwd", str(tmp_path / "nowhere")], cwd=tmp_path, env=env, check=False)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.strip().count("\n") == 0


def test_runtime_guard_failure_is_one_line_and_exit_three(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """Contract §1: the early runtime guard runs before the transport: one line, exit 3."""
    root = make_repo(tmp_path, env, init=False, ingest=False)
    guarded = {**env, "RAGIT_FORCE_ZVEC_UNAVAILABLE": "1"}
    proc = run([RAGIT_MCP, "--cwd", str(root)], cwd=root, env=guarded, check=False)
    assert proc.returncode == 3
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "zvec" in lines[0]


def test_server_identifies_as_ragit_with_the_tools_capability_only(
    tmp_path: Path, env: dict[str, str], start_server: StartServer
) -> None:
    """Contract §11 / docs/mcp.md: server name ragit, version = package version, tools only."""
    root = make_repo(tmp_path, env, init=False, ingest=False)
    server = start_server(root, env)
    init = server.initialize_result
    assert init.server_info.name == "ragit"
    assert init.server_info.version == ragit.__version__
    caps = init.capabilities
    assert caps.tools is not None
    assert caps.prompts is None and caps.resources is None and caps.logging is None
    assert caps.completions is None


def test_without_cwd_the_start_directory_is_resolved_to_the_git_root(
    tmp_path: Path, env: dict[str, str], start_server: StartServer
) -> None:
    """Contract §4/§11: the process directory is resolved once and normalized to the git root."""
    root = make_repo(tmp_path, env, init=False, ingest=False)
    sub = root / "docs"
    server = start_server(root, env, args=[], cwd=sub)
    call = server.call("ragit_status", {})
    assert call.envelope["cwd"] == str(root.resolve())
    assert call.data["root"] == str(root.resolve())


def test_cwd_equals_form_binds_the_repository(
    tmp_path: Path, env: dict[str, str], start_server: StartServer
) -> None:
    """docs/mcp.md: `--cwd=<path>` is accepted; any directory inside the worktree is normalized."""
    root = make_repo(tmp_path, env, init=False, ingest=False)
    server = start_server(root, env, args=[f"--cwd={root / 'docs'}"], cwd=tmp_path)
    assert server.call("ragit_status", {}).envelope["cwd"] == str(root.resolve())


def test_stdout_carries_only_json_rpc_even_after_a_garbage_line(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """Contract §11: no banner and nothing but JSON-RPC frames on stdout."""
    root = make_repo(tmp_path, env, init=False, ingest=False)
    before = tree_state(root)
    outcome = call_mcp(
        [RAGIT_MCP, "--cwd", str(root)],
        cwd=root,
        env=env,
        request={"tool": "ragit_status", "arguments": {}},
        timeout=120,
    )
    assert_unchanged(before, tree_state(root))
    assert outcome.problems == []
    assert outcome.envelope is not None and outcome.envelope["ok"] is True
    garbage = run(
        [RAGIT_MCP, "--cwd", str(root)], cwd=root, env=env, check=False, stdin="not json\n"
    )
    assert garbage.returncode == 0
    for line in garbage.stdout.splitlines():
        assert json.loads(line)["jsonrpc"] == "2.0"
    assert_unchanged(before, tree_state(root))


def test_closing_stdin_ends_the_server_with_exit_zero(tmp_path: Path, env: dict[str, str]) -> None:
    """Implementation choice: end of input is a normal shutdown (exit 0, nothing on stdout)."""
    root = make_repo(tmp_path, env, init=False, ingest=False)
    proc = run([RAGIT_MCP, "--cwd", str(root)], cwd=root, env=env, check=False)
    assert proc.returncode == 0
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr


def test_a_user_cache_inside_the_repository_is_refused_before_anything_is_written(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """Implementation choice (contract §11): reader copies cannot live inside the repository."""
    root = make_repo(tmp_path, env, init=False, ingest=False)
    inside = {**env, "XDG_CACHE_HOME": str(root / ".cache")}
    before = tree_state(root)
    proc = run([RAGIT_MCP, "--cwd", str(root)], cwd=root, env=inside, check=False)
    assert proc.returncode == 3
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "XDG_CACHE_HOME" in lines[0]
    assert_unchanged(before, tree_state(root))
