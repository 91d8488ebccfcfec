"""The working tree as a list of files: .gitignore honoured, symlinks never followed.

Shared by `init`'s scan and the `doc` commands, which both look at the working tree (the
documents a person is editing), unlike ingest, which reads commits.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ragit.contract.inputs import escape_non_utf8, is_unicode_text
from ragit.snapshot._git import GitRepo

# Directories never worth a look even when no .gitignore names them.
ALWAYS_SKIPPED = frozenset({".git", ".ragit", "node_modules", ".venv", "__pycache__"})


@dataclass
class TreeListing:
    """Regular files (repo-relative POSIX paths, sorted) and what was skipped: symlinks, and
    names that are not UTF-8 (shown with their bytes escaped; nothing can read them as text
    paths, and ingest skips them too)."""

    files: list[str] = field(default_factory=list)
    symlinks: list[str] = field(default_factory=list)
    non_utf8: list[str] = field(default_factory=list)
    truncated: bool = False


def list_tree(root: Path, *, limit: int = 200_000) -> TreeListing:
    """Every regular file under ``root`` that git does not ignore.

    Symlinks (to files or directories) are listed in ``symlinks`` and never followed, so
    nothing outside the repository is read. ``.git``, ``.ragit``, ``node_modules`` and
    virtual environments are skipped. Outside a git repository nothing is ignored.
    Stops after ``limit`` files (``truncated``).
    """
    try:
        git: GitRepo | None = GitRepo(root)
    except Exception:
        git = None
    out = TreeListing()
    stack: list[tuple[str, str]] = [(str(root), "")]
    while stack:
        directory, prefix = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            rel = prefix + entry.name
            if not is_unicode_text(rel):
                out.non_utf8.append(escape_non_utf8(rel))
                continue
            try:
                if entry.is_symlink():
                    out.symlinks.append(rel)
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if entry.name in ALWAYS_SKIPPED:
                        continue
                    if git is not None and git.is_ignored(rel + "/"):
                        continue
                    stack.append((entry.path, rel + "/"))
                elif entry.is_file(follow_symlinks=False):
                    if git is not None and git.is_ignored(rel):
                        continue
                    out.files.append(rel)
                    if len(out.files) >= limit:
                        out.truncated = True
                        stack.clear()
                        break
            except OSError:
                continue
    out.files.sort()
    out.symlinks.sort()
    out.non_utf8.sort()
    return out


def iter_markdown(files: list[str]) -> Iterator[str]:
    """The markdown files of a listing."""
    from ragit.snapshot.surface import is_markdown

    return (f for f in files if is_markdown(f))
