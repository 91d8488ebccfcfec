"""The history and trust commands: `ragit log` (:mod:`~ragit.ops.history.log`, reading
manifests through :mod:`~ragit.ops.history.records`), `ragit drift` and `ragit narrative`."""
