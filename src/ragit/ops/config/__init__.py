"""`ragit config set|unset` (:mod:`~ragit.ops.config.edit`) and `ragit config list`
(:mod:`~ragit.ops.config.view`)."""
