"""Ingest: surface discovery, admission, doc types, chunking; planning and applying ingests.

The text pipeline modules (:mod:`~ragit.ingest.surface`,
:mod:`~ragit.ingest.doctype`, :mod:`~ragit.ingest.chunking`) are pure functions
and import nothing heavy, so importing this package stays cheap.
"""
