"""The knowledge store: zvec behind one adapter, one writer, immutable reader copies.

Importing this package does not import zvec (only :mod:`ragit.store._zvec` does, on first
use). Layout and protocol (details in docs/store.md and the module docstrings):

- ``.ragit/store/meta.json`` — RAGit's own metadata (:mod:`.meta`); ``status`` reads only this.
- ``.ragit/store/chunks/`` — the canonical zvec collection, one row per unique chunk id
  (:mod:`._zvec` has the schema), written in place under the writer lock (:mod:`.writer`).
- ``.ragit/runtime/store-write.lock`` — the single-writer lock (:mod:`.lock`).
- ``.ragit/runtime/transactions/<id>.json`` — write journals and recovery (:mod:`.journal`).
- ``<user cache>/stores/<repo id>/<store id>-<generation>/`` — reader copies of published
  generations (:mod:`.copies`); every read goes through one (:mod:`.reader`).
- :mod:`.faults` — test-only fault injection at named phases.
"""

from __future__ import annotations

from ragit.store import faults
from ragit.store.journal import (
    PHASES,
    Journal,
    JournalState,
    RecoveryReport,
    Transaction,
    begin,
    recover,
    scan_journals,
)
from ragit.store.lock import LockInfo, WriterLock, inspect_lock
from ragit.store.meta import StoreMeta, read_meta
from ragit.store.reader import StoreReader
from ragit.store.rows import ChunkRow, StoredChunk
from ragit.store.writer import StoreWriter, publish

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
    "faults",
    "inspect_lock",
    "publish",
    "read_meta",
    "recover",
    "scan_journals",
]
