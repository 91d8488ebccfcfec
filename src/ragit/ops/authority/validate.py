"""`ragit doc validate`: the typed documents of the given paths (else of the ingest
surface) against their contracts, and every markdown file not checked with the reason.

Reads only (docs/authority.md).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ragit.config import RagitConfig
from ragit.contract.errors import InputInvalid
from ragit.ingest.doctype import UNKNOWN
from ragit.ops.authority.contracts import contracts_from_config, detect_head, violations
from ragit.ops.authority.engine import (
    DocFile,
    _decode,
    _file_entry,
    _read,
    is_directory_index,
)
from ragit.ops.authority.tree import iter_markdown, list_tree
from ragit.workspace import Workspace

# Why a markdown file was not checked (``skippedFiles[].reason`` and ``skipped`` keys).
SKIP_REASONS = {
    "untyped": "untyped",
    "directory-index": "directoryIndex",
    "other-type": "otherType",
    "outside-surface": "outsideSurface",
    "not-markdown": "notMarkdown",
    "unreadable": "unreadable",
}


def _resolve_paths(ws: Workspace, paths: list[str], start: Path) -> list[tuple[str, bool]]:
    """Each argument as a repo-relative path, and whether it is a directory.

    Raises:
        InputInvalid: a path outside the repository or one that does not exist.
    """
    root = ws.root.resolve()
    out: list[tuple[str, bool]] = []
    for raw in paths:
        if not raw.strip() or any(ord(c) < 32 for c in raw):
            raise InputInvalid("paths", "must be a file or directory path")
        target = Path(raw) if Path(raw).is_absolute() else start / raw
        absolute = Path(os.path.normpath(target))
        try:
            rel = absolute.relative_to(root).as_posix()
        except ValueError:
            raise InputInvalid("paths", f"{raw} is outside the repository") from None
        if not absolute.exists() and not absolute.is_symlink():
            raise InputInvalid("paths", f"{raw}: no such file or directory")
        is_dir = absolute.is_dir() and not absolute.is_symlink()
        out.append(("" if rel == "." else rel, is_dir))
    return out


def _candidates(
    ws: Workspace, cfg: RagitConfig, paths: list[str] | None, start: Path | None
) -> tuple[list[tuple[str, bool]], list[dict[str, str]]]:
    """The markdown files to look at, each with whether it was named itself, and the
    files set aside before reading (off the ingest surface, not markdown)."""
    from ragit.snapshot.surface import SurfaceMatcher, is_markdown

    listing = list_tree(ws.root)
    markdown = list(iter_markdown(listing.files))
    skipped: list[dict[str, str]] = []
    if paths is None:
        matcher = SurfaceMatcher(cfg.ingest.doc_globs, cfg.ingest.include, cfg.ingest.exclude)
        chosen = []
        for rel in markdown:
            if matcher.matches(rel):
                chosen.append((rel, False))
            else:
                skipped.append({"path": rel, "reason": "outside-surface"})
        return chosen, skipped
    seen: set[str] = set()
    chosen = []
    for rel, is_dir in _resolve_paths(ws, paths, start or ws.root):
        if is_dir:
            prefix = f"{rel}/" if rel else ""
            found = [(p, False) for p in markdown if p.startswith(prefix)]
        elif is_markdown(rel):
            found = [(rel, True)]
        else:
            if rel not in seen:
                seen.add(rel)
                skipped.append({"path": rel, "reason": "not-markdown"})
            continue
        for item in found:
            if item[0] not in seen:
                seen.add(item[0])
                chosen.append(item)
    return chosen, skipped


def validate(
    ws: Workspace,
    cfg: RagitConfig,
    *,
    doc_type: str | None,
    paths: list[str] | None = None,
    start: Path | None = None,
) -> dict[str, Any]:
    """`doc validate`: every typed document (of ``paths``, else of the ingest surface)
    against its contract, and every markdown file it did not check with the reason.
    Reads only.

    Raises:
        InputInvalid: a path outside the repository or one that does not exist.
    """
    contracts = contracts_from_config(cfg)
    chosen, skipped = _candidates(ws, cfg, paths, start)
    docs: list[DocFile] = []
    for rel, named in chosen:
        raw = _read(ws, rel)
        text = None if raw is None else _decode(raw)
        if raw is None or text is None:
            skipped.append({"path": rel, "reason": "unreadable"})
            continue
        found = detect_head(rel, text)
        if found == UNKNOWN:
            skipped.append({"path": rel, "reason": "untyped"})
            continue
        if is_directory_index(rel) and not named:
            skipped.append({"path": rel, "reason": "directory-index"})
            continue
        if doc_type is not None and found != doc_type:
            skipped.append({"path": rel, "reason": "other-type"})
            continue
        docs.append(DocFile(rel, found, text, raw, violations(text, found, contracts[found])))
    skipped.sort(key=lambda item: item["path"])
    counts = {key: 0 for key in SKIP_REASONS.values()}
    for item in skipped:
        counts[SKIP_REASONS[item["reason"]]] += 1
    root = cfg.docs_authority.canonical_root
    return {
        "docType": doc_type,
        "paths": list(paths) if paths is not None else None,
        "checkedFiles": len(docs),
        "tracked": len(docs),
        "violations": sum(len(d.violations) for d in docs),
        "invalidFiles": sum(1 for d in docs if d.violations),
        "files": [_file_entry(d, root) for d in docs],
        "skipped": counts,
        "skippedFiles": skipped,
    }
