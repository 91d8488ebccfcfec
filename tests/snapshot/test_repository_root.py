"""The shared store's default repository name, ``git:<root commit>``, without walking the
whole history each time: the roots found are kept in the user cache and a later walk stops
at the first commit it knows (``ragit.snapshot.repository``)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from ragit.config import RagitConfig
from ragit.snapshot import repository
from ragit.workspace import Workspace

ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def _git(root: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", *args], cwd=root, env={**os.environ, **ENV}, check=True, capture_output=True
    )
    return out.stdout.decode().strip()


def _commit(root: Path, text: str) -> str:
    (root / "f.txt").write_text(text, encoding="utf-8")
    _git(root, "add", "f.txt")
    _git(root, "commit", "-q", "-m", text)
    return _git(root, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    repository._roots.clear()
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    for n in range(5):
        _commit(root, f"commit {n}")
    return root


def _name(root: Path) -> str:
    repository._roots.clear()  # a new process
    return repository.store_repository(Workspace(root), RagitConfig())


def _cache(root: Path) -> Path:
    cache = Path(os.environ["XDG_CACHE_HOME"]) / "ragit"
    return cache / "roots" / f"{Workspace(root).repo_id}.json"


def _orphan_root(root: Path) -> str:
    """A second parentless commit in the repository (an unrelated branch)."""
    _git(root, "checkout", "-q", "--orphan", "other")
    orphan = _commit(root, "unrelated history")
    _git(root, "checkout", "-q", "-f", "main")
    return orphan


def test_the_root_is_cached_outside_the_repository(repo: Path) -> None:
    first = _git(repo, "rev-list", "--max-parents=0", "HEAD")
    head = _git(repo, "rev-parse", "HEAD")
    before = _git(repo, "status", "--porcelain", "--ignored")
    assert _name(repo) == f"git:{first}"
    assert json.loads(_cache(repo).read_text(encoding="utf-8")) == {"tips": {head: first}}
    assert _git(repo, "status", "--porcelain", "--ignored") == before


def test_a_later_walk_stops_at_the_first_commit_it_knows(repo: Path) -> None:
    """The cache maps the old HEAD to another parentless commit: a walk from a newer HEAD
    that stopped there answers with that commit, which a full walk never would."""
    old_head = _git(repo, "rev-parse", "HEAD")
    orphan = _orphan_root(repo)
    _cache(repo).parent.mkdir(parents=True, exist_ok=True)
    _cache(repo).write_text(json.dumps({"tips": {old_head: orphan}}), encoding="utf-8")
    new_head = _commit(repo, "one more")
    assert _name(repo) == f"git:{orphan}"
    tips = json.loads(_cache(repo).read_text(encoding="utf-8"))["tips"]
    assert tips == {old_head: orphan, new_head: orphan}


@pytest.mark.parametrize(
    "content",
    ["not json", '{"tips": {"HEAD": "0000000000000000000000000000000000000000"}}', '["tips"]'],
)
def test_a_damaged_or_foreign_cache_is_walked_past(repo: Path, content: str) -> None:
    first = _git(repo, "rev-list", "--max-parents=0", "HEAD")
    head = _git(repo, "rev-parse", "HEAD")
    _cache(repo).parent.mkdir(parents=True, exist_ok=True)
    _cache(repo).write_text(content.replace("HEAD", head), encoding="utf-8")
    assert _name(repo) == f"git:{first}"
    assert json.loads(_cache(repo).read_text(encoding="utf-8"))["tips"][head] == first


def test_a_cached_root_that_is_not_a_parentless_commit_is_ignored(repo: Path) -> None:
    first = _git(repo, "rev-list", "--max-parents=0", "HEAD")
    head = _git(repo, "rev-parse", "HEAD")
    parent = _git(repo, "rev-parse", "HEAD~1")
    _cache(repo).parent.mkdir(parents=True, exist_ok=True)
    _cache(repo).write_text(json.dumps({"tips": {head: parent}}), encoding="utf-8")
    assert _name(repo) == f"git:{first}"


def test_a_cache_that_cannot_be_written_still_names_the_repository(repo: Path) -> None:
    """The cache's directory is a file (as a read-only or broken cache would refuse it)."""
    first = _git(repo, "rev-list", "--max-parents=0", "HEAD")
    _cache(repo).parent.parent.mkdir(parents=True, exist_ok=True)
    _cache(repo).parent.write_text("not a directory", encoding="utf-8")
    assert _name(repo) == f"git:{first}"
    assert _name(repo) == f"git:{first}"


def test_a_cache_tip_count_is_bounded(repo: Path) -> None:
    for n in range(repository.KEEP_TIPS + 3):
        _commit(repo, f"more {n}")
        _name(repo)
    tips = json.loads(_cache(repo).read_text(encoding="utf-8"))["tips"]
    assert len(tips) == repository.KEEP_TIPS
    assert _git(repo, "rev-parse", "HEAD") in tips
