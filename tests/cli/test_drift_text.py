"""`ragit drift` at a terminal reads like `git status`: what needs attention, or one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.cli._pty import git, indexed_docs_basic, plain, ragit_pipe, ragit_pty


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """docs-basic, committed config, HEAD indexed."""
    return indexed_docs_basic(tmp_path_factory.mktemp("drift") / "repo")


def test_nothing_to_report_is_one_all_clear_line(repo: Path) -> None:
    """Implementation choice (docs/history.md): fresh items are not listed in text."""
    out, code = ragit_pty(["drift"], repo)
    assert code == 0, out
    lines = plain(out).strip().splitlines()
    assert len(lines) == 1, out
    assert lines[0].startswith("fresh: nothing suspect or stale (") and "its own snapshot" in out
    assert "docs/adr" not in out


@pytest.fixture(scope="module")
def changed(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The indexed repository plus a commit that changes two documents, not indexed."""
    root = tmp_path_factory.mktemp("drift-changed") / "repo"
    git(repo.parent, "clone", "-q", str(repo), str(root))
    ragit_pipe(["init", "--yes"], root)
    for rel in ("docs/prd/ledger-mvp.md", "docs/adr/0001-double-entry-bookkeeping.md"):
        with (root / rel).open("a", encoding="utf-8") as fh:
            fh.write("\nAmended.\n")
    git(root, "commit", "-qam", "Amend two documents")
    assert ragit_pipe(["ingest", "--all", "--at", "HEAD~1"], root).returncode == 0
    return root


def test_only_suspect_and_stale_items_are_listed_then_the_fix(changed: Path) -> None:
    """Implementation choice (docs/history.md): drift text lists what needs attention."""
    out, code = ragit_pty(["drift"], changed)
    assert code == 0, out
    text = plain(out)
    assert text.startswith("stale: 2 stale, 1 suspect, ")
    assert "  stale   document  docs/adr/0001-double-entry-bookkeeping.md" in text
    assert "  stale   document  docs/prd/ledger-mvp.md  (changed or removed since" in text
    assert "HEAD has no snapshot of its own" in text
    assert "fresh   " not in text and "docs/srs" not in text
    assert text.rstrip().endswith("next: ragit ingest")


def test_a_cut_list_says_how_many_more(changed: Path) -> None:
    """Implementation choice (docs/history.md): -n never cuts silently."""
    out, code = ragit_pty(["drift", "-n", "1"], changed)
    assert code == 0, out
    assert "… 2 more (ragit drift -n 3 lists them)" in plain(out)
    data = json.loads(ragit_pipe(["drift", "-n", "1", "--format", "json"], changed).stdout)
    assert len(data["data"]["items"]) == 1
    assert data["data"]["omitted"] == sum(data["data"]["counts"].values()) - 1
