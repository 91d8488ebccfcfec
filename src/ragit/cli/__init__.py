"""The `ragit` command line: click commands over the core functions."""
