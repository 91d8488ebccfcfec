"""JSON with bounded nesting: the one parser for everything RAGit reads.

Python's ``json`` parser recurses once per nesting level and raises ``RecursionError``
past the interpreter's limit (about 1,000 levels), an exception no caller expects from
a parser; a value that parses but is nested hundreds of levels deep breaks the first
recursive walk over it instead. :func:`loads` turns both into :class:`JsonTooDeep`, a
``json.JSONDecodeError`` (and so a ``ValueError``), so every place that already maps
invalid JSON to a typed error (``INPUT_INVALID``, ``SNAPSHOT_MANIFEST_INVALID``, a
JSON-RPC error, a corrupt-ledger warning) maps a too-deep document the same way.

Requests from outside (``--input`` payloads, MCP frames) are bounded at
:data:`REQUEST_MAX_DEPTH` levels (docs/contract.md, "Input nesting"); files RAGit
writes itself are bounded only by what the parser survives.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

REQUEST_MAX_DEPTH = 64
"""Deepest nesting accepted in a request; RAGit's own payloads stay under 10 levels."""


class JsonTooDeep(json.JSONDecodeError):
    """A JSON document nested deeper than the reader accepts."""

    def __init__(self, limit: int | None) -> None:
        bound = f"{limit} levels" if limit is not None else "what the parser can read"
        super().__init__(f"JSON nested deeper than {bound}", "", 0)
        self.limit = limit


def depth(value: Any) -> int:
    """Nesting depth of a parsed value (a scalar is 0, ``[]`` is 1), without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        level += 1
        deepest = max(deepest, level)
        stack.extend((child, level) for child in children if isinstance(child, (dict, list)))
    return deepest


def loads(
    text: str | bytes | bytearray,
    *,
    max_depth: int | None = None,
    parse_constant: Callable[[str], Any] | None = None,
) -> Any:
    """Parse ``text`` like ``json.loads``, refusing documents nested too deeply.

    Raises:
        JsonTooDeep: nested deeper than ``max_depth`` (or than the parser can recurse).
        json.JSONDecodeError: not JSON.
        ValueError: ``parse_constant`` refused a constant.
    """
    try:
        if parse_constant is None:
            value = json.loads(text)
        else:
            value = json.loads(text, parse_constant=parse_constant)
    except RecursionError:
        raise JsonTooDeep(max_depth) from None
    if max_depth is not None and depth(value) > max_depth:
        raise JsonTooDeep(max_depth)
    return value


def jsonl_objects(directory: Path) -> Iterator[dict[str, Any] | None]:
    """The lines of the ``*.jsonl`` ledgers in ``directory``, by file name then line: each a
    JSON object, or None for a line that is not one (a torn or hand-edited line).

    Blank lines and unreadable files are skipped; a missing directory yields nothing.
    """
    try:
        files = sorted(p for p in directory.glob("*.jsonl") if p.is_file())
    except OSError:
        return
    for path in files:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            if not line.strip():
                continue
            try:
                value = loads(line)
            except ValueError:
                value = None
            yield value if isinstance(value, dict) else None
