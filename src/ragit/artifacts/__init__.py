"""Artifacts and the records every memory-like command shares (docs/reference/memory.md).

Below ``ingest``, ``retrieve``, ``memory`` and ``harness``, importing none of
them (nor ``ops``, ``hooks``, ``cli`` or ``mcp``):

* :mod:`.ids` — ids, instants and slugs (no user text ever reaches a file name);
* :mod:`.records` — reading JSON records (the read-only half);
* :mod:`.storage` — writing them: atomic whole-file writes, no-clobber creation,
  ledger appends; :mod:`.lock` — the memory writer lock ``.ragit/runtime/memory.lock``;
* :mod:`.catalog` — the artifact record model, where each artifact lives,
  loading and listing them, what of one is searchable (reads only);
* :mod:`.writes` — saving an artifact record (a writer);
* :mod:`.binding` — what ``ingest --scope all`` binds into a snapshot, and
  marking it bound (a writer);
* :mod:`.events` — the operational event ledger ``.ragit/log/events`` and the
  data of ``ragit timeline``;
* :mod:`.sanitize` — masking and admission of every write, and the security ledgers;
* :mod:`.common` — canonical hashing, HEAD resolution, the masking requirement.

Artifacts (``.ragit/artifacts/session|harness``) are reviewable knowledge
candidates extracted from sessions and harness work; reviewed ones are searched
by the non-durable scopes (:mod:`ragit.retrieve.artifacts`). Readers and writers
live in separate modules, so the read-only MCP server never loads a writer.
"""
