"""Text from commits and documents never steers the terminal it is printed on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.cli._pty import git, ragit_pipe, ragit_pty

from fixtures.build import build_fixture

TITLE = "\x1b]0;pwned\x07"  # retitles the terminal window
CLEAR = "\x1b[2J"  # clears the screen
C1_CSI = "\u009b2J"  # the 8-bit form of the same
BIDI = "\u202e"  # right-to-left override


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("escapes") / "repo"
    build_fixture("docs-basic", root)
    assert ragit_pipe(["init", "--yes"], root).returncode == 0
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Track the RAGit config")
    (root / "docs/adr/0042-escapes.md").write_text(
        f"# ADR: Escape {CLEAR}sequences\n\n## Decision {TITLE}\n\n"
        f"Ledger escapes are shown{C1_CSI} as text {BIDI}never run.\n",
        encoding="utf-8",
    )
    git(root, "add", "-A")
    git(root, "commit", "-qm", f"Ledger escapes {TITLE} and {CLEAR}{C1_CSI}{BIDI}")
    assert ragit_pipe(["ingest", "--all"], root).returncode == 0
    return root


@pytest.mark.parametrize(
    "args",
    [
        ["log", "-n", "1", "--no-pager"],
        ["log", "-n", "1", "--oneline", "--no-pager"],
        ["query", "ledger escapes sequences"],
        ["context", "pack", "ledger escapes sequences"],
    ],
    ids=["log", "log-oneline", "query", "context-pack"],
)
def test_control_characters_are_shown_never_sent_to_the_terminal(
    repo: Path, args: list[str]
) -> None:
    """Contract-mandated (docs/contract.md, "Text output"): controls become visible escapes."""
    out, code = ragit_pty(args, repo)
    assert code == 0, out
    assert "\x07" not in out and "\x1b]" not in out and "\x1b[2J" not in out
    assert "\u009b" not in out and BIDI not in out
    assert "\\x1b]0;pwned\\x07" in out or "\\x1b[2J" in out, out
    assert "\\x9b2J" in out or "\\u202e" in out or "\\x1b" in out


def test_colour_of_ragit_itself_survives_at_a_terminal(repo: Path) -> None:
    """Implementation choice: only colour sequences RAGit writes itself reach the terminal."""
    out, code = ragit_pty(["status"], repo)
    assert code == 0
    assert "\x1b[32mindexed\x1b[0m" in out


def test_json_escapes_c1_and_bidirectional_controls(repo: Path) -> None:
    """Implementation choice: JSON writes DEL, C1 and bidi controls as \\u escapes."""
    proc = ragit_pipe(["log", "-n", "1", "--format", "json"], repo)
    assert proc.returncode == 0, proc.stderr
    assert "\u009b" not in proc.stdout and BIDI not in proc.stdout
    assert "\\u009b" in proc.stdout and "\\u202e" in proc.stdout
    subject = json.loads(proc.stdout)["data"]["entries"][0]["subject"]
    assert C1_CSI in subject and BIDI in subject  # the value itself is unchanged
