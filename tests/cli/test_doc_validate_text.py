"""`ragit doc validate` works as a linter: paths as arguments, a summary, an exit status."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.cli._pty import git, plain, ragit_pipe, ragit_pty

from fixtures.build import build_fixture


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """docs-basic: ten typed documents (five break their contract) and three untyped."""
    root = tmp_path_factory.mktemp("validate") / "repo"
    build_fixture("docs-basic", root)
    assert ragit_pipe(["init", "--yes"], root).returncode == 0
    return root


def test_violations_exit_1_and_exit_zero_opts_out(repo: Path) -> None:
    """Contract decision (docs/contract.md): a violation is exit 1 unless --exit-zero."""
    out, code = ragit_pty(["doc", "validate"], repo)
    assert code == 1, out
    text = plain(out)
    assert "docs/adr/0002-idempotency-keys.md: h1-prefix-mismatch: " in text
    assert "10 documents checked: 5 with 9 violation(s); 3 markdown files not checked " in text
    assert "code: DOC_VALIDATION_FAILED" in text
    zero, code = ragit_pty(["doc", "validate", "--exit-zero"], repo)
    assert code == 0 and "DOC_VALIDATION_FAILED" not in zero
    envelope = json.loads(ragit_pipe(["doc", "validate", "--format", "json"], repo).stdout)
    assert envelope["ok"] is False and envelope["data"]["violations"] == 9
    assert envelope["error"]["code"] == "DOC_VALIDATION_FAILED"


def test_paths_are_relative_to_the_current_directory(repo: Path) -> None:
    """Implementation choice (docs/authority.md): paths as a linter takes them."""
    out, code = ragit_pty(["doc", "validate", "adr", "glossary/terms.md"], repo / "docs")
    assert code == 1, out
    text = plain(out)
    assert "3 documents checked: 2 with 3 violation(s)" in text
    assert "docs/prd" not in text
    missing, code = ragit_pty(["doc", "validate", "adr", "nosuch.md"], repo / "docs")
    assert code == 2
    assert "error: invalid value for '<paths>': nosuch.md: no such file or directory" in plain(
        missing
    )


def test_untyped_documents_are_counted_with_how_to_type_them(tmp_path: Path) -> None:
    """Implementation choice (docs/authority.md): nothing checked is explained, not silent."""
    root = tmp_path / "repo"
    build_fixture("docs-basic", root)
    assert ragit_pipe(["init", "--yes"], root).returncode == 0
    for i in range(3):
        (root / f"text/{i:04}-note.md").parent.mkdir(exist_ok=True)
        (root / f"text/{i:04}-note.md").write_text(f"## Summary\n\nNote {i}.\n", encoding="utf-8")
    git(root, "add", "-A")
    out, code = ragit_pty(["doc", "validate", "text"], root)
    assert code == 0, out
    lines = plain(out).strip().splitlines()
    assert lines[0] == "0 documents checked; 3 markdown files not checked (3 untyped)"
    assert lines[1].startswith("  a document is typed by its frontmatter (type: adr,")
