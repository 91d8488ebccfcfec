"""The `doc` commands never write through a symlink out of the repository: refresh does not
follow symlinked documents or directories, create refuses a path whose directory leads out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

RAGIT = [sys.executable, "-m", "ragit"]


def _run(root: Path, *args: str) -> tuple[int, dict[str, object]]:
    out = subprocess.run(
        [*RAGIT, *args, "--format", "json"], cwd=root, capture_output=True, text=True, check=False
    )
    return out.returncode, json.loads(out.stdout)


def _setup(tmp_path: Path) -> tuple[Path, Path]:
    outside = tmp_path / "outside"
    (outside / "adr").mkdir(parents=True)
    (outside / "adr" / "0001-x.md").write_text("# x\n", encoding="utf-8")
    root = tmp_path / "repo"
    (root / "docs").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    os.symlink(outside / "adr", root / "docs" / "adr")
    os.symlink(outside / "adr" / "0001-x.md", root / "docs" / "linked-adr.md")
    return root, outside


def test_refresh_leaves_documents_behind_symlinks_alone(tmp_path: Path) -> None:
    root, outside = _setup(tmp_path)
    code, env = _run(root, "doc", "refresh", "--files", "docs/**")
    assert code == 0
    assert env["data"]["plannedFiles"] == []  # type: ignore[index]
    assert (outside / "adr" / "0001-x.md").read_text(encoding="utf-8") == "# x\n"


def test_create_refuses_a_directory_that_leads_out_of_the_repository(tmp_path: Path) -> None:
    root, outside = _setup(tmp_path)
    code, env = _run(root, "doc", "create", "--type", "adr", "--title", "Escape")
    assert code == 2
    assert env["error"]["code"] == "INPUT_INVALID"  # type: ignore[index]
    assert env["error"]["details"]["field"] == "path"  # type: ignore[index]
    code, env = _run(
        root, "doc", "create", "--type", "adr", "--title", "E", "--path", "docs/adr/e.md"
    )
    assert code == 2 and env["error"]["details"]["field"] == "path"  # type: ignore[index]
    assert sorted(p.name for p in (outside / "adr").iterdir()) == ["0001-x.md"]
