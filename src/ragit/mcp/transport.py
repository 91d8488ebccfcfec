"""The stdio transport of ``ragit-mcp``: one answer per request, a clean exit (docs/mcp.md).

It replaces the SDK's ``mcp.server.stdio.stdio_server`` and feeds the SDK's
low-level server the same streams of :class:`~mcp.shared.message.SessionMessage`.
The SDK reader validates each line with pydantic and, when that fails, hands the
server an exception that the dispatcher logs at debug level and drops: a request
on such a line never gets an answer and its client waits for its own timeout.
Here every line is classified first (:func:`read_frame`):

* not JSON → ``-32700`` parse error, with the request's ``id`` when exactly one
  ``"id"`` member can be read off the broken line, else ``id: null``;
* JSON but not a JSON-RPC 2.0 message (``"jsonrpc": "1.0"``, no ``method``, an
  ``id`` that is neither an integer nor a string, params that are not an
  object, a batch array) → ``-32600`` invalid request;
* a lone UTF-16 surrogate escape (``"\\ud800"``, which ``JSON.stringify`` emits
  for half an emoji; pydantic refuses it) → in a ``tools/call``, the request
  goes on to the server with the surrogates replaced by U+FFFD and marked
  (:class:`ArgumentProblem` in the message metadata) so that it is answered
  with an ``MCP_INVALID_INPUT`` tool result naming the field; in any other
  request, ``-32602`` invalid params; in a notification or response, U+FFFD.

End of input: the server keeps running until every request already received
has been answered (or settled without an answer, e.g. cancelled), then the read
stream closes. The SDK transport closed it at once and the last replies were lost.

Output: every frame is written whole by the event loop's thread with
``os.write`` on a private duplicate of fd 1; while serving, fd 1 points at
stderr and fd 0 at the null device, so stray output of a handler or a child
process never reaches the wire. :meth:`StdioTransport.interrupt` (the SIGINT
handler) exits at once (130), or right after the frame being written.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, BinaryIO

import anyio
import anyio.from_thread
import anyio.lowlevel
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from pydantic import ValidationError

from ragit import _json

_ID = re.compile(r'"id"\s*:\s*(-?\d+|"(?:[^"\\\n]|\\.)*")')
_SURROGATE = re.compile("[\ud800-\udfff]")
WRITE_GRACE_SECONDS = 2.0
SURROGATE_REASON = "contains a lone UTF-16 surrogate escape (\\ud800-\\udfff): not Unicode text"

Session = Callable[
    [MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]],
    Awaitable[None],
]


@dataclass(frozen=True)
class ArgumentProblem:
    """A ``tools/call`` the transport repaired to pass on, to answer with MCP_INVALID_INPUT."""

    tool: str | None
    field: str
    reason: str


@dataclass(frozen=True)
class Frame:
    """One input line, classified: a message to pass on, or the error reply to send back."""

    message: types.JSONRPCMessage | None = None
    problem: ArgumentProblem | None = None
    reply: types.JSONRPCError | None = None


def _error(request_id: types.RequestId | None, code: int, message: str) -> Frame:
    error = types.ErrorData(code=code, message=message)
    return Frame(reply=types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


def _usable_id(value: object) -> types.RequestId | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and not _SURROGATE.search(value):
        return value
    return None


def _guess_id(text: str) -> types.RequestId | None:
    """The ``id`` of a line that is not JSON, when exactly one ``"id": <int|string>`` is there."""
    found = _ID.findall(text)
    if len(found) != 1:
        return None
    try:
        return _usable_id(_json.loads(found[0]))
    except ValueError:
        return None


def _scrub(value: Any) -> tuple[Any, bool]:
    """``value`` with lone surrogates replaced by U+FFFD, and whether there were any."""
    if isinstance(value, str):
        clean = _SURROGATE.sub("\ufffd", value)
        return clean, clean != value
    if isinstance(value, list):
        pairs = [_scrub(v) for v in value]
        return [v for v, _ in pairs], any(hit for _, hit in pairs)
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        found = False
        for key, item in value.items():
            clean_key, key_hit = _scrub(key)
            clean_item, item_hit = _scrub(item)
            out[clean_key] = clean_item
            found = found or key_hit or item_hit
        return out, found
    return value, False


def _surrogate_field(params: Any) -> str:
    """Which part of ``tools/call`` params held the surrogate, as MCP_INVALID_INPUT names it."""
    from ragit.mcp.arguments import clean_name

    if not isinstance(params, dict):
        return "params"
    if _scrub(params.get("name"))[1]:
        return "name"
    arguments = params.get("arguments")
    if isinstance(arguments, dict):
        for key, value in arguments.items():
            if _scrub(key)[1]:
                return "arguments"
            if _scrub(value)[1]:
                return clean_name(key) or "arguments"
    return "arguments" if _scrub(arguments)[1] else "params"


def read_frame(line: bytes) -> Frame | None:
    """Classify one input line (None: a blank line, nothing to do)."""
    text = line.decode("utf-8", errors="replace").strip()
    if not text:
        return None
    try:
        raw = _json.loads(text, max_depth=_json.REQUEST_MAX_DEPTH)
    except _json.JsonTooDeep as exc:
        return _error(_guess_id(text), types.INVALID_REQUEST, f"Invalid Request: {exc}")
    except ValueError:
        return _error(_guess_id(text), types.PARSE_ERROR, "Parse error: the line is not JSON")
    if not isinstance(raw, dict):
        return _error(None, types.INVALID_REQUEST, "Invalid Request: not a JSON-RPC object")
    request_id = _usable_id(raw.get("id"))
    is_request = "method" in raw and "id" in raw
    obj, had_surrogate = _scrub(raw)
    problem: ArgumentProblem | None = None
    if had_surrogate and is_request and request_id is not None:
        if raw.get("method") != "tools/call":
            return _error(request_id, types.INVALID_PARAMS, f"Invalid params: {SURROGATE_REASON}")
        from ragit.mcp.arguments import clean_name

        params = obj.get("params")
        tool = clean_name(params.get("name")) if isinstance(params, dict) else None
        problem = ArgumentProblem(tool, _surrogate_field(raw.get("params")), SURROGATE_REASON)
    try:
        message = types.jsonrpc_message_adapter.validate_json(json.dumps(obj), by_name=False)
    except ValidationError:
        if ("result" in raw or "error" in raw) and "method" not in raw:
            return None  # a malformed response: there is nobody to answer
        return _error(
            request_id,
            types.INVALID_REQUEST,
            "Invalid Request: not a JSON-RPC 2.0 request or notification "
            '(needs "jsonrpc": "2.0", a string method, an integer or string id, object params)',
        )
    if is_request and not isinstance(message, types.JSONRPCRequest):
        # Pydantic read it as a notification, dropping an id that is neither an integer
        # nor a string (2.5, true, null): the client still waits for an answer.
        return _error(
            None, types.INVALID_REQUEST, "Invalid Request: the id must be an integer or a string"
        )
    return Frame(message=message, problem=problem)


def _dup_above_std(fd: int) -> int:
    if sys.platform == "win32":  # pragma: no cover
        return os.dup(fd)
    import fcntl

    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)


class StdioTransport:
    """Serve one session over this process's stdin and stdout (see the module docstring)."""

    def __init__(self, interrupted_exit: int = 130) -> None:
        self.interrupted_exit = interrupted_exit
        self.writing = False
        self._interrupted = threading.Event()  # set by the SIGINT handler
        self._broken = False
        self._eof = False
        self._pending: Counter[types.RequestId] = Counter()
        self._out_fd = -1
        self._read_send: MemoryObjectSendStream[SessionMessage | Exception] | None = None

    # ------------------------------------------------------------ signals
    def interrupt(self) -> None:
        """SIGINT: exit now, or right after the frame being written (never half a frame).

        A frame still not written after :data:`WRITE_GRACE_SECONDS` (the client stopped
        reading) is abandoned.

        Like SIGTERM's default action, the process ends without unwinding: the server
        holds nothing that needs it (it writes nothing but stdout), and unwinding the
        event loop would wait for the tool call in progress and the thread blocked on
        stdin.
        """
        self._interrupted.set()
        if not self.writing:
            self._exit()
        # A client that stopped reading would hold the frame (and the exit) forever.
        timer = threading.Timer(WRITE_GRACE_SECONDS, self._exit)
        timer.daemon = True
        timer.start()

    def _exit(self) -> None:
        sys.stderr.flush()
        os._exit(self.interrupted_exit)

    # ------------------------------------------------------------ serving
    async def serve(self, session: Session) -> None:
        """Run ``session(read_stream, write_stream)`` over stdin/stdout until it returns."""
        in_fd = _dup_above_std(0)
        self._out_fd = _dup_above_std(1)
        saved = (_dup_above_std(0), _dup_above_std(1))
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.dup2(2, 1)
        try:
            await self._serve(session, os.fdopen(in_fd, "rb", closefd=False))
        finally:
            os.dup2(saved[0], 0)
            os.dup2(saved[1], 1)
            os.close(saved[0])
            os.close(saved[1])
            # in_fd stays open: the reader thread may still block on it; the exit closes it.

    async def _serve(self, session: Session, stdin: BinaryIO) -> None:
        read_send, read_recv = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write_send, write_recv = anyio.create_memory_object_stream[SessionMessage](0)
        lines_send, lines_recv = anyio.create_memory_object_stream[bytes](0)
        self._read_send = read_send
        token = anyio.lowlevel.current_token()
        reader = threading.Thread(
            target=_read_lines, args=(stdin, lines_send, token), name="ragit-mcp-stdin", daemon=True
        )
        async with anyio.create_task_group() as outer:
            outer.start_soon(self._write_all, write_recv)
            async with anyio.create_task_group() as inner:
                inner.start_soon(self._pump, lines_recv)
                reader.start()
                await session(read_recv, write_send)
                inner.cancel_scope.cancel()

    async def _pump(self, lines: MemoryObjectReceiveStream[bytes]) -> None:
        assert self._read_send is not None
        async with lines:
            async for line in lines:
                frame = read_frame(line)
                if frame is None:
                    continue
                if frame.reply is not None:
                    self._write(frame.reply)
                    continue
                message = frame.message
                assert message is not None
                metadata = None
                if isinstance(message, types.JSONRPCRequest):
                    self._pending[message.id] += 1
                    metadata = ServerMessageMetadata(
                        request_context=frame.problem,
                        on_request_unanswered=partial(self._unanswered, message.id),
                    )
                try:
                    await self._read_send.send(SessionMessage(message, metadata=metadata))
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return
        self._eof = True
        self._maybe_close()

    async def _unanswered(self, request_id: types.RequestId) -> None:
        self._settle(request_id)

    def _settle(self, request_id: types.RequestId | None) -> None:
        if request_id is not None and self._pending[request_id] > 0:
            self._pending[request_id] -= 1
            if not self._pending[request_id]:
                del self._pending[request_id]
        self._maybe_close()

    def _maybe_close(self) -> None:
        done = (self._eof and not self._pending) or self._broken
        if done and self._read_send is not None:
            self._read_send.close()

    async def _write_all(self, stream: MemoryObjectReceiveStream[SessionMessage]) -> None:
        async with stream:
            async for item in stream:
                message = item.message
                self._write(message)
                if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
                    self._settle(message.id)

    def _write(self, message: types.JSONRPCMessage) -> None:
        """Write one frame whole (``os.write`` until done); nothing once interrupted or broken."""
        if self._interrupted.is_set() or self._broken:
            return
        data = memoryview(
            (message.model_dump_json(by_alias=True, exclude_unset=True) + "\n").encode("utf-8")
        )
        self.writing = True
        try:
            while data:
                data = data[os.write(self._out_fd, data) :]
        except OSError:
            self._broken = True  # the client closed its end: stop serving
            self._maybe_close()
        finally:
            self.writing = False
        if self._interrupted.is_set():
            self._exit()


def _read_lines(stdin: BinaryIO, sink: MemoryObjectSendStream[bytes], token: Any) -> None:
    """Reader thread: hand each line to the event loop; close the sink at end of input."""
    try:
        for line in iter(stdin.readline, b""):
            anyio.from_thread.run(sink.send, line, token=token)
        anyio.from_thread.run_sync(sink.close, token=token)
    except (RuntimeError, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        pass  # the server stopped first
