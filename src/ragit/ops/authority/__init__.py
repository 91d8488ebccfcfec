"""Document authority: the contracts of the eight document types and the `doc` commands.

:mod:`~ragit.ops.authority.contracts` (pure text checks and insertions),
:mod:`~ragit.ops.authority.tree` (the working tree, .gitignore honoured),
:mod:`~ragit.ops.authority.engine` (validate, refresh, create, reconcile and the
index ``.ragit/docs/index.json``), and :mod:`~ragit.ops.authority.discover` (`init`'s
discovery).
"""
