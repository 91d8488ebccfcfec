"""``ragit-mcp``: the read-only MCP stdio server for one repository (contract §11).

Start-up, in order, all before the transport exists (so a failure is one line on
stderr and a non-zero exit, never a JSON-RPC frame): check the interpreter and
platform (exit 3); parse the arguments (``--cwd <path>`` at most once, ``--help``,
``--version``; anything else exits 2); resolve the repository once and normalize
it to the git root (exit 2 for a missing directory, 3 outside a repository);
refuse a user cache inside the repository (exit 3: reader copies of the store
live there); probe zvec (the rest of the early runtime guard, exit 3); install
the write guard (:mod:`ragit.mcp.write_guard`). Then the official SDK's
low-level server serves ``tools/list`` and ``tools/call`` over our stdio
transport (:mod:`ragit.mcp.transport`: every request gets one answer, even a
malformed one, and all are answered before the exit at end of input) until stdin
closes; SIGINT exits at once with 130. Nothing but JSON-RPC reaches stdout; logs
go to stderr.

The SDK validates ``tools/call`` params before any handler runs, so a call
whose ``arguments`` is not an object (or whose ``name`` is not a string) would
become a protocol error. A middleware catches exactly those requests, hands the
SDK a well-formed stand-in (so initialization and every other check still
apply) and answers them with an ``MCP_INVALID_INPUT`` tool result.
"""

from __future__ import annotations

import contextvars
import dataclasses
import logging
import signal
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragit import __version__, _process

if TYPE_CHECKING:
    from ragit.mcp.service import ToolResult, ToolService
    from ragit.mcp.transport import StdioTransport

PROG = "ragit-mcp"
EXIT_USAGE = 2
EXIT_NOT_READY = 3
EXIT_INTERRUPTED = 130

USAGE = f"usage: {PROG} [--cwd <path>] [--help] [--version]"
HELP = f"""{USAGE}

Serve one RAGit repository to an MCP client over stdio, read-only.

Tools: ragit_status, ragit_query, ragit_context_pack. The server never writes to
the repository: no ingest, repair, memory, hook or config change. Run the ragit
CLI for those.

options:
  --cwd <path>   the repository (any directory inside it; normalized to the git
                 root once at start). Default: the current directory.
  --help, -h     show this help and exit
  --version      print the version and exit

Client configuration (absolute paths; see docs/mcp.md):
  {{"mcpServers": {{"ragit": {{"command": "/abs/path/to/{PROG}",
                            "args": ["--cwd", "/abs/path/to/repository"]}}}}}}
"""


class UsageError(Exception):
    """A bad command line; the message is the one line to print."""


def parse_args(argv: Sequence[str]) -> str | None:
    """Return the ``--cwd`` value (None when absent); ``--help``/``--version`` exit 0.

    Raises:
        UsageError: an unknown or repeated argument, or an empty ``--cwd``.
    """
    cwd: str | None = None
    seen = False
    args = list(argv)
    i = 0
    while i < len(args):
        word = args[i]
        if word in ("--help", "-h"):
            sys.stdout.write(HELP)
            sys.stdout.flush()
            raise SystemExit(0)
        if word == "--version":
            sys.stdout.write(f"{PROG} {__version__}\n")
            sys.stdout.flush()
            raise SystemExit(0)
        if word == "--cwd" or word.startswith("--cwd="):
            if seen:
                raise UsageError("--cwd may be given only once")
            seen = True
            if word == "--cwd":
                if i + 1 >= len(args):
                    raise UsageError("--cwd needs a path")
                i += 1
                value = args[i]
            else:
                value = word.split("=", 1)[1]
            if not value.strip():
                raise UsageError("--cwd needs a non-empty path")
            cwd = value
        else:
            raise UsageError(f"unknown argument: {word!r}")
        i += 1
    return cwd


def _fail(message: str, code: int) -> None:
    sys.stderr.write(f"[{PROG}] error: {message}\n")
    sys.stderr.flush()
    raise SystemExit(code)


def resolve_root(raw_cwd: str | None) -> Path:
    """The git root of ``--cwd`` (or of the current directory); exits on failure."""
    from ragit.contract.errors import InputInvalid
    from ragit.contract.inputs import existing_directory

    try:
        start = existing_directory(raw_cwd) if raw_cwd is not None else Path.cwd().resolve()
    except InputInvalid as exc:
        _fail(f"--cwd {raw_cwd!r}: {exc.details.get('reason')}", EXIT_USAGE)
        raise  # unreachable: _fail exits
    except OSError as exc:
        _fail(f"the current directory is not usable: {exc.strerror}", EXIT_USAGE)
        raise
    from ragit.snapshot._git import discover_root

    root = discover_root(start)
    if root is None:
        _fail(
            f"not inside a git repository: {start} (start {PROG} with --cwd <repository>)",
            EXIT_NOT_READY,
        )
        raise AssertionError("unreachable")
    return root


def refuse_cache_inside(root: Path) -> None:
    """Exit when the user cache (where reader copies of the store live) is inside ``root``.

    zvec rewrites a collection's index file when it opens it, even read-only (docs/store.md,
    "zvec 0.8.0 crash facts"), so reading a store copy kept inside the repository would change
    repository files; no read-only service is possible with that layout.
    """
    from ragit.workspace import user_cache_dir

    cache = user_cache_dir().resolve()
    if cache == root or root in cache.parents:
        _fail(
            f"the user cache directory {cache} is inside the repository; point XDG_CACHE_HOME "
            "outside it (ragit-mcp never writes inside the repository)",
            EXIT_NOT_READY,
        )


# ---------------------------------------------------------------- transport

# Set by the middleware for the one tools/call it answers itself: (tool, field, reason).
_MALFORMED: contextvars.ContextVar[tuple[str | None, str, str] | None] = contextvars.ContextVar(
    "ragit_mcp_malformed_call", default=None
)
_STAND_IN = {"name": "ragit_status", "arguments": {}}


def malformed_call(params: object) -> tuple[str | None, str, str] | None:
    """What the SDK would refuse in ``tools/call`` params, as (tool, field, reason)."""
    from ragit.mcp.arguments import clean_name

    if not isinstance(params, Mapping):
        return (None, "params", "tools/call params must be a JSON object")
    name = params.get("name")
    if not isinstance(name, str):
        return (None, "name", "the tool name must be a string")
    arguments = params.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        return (clean_name(name), "arguments", "must be a JSON object")
    return None


def _wire(result: ToolResult) -> dict[str, Any]:
    return {
        "content": [{"type": "text", "text": result.text}],
        "structuredContent": result.envelope,
        "isError": result.is_error,
    }


def build_server(service: ToolService) -> Any:
    """The SDK low-level server exposing ``service`` (name ``ragit``, tools only)."""
    import mcp_types as types
    from mcp.server.lowlevel import Server

    from ragit.mcp.transport import ArgumentProblem

    tools = [types.Tool.model_validate(d, by_name=False) for d in service.definitions()]

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: Any) -> dict[str, Any]:
        problem = _MALFORMED.get()
        if problem is not None:
            return _wire(service.invalid(*problem))
        return _wire(service.call(params.name, params.arguments))

    async def reject_malformed(ctx: Any, call_next: Any) -> Any:
        if ctx.method != "tools/call":
            return await call_next(ctx)
        flagged = ctx.request  # set by the transport for a call it repaired to pass on
        if isinstance(flagged, ArgumentProblem):
            problem: tuple[str | None, str, str] | None = (
                flagged.tool,
                flagged.field,
                flagged.reason,
            )
        else:
            problem = malformed_call(ctx.params)
        if problem is None:
            return await call_next(ctx)
        token = _MALFORMED.set(problem)
        try:
            return await call_next(dataclasses.replace(ctx, params=dict(_STAND_IN)))
        finally:
            _MALFORMED.reset(token)

    server: Any = Server(
        "ragit",
        version=__version__,
        title="RAGit (read-only)",
        on_list_tools=list_tools,
    )
    # Registered directly: the handler answers with the wire dict of the result.
    server.add_request_handler("tools/call", types.CallToolRequestParams, call_tool)
    # Only our middleware: the default OpenTelemetry span is a no-op without an exporter.
    server.middleware = [reject_malformed]
    return server


async def serve_stdio(service: ToolService, transport: StdioTransport) -> None:
    """Serve ``service`` over this process's stdin/stdout until stdin closes.

    Every request received before end of input is answered first (see
    :mod:`ragit.mcp.transport`).
    """
    server = build_server(service)

    async def session(read_stream: Any, write_stream: Any) -> None:
        await server.run(read_stream, write_stream, server.create_initialization_options())

    await transport.serve(session)


def main(argv: Sequence[str] | None = None) -> None:
    """Console entry point of ``ragit-mcp`` (and ``python -m ragit.mcp``)."""
    from ragit._guard import RuntimeUnsupported, check_interpreter, check_zvec, exit_unsupported

    try:
        check_interpreter()
    except RuntimeUnsupported as exc:
        exit_unsupported(exc)
    try:
        raw_cwd = parse_args(sys.argv[1:] if argv is None else argv)
    except UsageError as exc:
        sys.stderr.write(f"{USAGE}\n[{PROG}] error: {exc}\n")
        raise SystemExit(EXIT_USAGE) from None
    root = resolve_root(raw_cwd)
    # Before the zvec probe, which records its verdict in the user cache.
    refuse_cache_inside(root)
    try:
        check_zvec()
    except RuntimeUnsupported as exc:
        exit_unsupported(exc)

    from ragit.mcp import write_guard
    from ragit.mcp.service import ToolService
    from ragit.mcp.transport import StdioTransport

    # A long-lived process: parsed manifests come and go, so the collector keeps seeing
    # everything (the CLI, which exits after one command, freezes them instead).
    _process.on_manifest_loaded(None)
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.WARNING,
        format=f"[{PROG}] %(levelname)s %(name)s: %(message)s",
    )
    write_guard.install(root)
    service = ToolService(root)
    transport = StdioTransport(EXIT_INTERRUPTED)
    # SIGINT exits at once (130), or right after the frame being written. Installed
    # before the event loop starts, so asyncio keeps it instead of its own handler, which
    # only cancels the main task and then waits for the thread blocked on stdin.
    signal.signal(signal.SIGINT, lambda _signum, _frame: transport.interrupt())
    try:
        import anyio

        anyio.run(serve_stdio, service, transport)
    except KeyboardInterrupt:
        raise SystemExit(EXIT_INTERRUPTED) from None
    finally:
        service.close()
    raise SystemExit(0)
