"""Markdown documents written by `memory promote` and `harness promote`.

A promoted document has a frontmatter block (values JSON-quoted, which YAML
reads as double-quoted strings), an H1 with the type's prefix, the summary, and
every required section of its type (docs/authority.md), filled from the candidate or with
a ``TODO`` bullet so ``doc validate`` passes:

======== ========== ===========================================================
type     H1 prefix  sections
======== ========== ===========================================================
adr      ADR:       Context, Decision, Consequences
prd      PRD:       Goal, User Stories, Acceptance Criteria
srs      SRS:       Functional Requirements, Non-Functional Requirements
spec     SPEC:      Scope, Functional Requirements, Interfaces and Contracts,
                    State and Flow, Acceptance Criteria
plan     Plan:      Milestones, Work Breakdown
ddd      DDD:       Bounded Context, Aggregate
glossary Glossary:  Terms
pbd      PBD:       Implementation Scope, Phase Topology, Binding Map, Interaction
                    Paths, Failure and Drift Points, Observability Notes, and a
                    ``## [B1] …`` topology heading
======== ========== ===========================================================

Files are created with :func:`ragit.artifacts.storage.create_exclusive`: an existing
file is never overwritten; the next ``-2``, ``-3``… name is taken instead.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from ragit.artifacts.storage import create_exclusive, inside
from ragit.contract.errors import ConfigInvalid, InputInvalid
from ragit.ingest.doctype import DOC_SECTIONS
from ragit.workspace import Workspace

PREFIXES: dict[str, str] = {
    "adr": "ADR",
    "prd": "PRD",
    "srs": "SRS",
    "spec": "SPEC",
    "plan": "Plan",
    "ddd": "DDD",
    "glossary": "Glossary",
    "pbd": "PBD",
}
SECTIONS = DOC_SECTIONS
MAX_SUFFIX = 999
TODO = "- TODO: fill in during review."


def frontmatter(fields: Mapping[str, object]) -> str:
    """A ``---`` block; ``None`` values are written as ``null``, strings JSON-quoted."""
    lines = ["---"]
    for key, value in fields.items():
        if value is None:
            lines.append(f"{key}: null")
        elif isinstance(value, (list, tuple)):
            lines.append(f"{key}: {json.dumps(list(value), ensure_ascii=False)}")
        elif isinstance(value, bool):
            lines.append(f"{key}: {'true' if value else 'false'}")
        elif isinstance(value, str) and key == "type":
            lines.append(f"{key}: {value}")
        else:
            lines.append(f"{key}: {json.dumps(value, ensure_ascii=False)}")
    lines.append("---")
    return "\n".join(lines)


def _body(value: str | Sequence[str] | None) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value.strip() or None
    items = [v for v in value if v.strip()]
    return "\n".join(f"- {item}" for item in items) if items else None


def render_document(
    doc_type: str,
    title: str,
    summary: str,
    meta: Mapping[str, object],
    sections: Mapping[str, str | Sequence[str] | None],
    extra: Sequence[tuple[str, str]] = (),
) -> str:
    """The markdown of one promoted document (see the module docstring)."""
    parts = [frontmatter({"type": doc_type, "title": title, **meta}), ""]
    parts.append(f"# {PREFIXES[doc_type]}: {title}")
    parts.append("")
    parts.append(summary.strip())
    for name in SECTIONS[doc_type]:
        parts += ["", f"## {name}", "", _body(sections.get(name)) or TODO]
    if doc_type == "pbd" and not any(n.startswith("[B") for n, _ in extra):
        parts += ["", "## [B1] Boundary", "", TODO]
    for name, text in extra:
        parts += ["", f"## {name}", "", text.strip() or TODO]
    return "\n".join(parts).rstrip() + "\n"


def target_dir(ws: Workspace, configured: str, key: str) -> Path:
    """A repo-relative directory from config, checked to stay inside the repository.

    Raises:
        ConfigInvalid: the configured value is not a safe repo-relative path or
            points into ``.ragit``/``.git`` or (through a symlink) outside the repository.
    """
    from ragit.snapshot.surface import validate_repo_path

    rel = ws.relative(ws.config_path)
    try:
        normalized = validate_repo_path(configured, key)
    except InputInvalid as exc:
        raise ConfigInvalid(rel, key, str(exc.details.get("reason"))) from None
    first = normalized.split("/", 1)[0]
    if first in (".ragit", ".git"):
        raise ConfigInvalid(rel, key, "must not point into .ragit or .git")
    directory = ws.root / normalized
    try:
        inside(ws, directory, key)
    except InputInvalid:
        raise ConfigInvalid(rel, key, "resolves outside the repository") from None
    return directory


def plan_path(directory: Path, slug: str, taken: set[Path]) -> Path:
    """The first ``<slug>.md``, ``<slug>-2.md``… that exists neither on disk nor in ``taken``."""
    for n in range(1, MAX_SUFFIX + 1):
        name = f"{slug}.md" if n == 1 else f"{slug}-{n}.md"
        path = directory / name
        if path not in taken and not path.exists() and not path.is_symlink():
            return path
    raise RuntimeError(f"no free file name for {slug}")


def create_document(directory: Path, slug: str, text: str, taken: set[Path]) -> Path:
    """Create the document under the first free name (never overwriting, even under a race)."""
    for _ in range(MAX_SUFFIX):
        path = plan_path(directory, slug, taken)
        taken.add(path)
        if create_exclusive(path, text):
            return path
    raise RuntimeError(f"no free file name for {slug}")
