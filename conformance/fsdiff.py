"""The repository's files before and after the step under test, and the ``fs`` expectation.

A file's state is its SHA-256 and ``mtime_ns``, a symlink's its target; a changed path
is ``created``, ``removed``, ``modified`` (bytes) or ``touched`` (mtime only).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any

FileState = tuple[str, str, int]


def fs_snapshot(root: Path) -> dict[str, FileState]:
    """Map every regular file and symlink under ``root`` (``.git`` excluded) to its state.

    A file's state is ``("file", sha256, mtime_ns)``; a symlink's is
    ``("link", target, 0)``.
    """
    state: dict[str, FileState] = {}
    if not root.is_dir():
        return state
    for dirpath, dirnames, files in os.walk(root):
        here = Path(dirpath)
        if here == root:
            dirnames[:] = [d for d in dirnames if d != ".git"]
        names = [f for f in files if not (here == root and f == ".git")]
        for name in [*names, *(d for d in dirnames if (here / d).is_symlink())]:
            path = here / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                state[rel] = ("link", os.readlink(path), 0)
            elif path.is_file():
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                state[rel] = ("file", digest, path.stat().st_mtime_ns)
    return state


def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a repository glob: ``*`` and ``?`` stay in one segment, ``**`` crosses them."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append(r"(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(r".*")
            i += 2
        elif pattern[i] == "*":
            out.append(r"[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append(r"[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def fs_diff(before: dict[str, FileState], after: dict[str, FileState]) -> dict[str, list[str]]:
    """Classify changed paths: created, removed, modified (bytes), touched (mtime only)."""
    diff: dict[str, list[str]] = {"created": [], "removed": [], "modified": [], "touched": []}
    for rel in sorted(set(before) | set(after)):
        old, new = before.get(rel), after.get(rel)
        if old is None:
            diff["created"].append(rel)
        elif new is None:
            diff["removed"].append(rel)
        elif old[:2] != new[:2]:
            diff["modified"].append(rel)
        elif old != new:
            diff["touched"].append(rel)
    return diff


def check_fs(expect: Any, diff: dict[str, list[str]]) -> list[str]:
    """Compare a filesystem diff with the case's ``fs`` expectation."""
    if expect == "unchanged":
        changes = [f"fs: {kind} {rel}" for kind, rels in diff.items() for rel in rels]
        return [f"{c}, expected no change" for c in changes]
    problems: list[str] = []
    allowed = [glob_regex(p) for p in expect.get("unchangedExcept", [])]
    wanted = {
        "created": [glob_regex(p) for p in expect.get("created", [])],
        "removed": [glob_regex(p) for p in expect.get("removed", [])],
        "modified": [glob_regex(p) for p in expect.get("modified", [])],
    }
    for kind, patterns in wanted.items():
        for pattern, raw in zip(patterns, expect.get(kind, []), strict=True):
            if not any(pattern.match(rel) for rel in diff[kind]):
                problems.append(f"fs: expected a {kind} path matching {raw!r}, got {diff[kind]}")
    for kind, rels in diff.items():
        own = wanted["modified"] if kind == "touched" else wanted.get(kind, [])
        for rel in rels:
            if not any(p.match(rel) for p in [*own, *allowed]):
                problems.append(f"fs: unexpected {kind} path {rel}")
    return problems
