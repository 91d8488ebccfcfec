"""A loopback embedding server speaking the Ollama wire format (``POST /api/embed``).

The ``embed`` scenario points RAGit's real Ollama provider at it, so cache misses cross a
real socket and a real JSON body, and the server counts every request and input it sees.
Vectors are deterministic hash features of the text; their quality does not matter here.
"""

from __future__ import annotations

import hashlib
import json
import struct
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def vector_for(text: str, dims: int) -> list[float]:
    """``dims`` floats in [-1, 1) derived from the SHA-256 stream of ``text``."""
    out: list[float] = []
    counter = 0
    seed = text.encode("utf-8")
    while len(out) < dims:
        block = hashlib.sha256(seed + counter.to_bytes(4, "big")).digest()
        out.extend(v / 32768.0 for v in struct.unpack(">16h", block))
        counter += 1
    return out[:dims]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        server: LoopbackOllama = self.server.owner  # type: ignore[attr-defined]
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        texts = body.get("input") if isinstance(body, dict) else None
        if self.path != "/api/embed" or not isinstance(texts, list):
            payload, status = b'{"error":"not an /api/embed request"}', 400
        else:
            with server.lock:
                server.requests += 1
                server.inputs += len(texts)
            vectors = [vector_for(str(t), server.dims) for t in texts]
            payload, status = json.dumps({"model": "bench", "embeddings": vectors}).encode(), 200
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


class LoopbackOllama:
    """``with LoopbackOllama(768) as server: ... server.url, server.requests``."""

    def __init__(self, dims: int) -> None:
        self.dims = dims
        self.lock = threading.Lock()
        self.requests = 0
        self.inputs = 0
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.owner = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def reset(self) -> None:
        with self.lock:
            self.requests = 0
            self.inputs = 0

    def __enter__(self) -> LoopbackOllama:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
