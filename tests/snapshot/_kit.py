"""Shared helpers for the ingest, snapshot, hooks and ops tests (imported, not collected).

A :class:`RagitRepo` is a fixture repository built in ``tmp_path`` (``fixtures.build``),
initialized with RAGit, with one private user cache per test. Core functions are called
in-process for speed (:meth:`RagitRepo.ingest`, :meth:`query`, :meth:`status`,
:meth:`doctor`); :meth:`RagitRepo.ragit` runs the real CLI in a subprocess where exit codes,
streams or process death are what the test is about.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from conformance.launcher import run_text
from fixtures.build import build_fixture, load_fixture
from ragit.workspace import Workspace, user_cache_dir

RAGIT = [sys.executable, "-m", "ragit"]
TIMEOUT = 120  # seconds; a generous ceiling on any single subprocess, never a timing assertion


def manifest_data(root: Path, sha: str) -> dict[str, Any]:
    """The manifest of ``sha`` in ``root`` as RAGit reads it, in the wire's field names:
    ``docs[].chunkIds`` hold chunk ids whichever ``indexVersion`` the file is."""
    from ragit.snapshot.manifest import load_manifest

    return load_manifest(Workspace(root), sha).model_dump(by_alias=True)


def self_contained(root: Path, sha: str) -> dict[str, Any]:
    """The manifest of ``sha`` as the self-contained JSON of ``indexVersion`` 1, ready to be
    changed and written back (``json.dumps``)."""
    from ragit.snapshot.manifest import load_manifest

    data: dict[str, Any] = json.loads(load_manifest(Workspace(root), sha).to_json_bytes())
    return data


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """One user cache per test (reader copies live there); import it into a test module."""
    cache = tmp_path / "xdg-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return cache


@dataclass
class Run:
    """A finished CLI subprocess."""

    argv: list[str]
    code: int
    stdout: str
    stderr: str

    @property
    def envelope(self) -> dict[str, Any]:
        """The JSON envelope: the last non-empty stdout line (contract §2, `both` too)."""
        lines = [line for line in self.stdout.splitlines() if line.strip()]
        assert lines, f"no stdout from {self.argv}; stderr: {self.stderr}"
        data: dict[str, Any] = json.loads(lines[-1])
        return data

    @property
    def data(self) -> Any:
        env = self.envelope
        assert env["ok"], f"{self.argv} failed: {env.get('error')}"
        return env["data"]

    @property
    def error(self) -> dict[str, Any]:
        env = self.envelope
        assert not env["ok"], f"{self.argv} unexpectedly succeeded"
        error: dict[str, Any] = env["error"]
        return error

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


@dataclass
class RagitRepo:
    """A fixture repository under test."""

    root: Path
    fixture: str
    spec: dict[str, Any]
    runs: list[Run] = field(default_factory=list)

    @property
    def ws(self) -> Workspace:
        return Workspace(self.root)

    # ------------------------------------------------------------ git
    def git(self, *args: str, check: bool = True, cwd: Path | None = None) -> str:
        proc = subprocess.run(
            ["git", *args],
            check=False,
            cwd=cwd or self.root,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=TIMEOUT,
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
        return proc.stdout.strip()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD")

    def write(self, path: str, content: str | bytes) -> None:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            with open(target, "w", encoding="utf-8", newline="") as handle:
                handle.write(content)

    def commit(self, files: Mapping[str, str | bytes | None], message: str) -> str:
        """Write (or delete, for ``None``) ``files``, commit everything staged; new HEAD."""
        for path, content in files.items():
            if content is None:
                self.git("rm", "-q", "--", path)
            else:
                self.write(path, content)
                self.git("add", "--", path)
        self.git("commit", "-q", "--no-verify", "-m", message)
        return self.head()

    # ------------------------------------------------------------ RAGit, in-process
    def ingest(self, **request: Any) -> dict[str, Any]:
        """``run_ingest`` with an :class:`IngestRequest` built from ``request``."""
        from ragit.config import load_config
        from ragit.ingest.apply import run_ingest
        from ragit.ingest.request import IngestRequest

        req = IngestRequest(**request)
        return run_ingest(self.ws, load_config(self.ws), req, lambda _message: None)

    def query(
        self, question: str, *, at: str | None = None, top_k: int = 5, view: str = "default"
    ) -> dict[str, Any]:
        from ragit.retrieve.query import QueryRequest, run_query

        req = QueryRequest(
            question=question, top_k=top_k, at=at, scope="durable", explain=False, view=view
        )
        return run_query(self.ws, req)

    def status(self) -> dict[str, Any]:
        from ragit.ops.status.report import repository_status

        return repository_status(self.ws)

    def doctor(self) -> tuple[dict[str, Any], Any]:
        from ragit.ops.maintenance.doctor import run_doctor

        return run_doctor(self.ws)

    def manifest(self, sha: str) -> dict[str, Any]:
        return manifest_data(self.root, sha)

    # ------------------------------------------------------------ RAGit, subprocess
    def ragit(
        self,
        *args: str,
        env: Mapping[str, str] | None = None,
        stdin: str | None = None,
        cwd: Path | None = None,
    ) -> Run:
        """Run the real CLI; the run is remembered for :meth:`all_output`."""
        env = {**os.environ, **(env or {})}
        proc = run_text(
            [*RAGIT, *args], cwd=cwd or self.root, env=env, input=stdin, timeout=TIMEOUT
        )
        run = Run(list(args), proc.returncode, proc.stdout, proc.stderr)
        self.runs.append(run)
        return run

    def popen(self, *args: str, env: Mapping[str, str] | None = None) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [*RAGIT, *args],
            cwd=self.root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            env={**os.environ, **(env or {})},
        )

    def all_output(self) -> str:
        return "".join(run.output for run in self.runs)


def make_repo(
    tmp_path: Path,
    fixture: str,
    *,
    init: bool = True,
    commit_init: bool = False,
    name: str = "repo",
) -> RagitRepo:
    """Build ``fixture`` at ``tmp_path/name``; optionally ``ragit init`` (and commit it)."""
    root = tmp_path / name
    build_fixture(fixture, root)
    repo = RagitRepo(root.resolve(), fixture, load_fixture(fixture))
    if init:
        from ragit.cli.commands.init import init_repository

        init_repository(repo.root, git_init=False, dry_run=False)
        if commit_init:
            repo.git("add", "--", ".gitignore", ".ragit/config.toml")
            repo.git("commit", "-q", "--no-verify", "-m", "ragit init")
    return repo


def indexed_repo(tmp_path: Path, fixture: str, *, commit_init: bool = False) -> RagitRepo:
    """``make_repo`` + ``ingest --all`` of HEAD, copied from a per-process template
    (:func:`from_template`). For tests whose subject is not that first ingest."""

    def build(root: Path) -> None:
        make_repo(root.parent, fixture, commit_init=commit_init, name=root.name).ingest(all=True)

    root = from_template(tmp_path / "repo", f"indexed-{fixture}-{int(commit_init)}", build)
    return RagitRepo(root.resolve(), fixture, load_fixture(fixture))


_BUILT: dict[str, Path] = {}


def from_template(root: Path, key: str, build: Callable[[Path], object]) -> Path:
    """``build(root)``, run once per process for ``key`` and copied to ``root`` for each test.

    For a setup (``init``, commits, ``ingest``) whose effect is the repository directory and
    its reader copies in the user cache: the template is built with a user cache of its own
    (at ``root``'s parent's parent, the worker's temporary base), and each copy's reader
    copies are placed where the current user cache expects them (they are named by the
    repository's path). A setup that starts a process outliving it is no candidate.
    """
    template = _BUILT.get(key)
    if template is None:
        template = root.parent.parent / f"_template-{key}"
        saved = os.environ.get("XDG_CACHE_HOME")
        os.environ["XDG_CACHE_HOME"] = str(template / "cache")
        try:
            build(template / "repo")
        except BaseException:
            shutil.rmtree(template, ignore_errors=True)  # the next test builds it afresh
            raise
        finally:
            if saved is None:
                del os.environ["XDG_CACHE_HOME"]
            else:
                os.environ["XDG_CACHE_HOME"] = saved
        _BUILT[key] = template
    shutil.copytree(template / "repo", root, symlinks=True)
    template_id = Workspace((template / "repo").resolve()).repo_id
    stores = template / "cache" / "ragit" / "stores" / template_id
    if stores.exists():
        target = user_cache_dir() / "stores" / Workspace(root.resolve()).repo_id
        shutil.copytree(stores, target, symlinks=True)
    return root


def tree_state(*roots: Path) -> dict[str, tuple[str, int]]:
    """Every file (and directory) under ``roots``: content hash and mtime in ns.

    Two equal states mean nothing was created, removed, rewritten or touched.
    """
    state: dict[str, tuple[str, int]] = {}
    for root in roots:
        if not root.exists():
            state[f"{root}:absent"] = ("", 0)
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for name in dirnames:
                state[os.path.join(dirpath, name) + "/"] = ("dir", 0)
            for name in sorted(filenames):
                path = os.path.join(dirpath, name)
                stat = os.lstat(path)
                if os.path.islink(path):
                    digest = "link:" + os.readlink(path)
                else:
                    with open(path, "rb") as handle:
                        digest = hashlib.sha256(handle.read()).hexdigest()
                state[path] = (digest, stat.st_mtime_ns)
    return state


def ragit_state(repo: RagitRepo) -> dict[str, tuple[str, int]]:
    """Everything under ``.ragit`` plus the user-cache reader copies."""
    return tree_state(repo.ws.ragit_dir, user_cache_dir() / "stores")


def hits_key(data: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """What identifies a query answer: (path, section, citation id) of each hit, in order."""
    return [(h["path"], h["sectionTitle"], h["citation"]["id"]) for h in data["hits"]]


def planted_secrets(repo: RagitRepo) -> list[str]:
    return [item["value"] for item in repo.spec.get("plantedSecrets", [])]


def assert_no_secret(text: str, secrets: Sequence[str]) -> None:
    leaked = [s for s in secrets if s in text]
    assert not leaked, f"planted secrets leaked: {leaked}"


def wait_for_line(stream: Any, needle: str) -> list[str]:
    """Read ``stream`` line by line until one contains ``needle`` (EOF fails the test)."""
    seen: list[str] = []
    while True:
        line = stream.readline()
        if not line:
            raise AssertionError(f"stream ended before {needle!r}; got {seen}")
        seen.append(line)
        if needle in line:
            return seen
