"""``ragit-mcp``: the read-only MCP stdio server (contract §11, docs/mcp.md).

:mod:`.server` is the entry point and the SDK wiring, :mod:`.service` runs tool
calls and builds envelopes, :mod:`.arguments` validates tool input,
:mod:`.tools` holds the tool definitions, :mod:`.transport` is the stdio
transport (one answer per request, a clean exit) and :mod:`.write_guard` refuses
writes inside the repository. Nothing here imports a module that writes repository
state (``tests/mcp/test_mcp_import_graph.py`` checks it).
"""
