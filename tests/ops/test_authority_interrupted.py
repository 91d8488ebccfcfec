"""An interrupted `doc refresh` or `init --strategy balanced` leaves every file either as it
was or complete (atomic writes), never a temp file, and a rerun finishes the work.

Real processes killed at named phases (RAGIT_FAULT_AT, ``os._exit(137)``) and a full disk
(RAGIT_FAULT_ENOSPC) from the first written document on.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

RAGIT = [sys.executable, "-m", "ragit"]
OLD = {
    "docs/adr/0001-a.md": "Intro a.\n\n## Decision\n\nA.\n",
    "docs/adr/0002-b.md": "Intro b.\n\n## Context\n\nB.\n",
}


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for rel, text in OLD.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def _run(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*RAGIT, *args],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=False,
    )


def _temp_files(root: Path) -> list[str]:
    return [p.name for p in root.rglob("*.tmp")]


def test_a_refresh_killed_after_its_first_document_leaves_the_second_untouched(
    tmp_path: Path,
) -> None:
    root = _repo(tmp_path)
    killed = _run(root, "doc", "refresh", "--format", "json", RAGIT_FAULT_AT="doc-refresh-written")
    assert killed.returncode == 137
    first = (root / "docs/adr/0001-a.md").read_text(encoding="utf-8")
    assert first.startswith("---\ntype: adr\n---\n") and "Intro a." in first
    assert (root / "docs/adr/0002-b.md").read_text(encoding="utf-8") == OLD["docs/adr/0002-b.md"]
    assert _temp_files(root) == []
    rerun = _run(root, "doc", "refresh", "--format", "json")
    assert rerun.returncode == 0, rerun.stderr
    assert (root / "docs/adr/0001-a.md").read_text(encoding="utf-8") == first
    assert "## Decision" in (root / "docs/adr/0002-b.md").read_text(encoding="utf-8")


def test_a_full_disk_during_refresh_fails_without_a_partial_document(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    full = _run(
        root, "doc", "refresh", "--format", "json", RAGIT_FAULT_ENOSPC="doc-refresh-written"
    )
    assert full.returncode != 0
    assert (root / "docs/adr/0002-b.md").read_text(encoding="utf-8") == OLD["docs/adr/0002-b.md"]
    assert "Intro a." in (root / "docs/adr/0001-a.md").read_text(encoding="utf-8")
    assert _temp_files(root) == []


def test_an_init_killed_between_drafts_resumes_without_touching_the_first(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    args = ("init", "--yes", "--strategy", "balanced", "--format", "json")
    killed = _run(root, *args, RAGIT_FAULT_AT="init-draft-written:2")
    assert killed.returncode == 137
    assert (root / "RAGIT.md").is_file() and (root / "docs/workspace-map.md").is_file()
    assert not (root / "docs/known-gaps.md").exists()
    drafted = (root / "RAGIT.md").read_bytes()
    assert _temp_files(root) == []
    rerun = _run(root, *args)
    assert rerun.returncode == 0, rerun.stderr
    assert (root / "RAGIT.md").read_bytes() == drafted
    assert (root / "docs/known-gaps.md").is_file() and (root / "AGENTS.md").is_file()
