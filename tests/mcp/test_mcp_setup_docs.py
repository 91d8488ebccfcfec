"""The client configurations docs/mcp.md gives start a server that serves the repository."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _mcp_helpers import McpServer

DOC = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"


def _section(title: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    return text.split(title, 1)[1].split("\n**", 1)[0]


def _servers(section: str) -> list[dict[str, Any]]:
    """Each ``mcpServers.ragit`` entry of the JSON blocks of a section."""
    found = []
    for block in re.findall(r"```json\n(.*?)```", section, re.S):
        data = json.loads(block)
        if "mcpServers" in data:
            found.append(data["mcpServers"]["ragit"])
    return found


def test_the_project_file_serves_the_repository_it_starts_in(
    indexed_repo: tuple[Path, dict[str, str]], start_server: Callable[..., McpServer]
) -> None:
    """Implementation choice (docs/mcp.md): `.mcp.json` names no path; --cwd . is the same."""
    root, env = indexed_repo
    (entry,) = _servers(_section("**Project scope (shared with the team).**"))
    assert entry == {"command": "ragit-mcp", "args": []}
    for args in (entry["args"], ["--cwd", "."]):
        server = start_server(root, env, args=args, cwd=root)
        assert {t.name for t in server.list_tools().tools} == {
            "ragit_status",
            "ragit_query",
            "ragit_context_pack",
        }
        assert server.call("ragit_status", {}).envelope["cwd"] == str(root)


def test_the_user_scope_file_serves_its_repository_from_anywhere(
    indexed_repo: tuple[Path, dict[str, str]],
    start_server: Callable[..., McpServer],
    tmp_path: Path,
) -> None:
    """Implementation choice (docs/mcp.md): an absolute --cwd, started outside the repo."""
    root, env = indexed_repo
    (entry,) = _servers(_section("**User scope / one repository.**"))
    args = [str(root) if a == "/abs/path/to/repository" else a for a in entry["args"]]
    server = start_server(root, env, args=args, cwd=tmp_path)
    assert server.call("ragit_status", {}).envelope["cwd"] == str(root)


def test_claude_code_forms_name_the_scope_they_write() -> None:
    """Implementation choice (docs/mcp.md): user scope needs --scope user; project servers
    wait for approval."""
    text = DOC.read_text(encoding="utf-8")
    user = re.findall(r"`(claude mcp add [^`]*--cwd /abs/path/to/repository)`", text)
    assert any("--scope user" in form for form in user), user
    assert "Scope: User config (available in all your projects)" in text
    assert "Scope: Local config (private to you in this project)" in text
    assert "⏸ Pending approval (run `claude` to approve)" in text
    assert '{"enabledMcpjsonServers": ["ragit"]}' in text
