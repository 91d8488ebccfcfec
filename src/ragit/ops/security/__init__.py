"""`ragit security audit` and `ragit security purge`, with what both read
(:mod:`~ragit.ops.security.scan`)."""
