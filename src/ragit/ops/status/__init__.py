"""`ragit status`: the report (:mod:`~ragit.ops.status.report`) and the worktree changes it
shows (:mod:`~ragit.ops.status.worktree`)."""
