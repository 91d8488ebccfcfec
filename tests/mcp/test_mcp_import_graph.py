"""Read-only by construction: nothing ragit-mcp imports can write repository state (docs/mcp.md).

A fresh interpreter imports ``ragit.mcp.server``, builds the SDK server and runs every tool
through the same :class:`~ragit.mcp.service.ToolService` the server uses (successes and
failures, every scope and view, so lazily imported modules are loaded too), then reports
``sys.modules``. No writer module may be among them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from _mcp_helpers import assert_unchanged, tree_state

# Modules whose purpose is to write repository state.
FORBIDDEN = {
    "ragit.ingest.apply",
    "ragit.ingest.shared",
    "ragit.store.writer",
    "ragit.store.journal",
    "ragit.ops.config.edit",
    "ragit.artifacts.binding",
    "ragit.artifacts.events",
    "ragit.artifacts.lock",
    "ragit.artifacts.sanitize",
    "ragit.artifacts.storage",
    "ragit.artifacts.writes",
    "ragit.store.backend_write",
    "ragit.store.postgres.write",
    "ragit.store.postgres.purge",
    "ragit.store.postgres.builder",
    "ragit.store.postgres.privileges",
    "ragit.store.postgres.graph",
    "ragit.store.postgres.migrate",
}
FORBIDDEN_PACKAGES = ("ragit.cli", "ragit.hooks", "ragit.memory", "ragit.harness")

SCRIPT = r"""
import json, sys
from pathlib import Path
import ragit.mcp.server as server
static = sorted(m for m in sys.modules if m.startswith("ragit"))
from ragit.mcp.service import ToolService
service = ToolService(Path(sys.argv[1]))
server.build_server(service)
calls = [
    ("ragit_status", {}),
    ("ragit_query", {"question": "double entry"}),
    ("ragit_query", {"question": "double entry", "view": "full", "explain": True, "topK": 50}),
    ("ragit_query", {"question": "ledger", "view": "minimal", "scope": "all"}),
    ("ragit_query", {"question": "ledger", "scope": "session"}),
    ("ragit_query", {"question": "ledger", "scope": "harness"}),
    ("ragit_query", {"question": "ledger", "scope": "evidence"}),
    ("ragit_query", {"question": "ledger", "at": "HEAD"}),
    ("ragit_query", {"question": "ledger", "at": "0000"}),
    ("ragit_query", {"question": "ledger", "topK": 0}),
    ("ragit_context_pack", {"goal": "double entry"}),
    ("ragit_context_pack", {"goal": "double entry", "scope": "all", "view": "full"}),
    ("ragit_nope", {}),
]
codes = []
for name, args in calls:
    result = service.call(name, args)
    codes.append(result.envelope.get("error", {}).get("code") if result.is_error else "OK")
service.close()
after = sorted(m for m in sys.modules if m.startswith("ragit"))
drivers = sorted(m for m in sys.modules if m.split(".")[0] in ("psycopg", "pgvector"))
print(json.dumps({"static": static, "after": after, "codes": codes, "drivers": drivers}))
"""


def _forbidden(modules: list[str]) -> list[str]:
    return [
        m
        for m in modules
        if m in FORBIDDEN or any(m == p or m.startswith(p + ".") for p in FORBIDDEN_PACKAGES)
    ]


def test_the_server_and_every_tool_path_import_no_writer_module(
    indexed_repo: tuple[Path, dict[str, str]],
) -> None:
    """docs/mcp.md: `src/mcp` may not import mutating modules, directly or lazily."""
    root, env = indexed_repo
    before = tree_state(root)
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(root)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert_unchanged(before, tree_state(root))
    report = json.loads(proc.stdout)
    codes = report["codes"]
    assert codes[:8] == ["OK"] * 8, codes
    assert codes[8:] == [
        "SNAPSHOT_REF_INVALID",
        "MCP_INVALID_INPUT",
        "OK",
        "OK",
        "MCP_INVALID_INPUT",
    ], codes
    modules = report["after"]
    # The read paths really ran (so the check below could have failed).
    for needed in (
        "ragit.store.reader",
        "ragit.store.backend",
        "ragit.store.journal_scan",
        "ragit.ops.status.report",
        "ragit.retrieve.query",
        "ragit.config",
        "ragit.artifacts.records",
        "ragit.artifacts.catalog",
    ):
        assert needed in modules
    assert _forbidden(report["static"]) == []
    assert _forbidden(modules) == []
    # The default backend (zvec) never loads the PostgreSQL driver (nor its cost at start).
    assert report["drivers"] == []
    assert not any(m.startswith("ragit.store.postgres") for m in modules)


def test_the_forbidden_list_names_real_writer_modules() -> None:
    """Implementation choice: a renamed writer module must not silently pass the check."""
    import importlib.util

    for name in sorted(FORBIDDEN) + list(FORBIDDEN_PACKAGES):
        assert importlib.util.find_spec(name) is not None, name
