"""Helpers for the memory tests (imported, not collected).

A :class:`Repo` is a real git repository in ``tmp_path``, initialized with RAGit.
The CLI runs as a real subprocess (``python -m ragit``): exit codes, streams and
what lands on disk are what these tests are about.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.launcher import run_text
from ragit.workspace import Workspace

RAGIT = [sys.executable, "-m", "ragit"]
TIMEOUT = 120  # a generous ceiling for one subprocess, never a timing assertion
SECRET = "sk-proj-" + "Zx81mQv27LpR4tY9wN3kB6cD"  # an OpenAI-style key the masker knows
SECRET_PREFIX = SECRET[:6]


@dataclass
class Run:
    argv: list[str]
    code: int
    stdout: str
    stderr: str

    @property
    def envelope(self) -> dict[str, Any]:
        lines = [line for line in self.stdout.splitlines() if line.strip()]
        assert lines, f"no stdout from {self.argv}; stderr: {self.stderr}"
        value: dict[str, Any] = json.loads(lines[-1])
        return value

    @property
    def data(self) -> Any:
        env = self.envelope
        assert env["ok"], f"{self.argv} failed: {env.get('error')} {self.stderr}"
        return env["data"]

    @property
    def error(self) -> dict[str, Any]:
        env = self.envelope
        assert not env["ok"], f"{self.argv} unexpectedly succeeded"
        value: dict[str, Any] = env["error"]
        return value

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


@dataclass
class Repo:
    root: Path
    env: dict[str, str]
    runs: list[Run] = field(default_factory=list)

    @property
    def ws(self) -> Workspace:
        return Workspace(self.root)

    def git(self, *args: str) -> str:
        proc = subprocess.run(
            ["git", *args],
            cwd=self.root,
            capture_output=True,
            text=True,
            encoding="utf-8",
            env=self.env,
            timeout=TIMEOUT,
            check=False,
        )
        assert proc.returncode == 0, f"git {args} failed: {proc.stderr}"
        return proc.stdout.strip()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD")

    def write(self, path: str, content: str) -> Path:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "w", encoding="utf-8", newline="") as handle:
            handle.write(content)
        return target

    def write_json(self, path: str, value: Any) -> str:
        self.write(path, json.dumps(value))
        return path

    def commit(self, files: Mapping[str, str], message: str) -> str:
        for path, content in files.items():
            self.write(path, content)
            self.git("add", "--", path)
        self.git("commit", "-q", "--no-verify", "-m", message)
        return self.head()

    def ragit(
        self, *args: str, stdin: str | None = None, env: Mapping[str, str] | None = None
    ) -> Run:
        env = {**self.env, **(env or {})}
        proc = run_text([*RAGIT, *args], cwd=self.root, env=env, input=stdin, timeout=TIMEOUT)
        run = Run(list(args), proc.returncode, proc.stdout, proc.stderr)
        self.runs.append(run)
        return run

    def input(self, *args: str, payload: Any) -> Run:
        """Run a command with ``--input -`` and ``payload`` as JSON on stdin."""
        return self.ragit(*args, "--input", "-", "--format", "json", stdin=json.dumps(payload))

    def popen(self, *args: str, stdin_path: Path) -> subprocess.Popen[str]:
        """Start the CLI with ``stdin_path`` as its stdin (for concurrent runs)."""
        with open(stdin_path, "rb") as stdin:
            return subprocess.Popen(
                [*RAGIT, *args],
                cwd=self.root,
                stdin=stdin,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                env=self.env,
            )

    def read_json(self, path: str) -> Any:
        return json.loads((self.root / path).read_text(encoding="utf-8"))

    def files(self, under: str = ".") -> list[str]:
        base = self.root / under
        return sorted(
            p.relative_to(self.root).as_posix()
            for p in base.rglob("*")
            if p.is_file() and ".git" not in p.relative_to(self.root).parts[:1]
        )

    def all_text(self) -> str:
        """Every file of the repository (``.git`` excluded) as text, for secret scans."""
        chunks = []
        for rel in self.files():
            chunks.append((self.root / rel).read_text(encoding="utf-8", errors="replace"))
        return "\n".join(chunks)

    def all_output(self) -> str:
        return "".join(run.output for run in self.runs)


def tree_state(root: Path) -> dict[str, tuple[str, int]]:
    """Every file and directory under ``root`` (``.git`` excluded): hash and mtime."""
    state: dict[str, tuple[str, int]] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel == ".git" or rel.startswith(".git/"):
            continue
        stat = path.lstat()
        if path.is_file():
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            digest = "dir"
        state[rel] = (digest, stat.st_mtime_ns)
    return state


_TEMPLATES: dict[tuple[bool, bool], Path] = {}


def make_repo(
    tmp_path: Path, *, name: str = "repo", commit: bool = True, init: bool = True
) -> Repo:
    """A git repository with one knowledge document, ``ragit init``-ed, optionally committed.

    Built once per process by :func:`_build_repo` (a real ``ragit init`` process) and copied
    for each test: what it leaves is the repository alone (no user cache, no absolute path),
    and the fixed git identity and clock give every copy the same commit.
    """
    key = (commit, init)
    template = _TEMPLATES.get(key)
    if template is None:
        template = tmp_path.parent / f"_memkit-template-{int(commit)}{int(init)}"
        try:
            _build_repo(template, commit=commit, init=init)
        except BaseException:
            shutil.rmtree(template, ignore_errors=True)  # the next test builds it afresh
            raise
        _TEMPLATES[key] = template
    root = (tmp_path / name).resolve()
    root.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(template / "repo", root, symlinks=True)
    return Repo(root, {**os.environ, "XDG_CACHE_HOME": str(tmp_path / f"{name}-cache")})


def _build_repo(base: Path, *, commit: bool, init: bool) -> Repo:
    root = (base / "repo").resolve()
    root.mkdir(parents=True)
    env = {**os.environ, "XDG_CACHE_HOME": str(base / "repo-cache")}
    repo = Repo(root, env)
    repo.git("init", "-q", "-b", "main")
    repo.write("README.md", "# Demo\n\nA demo repository.\n")
    repo.write(
        "docs/adr/0001-database.md",
        "# ADR: Use Postgres\n\n## Context\n\nWe need a ledger database.\n\n"
        "## Decision\n\nUse Postgres for the ledger.\n\n## Consequences\n\n- one more service\n",
    )
    if init:
        run = repo.ragit("init", "--yes", "--format", "json")
        assert run.code == 0, run.output
    if commit:
        repo.git("add", "-A")
        repo.git("commit", "-q", "--no-verify", "-m", "initial knowledge")
    return repo


def wrap_payload(**overrides: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "goal": "finish the auth flow",
        "summary": "Implemented login; refresh tokens still open.",
        "constraints": ["no new dependencies"],
        "decisions": ["Use JWT access tokens"],
        "openLoops": [{"title": "refresh token rotation", "nextAction": "write the rotation test"}],
        "nextActions": ["wire the refresh endpoint"],
        "createdAt": "2026-04-10T09:00:00Z",
    }
    payload.update(overrides)
    return payload
