"""Real HTTP embedding servers on 127.0.0.1 for the provider tests.

:class:`FakeEmbeddingServer` speaks the Ollama (``POST /api/embed``) and OpenAI
(``POST /v1/embeddings``) wire formats on an ephemeral port. Every request is
recorded; the answer to each request is taken from a script of actions
(``push``), defaulting to a correct answer. Vectors are derived from the text
(:func:`vector_for`) so tests can check that answers land in the right order.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

Action = str | tuple[Any, ...]


def vector_for(text: str, dims: int) -> list[float]:
    """A deterministic, finite vector for ``text`` (what the fake servers answer)."""
    seed = hashlib.sha256(text.encode("utf-8")).digest()
    return [((seed[i % 32] + i) % 251) / 251.0 - 0.5 for i in range(dims)]


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: Any

    @property
    def inputs(self) -> list[str]:
        value = self.body.get("input") if isinstance(self.body, dict) else None
        return list(value) if isinstance(value, list) else []


@dataclass
class FakeEmbeddingServer:
    """A scriptable Ollama/OpenAI embedding endpoint."""

    dims: int
    requests: list[Recorded] = field(default_factory=list)
    script: deque[Action] = field(default_factory=deque)
    release: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def push(self, *actions: Action) -> None:
        with self.lock:
            self.script.extend(actions)

    def next_action(self) -> Action:
        with self.lock:
            return self.script.popleft() if self.script else "ok"

    @property
    def inputs_seen(self) -> list[str]:
        return [text for r in self.requests for text in r.inputs]


def _answer(server: FakeEmbeddingServer, path: str, texts: list[str], action: Action) -> Any:
    dims = server.dims
    if action == "wrong_dimension":
        dims -= 1
    vectors = [vector_for(t, dims) for t in texts]
    if action == "nan" and vectors:
        vectors[0][0] = float("nan")  # json.dumps writes the non-standard NaN literal
    if action == "wrong_cardinality":
        vectors = vectors[:-1]
    if path == "/api/embed":
        return {"model": "m", "embeddings": vectors}
    items = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
    if action == "shuffle":
        items.reverse()
    if action == "duplicate_index" and len(items) > 1:
        items[1]["index"] = items[0]["index"]
    if action == "out_of_range_index":
        items[0]["index"] = len(items) + 5
    return {"object": "list", "data": items, "model": "m"}


class _Handler(BaseHTTPRequestHandler):
    server_version = "FakeEmbed/1"
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        fake: FakeEmbeddingServer = self.server.fake  # type: ignore[attr-defined]
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        with fake.lock:
            fake.requests.append(Recorded(self.path, dict(self.headers.items()), body))
        action = fake.next_action()
        if action == "hang":
            fake.release.wait(30)
            self.close_connection = True
            return
        if isinstance(action, tuple) and action[0] == "status":
            _, status, headers = action
            self._send(status, b'{"error":"scripted"}', headers)
            return
        if action == "malformed":
            self._send(200, b'{"embeddings": [[0.1, 0.2')
            return
        texts = body.get("input", []) if isinstance(body, dict) else []
        payload = _answer(fake, self.path, texts, action)
        self._send(200, json.dumps(payload).encode("utf-8"))


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out closed its socket; the write fails. Expected.
        pass


@pytest.fixture
def fake_server_factory() -> Iterator[Callable[[int], FakeEmbeddingServer]]:
    """Start fake servers of a given dimension; all are stopped after the test."""
    started: list[tuple[_Server, threading.Thread, FakeEmbeddingServer]] = []

    def start(dims: int) -> FakeEmbeddingServer:
        fake = FakeEmbeddingServer(dims=dims)
        server = _Server(("127.0.0.1", 0), _Handler)
        server.fake = fake  # type: ignore[attr-defined]
        fake.port = server.server_address[1]
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
        thread.daemon = True
        thread.start()
        started.append((server, thread, fake))
        return fake

    yield start
    for server, thread, fake in started:
        fake.release.set()
        server.shutdown()
        server.server_close()
        thread.join(10)


@pytest.fixture
def ollama_server(
    fake_server_factory: Callable[[int], FakeEmbeddingServer],
) -> FakeEmbeddingServer:
    """A fake Ollama for ``nomic-embed-text`` (768 dimensions)."""
    return fake_server_factory(768)


@pytest.fixture
def openai_server(
    fake_server_factory: Callable[[int], FakeEmbeddingServer],
) -> FakeEmbeddingServer:
    """A fake OpenAI for ``text-embedding-3-small`` (1536 dimensions)."""
    return fake_server_factory(1536)


@dataclass
class SleepRecorder:
    """An injected sleep that records the delays instead of waiting."""

    delays: list[float] = field(default_factory=list)

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()


@pytest.fixture
def closed_port() -> int:
    """A 127.0.0.1 port with nothing listening (connection refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


_CONNECT_WATCH: list[list[Any]] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event == "socket.connect" and _CONNECT_WATCH:
        for sink in _CONNECT_WATCH:
            sink.append(args[1])


_HOOK_INSTALLED: list[bool] = []


@pytest.fixture
def connection_attempts() -> Iterator[list[Any]]:
    """Every address any socket in this process tries to connect to during the test.

    Backed by a ``socket.connect`` audit hook (audit hooks cannot be removed, so
    the hook is installed once and only records while a test watches).
    """
    if not _HOOK_INSTALLED:
        sys.addaudithook(_audit)
        _HOOK_INSTALLED.append(True)
    sink: list[Any] = []
    _CONNECT_WATCH.append(sink)
    try:
        yield sink
    finally:
        _CONNECT_WATCH.remove(sink)


def tree_state(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every regular file under ``root`` (``.git`` excluded) with its bytes and mtime."""
    state: dict[str, tuple[bytes, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            path = Path(dirpath) / name
            if path.is_file():
                state[path.relative_to(root).as_posix()] = (
                    path.read_bytes(),
                    path.stat().st_mtime_ns,
                )
    return state


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository root (the cache only needs the directory, not git)."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "README.md").write_text("# repo\n", encoding="utf-8")
    return root


@pytest.fixture
def vectors_of() -> Callable[[str, int], list[float]]:
    """The vector the fake servers answer for a text."""
    return vector_for


@pytest.fixture
def snapshot_tree() -> Callable[[Path], dict[str, tuple[bytes, int]]]:
    """Bytes and mtimes of every file under a directory."""
    return tree_state
