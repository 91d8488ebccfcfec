"""Running a real process on a pseudo-terminal (``pty``) and reading what it shows."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Sequence
from pathlib import Path

RAGIT = (sys.executable, "-m", "ragit")
_SGR = re.compile(r"\x1b\[[0-9;]*m")


def plain(text: str) -> str:
    """``text`` without colour sequences."""
    return _SGR.sub("", text)


def run_pty(
    argv: Sequence[str],
    cwd: Path,
    *,
    env: dict[str, str] | None = None,
    drop: Sequence[str] = ("NO_COLOR", "PAGER", "RAGIT_PAGER", "RAGIT_FORMAT"),
    columns: int = 100,
    timeout: float = 120.0,
) -> tuple[str, int]:
    """Run ``argv`` with stdin, stdout and stderr on one pseudo-terminal.

    Returns everything the terminal received (CRLF as LF) and the exit status.
    ``drop`` names inherited variables removed first, so the caller's shell does not
    decide colour, paging or format.
    """
    full = {k: v for k, v in os.environ.items() if k not in drop}
    full.update(env or {})
    full["COLUMNS"] = str(columns)
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child process
        os.chdir(cwd)
        os.execvpe(argv[0], list(argv), full)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    out = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    text = out.decode("utf-8", "replace").replace("\r\n", "\n")
    return text, os.waitstatus_to_exitcode(status)


def ragit_pty(args: Sequence[str], cwd: Path, **env: str) -> tuple[str, int]:
    """``ragit <args>`` on a pseudo-terminal."""
    return run_pty([*RAGIT, *args], cwd, env=env)


def ragit_pipe(args: Sequence[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``ragit <args>`` with stdout and stderr on pipes."""
    full = {k: v for k, v in os.environ.items() if k not in ("PAGER", "RAGIT_PAGER")}
    return subprocess.run(
        [*RAGIT, *args],
        cwd=cwd,
        env={**full, **env},
        capture_output=True,
        text=True,
        check=False,
    )


def git(repo: Path, *args: str) -> str:
    """``git <args>`` in ``repo``; its stdout."""
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def indexed_docs_basic(root: Path) -> Path:
    """docs-basic at ``root``: ``ragit init``, the config committed, HEAD ingested (real
    processes), copied from a per-worker template (:func:`tests.snapshot._kit.from_template`)
    that the CLI tests starting from this state share."""
    from tests.snapshot._kit import from_template

    from fixtures.build import build_fixture

    def build(target: Path) -> None:
        build_fixture("docs-basic", target)
        assert ragit_pipe(["init", "--yes"], target).returncode == 0
        git(target, "add", "-A")
        git(target, "commit", "-qm", "Track the RAGit config")
        assert ragit_pipe(["ingest", "--all"], target).returncode == 0

    return from_template(root, "cli-docs-basic-indexed", build)


class Session:
    """An interactive program on a pseudo-terminal: send keys, wait for what it shows."""

    def __init__(
        self, argv: Sequence[str], cwd: Path, env: dict[str, str], columns: int = 120
    ) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # pragma: no cover - the child process
            os.chdir(cwd)
            os.execvpe(argv[0], list(argv), env)
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
        self.seen = ""

    def send(self, keys: str) -> None:
        os.write(self.fd, keys.encode())

    def expect(self, *needles: str, timeout: float = 60.0) -> str:
        """Read until every needle has appeared since the last call; what was read."""
        start = len(self.seen)
        deadline = time.monotonic() + timeout
        while not all(n in plain(self.seen[start:]) for n in needles):
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.fd], [], [], max(0.0, left))
            if not ready:
                raise AssertionError(f"never saw {needles!r}; saw {self.seen[start:]!r}")
            try:
                chunk = os.read(self.fd, 65536)
            except OSError as exc:
                raise AssertionError(f"the session ended; saw {self.seen[start:]!r}") from exc
            self.seen += chunk.decode("utf-8", "replace")
        return self.seen[start:]

    def close(self) -> None:
        import contextlib
        import signal

        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        os.close(self.fd)
