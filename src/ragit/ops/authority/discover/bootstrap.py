"""`ragit init`'s plan and its writes beyond the config (docs/authority.md, steps 3–4).

Existing documents are reused first. Under ``--strategy balanced`` the missing stage-1
drafts are created, each opening with an ``ragit:inferred-draft`` marker that names its
sources; ``full`` also drafts what other documents already cover. ``minimal`` (the
default) writes nothing beyond the config and the ignore entries and reports the plan.
Nothing here overwrites or edits an existing file: drafts, templates and ``AGENTS.md``
are created with an exclusive atomic write; only RAGit's own indexes
(``.ragit/guide/guide-index.json``, ``.ragit/docs/index.json``) are regenerated, and only
when their content changes.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragit.ingest.doctype import DOC_TYPES
from ragit.ops.authority.contracts import contract_for, headings, skeleton
from ragit.ops.authority.discover.scan import Scan

DRAFTS = (
    "RAGIT.md",
    "docs/workspace-map.md",
    "docs/ragit/ingestion-policy.md",
    "docs/known-gaps.md",
    "docs/adr/README.md",
)
AGENTS = "AGENTS.md"
GUIDE_INDEX = ".ragit/guide/guide-index.json"
TEMPLATES_DIR = ".ragit/guide/templates"
TEMPLATE_NAMES = (*DOC_TYPES, "_common")
MARKER = "ragit:inferred-draft"

_SLOT_OF = {
    "docs/workspace-map.md": "packageOwnershipMap",
    "docs/ragit/ingestion-policy.md": "ingestionPolicy",
    "docs/adr/README.md": "decisionRecords",
}
_BOUNDARY = re.compile(r"^\[([A-Z][0-9]+(?:\.[a-z0-9]+)*)\]\s*(.*)$")
_GUIDE_KINDS = {
    "ground": "ground",
    "rule": "rule",
    "rules": "rule",
    "failure trajectory": "failure-trajectory",
    "failure trajectories": "failure-trajectory",
    "flow": "flow",
    "flows": "flow",
}


@dataclass
class Action:
    type: str  # create | reuse | skip
    path: str
    reason: str
    confidence: str  # high | medium | low
    source_paths: list[str] = field(default_factory=list)
    content: str | None = None  # what a create writes

    def wire(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "path": self.path,
            "reason": self.reason,
            "confidence": self.confidence,
            "sourcePaths": self.source_paths,
        }


def _marker(sources: list[str]) -> str:
    shown = ", ".join(sources[:12]) + (", ..." if len(sources) > 12 else "") if sources else "none"
    return (
        f"<!-- {MARKER}: written by `ragit init` from the repository scan (sources: {shown}). "
        "Review and edit it, then commit; RAGit never rewrites it. -->\n\n"
    )


def _lines(items: list[str], empty: str) -> str:
    return "".join(f"- `{i}`\n" for i in items) if items else f"- {empty}\n"


def _draft(
    path: str,
    scan: Scan,
    cov: dict[str, Any],
    kmap: list[dict[str, Any]],
    mode: str,
    project: str,
    include: list[str],
    exclude: list[str],
) -> tuple[str, list[str]]:
    """(content, sources) of one stage-1 draft."""
    if path == "RAGIT.md":
        sources = sorted({*cov["projectOverview"]["sources"], *scan.build_files[:5]})
        rows = "".join(
            f"| {k['slot']} | {', '.join(f'`{s}`' for s in k['sources'][:5]) or '—'} |\n"
            for k in kmap
        )
        body = (
            f"# {project}: knowledge entrypoint\n\n"
            "## What this repository is\n\n"
            f"- Mode: {mode}\n"
            f"- Languages: {', '.join(scan.languages) or 'none detected'}\n"
            f"- Frameworks: {', '.join(scan.frameworks) or 'none detected'}\n"
            f"- Package manager: {scan.package_manager or 'none detected'}\n\n"
            "## Where knowledge lives\n\n| Slot | Sources |\n| --- | --- |\n" + rows + "\n"
            "## How agents use RAGit\n\n"
            "- `ragit status` first: is HEAD's snapshot indexed?\n"
            '- `ragit query "<question>"` or `ragit context pack "<goal>"` before changing code.\n'
            "- Commit documents, then `ragit ingest` "
            "(or install the hooks: `ragit hooks install`).\n\n"
            "## Gaps\n\nSee `docs/known-gaps.md`.\n"
        )
        return body, sources
    if path == "docs/workspace-map.md":
        members = [*scan.apps, *scan.packages]
        sources = sorted({*scan.workspace_files, *cov["packageOwnershipMap"]["sources"]})
        if members:
            units = "".join(
                f"| `{m}` | {'app' if m.startswith('apps/') else 'package'} "
                "| TODO: owner | TODO: purpose |\n"
                for m in members
            )
        else:
            units = "| `.` | single package | TODO: owner | TODO: purpose |\n"
        body = (
            "# Workspace map\n\n"
            f"Workspace files: {', '.join(f'`{w}`' for w in scan.workspace_files) or 'none'}.\n\n"
            "## Units\n\n| Path | Kind | Owner | Purpose |\n| --- | --- | --- | --- |\n" + units
        )
        return body, sources
    if path == "docs/ragit/ingestion-policy.md":
        body = (
            "# Ingestion policy\n\n"
            "RAGit indexes the markdown documents of each commit that match "
            "`ingest.doc_globs`, `ingest.include` and not `ingest.exclude` "
            "(`.ragit/config.toml`; `.ragit/**` is never indexed).\n\n"
            "## Included\n\n" + _lines(include, "every markdown file") + "\n"
            "## Excluded\n\n" + _lines(exclude, "nothing") + "\n"
            "## Document types\n\n"
            "ADR, PRD, SRS, SPEC, Plan, DDD, Glossary and PBD documents follow the contracts "
            "checked by `ragit doc validate`; other documents are indexed as `unknown`.\n"
        )
        return body, [".ragit/config.toml"]
    if path == "docs/known-gaps.md":
        gaps = [(slot, c) for slot, c in cov.items() if c["status"] != "sufficient"]
        rows = (
            "".join(
                f"| {slot} | {c['status']} | "
                f"{', '.join(f'`{s}`' for s in c['sources'][:5]) or '—'} |\n"
                for slot, c in gaps
            )
            or "| — | — | — |\n"
        )
        body = (
            "# Known gaps\n\n"
            "Knowledge `ragit init` looked for and did not find in full.\n\n"
            "| Slot | Status | Current sources |\n| --- | --- | --- |\n" + rows
        )
        return body, sorted({s for _, c in gaps for s in c["sources"]})
    # docs/adr/README.md
    adrs = cov["decisionRecords"]["sources"]
    body = (
        "# Architecture decision records\n\n"
        "One file per durable decision, written with "
        '`ragit doc create --type adr --title "<decision>"` (sections Context, Decision, '
        "Consequences; checked by `ragit doc validate`).\n\n"
        "## Existing records\n\n" + _lines(adrs, "none yet")
    )
    return body, adrs


def _agents_md(project: str) -> str:
    return (
        f"# AGENTS.md — {project}\n\n"
        f"<!-- {MARKER}: written by `ragit init` because no AGENTS.md existed. "
        "RAGit only reads it from now on. -->\n\n"
        "## Ground\n\n"
        "- Knowledge lives in `RAGIT.md`, `README.md` and `docs/**`, "
        "indexed per commit by RAGit.\n\n"
        "## Rules\n\n"
        "- Run `ragit status` first; query (`ragit query`, `ragit context pack`) "
        "before changing code.\n"
        "- Never edit `.ragit/` by hand.\n"
        "- Commit documents, then ingest them (`ragit ingest`).\n\n"
        "## Flow\n\n"
        "1. status → 2. context pack for the goal → 3. change → 4. commit → 5. ingest.\n\n"
        "## [B1] Repository boundary\n\n"
        "- Agents read and write inside this repository only.\n"
    )


def guide_index(text: str | None, path: str) -> dict[str, Any]:
    """The AGENTS.md boundary index: ``[B1]`` headings and Ground/Rule/Failure
    Trajectory/Flow headings, with their levels and line numbers. No timestamp, so the same
    AGENTS.md always gives the same bytes."""
    boundaries: list[dict[str, Any]] = []
    sections: list[dict[str, Any]] = []
    if text is not None:
        for number, line in enumerate(text.split("\n"), start=1):
            found = headings(line)
            if not found:
                continue
            level, title = found[0]
            bound = _BOUNDARY.match(title.strip())
            if bound is not None:
                boundaries.append(
                    {"id": bound.group(1), "title": bound.group(2), "level": level, "line": number}
                )
                continue
            kind = _GUIDE_KINDS.get(re.sub(r"\s+", " ", title.strip().rstrip(":")).casefold())
            if kind is not None:
                sections.append(
                    {"kind": kind, "title": title.strip(), "level": level, "line": number}
                )
    return {
        "version": 1,
        "source": path,
        "present": text is not None,
        "sha256": None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "boundaries": boundaries,
        "sections": sections,
    }


def _template(name: str) -> str:
    if name == "_common":
        return "---\ntype: {{type}}\n---\n\n# {{title}}\n\n## Summary\n\n- TODO\n"
    return skeleton(name, contract_for(name), "{{title}}")


def plan_actions(
    root: Path,
    scan: Scan,
    cov: dict[str, Any],
    kmap: list[dict[str, Any]],
    *,
    mode: str,
    strategy: str,
    project: str,
    include: list[str],
    exclude: list[str],
) -> list[Action]:
    """Every stage-1 action: reuse what exists, create what is missing (per strategy)."""
    actions: list[Action] = []
    writes = strategy != "minimal"
    for path in DRAFTS:
        if (root / path).exists() or (root / path).is_symlink():
            actions.append(
                Action("reuse", path, "already exists; never overwritten", "high", [path])
            )
            continue
        slot = _SLOT_OF.get(path)
        covered = slot is not None and cov[slot]["status"] == "sufficient"
        if path == "docs/known-gaps.md" and all(c["status"] == "sufficient" for c in cov.values()):
            covered = True
        if covered and strategy != "full":
            sources = cov[slot]["sources"] if slot else []
            actions.append(
                Action(
                    "reuse",
                    sources[0] if sources else path,
                    f"{slot or 'every slot'} is covered by existing documents",
                    "high",
                    sources,
                )
            )
            continue
        content, sources = _draft(path, scan, cov, kmap, mode, project, include, exclude)
        if not writes:
            actions.append(
                Action(
                    "skip",
                    path,
                    "strategy minimal writes no drafts (use --strategy balanced)",
                    "medium" if sources else "low",
                    sources,
                )
            )
            continue
        actions.append(
            Action(
                "create",
                path,
                "missing; drafted from the scan (marked as inferred)",
                "medium" if sources else "low",
                sources,
                _marker(sources) + content,
            )
        )
    if (root / AGENTS).exists() or (root / AGENTS).is_symlink():
        actions.append(
            Action("reuse", AGENTS, "loaded read-only; boundaries indexed", "high", [AGENTS])
        )
    elif writes:
        actions.append(
            Action(
                "create",
                AGENTS,
                "absent; a starting guide for agents",
                "medium",
                [],
                _agents_md(project),
            )
        )
    else:
        actions.append(Action("skip", AGENTS, "strategy minimal writes no AGENTS.md", "medium"))
    for doc in ("README.md", "CONTRIBUTING.md", "ARCHITECTURE.md", "docs/architecture.md"):
        if scan.has(doc):
            actions.append(Action("reuse", doc, "existing primary source", "high", [doc]))
    return actions


def template_actions(root: Path) -> tuple[list[str], list[str], dict[str, str]]:
    """(missing templates to add, existing templates kept, contents)."""
    missing, existing, contents = [], [], {}
    for name in TEMPLATE_NAMES:
        rel = f"{TEMPLATES_DIR}/{name}.template.md"
        if (root / rel).exists() or (root / rel).is_symlink():
            existing.append(rel)
        else:
            missing.append(rel)
            contents[rel] = _template(name)
    return missing, existing, contents


def write_new(root: Path, rel: str, content: str) -> bool:
    """Create ``rel`` atomically unless something exists there; True when written."""
    from ragit._fs import atomic_write_text

    target = root / rel
    if target.exists() or target.is_symlink():
        return False
    try:
        atomic_write_text(target, content, exclusive=True, mode=0o644)
    except FileExistsError:
        return False
    return True


def write_if_changed(root: Path, rel: str, content: str) -> str:
    """Write one of RAGit's own generated files: ``created``, ``updated`` or ``loaded``."""
    from ragit._fs import atomic_write_text

    target = root / rel
    try:
        current = target.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        current = None
    if current == content:
        return "loaded"
    atomic_write_text(target, content, mode=0o644)
    return "created" if current is None else "updated"


def guide_index_text(root: Path) -> str:
    text: str | None
    try:
        path = root / AGENTS
        text = None if path.is_symlink() else path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        text = None
    return json.dumps(guide_index(text, AGENTS), indent=2, ensure_ascii=False) + "\n"
