"""The write guard refuses Python-level writes inside the repository (defence in depth).

Audit hooks cannot be removed, so each check runs in a fresh interpreter.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from _mcp_helpers import assert_unchanged, tree_state

SCRIPT = r"""
import json, os, shutil, sys
from pathlib import Path
from ragit.mcp import write_guard

root, outside = Path(sys.argv[1]), Path(sys.argv[2])
write_guard.install(Path(sys.argv[3]))
f = root / "docs" / "a.md"
attempts = {
    "open-w": lambda: open(f, "w", encoding="utf-8"),
    "open-a": lambda: open(f, "a", encoding="utf-8"),
    "open-r+": lambda: open(f, "r+", encoding="utf-8"),
    "open-x": lambda: open(root / "new.md", "x", encoding="utf-8"),
    "write-text": lambda: (root / "new.md").write_text("x", encoding="utf-8"),
    "os-open-creat": lambda: os.open(root / "new.md", os.O_WRONLY | os.O_CREAT),
    "os-open-rdwr": lambda: os.open(f, os.O_RDWR),
    "relative": lambda: open("docs/a.md", "w", encoding="utf-8"),
    "mkdir": lambda: (root / ".ragit").mkdir(),
    "makedirs": lambda: os.makedirs(root / "x" / "y"),
    "rename-in": lambda: os.rename(f, root / "b.md"),
    "rename-out": lambda: os.rename(f, outside / "b.md"),
    "replace-into": lambda: os.replace(outside / "o.txt", root / "o.txt"),
    "remove": lambda: os.remove(f),
    "unlink": lambda: f.unlink(),
    "rmdir": lambda: os.rmdir(root / "empty"),
    "rmtree": lambda: shutil.rmtree(root / "docs"),
    "utime": lambda: os.utime(f),
    "touch": lambda: f.touch(),
    "chmod": lambda: os.chmod(f, 0o600),
    "truncate": lambda: os.truncate(f, 0),
    "symlink": lambda: os.symlink(outside / "o.txt", root / "link"),
    "copyfile": lambda: shutil.copyfile(outside / "o.txt", root / "copy.txt"),
    "git-dir": lambda: open(root / ".git" / "x", "w", encoding="utf-8"),
}
results = {}
for name, attempt in attempts.items():
    try:
        handle = attempt()
        if hasattr(handle, "close"):
            handle.close()
        elif isinstance(handle, int):
            os.close(handle)
        results[name] = "allowed"
    except PermissionError:
        results[name] = "refused"
reads = [f.read_text(encoding="utf-8"), sorted(p.name for p in root.iterdir())]
with open(outside / "o.txt", "a", encoding="utf-8") as h:
    h.write("outside writes are fine\n")
os.makedirs(outside / "made")
print(json.dumps({"results": results, "read": bool(reads[0])}))
"""


def _run(root: Path, outside: Path, guard_root: Path) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(root), str(outside), str(guard_root)],
        cwd=root,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return dict(json.loads(proc.stdout))


def _layout(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "repo"
    (root / "docs").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "empty").mkdir()
    (root / "docs" / "a.md").write_text("# A\n", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.txt").write_text("o\n", encoding="utf-8")
    return root, outside


def test_every_kind_of_write_inside_the_repository_is_refused(tmp_path: Path) -> None:
    """Implementation choice: the server's audit hook refuses writes below the root."""
    root, outside = _layout(tmp_path)
    before = tree_state(root)
    git_before = sorted(p.name for p in (root / ".git").iterdir())
    report = _run(root, outside, root)
    results = report["results"]
    assert isinstance(results, dict)
    assert {k for k, v in results.items() if v != "refused"} == set()
    assert report["read"] is True
    assert_unchanged(before, tree_state(root))
    assert sorted(p.name for p in (root / ".git").iterdir()) == git_before
    assert (outside / "made").is_dir()
    assert "outside writes are fine" in (outside / "o.txt").read_text(encoding="utf-8")


def test_a_root_reached_through_a_symlink_is_guarded_too(tmp_path: Path) -> None:
    """Implementation choice: the guard knows the root by its given and its real path."""
    root, outside = _layout(tmp_path)
    alias = tmp_path / "alias"
    alias.symlink_to(root)
    before = tree_state(root)
    report = _run(root, outside, alias)
    results = report["results"]
    assert isinstance(results, dict)
    assert all(v == "refused" for v in results.values()), results
    assert_unchanged(before, tree_state(root))
