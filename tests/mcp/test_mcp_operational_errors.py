"""Operational errors pass through with their own codes, like the CLI's (contract §3, §11).

Each case breaks a real repository the way a user could (no index, a new commit, a
truncated manifest, a deleted store, a bad or ambiguous ref), calls the tool through a
real server (the repository must stay byte- and mtime-identical across the call) and
compares the error with the one `ragit query --format json` reports for the same request.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _mcp_helpers import RAGIT as RAGIT_CLI
from _mcp_helpers import Call, McpServer, assert_unchanged, git, make_repo, run, tree_state

from ragit.mcp.service import ToolService

StartServer = Callable[..., McpServer]
AMBIGUOUS = ["0b899c401db8c3cafd4d8ee5ec20631ac263287e", "0b891479e53a4f29a4de1d1e24741d7034f07bf4"]


def cli_error(root: Path, env: dict[str, str], *argv: str) -> dict[str, Any]:
    """The error object of a failing `ragit ... --format json`."""
    import json

    proc = run([RAGIT_CLI, *argv, "--format", "json"], cwd=root, env=env, check=False)
    assert proc.returncode != 0, proc.stdout
    return dict(json.loads(proc.stdout)["error"])


def assert_same_error(call: Call, cli: dict[str, Any], code: str) -> None:
    assert call.is_error and call.envelope["data"] is None
    error = call.envelope["error"]
    assert error["code"] == code
    for key in ("code", "category", "retryable", "details", "recovery"):
        assert error[key] == cli[key], key


def test_unindexed_head_is_snapshot_not_indexed(
    tmp_path: Path, env: dict[str, str], start_server: StartServer
) -> None:
    """Contract §3: no manifest for HEAD → SNAPSHOT_NOT_INDEXED with `ragit ingest --all`."""
    root = make_repo(tmp_path, env, ingest=False)
    server = start_server(root, env)
    for tool, args in (
        ("ragit_query", {"question": "double entry"}),
        ("ragit_context_pack", {"goal": "double entry"}),
    ):
        call = server.call(tool, args)
        cli = cli_error(root, env, "query", "double entry")
        assert_same_error(call, cli, "SNAPSHOT_NOT_INDEXED")
        assert call.envelope["error"]["recovery"]["command"] == "ragit ingest --all"
    assert not (root / ".ragit" / "store").exists()


def test_uninitialized_repository_recovers_with_init(
    tmp_path: Path, env: dict[str, str], start_server: StartServer
) -> None:
    """Implementation choice: before `ragit init`, the recovery is `ragit init --yes`, not an
    ingest (which would fail with NOT_INITIALIZED), in the error and in ragit_status."""
    root = make_repo(tmp_path, env, init=False, ingest=False)
    server = start_server(root, env)
    for tool, args in (
        ("ragit_query", {"question": "double entry"}),
        ("ragit_context_pack", {"goal": "double entry"}),
    ):
        call = server.call(tool, args)
        cli = cli_error(root, env, "query", "double entry")
        assert_same_error(call, cli, "SNAPSHOT_NOT_INDEXED")
        assert call.envelope["error"]["recovery"]["command"] == "ragit init --yes"
    status = server.call("ragit_status", {})
    assert status.envelope["data"]["initialized"] is False
    assert status.envelope["data"]["snapshot"]["recovery"] == "ragit init --yes"
    assert not (root / ".ragit").exists()


def test_a_new_commit_after_ingest_names_the_indexed_ancestor(
    tmp_path: Path, env: dict[str, str], start_server: StartServer
) -> None:
    """Contract §3: HEAD moved past the index → recovery `ragit ingest --since <ancestor>`."""
    root = make_repo(tmp_path, env)
    indexed = git(root, env, "rev-parse", "HEAD")
    server = start_server(root, env)
    assert server.call("ragit_query", {"question": "double entry"}).envelope["ok"] is True
    (root / "docs" / "new-note.md").write_text("# New note\n\nLedger entries.\n", encoding="utf-8")
    git(root, env, "add", "--all")
    git(root, env, "commit", "-q", "-m", "Add a note")
    call = server.call("ragit_query", {"question": "double entry"})
    assert_same_error(call, cli_error(root, env, "query", "double entry"), "SNAPSHOT_NOT_INDEXED")
    assert call.envelope["error"]["details"]["nearestIndexedAncestor"] == indexed
    assert call.envelope["error"]["recovery"]["command"] == f"ragit ingest --since {indexed}"
    # Indexing the new commit outside MCP makes the same server answer again.
    run([RAGIT_CLI, "ingest", "--since", indexed], cwd=root, env=env)
    again = server.call("ragit_query", {"question": "ledger entries"})
    assert again.envelope["ok"] is True
    assert again.data["snapshotSha"] == git(root, env, "rev-parse", "HEAD")


def test_unborn_head_is_not_indexed_with_git_status_recovery(
    tmp_path: Path, env: dict[str, str], start_server: StartServer
) -> None:
    """Contract §3: an unborn HEAD → SNAPSHOT_NOT_INDEXED, resolvedSha null, `git status`."""
    root = make_repo(tmp_path, env, "empty", init=False, ingest=False)
    server = start_server(root, env)
    call = server.call("ragit_query", {"question": "anything"})
    assert_same_error(call, cli_error(root, env, "query", "anything"), "SNAPSHOT_NOT_INDEXED")
    assert call.envelope["error"]["details"] == {"resolvedSha": None}
    assert server.call("ragit_status", {}).data["head"] is None


def test_truncated_manifest_is_snapshot_manifest_invalid(
    tmp_path: Path, env: dict[str, str], start_server: StartServer
) -> None:
    """Contract §3: a cut manifest → SNAPSHOT_MANIFEST_INVALID, `ragit doctor`; nothing fixed."""
    root = make_repo(tmp_path, env)
    head = git(root, env, "rev-parse", "HEAD")
    server = start_server(root, env)
    assert server.call("ragit_query", {"question": "double entry"}).envelope["ok"] is True
    manifest = root / ".ragit" / "manifest" / f"{head}.json"
    raw = manifest.read_bytes()
    manifest.write_bytes(raw[: len(raw) // 2])
    for tool, args in (
        ("ragit_query", {"question": "double entry"}),
        ("ragit_context_pack", {"goal": "double entry", "view": "full"}),
    ):
        call = server.call(tool, args)
        assert_same_error(
            call, cli_error(root, env, "query", "double entry"), "SNAPSHOT_MANIFEST_INVALID"
        )
        assert call.envelope["error"]["recovery"]["command"] == "ragit doctor --format json"
    status = server.call("ragit_status", {})
    assert status.data["snapshot"]["status"] == "invalid"
    assert manifest.read_bytes() == raw[: len(raw) // 2]


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_deleted_store_is_snapshot_store_unavailable(
    tmp_path: Path, env: dict[str, str], start_server: StartServer, warm: bool
) -> None:
    """Contract §3: no store → SNAPSHOT_STORE_UNAVAILABLE, even with a reader copy open."""
    root = make_repo(tmp_path, env)
    server = start_server(root, env)
    if warm:
        assert server.call("ragit_query", {"question": "double entry"}).envelope["ok"] is True
    shutil.rmtree(root / ".ragit" / "store")
    call = server.call("ragit_query", {"question": "double entry"})
    assert_same_error(
        call, cli_error(root, env, "query", "double entry"), "SNAPSHOT_STORE_UNAVAILABLE"
    )
    assert call.envelope["error"]["recovery"]["command"] == "ragit doctor --format json"
    assert server.call("ragit_status", {}).data["searchReady"] is False
    assert not (root / ".ragit" / "store").exists()


def test_ambiguous_prefix_is_snapshot_ref_ambiguous(
    tmp_path: Path, env: dict[str, str], start_server: StartServer
) -> None:
    """Contract §3/§5: a prefix matching two commits → SNAPSHOT_REF_AMBIGUOUS with candidates."""
    root = make_repo(tmp_path, env, "ambiguous-prefix", ingest=False)
    server = start_server(root, env)
    for tool, args in (
        ("ragit_query", {"question": "double entry", "at": "0b89"}),
        ("ragit_context_pack", {"goal": "double entry", "at": "0b89"}),
    ):
        call = server.call(tool, args)
        cli = cli_error(root, env, "query", "double entry", "--at", "0b89")
        assert_same_error(call, cli, "SNAPSHOT_REF_AMBIGUOUS")
        assert sorted(call.envelope["error"]["details"]["candidates"]) == sorted(AMBIGUOUS)


@pytest.mark.parametrize("ref", ["main", "HEAD~1", "HEAD^", "0b8", "zzzz", "refs/heads/main"])
def test_refs_other_than_head_sha_or_prefix_are_snapshot_ref_invalid(
    shared_server: McpServer, indexed_repo: tuple[Path, dict[str, str]], ref: str
) -> None:
    """Contract §5: branch names, rev expressions and short prefixes → SNAPSHOT_REF_INVALID."""
    root, env = indexed_repo
    call = shared_server.call("ragit_query", {"question": "double entry", "at": ref})
    cli = cli_error(root, env, "query", "double entry", "--at", ref)
    assert_same_error(call, cli, "SNAPSHOT_REF_INVALID")


def test_unexpected_failures_are_mcp_internal_error_without_cause(
    indexed_repo: tuple[Path, dict[str, str]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Contract §3: the unexpected → MCP_INTERNAL_ERROR, details {}, traceback on stderr only."""
    root, env = indexed_repo
    for key in ("HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(key, env[key])
    before = tree_state(root)
    service = ToolService(root)
    # A reader engine in an impossible state: the failure is a genuine AttributeError raised
    # inside the core call, carrying text that must not reach the client.
    service._engine = type("Broken", (), {"secret": "sk-proj-LEAKME123456"})()
    result = service.call("ragit_query", {"question": "double entry"})
    assert result.is_error
    error = result.envelope["error"]
    assert error["code"] == "MCP_INTERNAL_ERROR"
    assert error["category"] == "transient"
    assert error["retryable"] is True
    assert error["details"] == {}
    assert error["recovery"] == {"command": "ragit doctor"}
    assert "Broken" not in result.text and "Traceback" not in result.text
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "internal error in ragit_query" in captured.err and "Traceback" in captured.err
    # The broken engine was dropped: the next call works.
    assert service.call("ragit_query", {"question": "double entry"}).envelope["ok"] is True
    service.close()
    assert_unchanged(before, tree_state(root))


def test_a_ragit_file_is_filesystem_unusable_like_the_cli_never_an_internal_error(
    tmp_path: Path, env: dict[str, str], start_server: StartServer
) -> None:
    """Docs/contract.md (FILESYSTEM_UNUSABLE): the machine's refusal reaches the agent typed,
    with the CLI's code, details and recovery, not as MCP_INTERNAL_ERROR."""
    root = make_repo(tmp_path, env)
    shutil.rmtree(root / ".ragit")
    (root / ".ragit").write_text("not a directory\n", encoding="utf-8")
    server = start_server(root, env)
    for tool, args in (
        ("ragit_query", {"question": "double entry"}),
        ("ragit_status", {}),
    ):
        call = server.call(tool, args)
        cli = cli_error(root, env, "query", "double entry")
        assert_same_error(call, cli, "FILESYSTEM_UNUSABLE")
        assert call.envelope["error"]["details"]["reason"] == "not-a-directory"
