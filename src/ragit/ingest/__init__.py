"""Ingest: surface discovery, admission, doc types, chunking; planning and applying ingests.

The text pipeline modules (:mod:`~ragit.snapshot.surface`,
:mod:`~ragit.ingest.doctype`, :mod:`~ragit.ingest.chunking`) are pure functions
and import nothing heavy, so importing this package stays cheap. An ingest runs
through :mod:`~ragit.ingest.request` (what is asked), :mod:`~ragit.ingest.plan`
(the new snapshot, reading only; rows from :mod:`~ragit.ingest.rows`, which the
store rebuild reuses) and :mod:`~ragit.ingest.apply` (the run, under the writer lock;
the manifest and vectors it publishes from :mod:`~ragit.ingest.assemble`, the shared
store's path in :mod:`~ragit.ingest.shared`).
"""
