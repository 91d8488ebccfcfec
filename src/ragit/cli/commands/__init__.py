"""One module per command group; each handler parses, calls a core function, returns an Outcome."""
