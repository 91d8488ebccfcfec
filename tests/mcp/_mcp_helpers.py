"""Shared machinery of the ragit-mcp tests: hermetic environments, repositories, a real client.

Every server is the installed ``ragit-mcp`` script in a subprocess, driven over stdio by
the official SDK's client (``mcp.client.stdio`` + ``ClientSession``) from an anyio
blocking portal, so tests stay plain synchronous functions and one server can live
across many calls (and many hypothesis examples).

:meth:`McpServer.call` is the only way the tests call a tool: it records every regular
file (and directory) under the repository (``.git`` excluded) by bytes and mtime before
and after the call and fails on any difference, and it checks the transport rules of
contract §11 (``content[0].text`` is the JSON of ``structuredContent``; ``isError``
exactly when ``ok`` is false).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from conformance.launcher import run_text
from fixtures.build import build_fixture

BIN = Path(sys.executable).parent
RAGIT = str(BIN / "ragit")
RAGIT_MCP = str(BIN / "ragit-mcp")
CALL_TIMEOUT = 120.0
GIT_DATE = "1767312000 +0000"


def hermetic_env(base: Path) -> dict[str, str]:
    """A subprocess environment below ``base``: own HOME, caches and git identity."""
    home = base / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / ".gitconfig").write_text(
        "[user]\n\tname = RAGit MCP Test\n\temail = mcp@ragit.invalid\n"
        "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n"
        "[core]\n\tautocrlf = false\n",
        encoding="utf-8",
    )
    return _hermetic_vars(base)


def _hermetic_vars(base: Path) -> dict[str, str]:
    home = base / "home"
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "TMPDIR", "SYSTEMROOT")}
    env.update(
        HOME=str(home),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CEILING_DIRECTORIES=str(base),
        GIT_AUTHOR_NAME="RAGit MCP Test",
        GIT_AUTHOR_EMAIL="mcp@ragit.invalid",
        GIT_AUTHOR_DATE=GIT_DATE,
        GIT_COMMITTER_NAME="RAGit MCP Test",
        GIT_COMMITTER_EMAIL="mcp@ragit.invalid",
        GIT_COMMITTER_DATE=GIT_DATE,
        GIT_TERMINAL_PROMPT="0",
        LC_ALL="C.UTF-8",
        LANG="C.UTF-8",
        TZ="UTC",
        RAGIT_PROGRESS="0",
    )
    return env


def run(
    argv: list[str], *, cwd: Path, env: dict[str, str], check: bool = True, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    """Run a process to completion (text mode, UTF-8); ``ragit`` is forked by this worker's
    launcher (conformance.launcher) where it serves the environment."""
    proc = run_text(argv, cwd=cwd, env=env, input=stdin, timeout=600)
    if check and proc.returncode != 0:
        raise AssertionError(
            f"{argv} exited {proc.returncode}\nstdout: {proc.stdout[-2000:]}\n"
            f"stderr: {proc.stderr[-2000:]}"
        )
    return proc


def ragit(root: Path, env: dict[str, str], *args: str, check: bool = True) -> Any:
    """Run the ``ragit`` CLI in ``root``; returns the parsed JSON envelope (stdout)."""
    proc = run([RAGIT, *args], cwd=root, env=env, check=check)
    return json.loads(proc.stdout.strip().splitlines()[-1]) if proc.stdout.strip() else None


def git(root: Path, env: dict[str, str], *args: str) -> str:
    return run(["git", *args], cwd=root, env=env).stdout.strip()


def make_repo(
    base: Path,
    env: dict[str, str],
    fixture: str | None = "docs-basic",
    *,
    init: bool = True,
    ingest: bool = True,
    config: dict[str, str] | None = None,
    files: dict[str, str] | None = None,
) -> Path:
    """A fixture repository, optionally initialized (config committed) and ingested.

    In an environment as :func:`hermetic_env` makes it and without ``config`` (whose
    provider may be a test's own server, which must see the ingest), the repository is
    built once per process by :func:`_build_repo` and copied, with its reader copies put
    where this environment's user cache expects them (they are named by the path).
    """
    if config is not None or env != _hermetic_vars(base):
        return _build_repo(base, env, fixture, init=init, ingest=ingest, config=config, files=files)
    key = json.dumps([fixture, init, ingest, files])
    template = _TEMPLATES.get(key)
    if template is None:
        template = base.parent / f"_mcp-template-{len(_TEMPLATES)}"
        try:
            _build_repo(
                template, hermetic_env(template), fixture, init=init, ingest=ingest, files=files
            )
        except BaseException:
            shutil.rmtree(template, ignore_errors=True)  # the next test builds it afresh
            raise
        _TEMPLATES[key] = template
    root = base / "repo"
    shutil.copytree(template / "repo", root, symlinks=True)
    stores = template / "home" / ".cache" / "ragit" / "stores" / _repo_id(template / "repo")
    if stores.exists():
        target = Path(env["XDG_CACHE_HOME"]) / "ragit" / "stores" / _repo_id(root)
        shutil.copytree(stores, target, symlinks=True)
    return root


_TEMPLATES: dict[str, Path] = {}


def _repo_id(root: Path) -> str:
    from ragit.workspace import Workspace

    return Workspace(root.resolve()).repo_id


def _build_repo(
    base: Path,
    env: dict[str, str],
    fixture: str | None,
    *,
    init: bool,
    ingest: bool,
    config: dict[str, str] | None = None,
    files: dict[str, str] | None = None,
) -> Path:
    root = base / "repo"
    if fixture is None:
        root.mkdir(parents=True)
        git(root, env, "init", "-q")
    else:
        build_fixture(fixture, root)
    for rel, text in (files or {}).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    if init:
        run([RAGIT, "init", "--yes"], cwd=root, env=env)
        for key, value in (config or {}).items():
            run([RAGIT, "config", "set", key, value], cwd=root, env=env)
    if init or files:
        git(root, env, "add", "--all")
        git(root, env, "commit", "-q", "-m", "Track the RAGit config")
    if ingest:
        run([RAGIT, "ingest", "--all"], cwd=root, env=env)
    return root


# ---------------------------------------------------------------- repository state


def tree_state(root: Path) -> dict[str, tuple[str, ...]]:
    """Every directory, regular file (sha256, mtime_ns) and symlink below ``root``, .git aside."""
    state: dict[str, tuple[str, ...]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        if here == root and ".git" in dirnames:
            dirnames.remove(".git")
        for name in dirnames:
            path = here / name
            rel = path.relative_to(root).as_posix()
            state[rel] = ("link", os.readlink(path)) if path.is_symlink() else ("dir",)
        for name in filenames:
            path = here / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                state[rel] = ("link", os.readlink(path))
                continue
            info = path.stat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            state[rel] = ("file", digest, str(info.st_mtime_ns), str(info.st_mode))
    return state


def assert_unchanged(before: dict[str, tuple[str, ...]], after: dict[str, tuple[str, ...]]) -> None:
    """Fail with the changed paths when two :func:`tree_state` results differ."""
    if before == after:
        return
    created = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    changed = sorted(p for p in set(before) & set(after) if before[p] != after[p])
    raise AssertionError(
        f"the repository changed: created={created} removed={removed} changed={changed}"
    )


# ---------------------------------------------------------------- the client


@dataclass
class Call:
    """One tool call: the envelope and the raw SDK result."""

    envelope: dict[str, Any]
    is_error: bool
    result: Any

    @property
    def code(self) -> str | None:
        error = self.envelope.get("error")
        return error["code"] if isinstance(error, dict) else None

    @property
    def data(self) -> Any:
        return self.envelope["data"]


class McpServer(AbstractContextManager["McpServer"]):
    """A real ``ragit-mcp`` subprocess and an initialized SDK client session."""

    def __init__(
        self,
        root: Path,
        env: dict[str, str],
        *,
        stderr_path: Path,
        args: list[str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.root = root
        self.env = env
        self.args = ["--cwd", str(root)] if args is None else args
        self.cwd = cwd or root
        self.stderr_path = stderr_path
        self._stack = ExitStack()
        self.portal: Any = None
        self.session: Any = None
        self.initialize_result: Any = None

    def __enter__(self) -> McpServer:
        from anyio.from_thread import start_blocking_portal
        from mcp.client.session import ClientSession
        from mcp.client.stdio import StdioServerParameters, stdio_client

        stack = self._stack
        try:
            self.portal = stack.enter_context(start_blocking_portal())
            errlog = stack.enter_context(self.stderr_path.open("a", encoding="utf-8"))
            params = StdioServerParameters(
                command=RAGIT_MCP, args=self.args, env=self.env, cwd=self.cwd
            )
            read, write = stack.enter_context(
                self.portal.wrap_async_context_manager(stdio_client(params, errlog=errlog))
            )
            self.session = stack.enter_context(
                self.portal.wrap_async_context_manager(ClientSession(read, write))
            )
            self.initialize_result = self.portal.call(self.session.initialize)
        except BaseException:
            stack.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8")

    def list_tools(self) -> Any:
        return self.portal.call(self.session.list_tools)

    def call_tool(self, name: str, arguments: dict[str, Any] | None) -> Any:
        """The raw SDK result (no checks)."""
        call = functools.partial(
            self.session.call_tool, name, arguments, read_timeout_seconds=CALL_TIMEOUT
        )
        return self.portal.call(call)

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> Call:
        """Call a tool; require an unchanged repository and a well-formed result."""
        before = tree_state(self.root)
        result = self.call_tool(name, arguments)
        assert_unchanged(before, tree_state(self.root))
        return check_result(result)


def check_result(result: Any) -> Call:
    """Apply the transport rules of contract §11 to an SDK ``CallToolResult``."""
    assert len(result.content) >= 1 and result.content[0].type == "text"
    envelope = json.loads(result.content[0].text)
    assert envelope == result.structured_content, "content[0].text and structuredContent differ"
    assert isinstance(envelope, dict)
    assert set(envelope) >= {"ok", "tool", "version", "cwd", "data", "warnings"}
    assert bool(result.is_error) is (envelope["ok"] is False)
    return Call(envelope, bool(result.is_error), result)


# ---------------------------------------------------------------- embedding servers


@dataclass
class EmbeddingServer:
    """A loopback HTTP server speaking the Ollama and OpenAI embedding formats (or a proxy)."""

    dims: int
    requests: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def count(self) -> int:
        with self.lock:
            return len(self.requests)


def _vector(text: str, dims: int) -> list[float]:
    seed = hashlib.sha256(text.encode("utf-8")).digest()
    values = [(seed[i % len(seed)] - 127.5) / 127.5 + 0.01 * (i % 7) for i in range(dims)]
    return values


class _EmbedHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        fake: EmbeddingServer = self.server.fake  # type: ignore[attr-defined]
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
        with fake.lock:
            fake.requests.append(self.path)
        texts = body.get("input", [])
        texts = [texts] if isinstance(texts, str) else texts
        vectors = [_vector(t, fake.dims) for t in texts]
        if self.path.endswith("/api/embed"):
            payload: dict[str, Any] = {"model": body.get("model"), "embeddings": vectors}
        else:
            payload = {
                "object": "list",
                "model": body.get("model"),
                "data": [
                    {"object": "embedding", "index": i, "embedding": v}
                    for i, v in enumerate(vectors)
                ],
            }
        raw = json.dumps(payload).encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


def serve_embeddings(dims: int) -> Iterator[EmbeddingServer]:
    """Run an :class:`EmbeddingServer` on 127.0.0.1 for the duration of the generator."""
    fake = EmbeddingServer(dims)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _EmbedHandler)
    httpd.daemon_threads = True
    httpd.fake = fake  # type: ignore[attr-defined]
    fake.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


# ---------------------------------------------------------------- raw JSON-RPC


def raw_exchange(
    root: Path, env: dict[str, str], requests: list[dict[str, Any]], *, timeout: float = 120
) -> tuple[dict[Any, dict[str, Any]], list[str]]:
    """Initialize a fresh server, send ``requests`` (JSON-RPC bodies without ``jsonrpc``/``id``)
    and return the answers by id (1..n) plus every stdout line, for shapes the SDK client
    refuses to send (a non-object ``arguments``, a non-string tool name)."""
    import queue

    proc = subprocess.Popen(
        [RAGIT_MCP, "--cwd", str(root)],
        cwd=root,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    stdin, stdout = proc.stdin, proc.stdout
    assert stdin is not None and stdout is not None
    lines: queue.Queue[bytes] = queue.Queue()

    def pump() -> None:
        for line in iter(stdout.readline, b""):
            lines.put(line)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    seen: list[str] = []
    answers: dict[Any, dict[str, Any]] = {}

    def send(message: dict[str, Any]) -> None:
        stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8") + b"\n")
        stdin.flush()

    def wait_for(ids: set[Any]) -> None:
        while not ids <= set(answers):
            line = lines.get(timeout=timeout).decode("utf-8")
            seen.append(line)
            message = json.loads(line)
            if "id" in message and ("result" in message or "error" in message):
                answers[message["id"]] = message

    try:
        send(
            {
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "1"},
                },
            }
        )
        wait_for({0})
        send({"method": "notifications/initialized"})
        for n, request in enumerate(requests, 1):
            send({"id": n, **request})
        wait_for(set(range(1, len(requests) + 1)))
    finally:
        stdin.close()
        proc.wait(timeout=30)
        reader.join(timeout=10)
        stdout.close()
    return answers, seen
