"""Benchmark repositories: the generator corpus, the Rust RFCs, and their mutations.

Everything here is set-up, never measured. Commits get fixed authors and a clock
that advances 60 s per commit, so the same arguments give the same SHAs.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import random
import shutil
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import ModuleType
from typing import Any

from bench_lib.proc import BenchError, Env, quiet

GIT_EPOCH = datetime(2026, 3, 1, tzinfo=timezone.utc)

# Ten questions about well-known RFCs of /work/shared/corpora/rust-rfcs, each with the
# document it is about (copied under docs/). A quality probe, not a judged dataset.
RFC_QUERIES: list[dict[str, str]] = [
    {
        "query": "how are RFCs proposed, discussed and accepted",
        "target": "docs/0002-rfc-process.md",
    },
    {
        "query": "remove the green thread runtime from the standard library",
        "target": "docs/0230-remove-runtime.md",
    },
    {
        "query": "question mark operator and catch blocks for error propagation",
        "target": "docs/0243-trait-based-exception-handling.md",
    },
    {
        "query": "which API changes are breaking under semantic versioning",
        "target": "docs/1105-api-evolution.md",
    },
    {
        "query": "specialization of overlapping trait impls",
        "target": "docs/1210-impl-specialization.md",
    },
    {
        "query": "generic associated types with lifetime parameters",
        "target": "docs/1598-generic_associated_types.md",
    },
    {
        "query": "non-lexical lifetimes computed from the control-flow graph",
        "target": "docs/2094-nll.md",
    },
    {"query": "async fn and await syntax for futures", "target": "docs/2394-async_await.md"},
    {
        "query": "const generics: types parameterized by constant values",
        "target": "docs/2000-const-generics.md",
    },
    {
        "query": "default binding modes when matching on references",
        "target": "docs/2005-match-ergonomics.md",
    },
]


class Git:
    """Runs git in the hermetic environment with a deterministic commit clock."""

    def __init__(self, env: Env) -> None:
        self.env = env
        self.ticks = 0

    def __call__(self, repo: Path, *args: str) -> str:
        return quiet(["git", "-C", str(repo), *args], cwd=repo, env=self.env)

    def commit(self, repo: Path, message: str, *extra: str) -> str:
        self.ticks += 1
        stamp = (GIT_EPOCH + timedelta(seconds=60 * self.ticks)).isoformat()
        env = self.env.with_(GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp)
        quiet(["git", "-C", str(repo), "commit", "-q", "-m", message, *extra], cwd=repo, env=env)
        return self(repo, "rev-parse", "HEAD").strip()


class Generator:
    """The shared corpus generator, as a subprocess and (for batch edits) as a module."""

    def __init__(self, script: Path, env: Env) -> None:
        if not script.is_file():
            raise BenchError(f"corpus generator not found: {script}")
        self.script = script
        self.env = env
        self._module: ModuleType | None = None

    def generate(self, out: Path, n: int, seed: int = 42) -> dict[str, Any]:
        text = quiet(
            [
                sys.executable,
                str(self.script),
                "generate",
                "--out",
                str(out),
                "-n",
                str(n),
                "--seed",
                str(seed),
            ],
            cwd=out.parent,
            env=self.env,
        )
        result: dict[str, Any] = json.loads(text)
        return result

    def queries(self, n: int, seed: int = 42) -> list[dict[str, str]]:
        text = quiet(
            [sys.executable, str(self.script), "queries", "-n", str(n), "--seed", str(seed)],
            cwd=self.script.parent,
            env=self.env,
        )
        result: list[dict[str, str]] = json.loads(text)
        return result

    def mutate(self, repo: Path, seed: int) -> str:
        """Edit one document and commit (the generator's own ``mutate``); returns its path."""
        text = quiet(
            [sys.executable, str(self.script), "mutate", "--repo", str(repo), "--seed", str(seed)],
            cwd=repo,
            env=self.env,
        )
        mutated: str = json.loads(text)["mutated"]
        return mutated

    def _mod(self) -> ModuleType:
        if self._module is None:
            spec = importlib.util.spec_from_file_location("bench_gen_corpus", self.script)
            if spec is None or spec.loader is None:
                raise BenchError(f"cannot load {self.script}")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            self._module = module
        return self._module

    def amend_many(self, repo: Path, seed: int, count: int) -> list[str]:
        """Append an amendment to ``count`` distinct documents (not committed).

        Uses the generator's own vocabulary and paragraph builder, the same edit
        ``mutate`` makes to one document, so a batch commit looks like ``count``
        single mutations squashed together.
        """
        gen = self._mod()
        files = sorted(
            p
            for p in (repo / "docs").rglob("*.md")
            if p.parent.name in {"adr", "prd", "spec", "plan"}
        )
        rng = random.Random(seed)
        targets = rng.sample(files, min(count, len(files)))
        for target in targets:
            spec = gen.DocSpec(
                0,
                "adr",
                "adr",
                rng.choice(gen.COMPONENTS),
                rng.choice(gen.TECHS),
                rng.choice(gen.TECHS),
                rng.choice(gen.QUALITIES),
                gen.make_ident(rng, 3),
                0,
                rng.randrange(1 << 30),
            )
            with target.open("a", encoding="utf-8") as fh:
                fh.write(f"\n## Amendment {seed}\n\n{gen.paragraph(rng, spec, 5)}\n")
        return sorted(t.relative_to(repo).as_posix() for t in targets)


def copy_repo(src: Path, dst: Path, git: Git) -> Path:
    """A byte copy of a repository (its ``.git`` and ``.ragit`` included), index refreshed.

    A copy has new inodes and ctimes, so the stat data cached in git's index no
    longer matches and every status check would re-hash every file (1.1 s at
    N=10,000, against 0.06 s in a normal checkout). ``update-index --refresh``
    rewrites the stat data, as any git command in a real checkout would have.
    """
    if dst.exists():
        shutil.rmtree(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src, dst, symlinks=True)
    git(dst, "update-index", "-q", "--refresh")
    return dst


def build_rfcs_repo(source: Path, repo: Path, git: Git, limit: int = 0) -> int:
    """Copy every ``*.md`` under ``source`` (the first ``limit`` by path when set) into
    ``repo/docs`` (sub-folders kept) and commit."""
    files = sorted(source.rglob("*.md"))
    if limit:
        files = files[:limit]
    if not files:
        raise BenchError(f"no markdown files under {source}")
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    for path in files:
        target = repo / "docs" / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    (repo / "README.md").write_text(
        "# Rust RFCs\n\nReal design documents, copied for benchmarking.\n", encoding="utf-8"
    )
    git(repo, "add", "-A")
    git.commit(repo, "docs: import the Rust RFCs")
    return len(files)


def tree_digest(root: Path) -> dict[str, str]:
    """Every directory and file under ``root``: files by size, mtime and content hash."""
    out: dict[str, str] = {}
    if not root.exists():
        return out
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        base = Path(dirpath)
        rel_dir = base.relative_to(root).as_posix()
        out[rel_dir + "/"] = "dir"
        for name in sorted(filenames):
            path = base / name
            st = path.lstat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "-"
            out[(base / name).relative_to(root).as_posix()] = (
                f"{st.st_size}:{st.st_mtime_ns}:{digest}"
            )
    return out


def diff_digests(before: dict[str, str], after: dict[str, str]) -> list[str]:
    changes = []
    for key in sorted(set(before) | set(after)):
        if key not in before:
            changes.append(f"+ {key}")
        elif key not in after:
            changes.append(f"- {key}")
        elif before[key] != after[key]:
            changes.append(f"~ {key}")
    return changes


def dir_bytes(root: Path, *, allocated: bool = False) -> int:
    """Size of the regular files under ``root`` (0 when missing).

    Apparent bytes (``st_size``, what ``du -sb`` shows) by default; with ``allocated``
    the blocks really used (``du -s``), which is smaller for sparse files such as
    zvec's preallocated vector index, and larger after a copy that filled the holes.
    """
    total = 0
    if not root.exists():
        return 0
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            path = Path(dirpath) / name
            if path.is_file() and not path.is_symlink():
                st = path.stat()
                total += st.st_blocks * 512 if allocated else st.st_size
    return total
