"""`ragit init`'s discovery: scan the repository, assess its knowledge, plan and write the
stage-1 foundation (docs/authority.md)."""
