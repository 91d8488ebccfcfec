"""`python -m ragit.mcp` is the same program as `ragit-mcp`."""

from ragit.mcp.server import main

if __name__ == "__main__":
    main()
