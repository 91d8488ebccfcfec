"""The worktree scan under a worktree git (or an editor) is rewriting: never an untyped error.

A real subprocess deletes and rewrites tracked files while the scan runs (what `git checkout`
does): libgit2 fails a scan whose file changed between its stat and its read.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from ragit.contract.errors import RepositoryStateChanged
from ragit.snapshot._git import GitRepo

_CHURN = """
import os, sys, time
root, seconds = sys.argv[1], float(sys.argv[2])
names = sorted(n for n in os.listdir(root) if n.endswith(".md"))
sizes = {n: os.path.getsize(os.path.join(root, n)) for n in names}
end = time.monotonic() + seconds
i = 0
while time.monotonic() < end:
    name = names[i % len(names)]
    i += 1
    path = os.path.join(root, name)
    os.unlink(path)
    with open(path, "w") as f:
        f.write("y" * (sizes[name] // 3))
        f.flush()
        time.sleep(0.002)
        f.write("y" * (sizes[name] - sizes[name] // 3))
"""


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    for i in range(20):
        (root / f"doc{i}.md").write_text(f"# Doc {i}\n\n" + "words " * 30000, encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "docs"],
        cwd=root,
        check=True,
    )
    return root


def test_a_scan_raced_by_rewrites_retries_or_fails_typed(tmp_path: Path) -> None:
    """Implementation choice: "error reading file for hashing" never escapes as an untyped error."""
    root = _repo(tmp_path)
    git = GitRepo(root)
    churn = subprocess.Popen([sys.executable, "-c", _CHURN, str(root), "6"])
    outcomes = {"ok": 0, "typed": 0}
    try:
        time.sleep(0.2)
        while churn.poll() is None:
            try:
                git.dirty_paths()
                outcomes["ok"] += 1
            except RepositoryStateChanged as exc:
                assert exc.retryable and exc.details["attempts"] >= 2
                outcomes["typed"] += 1
            assert isinstance(git.is_dirty(), bool)
    finally:
        churn.kill()
        churn.wait()
    assert outcomes["ok"] > 0, outcomes
