"""`ragit log` at a terminal reads like `git log`: blocks with counts, a pager, --oneline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.cli._pty import git, plain, ragit_pipe, ragit_pty
from tests.snapshot._kit import manifest_data

from fixtures.build import build_fixture

SHARED = "## Unresolved questions\n\nNone so far.\n"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """docs-basic indexed, then two untyped notes sharing one section (one chunk id)."""
    root = tmp_path_factory.mktemp("log") / "repo"
    build_fixture("docs-basic", root)
    assert ragit_pipe(["init", "--yes"], root).returncode == 0
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Track the RAGit config")
    assert ragit_pipe(["ingest", "--all"], root).returncode == 0
    for name in ("alpha", "beta"):
        (root / f"docs/notes/{name}.md").write_text(
            f"Notes on {name}.\n\n{SHARED}", encoding="utf-8"
        )
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Add two notes")
    assert ragit_pipe(["ingest"], root).returncode == 0
    return root


def test_each_commit_is_a_block_with_counts_and_no_paths(repo: Path) -> None:
    """Implementation choice (docs/history.md): paths only with --name-only/--name-status/--stat."""
    out, code = ragit_pty(["log", "-n", "2", "--no-pager"], repo)
    assert code == 0, out
    assert out.count("commit ") == 2
    assert "Add two notes" in out
    assert "docs/notes/alpha.md" not in out  # no path without a flag asking for them
    assert "[unknown]" not in out and "unknown=" not in out
    assert "Semantic delta" not in out
    assert "2 added since" in out and " chunks · " in out


def test_name_status_lists_the_changed_documents(repo: Path) -> None:
    """Implementation choice (docs/history.md): --name-status as git prints it."""
    out, code = ragit_pty(["log", "-n", "1", "--name-status", "--no-pager"], repo)
    assert code == 0, out
    assert "A  docs/notes/alpha.md" in out and "A  docs/notes/beta.md" in out
    only, _ = ragit_pty(["log", "-n", "1", "--name-only", "--no-pager"], repo)
    assert "\ndocs/notes/alpha.md\n" in only
    stat, _ = ragit_pty(["log", "-n", "1", "--stat", "--no-pager"], repo)
    assert "| 2 chunks (+2)" in stat and "2 documents changed: 2 added" in stat


def test_oneline_prints_one_line_per_commit(repo: Path) -> None:
    """Implementation choice (docs/history.md): --oneline is --view minimal."""
    out, code = ragit_pty(["log", "--oneline", "--no-pager", "--show-missing"], repo)
    assert code == 0, out
    lines = [line for line in plain(out).splitlines() if line.strip()]
    commits = git(repo, "rev-list", "--first-parent", "HEAD").split()
    assert len(lines) == len(commits)
    assert lines[0].startswith(commits[0][:7] + " Add two notes  [")
    assert any(line.endswith("[no snapshot]") for line in lines)


def test_log_counts_chunks_as_status_does(repo: Path) -> None:
    """Contract-mandated (docs/contract.md, snapshots): a snapshot's chunks are distinct ids."""
    log = json.loads(ragit_pipe(["log", "-n", "1", "--format", "json"], repo).stdout)
    status = json.loads(ragit_pipe(["status", "--format", "json"], repo).stdout)
    assert log["data"]["entries"][0]["snapshot"]["chunks"] == status["data"]["snapshot"]["chunks"]
    manifest = manifest_data(repo, status["data"]["head"])
    refs = [cid for doc in manifest["docs"] for cid in doc["chunkIds"]]
    assert len(set(refs)) < len(refs)  # the shared section: one chunk, two references
    assert status["data"]["snapshot"]["chunks"] == len(set(refs))


def test_log_at_a_terminal_goes_through_the_pager(repo: Path) -> None:
    """Implementation choice (docs/history.md): PAGER at a terminal, as git does."""
    out, code = ragit_pty(["log", "-n", "1"], repo, PAGER="sed 's/^/paged: /'")
    assert code == 0, out
    assert "paged: \x1b[33mcommit " in out  # colour goes to the pager too (less -R)
    ragit_pager, _ = ragit_pty(["log", "-n", "1"], repo, PAGER="cat", RAGIT_PAGER="sed 's/^/r: /'")
    assert "r: commit " in plain(ragit_pager)


def test_no_pager_a_pipe_and_cat_never_page(repo: Path) -> None:
    """Implementation choice (docs/history.md): never a pager in a pipe or with --no-pager."""
    flag, _ = ragit_pty(["log", "-n", "1", "--no-pager"], repo, PAGER="sed 's/^/paged: /'")
    assert "paged:" not in flag and "commit " in flag
    cat, _ = ragit_pty(["log", "-n", "1"], repo, PAGER="cat")
    assert cat.startswith("\x1b[33mcommit ") or cat.startswith("commit ")
    pipe = ragit_pipe(["log", "-n", "1", "--format", "text"], repo, PAGER="sed 's/^/paged: /'")
    assert pipe.returncode == 0 and "paged:" not in pipe.stdout
    assert pipe.stdout.startswith("commit ")  # no colour in a pipe


def test_view_help_says_what_a_view_changes_for_log(repo: Path) -> None:
    """Implementation choice: each command's --view help speaks of its own results."""
    out, code = ragit_pty(["log", "--help"], repo)
    assert code == 0
    assert "Projection of each hit" not in out
    assert "minimal (one line, as --oneline)" in " ".join(out.split())
