"""The machine contract: envelope, error catalog, exit codes, input validation, command registry."""
