"""Document authority: the contracts of the eight document types and the `doc` commands.

:mod:`~ragit.ops.doc_authority.contracts` (pure text checks and insertions),
:mod:`~ragit.ops.doc_authority.tree` (the working tree, .gitignore honoured),
:mod:`~ragit.ops.doc_authority.engine` (validate, refresh, create, reconcile and the
index ``.ragit/docs/index.json``).
"""
