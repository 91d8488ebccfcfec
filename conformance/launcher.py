"""Start a Python implementation's commands from a process that has already imported it.

Every command of a case is a new process, and in a Python implementation most of a short
command's CPU is its interpreter start and imports (click, numpy, pygit2, the store engine,
the MCP SDK: 0.1 to 0.7 s of CPU each), while the command itself takes a few milliseconds.
A :class:`Launcher` is a fork server: one process per test worker imports the implementation
once, then forks a child for each command. The child is a real process with its own pid,
working directory, environment and standard streams (the pipes the caller made), and it runs
the same entry point the console script runs (``ragit.cli.main:main``), exiting the way the
script would: ``SystemExit``, a traceback and exit status 1, or a signal.

What a fork does not repeat, and how the child makes up for it:

- the interpreter's start: the child takes the caller's environment, working directory and
  ``sys.argv``; the variables read while the interpreter starts (``PYTHON*``, the locale,
  BLAS threads, ``TZ``) must equal the server's, else :meth:`Launcher.serves` is False and
  the caller starts the command as a new program;
- state the imports computed from the environment: libgit2's configuration search path
  (from ``HOME`` and ``XDG_CONFIG_HOME``) is reset, ``random`` is seeded again;
- the hash seed is the server's for every child of one run (a run's workers still differ).
  Tests about a command's own start (its imports, its first output at a terminal) exec the
  program itself and do not come here.

The server speaks over a ``SOCK_SEQPACKET`` Unix socket: one request (JSON: argv, working
directory, environment, entry point) carrying the child's three standard streams as file
descriptors; the answer is the child's pid, then its exit status (negative: the signal).
A caller that goes away takes its child with it (SIGKILL), as a killed test would.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import importlib.util
import io
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import types
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

# Read while the interpreter starts, or while the preloaded modules import: a request whose
# values differ from the server's cannot be served by a fork.
_STARTUP_PREFIXES = ("PYTHON", "LC_", "OPENBLAS_", "OMP_", "MKL_", "GOTO")
_STARTUP_NAMES = ("LANG", "LANGUAGE", "TZ")
# onnxruntime starts a thread as it loads; a process with threads must not fork.
_NOT_PRELOADED = ("ragit.embed.minilm",)
_MAX_REQUEST = 1 << 20


def _startup_env(env: Mapping[str, str]) -> dict[str, str]:
    return {
        key: value
        for key, value in env.items()
        if key.startswith(_STARTUP_PREFIXES) or key in _STARTUP_NAMES
    }


class LaunchedProcess:
    """A command the server forked: the parts of :class:`subprocess.Popen` callers use."""

    def __init__(
        self,
        conn: socket.socket,
        pid: int,
        stdin: IO[bytes] | None,
        stdout: IO[bytes] | None,
        stderr: IO[bytes] | None,
    ) -> None:
        self._conn = conn
        self.pid = pid
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
        self.returncode: int | None = None
        self.cpu_seconds: float | None = None  # the child's user + system time, once it exited
        self._lock = threading.Lock()

    def _receive(self, timeout: float | None) -> int | None:
        with self._lock:
            if self.returncode is not None:
                return self.returncode
            self._conn.settimeout(timeout)
            try:
                message = self._conn.recv(64)
            except (TimeoutError, BlockingIOError):
                return None
            finally:
                self._conn.settimeout(None)
            if not message.startswith(b"exit "):
                raise RuntimeError(f"the launcher lost the child {self.pid}: {message!r}")
            code, cpu = message[5:].split()
            self.cpu_seconds = float(cpu)
            self.returncode = int(code)
            self._conn.close()
            return self.returncode

    def poll(self) -> int | None:
        return self._receive(0)

    def wait(self, timeout: float | None = None) -> int:
        code = self._receive(timeout)
        if code is None:
            raise subprocess.TimeoutExpired(["<launched>", str(self.pid)], timeout or 0)
        return code

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def communicate(
        self, input: bytes | None = None, timeout: float | None = None
    ) -> tuple[bytes, bytes]:
        """Write ``input``, read both streams to their end, wait for the exit; on a timeout
        the child is killed and :class:`subprocess.TimeoutExpired` raised."""
        chunks: dict[int, list[bytes]] = {}
        threads = []
        for stream in (self.stdout, self.stderr):
            if stream is not None:
                chunks[id(stream)] = parts = []
                threads.append(threading.Thread(target=_drain, args=(stream, parts), daemon=True))
        if self.stdin is not None:
            threads.append(
                threading.Thread(target=_feed, args=(self.stdin, input or b""), daemon=True)
            )
        for thread in threads:
            thread.start()
        try:
            self.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            self.wait()
            raise
        for thread in threads:
            thread.join()
        return (
            b"".join(chunks.get(id(self.stdout), [])),
            b"".join(chunks.get(id(self.stderr), [])),
        )

    def __enter__(self) -> LaunchedProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        for stream in (self.stdin, self.stdout, self.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        self.wait()


def _drain(stream: IO[bytes], parts: list[bytes]) -> None:
    with contextlib.suppress(OSError, ValueError):
        while chunk := stream.read(65536):
            parts.append(chunk)
    with contextlib.suppress(OSError):
        stream.close()


def _feed(stream: IO[bytes], data: bytes) -> None:
    with contextlib.suppress(OSError, ValueError):
        stream.write(data)
    with contextlib.suppress(OSError):
        stream.close()


class Launcher:
    """A fork server for one Python implementation, started by :meth:`start`.

    ``entries`` maps each argv prefix it serves to the entry point the console script calls
    and the ``sys.argv[0]`` the script would see: ``("/venv/bin/ragit",)`` to
    ``("ragit.cli.main:main", "/venv/bin/ragit")``."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        path: Path,
        entries: Mapping[tuple[str, ...], tuple[str, str]],
        env: Mapping[str, str],
    ) -> None:
        self._proc = proc
        self._path = path
        self._entries = dict(entries)
        self._startup = _startup_env(env)

    @classmethod
    def start(
        cls,
        entries: Mapping[tuple[str, ...], tuple[str, str]],
        env: Mapping[str, str],
        *,
        python: str = sys.executable,
        preload: Sequence[str] | None = None,
    ) -> Launcher | None:
        """Start a server with ``env`` (the environment most requests will carry) that has
        imported ``preload`` (by default the entry points' packages, every module of them);
        None where forking is not possible here."""
        if not hasattr(os, "pidfd_open") or not hasattr(socket, "SOCK_SEQPACKET"):
            return None
        path = Path(tempfile.mkdtemp(prefix="ragit-launcher-")) / "socket"
        packages = (
            sorted({entry.split(".", 1)[0] for entry, _ in entries.values()})
            if preload is None
            else list(preload)
        )
        proc = subprocess.Popen(
            [python, "-m", "conformance.launcher", str(path), *packages],
            env={**env, "PYTHONPATH": _pythonpath(env)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != b"ready":  # said once the imports are done
            proc.kill()
            proc.wait()
            proc.stdout.close()
            return None
        return cls(proc, path, entries, env)

    def _match(self, argv: Sequence[str]) -> tuple[int, str, str] | None:
        for prefix, (entry, argv0) in self._entries.items():
            if tuple(argv[: len(prefix)]) == prefix:
                return len(prefix), entry, argv0
        return None

    def serves(self, argv: Sequence[str], env: Mapping[str, str], cwd: Path) -> bool:
        """Whether a fork can run ``argv``; if not the command must start as a program."""
        return (
            self._proc.poll() is None
            and self._match(argv) is not None
            and cwd.is_dir()
            and _startup_env(env) == self._startup
        )

    def popen(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
    ) -> LaunchedProcess:
        """Fork ``argv`` (which :meth:`serves`) with pipes for its three streams."""
        match = self._match(argv)
        if match is None:
            raise ValueError(f"the launcher does not serve {argv!r}")
        length, entry, argv0 = match
        request = json.dumps(
            {"argv": [argv0, *argv[length:]], "cwd": str(cwd), "env": dict(env), "entry": entry}
        ).encode("utf-8")
        if len(request) > _MAX_REQUEST:
            raise OSError("the request is too large for the launcher")
        theirs: list[int] = []
        ours: list[IO[bytes]] = []
        try:
            read, write = os.pipe()
            theirs.append(read)
            ours.append(os.fdopen(write, "wb", buffering=0))
            for _ in range(2):
                read, write = os.pipe()
                theirs.append(write)
                ours.append(os.fdopen(read, "rb"))
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            conn.connect(str(self._path))
            socket.send_fds(conn, [request], theirs)
        finally:
            for fd in theirs:
                os.close(fd)
        answer = conn.recv(64)
        if not answer.startswith(b"pid "):
            conn.close()
            for stream in ours:
                stream.close()
            raise OSError(f"the launcher could not start {argv!r}: {answer!r}")
        return LaunchedProcess(conn, int(answer[4:]), *ours)

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        input: bytes = b"",
        timeout: float | None = None,
    ) -> tuple[int, bytes, bytes]:
        """:func:`subprocess.run` with captured output: (exit status, stdout, stderr)."""
        with self.popen(argv, cwd=cwd, env=env) as proc:
            out, err = proc.communicate(input, timeout)
            return proc.wait(), out, err

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        with contextlib.suppress(OSError):
            self._path.unlink()
        with contextlib.suppress(OSError):
            self._path.parent.rmdir()


_INSTALLED: dict[frozenset[tuple[str, str]], Launcher | None] = {}


def installed_ragit(env: Mapping[str, str]) -> Launcher | None:
    """This process's launcher of the ``ragit`` and ``ragit-mcp`` scripts installed next to
    the running interpreter, for commands whose start-up variables are ``env``'s: one server
    per distinct set, started on first use and stopped at exit. None when
    ``RAGIT_TEST_EXEC`` is set (every command then starts as a program), the scripts are not
    installed, or this system cannot fork a server."""
    if os.environ.get("RAGIT_TEST_EXEC"):
        return None
    key = frozenset(_startup_env(env).items())
    if key not in _INSTALLED:
        bindir = Path(sys.executable).parent
        cli, mcp = bindir / "ragit", bindir / "ragit-mcp"
        launcher = None
        cli_module = importlib.util.find_spec("ragit.__main__")
        mcp_module = importlib.util.find_spec("ragit.mcp.__main__")
        if cli.is_file() and mcp.is_file() and cli_module and mcp_module:
            python = sys.executable
            launcher = Launcher.start(
                {
                    (str(cli),): ("ragit.cli.main:main", str(cli)),
                    (str(mcp),): ("ragit.mcp.server:main", str(mcp)),
                    (python, "-m", "ragit"): ("ragit.cli.main:main", str(cli_module.origin)),
                    (python, "-m", "ragit.mcp"): ("ragit.mcp.server:main", str(mcp_module.origin)),
                },
                env,
                preload=("ragit",),
            )
        if launcher is not None:
            atexit.register(launcher.close)
        _INSTALLED[key] = launcher
    return _INSTALLED[key]


def run_installed(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    input: bytes = b"",
    timeout: float | None = None,
) -> tuple[int, bytes, bytes] | None:
    """Run ``argv`` through :func:`installed_ragit` when it serves it: (exit status, stdout,
    stderr); None when the caller must start it as a program."""
    launcher = installed_ragit(env)
    if launcher is None or not launcher.serves(argv, env, cwd):
        return None
    return launcher.run(argv, cwd=cwd, env=env, input=input, timeout=timeout)


def run_text(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    input: str | None = None,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[str]:
    """``subprocess.run(argv, capture_output=True, text=True, encoding="utf-8")``, forked by
    :func:`installed_ragit` where it serves ``argv``; else ``argv`` starts as a program."""
    launched = run_installed(
        argv, cwd=cwd, env=env, input=(input or "").encode("utf-8"), timeout=timeout
    )
    if launched is None:
        return subprocess.run(
            list(argv),
            cwd=cwd,
            env=dict(env),
            input=input,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=timeout,
            check=False,
        )
    code, out, err = launched
    return subprocess.CompletedProcess(list(argv), code, _text(out), _text(err))


def _text(data: bytes) -> str:
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8").read()


def _pythonpath(env: Mapping[str, str]) -> str:
    """The server imports ``conformance`` from this checkout, whatever the caller's path."""
    root = str(Path(__file__).resolve().parent.parent)
    rest = env.get("PYTHONPATH", "")
    return f"{root}{os.pathsep}{rest}" if rest else root


# ---------------------------------------------------------------------------- the server


def _preload(packages: Iterable[str]) -> None:
    import importlib
    import pkgutil

    for name in packages:
        package = importlib.import_module(name)
        for module in pkgutil.walk_packages(getattr(package, "__path__", []), f"{name}."):
            if module.name.endswith(".__main__") or module.name.startswith(_NOT_PRELOADED):
                continue
            with contextlib.suppress(Exception):
                importlib.import_module(module.name)
    with contextlib.suppress(ImportError):  # what ragit-mcp imports when it starts serving
        importlib.import_module("mcp.server.lowlevel")
        importlib.import_module("anyio._backends._asyncio")
    # What the imports made lives as long as the server: kept out of the collector's reach,
    # so a child's collections do not walk (and copy, page by page) the whole preloaded heap.
    gc.collect()
    gc.freeze()


def _serve(path: str) -> tuple[dict[str, Any], list[int]]:
    """Answer requests until stopped; returns only in a forked child, with its request."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(64)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, ("accept",))
    children: dict[int, tuple[int, socket.socket]] = {}  # pidfd -> (pid, caller)
    callers: dict[int, int] = {}  # caller's fd -> child pid
    stopping = False

    def stop(*_: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    parent = os.getppid()
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while not stopping and os.getppid() == parent:  # a server outlives no test process
        try:
            events = selector.select(1.0)
        except InterruptedError:
            continue
        for key, _ in events:
            kind = key.data[0]
            if kind == "accept":
                conn, _ = listener.accept()
                selector.register(conn, selectors.EVENT_READ, ("request",))
            elif kind == "request" and key.fileobj.fileno() not in callers:
                conn = key.fileobj  # type: ignore[assignment]
                message, fds, _, _ = socket.recv_fds(conn, _MAX_REQUEST, 3)
                if not message or len(fds) != 3:
                    for fd in fds:
                        os.close(fd)
                    selector.unregister(conn)
                    conn.close()
                    continue
                request = json.loads(message)
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:  # the child: drop the server, become the command
                    signal.signal(signal.SIGTERM, signal.SIG_DFL)
                    selector.close()
                    listener.close()
                    for pidfd, (_, caller) in children.items():
                        os.close(pidfd)
                        caller.close()
                    conn.close()
                    return request, fds
                for fd in fds:
                    os.close(fd)
                pidfd = os.pidfd_open(pid)
                children[pidfd] = (pid, conn)
                callers[conn.fileno()] = pid
                selector.register(pidfd, selectors.EVENT_READ, ("exit", pid))
                conn.send(b"pid %d" % pid)
            elif kind == "request":  # a caller with a running child closed: it went away
                conn = key.fileobj  # type: ignore[assignment]
                with contextlib.suppress(ProcessLookupError):
                    os.kill(callers[conn.fileno()], signal.SIGKILL)
                selector.unregister(conn)
            elif kind == "exit":
                pidfd = key.fd
                pid, conn = children.pop(pidfd)
                selector.unregister(pidfd)
                os.close(pidfd)
                _, status, usage = os.wait4(pid, 0)
                code = os.waitstatus_to_exitcode(status)
                callers.pop(conn.fileno(), None)
                with contextlib.suppress(OSError):
                    conn.send(b"exit %d %.6f" % (code, usage.ru_utime + usage.ru_stime))
                with contextlib.suppress(KeyError, ValueError):
                    selector.unregister(conn)
                conn.close()
    for pid, caller in children.values():
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        caller.close()
    raise SystemExit(0)


def _become(request: dict[str, Any], fds: list[int]) -> None:
    """In the forked child: take the request's streams, directory and environment, then run
    the entry point as the console script does."""
    import importlib
    import random
    import time

    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    time.tzset()
    random.seed()
    if "pygit2" in sys.modules:  # libgit2 found the user's git config from the server's HOME
        import pygit2  # noqa: TID251 - libgit2's process state, which the adapter never resets
        from pygit2.enums import ConfigLevel  # noqa: TID251

        for level in (ConfigLevel.SYSTEM, ConfigLevel.XDG, ConfigLevel.GLOBAL):
            pygit2.settings.search_path[level] = None  # type: ignore[assignment]
    sys.argv = list(request["argv"])
    main = types.ModuleType("__main__")  # the console script's module, not the server's
    main.__file__ = sys.argv[0]
    sys.modules["__main__"] = main
    # As a console script starts: its own directory first, not the server's start directory
    # or the checkout the server imported ``conformance`` from.
    ours = {sys.path[0], str(Path(__file__).resolve().parent.parent)}
    sys.path[:] = [os.path.dirname(sys.argv[0]), *(p for p in sys.path if p not in ours)]
    module, _, function = request["entry"].partition(":")
    try:
        status = getattr(importlib.import_module(module), function)()
    except SystemExit as exc:
        status = exc.code
    # What the interpreter does on exit, short of tearing the preloaded modules down one by
    # one (40 ms of CPU a command, most of the fork's cost): join the threads, run the atexit
    # functions, flush the streams, exit with SystemExit's status. An uncaught exception is
    # not caught here: it ends the child as it ends a program (traceback, status 1).
    import atexit
    import threading

    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    if status is None:
        code = 0
    elif isinstance(status, int):
        code = status & 0xFF
    else:
        print(status, file=sys.stderr)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: a program exits 120 on this
            code = 120 if code == 0 else code
    os._exit(code)


if __name__ == "__main__":
    _preload(sys.argv[2:])
    _become(*_serve(sys.argv[1]))
