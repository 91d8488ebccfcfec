"""`ragit doc validate|refresh|create|reconcile`: the typed documents of the working tree.

The tracked documents are the markdown files of the working tree on the implicit ingest
surface (``ingest.doc_globs ∩ include − exclude``, .gitignore honoured, symlinks never
followed) whose type (docs/reference/documents.md) is one of the eight; ``--files`` may select
beyond
``include``. Every write is atomic (:mod:`ragit._fs`): an interruption leaves the old file
or the new one. Documents are never moved, removed or rewritten: ``refresh`` only inserts
(the old text stays a subsequence of the new), ``create`` never replaces a file.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ragit import _faults as faults
from ragit import _json
from ragit.config import RagitConfig
from ragit.contract.errors import InputInvalid, NotInitialized
from ragit.ingest.doctype import DOC_TYPES, UNKNOWN
from ragit.ops.authority.contracts import (
    Contract,
    contracts_from_config,
    detect,
    detect_head,
    from_template,
    refreshed,
    skeleton,
    violations,
)
from ragit.ops.authority.summary import INDEX_PATH, read_index_summary
from ragit.ops.authority.tree import iter_markdown, list_tree
from ragit.workspace import Workspace

INDEX_VERSION = 1
TEMPLATES_DIR = ".ragit/guide/templates"


__all__ = [
    "INDEX_PATH",
    "collect",
    "create",
    "read_index_summary",
    "reconcile",
    "refresh",
]


def now_iso() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def check_type(value: str | None) -> str | None:
    """A ``--type`` value, canonical, or None.

    Raises:
        InputInvalid: not one of the eight types.
    """
    if value is None:
        return None
    from ragit.ingest.doctype import normalize_type

    canonical = normalize_type(value) if value.strip() else None
    if canonical is None:
        raise InputInvalid("type", f"unknown document type {value!r}", allowed=list(DOC_TYPES))
    return canonical


def is_directory_index(path: str) -> bool:
    """``README.md`` / ``index.md`` (any markdown suffix, any case): a directory's index."""
    name = path.rsplit("/", 1)[-1].lower()
    return name.rsplit(".", 1)[0] in ("readme", "index")


@dataclass
class DocFile:
    """One markdown file of the working tree with its type and contract check."""

    path: str
    doc_type: str
    text: str
    raw: bytes
    violations: list[dict[str, Any]]


def canonical_path(root: str, doc_type: str, path: str) -> str:
    return f"{root.strip('/')}/{doc_type}/{path.rsplit('/', 1)[-1]}"


def _read(ws: Workspace, rel: str) -> bytes | None:
    path = ws.root / rel
    try:
        if path.is_symlink() or not path.is_file():
            return None
        return path.read_bytes()
    except OSError:
        return None


def _decode(raw: bytes) -> str | None:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def surface_files(ws: Workspace, cfg: RagitConfig, files: str | None = None) -> list[str]:
    """Markdown files of the working tree: the implicit surface, or those ``files`` selects.

    Raises:
        InputInvalid: a glob of ``files`` is invalid (``field: files``).
    """
    from ragit.snapshot.surface import GlobSet, SurfaceMatcher, split_globs

    listing = list_tree(ws.root)
    markdown = list(iter_markdown(listing.files))
    if files is not None:
        globs = split_globs(files)
        if not globs:
            raise InputInvalid("files", "glob must not be empty")
        selected = GlobSet(globs, field="files")
        return [p for p in markdown if selected.matches(p)]
    matcher = SurfaceMatcher(cfg.ingest.doc_globs, cfg.ingest.include, cfg.ingest.exclude)
    return [p for p in markdown if matcher.matches(p)]


def collect(
    ws: Workspace,
    cfg: RagitConfig,
    *,
    doc_type: str | None = None,
    files: str | None = None,
) -> tuple[list[DocFile], list[dict[str, str]]]:
    """The typed documents (filtered by ``doc_type``) and the skipped files with reasons."""
    contracts = contracts_from_config(cfg)
    docs: list[DocFile] = []
    skipped: list[dict[str, str]] = []
    for rel in surface_files(ws, cfg, files):
        raw = _read(ws, rel)
        text = None if raw is None else _decode(raw)
        if raw is None or text is None:
            skipped.append({"path": rel, "reason": "unreadable or not UTF-8"})
            continue
        found = detect_head(rel, text)
        if found != UNKNOWN and is_directory_index(rel) and files is None:
            found = UNKNOWN  # docs/adr/README.md introduces the records; it is not one
        if found == UNKNOWN:
            if files is not None:
                skipped.append({"path": rel, "reason": "no document type detected"})
            continue
        if doc_type is not None and found != doc_type:
            continue
        docs.append(DocFile(rel, found, text, raw, violations(text, found, contracts[found])))
    return docs, skipped


def _file_entry(doc: DocFile, root: str) -> dict[str, Any]:
    return {
        "path": doc.path,
        "docType": doc.doc_type,
        "canonicalPath": canonical_path(root, doc.doc_type, doc.path),
        "violations": doc.violations,
    }


# ---------------------------------------------------------------- the index


def _index_entries(docs: list[DocFile], root: str) -> list[dict[str, Any]]:
    out = []
    for doc in sorted(docs, key=lambda d: d.path):
        canon = canonical_path(root, doc.doc_type, doc.path)
        out.append(
            {
                "sourcePath": doc.path,
                "canonicalPath": canon,
                "docType": doc.doc_type,
                "hash": hashlib.sha256(doc.raw).hexdigest(),
                "status": "canonical" if canon == doc.path else "mapped",
                "violations": [v["code"] for v in doc.violations],
            }
        )
    return out


def reconcile_docs(
    ws: Workspace, cfg: RagitConfig, docs: list[DocFile], *, dry_run: bool
) -> dict[str, Any]:
    """Write ``.ragit/docs/index.json`` for ``docs`` (all tracked documents).

    The file is rewritten only when an entry changed: re-running on the same documents
    leaves it byte-identical (``status: loaded``).
    """
    from ragit._fs import atomic_write_text

    root = cfg.docs_authority.canonical_root
    entries = _index_entries(docs, root)
    path = ws.root / INDEX_PATH
    previous: dict[str, Any] | None = None
    try:
        loaded = _json.loads(path.read_bytes())
        previous = loaded if isinstance(loaded, dict) else None
    except (OSError, ValueError):
        previous = None
    tracked = len(entries)
    count = sum(len(e["violations"]) for e in entries)
    unchanged = (
        previous is not None
        and previous.get("entries") == entries
        and previous.get("canonicalRoot") == root
        and previous.get("version") == INDEX_VERSION
    )
    if unchanged:
        assert previous is not None
        status, stamp = "loaded", previous.get("lastReconciledAt")
    elif dry_run:
        status, stamp = "planned", None if previous is None else previous.get("lastReconciledAt")
    else:
        stamp = now_iso()
        document = {
            "version": INDEX_VERSION,
            "generatedAt": stamp,
            "lastReconciledAt": stamp,
            "canonicalRoot": root,
            "tracked": tracked,
            "violations": count,
            "entries": entries,
        }
        atomic_write_text(
            path, json.dumps(document, indent=2, ensure_ascii=False) + "\n", mode=0o644
        )
        status = "created" if previous is None else "updated"
    return {
        "dryRun": dry_run,
        "indexPath": INDEX_PATH,
        "status": status,
        "tracked": tracked,
        "violations": count,
        "mapped": sum(1 for e in entries if e["status"] == "mapped"),
        "lastReconciledAt": stamp,
        "entries": entries,
    }


def reconcile(ws: Workspace, cfg: RagitConfig, *, dry_run: bool) -> dict[str, Any]:
    """`doc reconcile`: map every tracked document to its canonical path (never moved).

    Raises:
        NotInitialized: ``.ragit/config.toml`` does not exist.
    """
    if not ws.is_initialized():
        raise NotInitialized(str(ws.root))
    docs, _ = collect(ws, cfg)
    return reconcile_docs(ws, cfg, docs, dry_run=dry_run)


def _index_after(ws: Workspace, cfg: RagitConfig, *, dry_run: bool) -> dict[str, Any] | None:
    """The reconcile summary (without entries) after a create or refresh; None before init."""
    if not ws.is_initialized():
        return None
    docs, _ = collect(ws, cfg)
    result = reconcile_docs(ws, cfg, docs, dry_run=dry_run)
    result.pop("entries")
    return result


# ---------------------------------------------------------------- refresh


def _write_inserting(path: Path, old: bytes, new: str) -> None:
    """Replace ``path`` atomically with ``new``, keeping its permission bits."""
    from ragit._fs import atomic_write_bytes

    try:
        mode = path.stat().st_mode & 0o777
    except OSError:
        mode = 0o644
    if path.read_bytes() != old:  # changed under us: leave the person's edit alone
        raise InputInvalid("files", "a document changed while it was refreshed", path=str(path))
    atomic_write_bytes(path, new.encode("utf-8"), mode=mode)


def refresh(
    ws: Workspace,
    cfg: RagitConfig,
    *,
    doc_type: str | None,
    files: str | None,
    dry_run: bool,
) -> dict[str, Any]:
    """`doc refresh`: realign documents with their contracts by insertion only.

    Raises:
        InputInvalid: both ``doc_type`` and ``files``, or a bad glob.
    """
    if doc_type is not None and files is not None:
        raise InputInvalid("files", "--type and --files cannot be combined")
    contracts = contracts_from_config(cfg)
    docs, skipped = collect(ws, cfg, doc_type=doc_type, files=files)
    planned: list[str] = []
    done: list[str] = []
    unchanged: list[str] = []
    warnings: list[str] = []
    before = sum(len(d.violations) for d in docs)
    after = 0
    for doc in docs:
        contract: Contract = contracts[doc.doc_type]
        new = refreshed(doc.text, doc.doc_type, contract, doc.path)
        remaining = violations(new, doc.doc_type, contract)
        after += len(remaining)
        for v in remaining:
            warnings.append(f"{doc.path}: {v['message']} (refresh never rewrites existing text)")
        if new == doc.text:
            unchanged.append(doc.path)
            continue
        planned.append(doc.path)
        if not dry_run:
            _write_inserting(ws.root / doc.path, doc.raw, new)
            done.append(doc.path)
            faults.reach("doc-refresh-written")
    return {
        "dryRun": dry_run,
        "docType": doc_type,
        "plannedFiles": planned,
        "refreshedFiles": done,
        "unchangedFiles": unchanged,
        "skippedFiles": skipped,
        "violationsBefore": before,
        "violationsAfter": after,
        "reconcile": _index_after(ws, cfg, dry_run=dry_run),
        "warnings": warnings,
    }


# ---------------------------------------------------------------- create


def slugify(title: str) -> str:
    """``Use zvec for storage`` → ``use-zvec-for-storage``; Korean letters are kept."""
    text = unicodedata.normalize("NFC", title).casefold()
    text = re.sub(r"[^\w]+", "-", text, flags=re.UNICODE).strip("-_")
    return text[:80].strip("-") or "document"


def _check_new_path(raw: str) -> str:
    from ragit.snapshot.surface import is_markdown, validate_repo_path

    rel = validate_repo_path(raw, "path")
    if rel == ".ragit" or rel.startswith(".ragit/") or rel == ".git" or rel.startswith(".git/"):
        raise InputInvalid("path", "must not be inside .ragit or .git")
    if not is_markdown(rel):
        raise InputInvalid("path", "must name a markdown file (.md, .mdx, .markdown)")
    return rel


def _inside(ws: Workspace, rel: str) -> bool:
    """Whether ``rel``'s parent resolves inside the repository (no symlinked escape)."""
    parent = (ws.root / rel).parent
    probe = parent
    while not probe.exists() and probe != ws.root:
        probe = probe.parent
    resolved = probe.resolve()
    root = ws.root.resolve()
    return resolved == root or root in resolved.parents


def create(
    ws: Workspace,
    cfg: RagitConfig,
    *,
    doc_type: str,
    title: str,
    path: str | None,
    dry_run: bool,
) -> dict[str, Any]:
    """`doc create`: a new document of ``doc_type`` from its template or skeleton.

    Raises:
        InputInvalid: an empty title, a bad or existing explicit path, a path outside the
            repository.
    """
    from ragit._fs import atomic_write_text

    title = title.strip()
    if not title:
        raise InputInvalid("title", "must not be empty")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in title):
        raise InputInvalid("title", "contains a control character")
    contract = contracts_from_config(cfg)[doc_type]
    root = cfg.docs_authority.canonical_root.strip("/")
    if path is not None:
        rel = _check_new_path(path)
        if not _inside(ws, rel):
            raise InputInvalid("path", "must lie inside the repository")
        if os.path.lexists(ws.root / rel):
            raise InputInvalid("path", "already exists; doc create never overwrites", path=rel)
    else:
        slug = slugify(title)
        rel = f"{root}/{doc_type}/{slug}.md"
        n = 2
        while os.path.lexists(ws.root / rel):
            rel = f"{root}/{doc_type}/{slug}-{n}.md"
            n += 1
        if not _inside(ws, rel):
            raise InputInvalid("path", "the canonical directory leads outside the repository")
    template_path = ws.root / TEMPLATES_DIR / f"{doc_type}.template.md"
    used_template = False
    text = skeleton(doc_type, contract, title)
    if template_path.is_file() and not template_path.is_symlink():
        template = _decode(template_path.read_bytes())
        if template is not None:
            text = from_template(template, doc_type, contract, title)
            used_template = True
    if not dry_run:
        try:
            atomic_write_text(ws.root / rel, text, exclusive=True, mode=0o644)
        except FileExistsError:
            raise InputInvalid(
                "path", "already exists; doc create never overwrites", path=rel
            ) from None
    return {
        "dryRun": dry_run,
        "docType": doc_type,
        "title": title,
        "path": rel,
        "canonicalPath": canonical_path(root, doc_type, rel),
        "status": "planned" if dry_run else "created",
        "usedTemplate": used_template,
        "violations": violations(text, doc_type, contract),
        "reconcile": _index_after(ws, cfg, dry_run=dry_run),
    }


# ---------------------------------------------------------------- ingest


def validate_commit_docs(
    ws: Workspace, cfg: RagitConfig, commit_sha: str | None, paths: list[str]
) -> dict[str, Any]:
    """``docAuthority`` of an ingest (``docs_authority.validate_on_ingest``): the ingested
    documents, read from the commit, against their contracts. Reports; never blocks."""
    from ragit.snapshot._git import GitRepo

    contracts = contracts_from_config(cfg)
    checked = 0
    skipped = 0
    count = 0
    files: list[dict[str, Any]] = []
    git = GitRepo(ws.root) if commit_sha else None
    for rel in sorted(paths):
        blob = git.blob_at(commit_sha, rel) if git is not None and commit_sha else None
        text = None if blob is None or git is None else _decode(git.read_blob(blob))
        if text is None:
            skipped += 1
            continue
        found = detect(rel, text)
        if found == UNKNOWN or is_directory_index(rel):
            skipped += 1
            continue
        checked += 1
        found_violations = violations(text, found, contracts[found])
        count += len(found_violations)
        if found_violations:
            files.append(
                {"path": rel, "docType": found, "violations": [v["code"] for v in found_violations]}
            )
    return {"validated": checked, "violations": count, "skipped": skipped, "files": files}
