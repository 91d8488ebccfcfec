"""Shared state of one benchmark session: options, the hermetic environment, corpora.

Corpora are built lazily and once per session: the *pristine* repository of size
N is the generator's repository plus ``ragit init --yes`` committed; the *indexed*
one is a copy of it after one ``ragit ingest --all``. Scenarios that change a
repository work on their own copy.
"""

from __future__ import annotations

import itertools
import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench_lib.corpus import GIT_EPOCH, Generator, Git, copy_repo
from bench_lib.proc import BenchError, Env, Sample, run


@dataclass
class Options:
    n: int
    runs: int
    warmup: int
    impl: list[str]
    mcp_impl: list[str] | None
    gen_corpus: Path
    rfcs: Path
    mcp_calls: int
    keep: bool
    semantic_docs: int = 0
    semantic_backends: tuple[str, ...] = ()
    postgres_parts: tuple[str, ...] = ()


PROBE_NAME = "runtime-probe.json"


def hermetic_env(home: Path, cache: Path) -> Env:
    """The environment of every process: no inherited git, RAGit, XDG or Python settings."""
    dropped = ("GIT_", "RAGIT_", "XDG_", "PYTHON")
    base = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    base.pop("VIRTUAL_ENV", None)
    stamp = GIT_EPOCH.isoformat()
    base.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_CACHE_HOME=str(cache),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="RAGit Bench",
        GIT_AUTHOR_EMAIL="bench@ragit.invalid",
        GIT_COMMITTER_NAME="RAGit Bench",
        GIT_COMMITTER_EMAIL="bench@ragit.invalid",
        GIT_AUTHOR_DATE=stamp,
        GIT_COMMITTER_DATE=stamp,
        RAGIT_PROGRESS="0",
    )
    return Env(base)


class Context:
    """One benchmark session: work directory, environment, lazily built corpora."""

    def __init__(self, opts: Options, workdir: Path) -> None:
        self.opts = opts
        self.workdir = workdir
        home = workdir / "home"
        home.mkdir(parents=True, exist_ok=True)
        (home / ".gitconfig").write_text(
            "[user]\n\tname = RAGit Bench\n\temail = bench@ragit.invalid\n"
            "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n",
            encoding="utf-8",
        )
        self.cache = workdir / "cache"
        self.cache.mkdir(exist_ok=True)
        self.env = hermetic_env(home, self.cache)
        self.git = Git(self.env)
        self.gen = Generator(opts.gen_corpus, self.env)
        self._pristine: dict[Any, Path] = {}
        self._last_fresh: Path | None = None
        self._indexed: dict[Any, Path] = {}
        self._queries: dict[int, list[dict[str, str]]] = {}
        self._scratch = itertools.count(1)

    # ---------------------------------------------------------------- commands

    def ragit(self, *args: str) -> list[str]:
        return [*self.opts.impl, *args]

    def run_ragit(
        self, repo: Path, *args: str, env: Env | None = None, check: bool = True
    ) -> Sample:
        return run(self.ragit(*args), cwd=repo, env=env or self.env, check=check)

    @staticmethod
    def progress(message: str) -> None:
        print(f"[bench] {message}", file=sys.stderr, flush=True)

    # ---------------------------------------------------------------- places

    def scratch(self, label: str) -> Path:
        """A new empty directory for one run (removed by :meth:`discard` unless --keep)."""
        path = self.workdir / "runs" / f"{next(self._scratch):04d}-{label}"
        path.mkdir(parents=True)
        return path

    def discard(self, path: Path) -> None:
        if not self.opts.keep:
            shutil.rmtree(path, ignore_errors=True)

    def fresh_cache_env(self, run_dir: Path) -> Env:
        """The environment with a user cache of its own (outside the repository), empty but
        for the verdict of RAGit's once-per-machine zvec probe (``ragit/runtime-probe.json``:
        a child process that imports zvec, ~0.3 s). A user's cache holds that verdict from
        their first command on; reader copies, logs and the rest start empty."""
        cache = run_dir / "cache"
        cache.mkdir(exist_ok=True)
        probe = self.cache / "ragit" / PROBE_NAME
        earlier = self._last_fresh / "ragit" / PROBE_NAME if self._last_fresh else None
        if not probe.is_file() and earlier is not None and earlier.is_file():
            probe.parent.mkdir(parents=True, exist_ok=True)  # the warm-up run probed
            shutil.copyfile(earlier, probe)
        self._last_fresh = cache
        if probe.is_file():
            (cache / "ragit").mkdir(exist_ok=True)
            shutil.copyfile(probe, cache / "ragit" / PROBE_NAME)
        return self.env.with_(XDG_CACHE_HOME=str(cache))

    # ---------------------------------------------------------------- corpora

    def queries(self, n: int) -> list[dict[str, str]]:
        if n not in self._queries:
            self._queries[n] = self.gen.queries(n)
        return self._queries[n]

    def init_and_commit(self, repo: Path) -> str:
        self.run_ragit(repo, "init", "--yes")
        self.git(repo, "add", "-A")
        return self.git.commit(repo, "Initialize RAGit")

    def pristine(self, n: int) -> Path:
        """Generator corpus of size ``n`` with ``ragit init`` committed; not indexed."""
        if n not in self._pristine:
            base = self.workdir / f"corpus-{n}"
            base.mkdir(parents=True, exist_ok=True)
            repo = base / "pristine"
            self.progress(f"generating the N={n} corpus")
            info = self.gen.generate(repo, n)
            head = self.init_and_commit(repo)
            self.progress(
                f"N={n}: {info['docs']} docs, {info['words']} words, "
                f"generator HEAD {info['head'][:12]}, after init {head[:12]}"
            )
            self._pristine[n] = repo
        return self._pristine[n]

    def indexed_path(self, key: int | str) -> Path:
        """Where the shared indexed repository of ``key`` (N, or "rfcs") lives."""
        base = "rfcs" if key == "rfcs" else f"corpus-{key}"
        return self.workdir / base / "indexed"

    def has_indexed(self, key: int | str) -> bool:
        return key in self._indexed

    def adopt_indexed(self, key: int | str, repo: Path) -> None:
        """Register ``repo`` (indexed at :meth:`indexed_path` with the shared env) as shared."""
        self._indexed[key] = repo

    def indexed(self, n: int) -> Path:
        """A copy of the pristine corpus after one ``ingest --all`` (shared; read-only use)."""
        if n not in self._indexed:
            repo = copy_repo(self.pristine(n), self.indexed_path(n), self.git)
            self.progress(f"indexing the shared N={n} repository")
            self.run_ragit(repo, "ingest", "--all", "--format", "json")
            self._indexed[n] = repo
        return self._indexed[n]

    def rfcs_pristine(self, limit: int = 0) -> Path:
        """The RFC repository with ``ragit init`` committed; only the first ``limit`` files
        (sorted by path) when ``limit`` is set."""
        from bench_lib.corpus import build_rfcs_repo

        key = "rfcs" if not limit else f"rfcs-{limit}"
        if key not in self._pristine:
            repo = self.workdir / key / "pristine"
            count = build_rfcs_repo(self.opts.rfcs, repo, self.git, limit)
            self.progress(f"{key}: {count} markdown files under docs/")
            self.init_and_commit(repo)
            self._pristine[key] = repo
        return self._pristine[key]

    def rfcs_indexed(self) -> Path:
        if "rfcs" not in self._indexed:
            repo = copy_repo(self.rfcs_pristine(), self.indexed_path("rfcs"), self.git)
            self.run_ragit(repo, "ingest", "--all", "--format", "json")
            self._indexed["rfcs"] = repo
        return self._indexed["rfcs"]

    def describe_impl(self) -> str:
        return shlex.join(self.opts.impl)


def resolve_impl(spec: str | None) -> list[str]:
    """The ragit command: ``--impl`` split like a shell would, else the one beside Python.

    Raises:
        BenchError: no ragit executable was found.
    """
    if spec:
        return shlex.split(spec)
    beside = Path(sys.executable).parent / "ragit"
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("ragit")
    if found:
        return [found]
    raise BenchError("no `ragit` next to this Python or on PATH; pass --impl")


def resolve_mcp_impl(spec: str | None, impl: list[str]) -> list[str] | None:
    """The ragit-mcp command: ``--mcp-impl``, else beside the ragit executable or Python."""
    if spec:
        return shlex.split(spec)
    candidates = [Path(sys.executable).parent / "ragit-mcp"]
    if len(impl) == 1 and os.sep in impl[0]:
        candidates.insert(0, Path(impl[0]).parent / "ragit-mcp")
    for candidate in candidates:
        if candidate.is_file():
            return [str(candidate)]
    found = shutil.which("ragit-mcp")
    return [found] if found else None
