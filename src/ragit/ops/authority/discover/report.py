"""`ragit init`'s discovery report: scan → mode → coverage → maturity → knowledge map →
plan → (writes, unless dry-run) → bootstrap summary (the data of `ragit init` in
docs/authority.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragit import _faults as faults
from ragit.ops.authority.discover.assess import classify, coverage, knowledge_map, maturity
from ragit.ops.authority.discover.bootstrap import (
    AGENTS,
    GUIDE_INDEX,
    guide_index_text,
    plan_actions,
    template_actions,
    write_if_changed,
    write_new,
)
from ragit.ops.authority.discover.scan import Scan, scan_repository
from ragit.workspace import Workspace


def discover(
    root: Path,
    *,
    git_detected: bool,
    initialized_before: bool,
    mode: str,
    strategy: str,
    dry_run: bool,
    interactive: bool,
    scan: Scan | None = None,
) -> dict[str, Any]:
    """Scan and assess the repository at ``root``; write the stage-1 foundation when
    ``strategy`` is not ``minimal`` and not ``dry_run``. Returns the report fields that
    `init`'s data adds to the config and .gitignore blocks."""
    from ragit.config import load_config
    from ragit.contract.errors import RagitError
    from ragit.ops.authority.engine import collect, read_index_summary, reconcile_docs

    ws = Workspace(root)
    if scan is None:
        scan = scan_repository(root, git_detected=git_detected)
    repository_mode = classify(scan, mode)
    cov = coverage(root, scan, initialized=initialized_before)
    kmap = knowledge_map(scan, cov)
    try:
        cfg = load_config(ws)
    except RagitError:
        cfg = None
    include = list(cfg.ingest.include) if cfg else []
    exclude = list(cfg.ingest.exclude) if cfg else []
    project = root.name or "project"
    actions = plan_actions(
        root,
        scan,
        cov,
        kmap,
        mode=repository_mode,
        strategy=strategy,
        project=project,
        include=include,
        exclude=exclude,
    )
    writes = strategy != "minimal"
    created: list[str] = []
    skipped: list[str] = []
    for action in actions:
        if action.type != "create" or action.content is None:
            continue
        if dry_run:
            continue
        if write_new(root, action.path, action.content):
            created.append(action.path)
            faults.reach("init-draft-written")
        else:
            skipped.append(action.path)
    missing_templates, existing_templates, contents = template_actions(root)
    templates_created: list[str] = []
    if writes and not dry_run:
        for rel in missing_templates:
            if write_new(root, rel, contents[rel]):
                templates_created.append(rel)
    if writes and not dry_run:
        guide_status = write_if_changed(root, GUIDE_INDEX, guide_index_text(root))
    elif writes:
        guide_status = "planned"
    else:
        guide_status = "present" if (root / GUIDE_INDEX).is_file() else "skipped"
    if writes and cfg is not None:
        docs, _ = collect(ws, cfg)
        authority = reconcile_docs(ws, cfg, docs, dry_run=dry_run)
        authority.pop("entries")
        authority.pop("dryRun")
    else:
        authority = read_index_summary(ws)
    agents_action = next(a for a in actions if a.path == AGENTS)
    agents_mode = {"reuse": "loaded", "create": "planned" if dry_run else "created"}.get(
        agents_action.type, "skipped"
    )
    agents_sha = None
    agents_path = root / AGENTS
    if agents_path.is_file() and not agents_path.is_symlink():
        import hashlib

        agents_sha = hashlib.sha256(agents_path.read_bytes()).hexdigest()
    elif agents_action.content is not None and agents_mode == "planned":
        import hashlib

        agents_sha = hashlib.sha256(agents_action.content.encode("utf-8")).hexdigest()
    store_meta = ws.store_dir / "meta.json"
    bootstrap = {
        "agents": {"path": AGENTS, "mode": agents_mode, "sha256": agents_sha},
        "guide": {
            "indexPath": GUIDE_INDEX,
            "status": guide_status,
            "createdFiles": templates_created,
            "skippedFiles": existing_templates,
            "templates": missing_templates if writes else [],
        },
        "storage": {
            "backend": "zvec",
            "status": "loaded" if store_meta.is_file() else "deferred",
            "searchReady": False,
            "migrationRequired": (ws.store_dir / "index.json").is_file(),
            "note": "the store is created by the first ingest",
        },
        "docsAuthority": authority,
    }
    planned = [a.wire() for a in actions]
    return {
        "executionMode": "interactive" if interactive else "non-interactive",
        "repositoryMode": repository_mode,
        "strategy": strategy,
        "scan": scan.wire(),
        "coverage": cov,
        "maturity": maturity(scan, cov),
        "knowledgeMap": kmap,
        "actions": {
            "mergeExisting": True,
            "planned": planned,
            "created": created,
            "reused": [a.path for a in actions if a.type == "reuse"],
            "skipped": [a.path for a in actions if a.type == "skip"] + skipped,
        },
        "bootstrap": bootstrap,
    }
