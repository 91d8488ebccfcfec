"""A minimal MCP stdio client: newline-delimited JSON-RPC, one request at a time.

Deliberately bare (no SDK, no schema validation) so the latency measured is the
server's plus one pipe round trip. Reads are bounded by a timeout so a hung
server fails the scenario instead of the whole benchmark.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import tempfile
import time
from pathlib import Path
from typing import IO, Any

from bench_lib.proc import KIB_PER_MIB, BenchError, Env

PROTOCOL_VERSION = "2025-06-18"


class StdioClient:
    """One ``ragit-mcp`` process and the JSON-RPC conversation with it."""

    def __init__(self, argv: list[str], *, cwd: Path, env: Env, timeout: float = 120.0) -> None:
        self.timeout = timeout
        # Closed in close(), which also reaps the server.
        self._stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115
        self.started = time.perf_counter()
        try:
            self.proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=env.as_dict(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
            )
        except OSError as exc:
            self._stderr.close()
            raise BenchError(f"cannot start {argv[0]}: {exc}") from exc
        self._buffer = b""
        self._next_id = 0
        self.max_rss_mib: float | None = None

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode("utf-8") + b"\n")
        self.proc.stdin.flush()

    def _read_line(self) -> bytes:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + self.timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BenchError(f"no answer from the MCP server within {self.timeout:.0f} s")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise BenchError("the MCP server closed stdout:\n" + self.stderr_tail())
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send one request and return its answer (skipping notifications).

        Raises:
            BenchError: a JSON-RPC error, a timeout, or the server went away.
        """
        self._next_id += 1
        self._send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        while True:
            line = self._read_line()
            if not line.strip():
                continue
            answer = json.loads(line)
            if answer.get("id") != self._next_id:
                continue
            if "error" in answer:
                raise BenchError(f"{method} failed: {answer['error']}")
            result: dict[str, Any] = answer["result"]
            return result

    def initialize(self) -> dict[str, Any]:
        result = self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "ragit-bench", "version": "1"},
            },
        )
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return result

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Call a tool; a tool-level error (``isError``) is a benchmark failure.

        Raises:
            BenchError: the call failed.
        """
        result = self.request("tools/call", {"name": tool, "arguments": arguments})
        if result.get("isError"):
            detail = result.get("structuredContent") or result.get("content")
            raise BenchError(f"{tool} returned an error: {json.dumps(detail)[:800]}")
        return result

    def stderr_tail(self) -> str:
        self._stderr.seek(0)
        return "\n".join(self._stderr.read().decode("utf-8", "replace").splitlines()[-15:])

    def close(self) -> None:
        """Close stdin, reap the server and record its peak RSS."""
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        deadline = time.monotonic() + 30
        while True:
            pid, status, usage = os.wait4(self.proc.pid, os.WNOHANG)
            if pid:
                self.proc.returncode = os.waitstatus_to_exitcode(status)
                self.max_rss_mib = usage.ru_maxrss / KIB_PER_MIB
                break
            if time.monotonic() > deadline:
                self.proc.kill()
                _, status, usage = os.wait4(self.proc.pid, 0)
                self.proc.returncode = os.waitstatus_to_exitcode(status)
                break
            time.sleep(0.01)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self._stderr.close()

    def __enter__(self) -> StdioClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
