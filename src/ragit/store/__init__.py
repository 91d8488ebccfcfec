"""The knowledge store: zvec behind one adapter, one writer, immutable reader copies.

Importing this package does not import zvec (only :mod:`ragit.store._zvec` does, on first
use). Layout and protocol (details in docs/store.md and the module docstrings):

- ``.ragit/store/meta.json`` — RAGit's own metadata (:mod:`.meta`); ``status`` reads only this.
- ``.ragit/store/chunks/`` — the canonical zvec collection, one row per unique chunk id
  (:mod:`._zvec` has the schema), written in place under the writer lock (:mod:`.writer`) and
  published as generations (:mod:`.publishing`); whole-store replacement is :mod:`.replace`,
  segment merging :mod:`.compact`.
- ``.ragit/runtime/store-write.lock`` — the single-writer lock (:mod:`.lock`, built on
  :mod:`ragit._lock`).
- ``.ragit/runtime/transactions/<id>.json`` — write journals and recovery (:mod:`.journal`).
- ``<user cache>/stores/<repo id>/<store id>-<generation>/`` — reader copies of published
  generations (:mod:`.copies`); every read goes through one (:mod:`.reader`).

The names below are re-exported lazily (PEP 562): ``from ragit.store import read_meta``
loads :mod:`.meta` only, so a reader never imports :mod:`.writer` or the writing half of
:mod:`.journal` (reading journals is :mod:`.journal_scan`). The read-only MCP server
relies on this; ``tests/mcp/test_mcp_import_graph.py`` checks it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragit.store.journal import Journal, RecoveryReport, Transaction, begin, recover
    from ragit.store.journal_scan import PHASES, JournalState, scan_journals
    from ragit.store.lock import LockInfo, WriterLock, inspect_lock
    from ragit.store.meta import StoreMeta, read_meta
    from ragit.store.publishing import publish
    from ragit.store.reader import StoreReader
    from ragit.store.rows import ChunkRow, StoredChunk
    from ragit.store.writer import StoreWriter

# Exported name -> the module that defines it.
_EXPORTS = {
    "PHASES": "journal_scan",
    "ChunkRow": "rows",
    "Journal": "journal",
    "JournalState": "journal_scan",
    "LockInfo": "lock",
    "RecoveryReport": "journal",
    "StoreMeta": "meta",
    "StoreReader": "reader",
    "StoreWriter": "writer",
    "StoredChunk": "rows",
    "Transaction": "journal",
    "WriterLock": "lock",
    "begin": "journal",
    "inspect_lock": "lock",
    "publish": "publishing",
    "read_meta": "meta",
    "recover": "journal",
    "scan_journals": "journal_scan",
}

__all__ = [
    "PHASES",
    "ChunkRow",
    "Journal",
    "JournalState",
    "LockInfo",
    "RecoveryReport",
    "StoreMeta",
    "StoreReader",
    "StoreWriter",
    "StoredChunk",
    "Transaction",
    "WriterLock",
    "begin",
    "inspect_lock",
    "publish",
    "read_meta",
    "recover",
    "scan_journals",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ragit.store' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"ragit.store.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
