"""What a person reads at a terminal: config values in force, usage lines, quoted globs,
whole summaries in help, emphasis in results, and what makes the worktree dirty."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
from tests.cli._pty import indexed_docs_basic, plain, ragit_pipe, ragit_pty, run_pty

BIN = str(Path(sys.executable).parent)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return indexed_docs_basic(tmp_path_factory.mktemp("details") / "repo")


def test_config_list_shows_the_value_in_force_and_whence(repo: Path) -> None:
    """Implementation choice (docs/config.md): unset keys show what RAGit actually uses."""
    out, code = ragit_pty(["config", "list"], repo)
    assert code == 0, out
    text = plain(out)
    assert re.search(r"^retrieval\.alpha +0\.3  \(local-placeholder's default\)$", text, re.M)
    assert re.search(r"^docs_authority\.sections_adr +Context, Decision, Consequences", text, re.M)
    assert re.search(r"^output\.format +-  \(text at a terminal, json otherwise\)$", text, re.M)
    env, _ = ragit_pty(["config", "list"], repo, RAGIT_FORMAT="text")
    assert re.search(r"^output\.format +text  \(from RAGIT_FORMAT\)$", plain(env), re.M)


def test_an_unquoted_glob_expanded_by_the_shell_says_quote_it(repo: Path) -> None:
    """Implementation choice: the shell's file names are counted, never dumped."""
    env = {"PATH": f"{BIN}:{os.environ.get('PATH', '')}"}
    command = "ragit config set ingest.include docs/*/*.md"  # unquoted: bash expands it
    out, code = run_pty(["bash", "-c", command], repo, env=env)
    assert code == 2, out
    text = plain(out)
    assert "quote the glob so the shell does not expand it: " in text
    assert "ragit config set ingest.include 'docs/**'" in text
    assert text.count(".md") <= 2  # one name as an example, not the list


def test_query_without_a_question_prints_a_usage_line(repo: Path) -> None:
    """Implementation choice: a missing positional is a usage line and an example."""
    out, code = ragit_pty(["query"], repo)
    assert code == 2
    lines = plain(out).strip().splitlines()
    assert lines[0] == "usage: ragit query [OPTIONS] QUESTION... (or --input PATH|-)"
    assert lines[1].startswith('error: missing question, e.g. ragit query "')


@pytest.mark.parametrize("columns", [80, 100, 140])
def test_help_lists_whole_summaries_at_any_width(repo: Path, columns: int) -> None:
    """Implementation choice: command listings wrap a summary instead of cutting it."""
    for group in ([], ["migrate"], ["doc"], ["memory"]):
        argv = [sys.executable, "-m", "ragit", *group, "--help"]
        out, code = run_pty(argv, repo, columns=columns)
        assert code == 0
        body = plain(out).split("Commands:", 1)[1]
        assert "..." not in body, (group, columns, body)
    top, _ = run_pty([sys.executable, "-m", "ragit", "--help"], repo, columns=columns)
    assert "RAGit's version" in " ".join(top.split())


def test_query_results_emphasise_path_and_question_words_at_a_terminal(repo: Path) -> None:
    """Implementation choice (docs/contract.md): emphasis only at a terminal, never NO_COLOR."""
    out, code = ragit_pty(["query", "posting amounts ledger"], repo)
    assert code == 0, out
    assert re.search(r"^1\. \x1b\[1mdocs/[^\x1b]+\.md\x1b\[0m", out, re.M), out
    assert re.search(r"\x1b\[1;33m(?i:posting|amount|ledger)[a-z]*\x1b\[0m", out), out
    no_colour, _ = ragit_pty(["query", "posting amounts ledger"], repo, NO_COLOR="1")
    assert "\x1b[" not in no_colour
    pipe = ragit_pipe(["query", "posting amounts ledger", "--format", "text"], repo)
    assert pipe.returncode == 0 and "\x1b[" not in pipe.stdout


def test_status_says_what_makes_the_worktree_dirty(repo: Path) -> None:
    """Implementation choice (docs/contract.md): counts, paths and the documents ingest reads."""
    (repo / "scratch.txt").write_text("x\n", encoding="utf-8")
    (repo / "docs/notes/draft.md").write_text("# Draft\n", encoding="utf-8")
    try:
        out, code = ragit_pty(["status"], repo)
    finally:
        (repo / "scratch.txt").unlink()
        (repo / "docs/notes/draft.md").unlink()
    assert code == 0, out
    line = next(x for x in plain(out).splitlines() if x.startswith("dirty:"))
    assert line == (
        "dirty:        yes — 2 untracked (docs/notes/draft.md, scratch.txt); "
        "1 document to commit before ingest: docs/notes/draft.md"
    )
