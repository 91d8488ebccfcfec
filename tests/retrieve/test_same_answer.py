"""Same commit, same answer (docs/store.md, "The keyword index"): a query's result is a function of
the snapshot, the question, the configuration and the RAGit version — nothing else the store holds.

Answers recorded at a snapshot S must stay byte-identical (hits, order, every score) after
25 later commits are indexed, after an unrelated branch is indexed, after the store's
segments are merged, after a store rebuild, and on another clone that indexed only S.
The documents share one small vocabulary, so store-wide keyword statistics would move
every score (they did: before the store kept its own per-snapshot statistics, 2 of 26
questions changed at S after 25 commits).
"""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tests.snapshot._kit import RagitRepo, private_cache  # noqa: F401

from fixtures.build import load_fixture

# fmt: off
VOCAB = [
    "writer", "lock", "store", "snapshot", "commit", "query", "ingest", "manifest", "chunk",
    "segment", "merge", "publish", "reader", "copy", "journal", "recovery", "index", "vector",
    "keyword", "score", "rank", "token", "budget", "context", "pack", "memory", "session",
    "branch", "rebuild", "compaction", "generation", "cache", "hook", "doctor", "repair",
    "status",
]
# fmt: on
QUESTIONS = [
    "writer lock recovery",
    "how does the reader copy a published snapshot",
    "keyword score rank",
    "merge segment compaction generation",
    "context pack token budget",
    "hook doctor repair",
    "journal",
    "branch commit manifest chunk",
]


def _doc(rng: random.Random, title: str, sections: int = 3) -> str:
    parts = [f"# {title}\n"]
    for s in range(sections):
        words = " ".join(rng.choice(VOCAB) for _ in range(rng.randint(20, 60)))
        parts.append(f"## {title} part {s}\n\n{words}.\n")
    return "\n".join(parts)


def _git(root: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, check=True, timeout=120
    )
    return proc.stdout.strip()


def _new_repo(root: Path, files: dict[str, str]) -> RagitRepo:
    from ragit.cli.commands.init import init_repository

    root.mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    repo = RagitRepo(root.resolve(), "docs-basic", load_fixture("docs-basic"))
    init_repository(repo.root, git_init=False, dry_run=False)
    repo.git("add", "--", ".gitignore", ".ragit/config.toml")
    repo.commit(files, "docs")
    return repo


def _answers(repo: RagitRepo, at: str) -> str:
    out: list[Any] = []
    for question in QUESTIONS:
        data = repo.query(question, at=at, top_k=10)
        out.append([question, data["hits"]])
    return json.dumps(out, sort_keys=True)


@pytest.mark.slow
def test_answers_at_a_snapshot_never_move(tmp_path: Path) -> None:
    rng = random.Random(13)
    files = {f"docs/adr/{i:03d}.md": _doc(rng, f"Decision {i}") for i in range(10)}
    repo = _new_repo(tmp_path / "repo", files)
    repo.ingest(all=True)
    s = repo.head()
    before = _answers(repo, s)
    assert all(hit for _q, hit in json.loads(before)), "every question has hits at S"

    # 25 later commits on main, each indexed: edits, additions and a deletion, all in the
    # same vocabulary (every keyword statistic of the whole store moves).
    for n in range(25):
        change: dict[str, str | None] = {f"docs/plans/{n:03d}.md": _doc(rng, f"Plan {n}", 4)}
        if n % 5 == 0:
            change[f"docs/adr/{n % 10:03d}.md"] = _doc(rng, f"Decision {n % 10} revised")
        if n == 12:
            change["docs/adr/009.md"] = None
        repo.commit(change, f"change {n}")
        repo.ingest()
    assert _answers(repo, s) == before, "answers at S moved after 25 indexed commits"

    # An unrelated branch, indexed.
    repo.git("checkout", "-q", "--orphan", "side")
    repo.git("rm", "-rqf", "docs")
    repo.commit({f"docs/side/{i:02d}.md": _doc(rng, f"Side {i}", 5) for i in range(12)}, "side")
    repo.ingest(all=True)
    repo.git("checkout", "-q", "-f", "main")
    assert _answers(repo, s) == before, "answers at S moved after another branch was indexed"

    # Segments merged (the background compactor, run to completion here).
    from ragit.store.compact import compact

    compact(repo.root, wait_s=10)
    assert _answers(repo, s) == before, "answers at S moved after a merge"

    # The store rebuilt from git.
    run = repo.ragit("repair", "--apply", "--action", "store-rebuild", "--format", "json")
    assert run.code == 0, run.output
    assert _answers(repo, s) == before, "answers at S moved after a store rebuild"

    # Another clone that indexed only S.
    clone_root = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", str(repo.root), str(clone_root))
    clone = RagitRepo(clone_root.resolve(), "docs-basic", load_fixture("docs-basic"))
    clone.git("checkout", "-q", s)
    clone.ingest(all=True)
    assert _answers(clone, s) == before, "another clone of S answers differently"
