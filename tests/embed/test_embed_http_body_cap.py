"""The response size cap of the HTTP providers, against a real server on 127.0.0.1.

The body is streamed and reading stops at the cap: an endless or oversized answer
costs at most the cap (plus one read) in memory and transfer, never the whole body.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from ragit.contract.errors import EmbeddingProviderFailed
from ragit.embed import ProviderOptions, create_provider, resolve_profile
from ragit.embed.providers import _http

CAP = 1024 * 1024
CHUNK = 64 * 1024
TOTAL = 64 * 1024 * 1024  # what the server would send if nobody stopped reading


class _Flood(ThreadingHTTPServer):
    daemon_threads = True
    sent = 0
    declare_length = False
    done: threading.Event


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Flood

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if self.server.declare_length:
            self.send_header("Content-Length", str(TOTAL))
        else:
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        piece = b" " * CHUNK
        framed = b"%x\r\n%s\r\n" % (CHUNK, piece)
        try:
            head = b'{"embeddings": ['
            self.wfile.write(head if self.server.declare_length else b"%x\r\n%s\r\n" % (16, head))
            while self.server.sent < TOTAL:
                self.wfile.write(piece if self.server.declare_length else framed)
                self.server.sent += CHUNK
            if not self.server.declare_length:
                self.wfile.write(b"0\r\n\r\n")
        except OSError:
            pass  # the client hung up: what it stopped reading is what matters
        finally:
            self.server.done.set()


@pytest.fixture(params=[False, True], ids=["chunked", "content-length"])
def flood(request: pytest.FixtureRequest) -> Iterator[_Flood]:
    server = _Flood(("127.0.0.1", 0), _Handler)
    server.declare_length = request.param
    server.done = threading.Event()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def test_an_oversized_body_is_refused_without_reading_it_all(
    flood: _Flood, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Implementation choice: stop at the cap (`response_invalid: too large`, not retryable)."""
    monkeypatch.setattr(_http, "_MAX_RESPONSE_BYTES", CAP)
    host, port = flood.server_address[:2]
    profile = resolve_profile({"provider": "ollama", "base_url": f"http://{host}:{port}"}, {})
    embedder = create_provider(profile, ProviderOptions(timeout_ms=20_000, sleep=lambda s: None))
    try:
        with pytest.raises(EmbeddingProviderFailed) as caught:
            embedder.embed(["alpha"])
    finally:
        embedder.close()
    assert caught.value.details["reason"] == "response_invalid: too large"
    assert caught.value.retryable is False
    assert flood.done.wait(timeout=20)
    # A client that read the whole body would have taken all TOTAL bytes; socket buffers
    # on both sides hold at most a few MiB beyond what the client read.
    assert flood.sent < TOTAL // 4, flood.sent
