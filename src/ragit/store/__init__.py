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

Callers import the module they need (``from ragit.store.meta import read_meta``); this
package re-exports nothing, so a reader never loads :mod:`.writer` or the writing half of
:mod:`.journal` (reading journals is :mod:`.journal_scan`). The read-only MCP server relies on
this; the import-linter contracts in ``pyproject.toml`` and ``tests/mcp/test_mcp_import_graph.py``
check it.
"""
