"""Committed symlinks inside `.ragit/` never make RAGit write outside the repository.

A repository can commit `.ragit/manifest`, `.ragit/runtime` or `.ragit/reports/narrative`
(even `.ragit` itself) as a symlink to anywhere. Every command that writes refuses such a
symlink before it writes (FILESYSTEM_UNUSABLE, reason `outside-repository`), the hook
runner logs the refusal instead of ingesting, and the hook script writes nothing through a
symlinked `.ragit/runtime`. Symlinks that stay inside the repository are followed as before.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.cli._many import run_many
from tests.snapshot._kit import (
    RagitRepo,
    indexed_repo,
    private_cache,  # noqa: F401 - autouse fixture
)

# The directory made a symlink, and the commands that would write through it.
CASES = {
    "manifest": [("ingest",), ("ingest", "--all")],
    "runtime": [("ingest",), ("repair", "--apply"), ("memory", "wrap", "--input", "-")],
    "store": [("ingest",)],
    "reports/narrative": [("narrative",)],
    "": [("config", "set", "retrieval.top_k", "6"), ("init", "--yes")],
}


def _files(directory: Path) -> list[str]:
    return sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*"))


def _link_outside(repo: RagitRepo, rel: str, outside: Path) -> Path:
    """Move ``.ragit/<rel>`` to ``outside`` (when it exists) and leave a symlink to it."""
    path = repo.ws.ragit_dir / rel if rel else repo.ws.ragit_dir
    target = outside / (rel.replace("/", "-") or "ragit")
    outside.mkdir(parents=True, exist_ok=True)
    if path.exists():
        path.rename(target)
    else:
        target.mkdir(parents=True)
        path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target, target_is_directory=True)
    return target


@pytest.mark.parametrize("rel", list(CASES), ids=[r or ".ragit" for r in CASES])
def test_a_command_that_writes_refuses_a_ragit_symlink_leading_outside_the_repository(
    tmp_path: Path, rel: str
) -> None:
    """Docs/contract.md (FILESYSTEM_UNUSABLE, outside-repository): typed, naming the symlink,
    and not one file is created or changed through it."""
    repo = indexed_repo(tmp_path, "docs-basic")
    repo.commit({"docs/notes/new.md": "# New\n\nA new note.\n"}, "new note")
    target = _link_outside(repo, rel, tmp_path / "outside")
    before = {name: (target / name).stat().st_mtime_ns for name in _files(target)}

    ran = run_many(repo.root, CASES[rel])

    shown = ".ragit" + (f"/{rel}" if rel else "")
    for command, run in ran.items():
        assert run.code == 3, (command, run.output)
        assert run.error["code"] == "FILESYSTEM_UNUSABLE", (command, run.error)
        assert run.error["details"]["reason"] == "outside-repository"
        assert run.error["details"]["path"] == shown
        assert run.error["details"]["target"] == str(target)
    after = {name: (target / name).stat().st_mtime_ns for name in _files(target)}
    assert after == before


def test_a_symlink_that_stays_inside_the_repository_is_followed(tmp_path: Path) -> None:
    """Implementation choice: only symlinks that leave the repository are refused."""
    repo = indexed_repo(tmp_path, "docs-basic")
    inside = repo.root / "ragit-reports"
    inside.mkdir()
    (repo.ws.ragit_dir / "reports").symlink_to(inside, target_is_directory=True)

    ran = run_many(repo.root, [("narrative",)])

    assert ran["narrative"].code == 0, ran["narrative"].output
    assert any(p.suffix == ".html" for p in (inside / "narrative").iterdir())


def test_the_hook_runner_refuses_a_symlinked_runtime_and_writes_nothing_there(
    tmp_path: Path,
) -> None:
    """Implementation choice: the background ingest a hook starts logs the refusal (one JSON
    line on stdout) and creates no lock, request or journal through the symlink."""
    repo = indexed_repo(tmp_path, "docs-basic")
    repo.commit({"docs/notes/new.md": "# New\n\nA new note.\n"}, "new note")
    target = _link_outside(repo, "runtime", tmp_path / "outside")
    before = _files(target)

    run = subprocess.run(
        [sys.executable, "-m", "ragit.hooks.run", "post-commit"],
        cwd=repo.root,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )

    assert run.returncode == 0, run.stderr
    assert '"code": "FILESYSTEM_UNUSABLE"' in run.stdout, run.stdout
    assert _files(target) == before


def test_the_hook_script_appends_nothing_through_a_symlinked_runtime(tmp_path: Path) -> None:
    """Implementation choice: the managed hook script skips a symlinked .ragit/runtime (its
    log would land outside the repository); git is never blocked."""
    repo = indexed_repo(tmp_path, "docs-basic")
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    install = repo.ragit("hooks", "install", "--format", "json")
    assert install.code == 0, install.output
    target = _link_outside(repo, "runtime", tmp_path / "outside")
    before = _files(target)

    repo.write("docs/notes/new.md", "# New\n\nA new note.\n")
    repo.git("add", "docs/notes/new.md")
    commit = subprocess.run(
        ["git", "commit", "-q", "-m", "new note"],
        cwd=repo.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert commit.returncode == 0, commit.stderr
    deadline = time.monotonic() + 3.0  # a background job would have written by then
    while time.monotonic() < deadline and _files(target) == before:
        time.sleep(0.1)
    assert _files(target) == before
