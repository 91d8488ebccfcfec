"""A minimal MCP stdio client for the ``mcp`` steps of the suite (standard library only).

It starts the server, performs the ``initialize`` handshake, sends one request
(``tools/call`` or ``tools/list``), reads the answer and closes stdin. Along the
way it checks the transport rules every call must follow (contract §11): stdout
carries JSON-RPC messages only, and a tool result carries its envelope both as
``structuredContent`` and as identical JSON text in ``content[0].text``, with
``isError`` set exactly when the envelope says ``ok: false``.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from conformance.launcher import LaunchedProcess, Launcher

PROTOCOL_VERSION = "2025-06-18"
_EOF = object()


@dataclass
class McpOutcome:
    """The answer to one MCP request and the transport problems seen on the way."""

    result: Any = None
    envelope: Any = None
    is_error: bool | None = None
    problems: list[str] = field(default_factory=list)
    stderr: str = ""


def _pump(stream: IO[bytes], sink: queue.Queue[object]) -> None:
    for line in iter(stream.readline, b""):
        sink.put(line)
    sink.put(_EOF)


def _drain(stream: IO[bytes], chunks: list[bytes]) -> None:
    for chunk in iter(lambda: stream.read(4096), b""):
        chunks.append(chunk)


class _Session:
    def __init__(
        self, proc: subprocess.Popen[bytes] | LaunchedProcess, timeout: float, out: McpOutcome
    ) -> None:
        self.proc = proc
        self.deadline = time.monotonic() + timeout
        self.lines: queue.Queue[object] = queue.Queue()
        self.out = out
        assert proc.stdout is not None
        self.reader = threading.Thread(target=_pump, args=(proc.stdout, self.lines), daemon=True)
        self.reader.start()

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode("utf-8") + b"\n")
        self.proc.stdin.flush()

    def answer(self, request_id: int) -> dict[str, Any] | None:
        while True:
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                self.out.problems.append(f"mcp: no answer to request {request_id} in time")
                return None
            try:
                item = self.lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if item is _EOF:
                self.out.problems.append(
                    f"mcp: the server closed stdout before answering request {request_id}"
                )
                return None
            assert isinstance(item, bytes)
            try:
                message = json.loads(item.decode("utf-8"))
            except ValueError:
                self.out.problems.append(
                    f"mcp: stdout carried a line that is not JSON-RPC: {item[:200]!r}"
                )
                continue
            if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
                self.out.problems.append(
                    f"mcp: stdout carried a non JSON-RPC 2.0 message: {item[:200]!r}"
                )
                continue
            if "method" in message and "id" in message:
                # A server request (ping, roots/list): answer so the server is not left waiting.
                reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
                if message["method"] == "ping":
                    reply["result"] = {}
                else:
                    reply["error"] = {"code": -32601, "message": "not supported by this client"}
                self.send(reply)
                continue
            if message.get("id") == request_id:
                return message


def call_mcp(
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    request: dict[str, Any],
    timeout: float,
    launcher: Launcher | None = None,
) -> McpOutcome:
    """Start the server ``argv`` (forked by ``launcher`` where it serves it), send
    ``request`` (``{"tool", "arguments"}`` or ``{"listTools": true}``) and return the
    outcome."""
    out = McpOutcome()
    proc: subprocess.Popen[bytes] | LaunchedProcess
    try:
        if launcher is not None and launcher.serves(argv, env, cwd):
            proc = launcher.popen(argv, cwd=cwd, env=env)
        else:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
    except OSError as exc:
        out.problems.append(f"mcp: cannot start {argv!r}: {exc}")
        return out
    err_chunks: list[bytes] = []
    assert proc.stderr is not None
    err_thread = threading.Thread(target=_drain, args=(proc.stderr, err_chunks), daemon=True)
    err_thread.start()
    session = _Session(proc, timeout, out)
    try:
        session.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": PROTOCOL_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "ragit-conformance", "version": "1"},
                },
            }
        )
        init = session.answer(1)
        if init is None or "result" not in init:
            if init is not None:
                out.problems.append(f"mcp: initialize failed: {init.get('error')}")
            return out
        session.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        if request.get("listTools"):
            session.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
        else:
            params = {"name": request["tool"], "arguments": request.get("arguments", {})}
            session.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params})
        reply = session.answer(2)
        if reply is None:
            return out
        if "error" in reply:
            out.problems.append(f"mcp: the request failed at the protocol level: {reply['error']}")
            return out
        out.result = reply.get("result")
        if not request.get("listTools"):
            _check_tool_result(out)
    except (BrokenPipeError, OSError) as exc:
        out.problems.append(f"mcp: the server's stdin closed early: {exc}")
    finally:
        _stop(proc, session)
        err_thread.join(timeout=5)
        out.stderr = b"".join(err_chunks).decode("utf-8", "replace")
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    return out


def _stop(proc: subprocess.Popen[bytes] | LaunchedProcess, session: _Session) -> None:
    try:
        if proc.stdin is not None and not proc.stdin.closed:
            proc.stdin.close()
    except OSError:
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    session.reader.join(timeout=5)


def _check_tool_result(out: McpOutcome) -> None:
    result = out.result
    if not isinstance(result, dict):
        out.problems.append(f"mcp: tools/call result is not an object: {result!r}")
        return
    structured = result.get("structuredContent")
    out.is_error = bool(result.get("isError", False))
    if not isinstance(structured, dict):
        out.problems.append("mcp: the result has no structuredContent object")
    else:
        out.envelope = structured
        if out.is_error is not (structured.get("ok") is False):
            out.problems.append(
                f"mcp: isError is {out.is_error} but the envelope has ok={structured.get('ok')!r}"
            )
    content = result.get("content")
    first = content[0] if isinstance(content, list) and content else None
    if not isinstance(first, dict) or first.get("type") != "text":
        out.problems.append("mcp: content[0] is not a text item")
        return
    try:
        from_text = json.loads(str(first.get("text")))
    except ValueError:
        out.problems.append("mcp: content[0].text is not JSON")
        return
    if structured is not None and from_text != structured:
        out.problems.append("mcp: content[0].text and structuredContent differ")
