"""The `docsAuthority` block of `status` and `init`: what ``.ragit/docs/index.json`` says.

A reader only (one JSON file): `status` and the MCP server use it, so it imports nothing
that parses or writes documents.
"""

from __future__ import annotations

from typing import Any

from ragit import _json
from ragit.workspace import Workspace

INDEX_PATH = ".ragit/docs/index.json"


def read_index_summary(ws: Workspace) -> dict[str, Any]:
    """``docsAuthority`` for `status` and `init`: what the index says. Reads one file."""
    path = ws.root / INDEX_PATH
    summary: dict[str, Any] = {
        "indexPath": INDEX_PATH,
        "status": "missing",
        "tracked": 0,
        "violations": 0,
        "lastReconciledAt": None,
    }
    try:
        data = _json.loads(path.read_bytes())
    except FileNotFoundError:
        return summary
    except (OSError, ValueError):
        summary["status"] = "invalid"
        return summary
    if not isinstance(data, dict):
        summary["status"] = "invalid"
        return summary
    summary.update(
        status="present",
        tracked=data.get("tracked", 0),
        violations=data.get("violations", 0),
        lastReconciledAt=data.get("lastReconciledAt"),
    )
    return summary
