"""`ragit init`'s scan and assessment (docs/authority.md) on real repositories built in tmp_path:
a pnpm monorepo, a single-package Python project, a docs-heavy repository; .gitignore is
honoured and symlinks never lead the scan out of the repository."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from ragit.ingest.doctype import detect_doc_type
from ragit.ops.authority.contracts import detect_head
from ragit.ops.authority.discover.assess import classify, coverage, knowledge_map, maturity
from ragit.ops.authority.discover.scan import scan_repository


def _repo(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _pnpm(root: Path) -> Path:
    pkg = {"name": "mono", "private": True, "packageManager": "pnpm@9.0.0"}
    files = {
        "package.json": json.dumps(pkg),
        "pnpm-workspace.yaml": "packages:\n  - 'apps/*'\n  - 'packages/*'\n",
        "pnpm-lock.yaml": "lockfileVersion: '9.0'\n",
        "turbo.json": "{}",
        "README.md": "# Mono\n\n## Getting started\n\npnpm install\n",
        ".github/workflows/ci.yml": "on: push\n",
        "apps/web/package.json": json.dumps({"dependencies": {"next": "14", "react": "18"}}),
        "apps/web/src/page.tsx": "export default 1\n",
        "packages/ui/package.json": json.dumps({"dependencies": {"react": "18"}}),
        "packages/ui/README.md": "# UI\n",
        "packages/ui/src/button.tsx": "export const b = 1\n",
        "packages/config/package.json": "{}",
        "packages/config/index.js": "module.exports = {}\n",
    }
    return _repo(root, files)


def test_a_pnpm_monorepo_is_classified_with_its_apps_packages_and_frameworks(
    tmp_path: Path,
) -> None:
    root = _pnpm(tmp_path / "mono")
    scan = scan_repository(root, git_detected=True)
    assert scan.package_manager == "pnpm"
    assert scan.monorepo is True
    assert scan.workspace_files == ["pnpm-workspace.yaml", "turbo.json"]
    assert scan.apps == ["apps/web"]
    assert scan.packages == ["packages/config", "packages/ui"]
    assert scan.frameworks == ["next", "react"]
    assert scan.languages[0] == "typescript"
    assert scan.ci_files == [".github/workflows/ci.yml"]
    assert classify(scan, "auto") == "monorepo"
    cov = coverage(root, scan, initialized=False)
    assert cov["packageOwnershipMap"] == {"status": "partial", "sources": ["packages/ui/README.md"]}
    assert cov["localDevelopmentGuide"]["status"] == "partial"  # README's Getting started


def test_a_single_package_python_project_is_an_existing_repository(tmp_path: Path) -> None:
    pyproject = '[project]\nname = "x"\ndependencies = ["click>=8", "pydantic"]\n'
    files = {
        "pyproject.toml": pyproject,
        "uv.lock": "",
        "README.md": "# X\n" + "text\n" * 200,
        "CONTRIBUTING.md": "# Contributing\n",
        "docs/architecture.md": "# Architecture\n",
        "docs/adr/0001-use-click.md": "# ADR: Use click\n",
        "tests/fixtures/docs/adr/0001-test-data.md": "# ADR: Test data\n",
        "src/x/__init__.py": "",
        "src/x/cli.py": "import click\n",
        "Dockerfile": "FROM python\n",
    }
    root = _repo(tmp_path / "py", files)
    scan = scan_repository(root, git_detected=True)
    assert scan.package_manager == "uv"
    assert scan.languages == ["python"]
    assert scan.frameworks == ["click", "pydantic"]
    assert scan.monorepo is False
    assert scan.infra_files == ["Dockerfile"]
    assert classify(scan, "auto") == "existing"
    cov = coverage(root, scan, initialized=False)
    assert {k: v["status"] for k, v in cov.items()} == {
        "projectOverview": "sufficient",
        "localDevelopmentGuide": "sufficient",
        "architectureRationale": "sufficient",
        "decisionRecords": "sufficient",
        "packageOwnershipMap": "partial",
        "ingestionPolicy": "missing",
    }
    assert cov["decisionRecords"]["sources"] == ["docs/adr/0001-use-click.md"]  # not test data
    scores = maturity(scan, cov)
    assert set(scores) == {
        "discoverability",
        "architectureClarity",
        "operationalReadiness",
        "agentReadability",
    }
    assert all(0 <= v <= 100 for v in scores.values())
    slots = [entry["slot"] for entry in knowledge_map(scan, cov)]
    assert slots[0] == "project" and slots[-1] == "ingestion-policy" and len(slots) == 9


def test_a_docs_heavy_repository_and_an_empty_one(tmp_path: Path) -> None:
    docs = {f"docs/spec/s{i}.md": f"# SPEC: s{i}\n" for i in range(25)}
    root = _repo(tmp_path / "docs", {**docs, "tool.py": ""})
    scan = scan_repository(root, git_detected=True)
    assert classify(scan, "auto") == "docs-heavy"
    assert scan.wire()["docTypes"] == {"spec": 25}
    empty = _repo(tmp_path / "empty", {})
    assert classify(scan_repository(empty, git_detected=True), "auto") == "empty"
    assert classify(scan, "monorepo") == "monorepo"  # --mode overrides detection


def test_the_scan_honours_gitignore_and_never_follows_symlinks(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    for i in range(5):
        (outside / f"m{i}.py").write_text("", encoding="utf-8")
    (outside / "SECRET.md").write_text("# ADR: outside\n", encoding="utf-8")
    root = _repo(
        tmp_path / "repo",
        {".gitignore": "build/\n*.log\n", "build/gen.py": "", "a.log": "", "main.go": ""},
    )
    os.symlink(outside, root / "linked")
    os.symlink(outside / "SECRET.md", root / "secret.md")
    scan = scan_repository(root, git_detected=True)
    assert scan.files == [".gitignore", "main.go"]
    assert scan.symlinks == ["linked", "secret.md"]
    assert scan.code_file_count == 1
    assert scan.docs == []


def test_init_balanced_writes_drafts_once_and_a_rerun_changes_nothing(tmp_path: Path) -> None:
    root = _pnpm(tmp_path / "mono")
    ragit = [sys.executable, "-m", "ragit"]

    def init(*extra: str) -> dict[str, object]:
        out = subprocess.run(
            [*ragit, "init", "--yes", "--strategy", "balanced", "--format", "json", *extra],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        )
        data: dict[str, object] = json.loads(out.stdout)["data"]
        return data

    def tree() -> dict[str, bytes]:
        return {
            p.relative_to(root).as_posix(): p.read_bytes()
            for p in root.rglob("*")
            if p.is_file() and ".git" not in p.relative_to(root).parts
        }

    before = tree()
    planned = init("--dry-run")
    assert tree() == before
    first = init()
    assert first["actions"]["created"] == [  # type: ignore[index]
        "RAGIT.md",
        "docs/workspace-map.md",
        "docs/ragit/ingestion-policy.md",
        "docs/known-gaps.md",
        "docs/adr/README.md",
        "AGENTS.md",
    ]
    assert [a["path"] for a in planned["actions"]["planned"] if a["type"] == "create"] == (  # type: ignore[index]
        first["actions"]["created"]  # type: ignore[index]
    )
    workspace_map = (root / "docs/workspace-map.md").read_text(encoding="utf-8")
    assert workspace_map.startswith("<!-- ragit:inferred-draft")
    assert "`apps/web`" in workspace_map and "`packages/ui`" in workspace_map
    after_first = tree()
    second = init()
    assert second["actions"]["created"] == []  # type: ignore[index]
    assert tree() == after_first


_HEAD_LINES = st.sampled_from(
    [
        "---",
        "...",
        "type: adr",
        "type: note",
        "# comment in frontmatter",
        "title: Plan",
        "# ADR: x",
        "# Glossary of things",
        "Roadmap",
        "=====",
        "```",
        "# Plan inside a fence",
        "```",
        "text",
        "## SRS",
        "",
    ]
)


@settings(max_examples=400, deadline=None)
@given(
    lines=st.lists(_HEAD_LINES, max_size=12),
    path=st.sampled_from(["docs/x.md", "docs/adr/x.md", "notes/plan.md", "README.md"]),
)
# Found by this test: a `---` block that is not `key: value` lines is no frontmatter to
# ingest, so its fence opens in the body and the first heading is the one after it.
@example(
    lines=["---", "```", "---", "# comment in frontmatter", "```", "# ADR: x"], path="docs/x.md"
)
def test_the_scan_detects_the_type_from_a_head_exactly_as_ingest_does(
    lines: list[str], path: str
) -> None:
    text = "\n".join(lines)
    assert detect_head(path, text) == detect_doc_type(path, text)
