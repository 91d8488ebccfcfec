"""How much of a commit's markdown a snapshot holds, and what it left out (contract §6).

A snapshot that indexes no document, or that leaves out most of the markdown files its
commit holds, is never silent: ``ingest``, ``status`` and the reads warn, naming where the
left-out documents are (top folders with counts) and the ``config set`` that would include
them. Markdown is decided by content type (:func:`ragit.snapshot.surface.is_markdown`:
``.md``, ``.mdx``, ``.markdown`` in any case). Left out means: markdown of the commit that
the snapshot neither indexes nor reports as skipped, and that ``ingest.exclude`` does not
exclude on purpose (``node_modules`` and the like are counted apart as ``excluded``).
"""

from __future__ import annotations

import json
import shlex
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ragit.snapshot.surface import GlobSet, is_markdown

SAMPLE = 10
FOLDERS = 5
ROOT = "."
DEFAULT_DOC_GLOBS = ["**/*.md", "**/*.mdx", "**/*.markdown"]


def _in_ragit(path: str) -> bool:
    return path == ".ragit" or path.startswith(".ragit/") or "/.ragit/" in f"/{path}"


@dataclass(frozen=True)
class Coverage:
    """The markdown of a commit against one snapshot of it."""

    sha: str
    markdown: int
    indexed: int
    left_out: tuple[str, ...]
    excluded: int

    def folders(self) -> list[tuple[str, int]]:
        """Top folders of the left-out documents with their counts (``.``: the root)."""
        counts = Counter(p.split("/", 1)[0] if "/" in p else ROOT for p in self.left_out)
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))

    def report(self) -> dict[str, Any]:
        """``outsideSurface`` of ingest data: what the snapshot left out, a count and a
        sample (``excluded``: markdown removed on purpose by ``ingest.exclude``)."""
        return {
            "count": len(self.left_out),
            "excluded": self.excluded,
            "sample": list(self.left_out[:SAMPLE]),
            "folders": [{"path": f, "count": n} for f, n in self.folders()[:FOLDERS]],
        }

    @property
    def partial(self) -> bool:
        """Whether the snapshot indexes nothing, or leaves out most of the markdown."""
        return self.indexed == 0 or 2 * len(self.left_out) > self.markdown


def measure(
    sha: str,
    tree_paths: Iterable[str],
    indexed: Iterable[str],
    skipped: Iterable[str],
    exclude: Sequence[str],
) -> Coverage:
    """Compare the commit's markdown (``tree_paths``) with the snapshot's documents.

    Raises:
        InputInvalid: an ``exclude`` glob is invalid (as the surface reports it).
    """
    documents = set(indexed)
    held = documents | set(skipped)
    excluding = GlobSet(exclude, field="ingest.exclude")
    markdown = 0
    excluded = 0
    left: list[str] = []
    for path in tree_paths:
        if not is_markdown(path) or _in_ragit(path):
            continue
        markdown += 1
        if path in held:
            continue
        if excluding.matches(path):
            excluded += 1
        else:
            left.append(path)
    return Coverage(sha, markdown, len(documents), tuple(sorted(left)), excluded)


def _include_globs(folders: list[tuple[str, int]], left_out: Sequence[str]) -> list[str]:
    globs = [f"{folder}/**" for folder, _ in folders if folder != ROOT]
    root = [p for p in left_out if "/" not in p]
    if root:
        globs += root if len(root) <= 3 else ["*"]
    return globs


def fix_command(coverage: Coverage, include: Sequence[str], doc_globs: Sequence[str]) -> str:
    """The ``config set`` that would include the left-out documents."""
    current = list(include)
    added = [g for g in _include_globs(coverage.folders(), coverage.left_out) if g not in current]
    if added and current:
        value = json.dumps([*current, *added], ensure_ascii=False, separators=(",", ":"))
        return f"ragit config set ingest.include {shlex.quote(value)}"
    wanted = [*doc_globs, *(g for g in DEFAULT_DOC_GLOBS if g not in doc_globs)]
    value = json.dumps(wanted, ensure_ascii=False, separators=(",", ":"))
    return f"ragit config set ingest.doc_globs {shlex.quote(value)}"


def coverage_warning(
    coverage: Coverage, include: Sequence[str], doc_globs: Sequence[str]
) -> str | None:
    """The warning for an empty or partial snapshot, else None."""
    if not coverage.partial:
        return None
    head = f"the snapshot of {coverage.sha[:12]} indexes {coverage.indexed} of "
    if coverage.markdown == 0:
        return head + "0 markdown documents: its commit holds none"
    head += f"{coverage.markdown} markdown documents"
    if not coverage.left_out:
        return head
    where = ", ".join(
        f"{'the root folder' if folder == ROOT else folder + '/'} ({count})"
        for folder, count in coverage.folders()[:FOLDERS]
    )
    more = len(coverage.folders()) - FOLDERS
    if more > 0:
        where += f" and {more} more folder(s)"
    return (
        f"{head}; left out: {where}; include them: {fix_command(coverage, include, doc_globs)}"
        " (then commit .ragit/config.toml and run ragit ingest --all)"
    )


# The paths of a commit's tree, by (repository, commit): a tree never changes, so the
# MCP server (one process, many reads) walks each commit once.
_TREES: dict[tuple[str, str], tuple[str, ...]] = {}


def _tree_paths(git: Any, sha: str) -> tuple[str, ...]:
    key = (str(git.root), sha)
    kept = _TREES.get(key)
    if kept is None:
        kept = tuple(item.path for item in git.tree_files(sha) if not item.is_symlink)
        if len(_TREES) >= 8:
            _TREES.pop(next(iter(_TREES)))
        _TREES[key] = kept
    return kept


def snapshot_coverage(git: Any, sha: str, manifest: Any) -> tuple[Coverage, str | None]:
    """The coverage of an indexed snapshot (``manifest`` of ``sha``) and its warning.

    The snapshot's skipped files are not recorded in its manifest: a markdown file it
    skipped (too large, blocked, a symlink) counts as left out here.

    Raises:
        ConfigInvalid: the config committed at ``sha`` is not valid.
    """
    from ragit.snapshot.config_at import committed_settings

    settings = committed_settings(git, sha)
    coverage = measure(
        sha,
        _tree_paths(git, sha),
        (doc.path for doc in manifest.docs),
        (),
        settings["ingest.exclude"],
    )
    warning = coverage_warning(coverage, settings["ingest.include"], settings["ingest.doc_globs"])
    return coverage, warning
