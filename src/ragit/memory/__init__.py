"""Agent memory: wrap, recall, promote, the working state, session materialize and artifact review.

Two memory surfaces (docs/reference/memory.md), never to be confused:

* ``.ragit/memory/**`` — the control plane: session wraps and the working state
  (``memory wrap`` writes it, ``memory recall`` reads it). Never ingested.
* ``<memory.corpus_dir>/**`` (``docs/memory/**``) — searchable corpus written by
  ``memory promote``; ordinary documents that the user commits and ingests.

``session materialize`` turns a transcript into candidate session artifacts and
``artifact review`` moves artifacts through their lifecycle. The artifact
records themselves, their storage, the memory lock, the event ledger and the
sanitizer live one layer down in :mod:`ragit.artifacts`; the test harness is
its own package, :mod:`ragit.harness`, which may import this one.

Every write is masked and admission-checked before it reaches the disk, written
atomically, and serialized by ``.ragit/runtime/memory.lock``; dry-runs write
nothing at all. No user-supplied text ever reaches a file name.
"""
