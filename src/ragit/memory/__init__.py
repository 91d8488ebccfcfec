"""Agent memory: working memory, promotion, artifacts, harnesses and the event ledger.

Two memory surfaces (seeds/README.md, UR §14.1), never to be confused:

* ``.ragit/memory/**`` — the control plane: session wraps and the working state
  (``memory wrap`` writes it, ``memory recall`` reads it). Never ingested.
* ``<memory.corpus_dir>/**`` (``docs/memory/**``) — searchable corpus written by
  ``memory promote``; ordinary documents that the user commits and ingests.

Artifacts (``.ragit/artifacts/session|harness``) are reviewable knowledge
candidates extracted from sessions and harness work; reviewed ones are searched
by the non-durable scopes (``ragit.retrieve.artifacts``). Every operation that
changes state appends to the event ledger (``.ragit/log/events``), which
``ragit timeline`` reads.

Every write is masked and admission-checked before it reaches the disk, written
atomically, and serialized by ``.ragit/runtime/memory.lock``; dry-runs write
nothing at all. No user-supplied text ever reaches a file name.
"""
