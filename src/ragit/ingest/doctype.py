"""Document type detection and frontmatter parsing (docs/reference/documents.md).

The type (``adr prd srs spec plan ddd glossary pbd``, else ``unknown``) is
metadata for ranking and filtering, never a gate: every markdown document is
ingested (contract §6).

:func:`detect_doc_type` tries, in order:

1. the frontmatter ``type:`` value (key matched case-insensitively), lower-cased,
   with ``_`` and spaces read as ``-``, through :data:`TYPE_ALIASES`: the canonical
   names, the other spellings of docs/reference/documents.md (``term``/``terms`` → glossary,
   ``specification`` → spec, ``pb`` and the ``phase-…binding…`` spellings → pbd) and
   the path words below (``decision`` → adr, ``roadmap`` → plan). An unrecognized
   value (``type: note``) falls through to the next rules instead of forcing
   ``unknown``;
2. path segments, whole and case-insensitive (:data:`PATH_SEGMENTS`): directory
   segments from the deepest up, then the file's stem. So ``docs/adr/0001-x.md`` is
   an ADR, ``docs/glossary.md`` a glossary, and ``docs/adrenaline/x.md`` or
   ``docs/plans-archive/x.md`` nothing. Plurals (``plans``, ``adrs``) are accepted
   because ``memory promote`` writes ``docs/memory/plans/``;
3. the first heading (ATX or setext, outside code fences) by whole words and
   phrases, leftmost match first: ``ADR`` / "architecture decision", ``PRD`` /
   "product requirement(s)", ``SRS`` / "software requirement(s)", ``spec`` /
   ``specs`` / "specification(s)", ``plan`` / ``plans``, ``DDD`` /
   "domain-driven" / "domain driven", ``glossary``, ``PBD`` / ``PB`` / "phase and
   binding documents", and the Korean 기능 명세, 상세 명세, 실행계획, 용어집, 위상과
   결속 (matched as substrings, optional inner space: Korean attaches particles,
   so 용어집을 is still 용어집). "Special", "Planet", "address" and "Specter" are
   not types;
4. otherwise ``unknown``.
"""

from __future__ import annotations

import re

from ragit.ingest.frontmatter import parse_frontmatter

DOC_TYPES: tuple[str, ...] = ("adr", "prd", "srs", "spec", "plan", "ddd", "glossary", "pbd")
# The sections each type's contract requires (docs/authority.md), in order: what `memory promote`
# writes and what `doc validate` checks.
DOC_SECTIONS: dict[str, tuple[str, ...]] = {
    "adr": ("Context", "Decision", "Consequences"),
    "prd": ("Goal", "User Stories", "Acceptance Criteria"),
    "srs": ("Functional Requirements", "Non-Functional Requirements"),
    "spec": (
        "Scope",
        "Functional Requirements",
        "Interfaces and Contracts",
        "State and Flow",
        "Acceptance Criteria",
    ),
    "plan": ("Milestones", "Work Breakdown"),
    "ddd": ("Bounded Context", "Aggregate"),
    "glossary": ("Terms",),
    "pbd": (
        "Implementation Scope",
        "Phase Topology",
        "Binding Map",
        "Interaction Paths",
        "Failure and Drift Points",
        "Observability Notes",
    ),
}
UNKNOWN = "unknown"

PATH_SEGMENTS: dict[str, str] = {
    **dict.fromkeys(
        (
            "adr",
            "adrs",
            "architecture-decision",
            "architecture-decisions",
            "architecture-decision-records",
            "decisions",
        ),
        "adr",
    ),
    **dict.fromkeys(
        ("prd", "prds", "product-requirement", "product-requirements"),
        "prd",
    ),
    **dict.fromkeys(("srs", "requirement", "requirements"), "srs"),
    **dict.fromkeys(("spec", "specs", "specification", "specifications"), "spec"),
    **dict.fromkeys(("plan", "plans", "roadmap", "roadmaps", "wbs"), "plan"),
    **dict.fromkeys(
        ("ddd", "domain-driven", "domain-driven-design", "domain-model", "domain-models"),
        "ddd",
    ),
    **dict.fromkeys(("glossary", "glossaries", "terms", "vocabulary"), "glossary"),
    **dict.fromkeys(
        (
            "pbd",
            "pb",
            "phase-binding",
            "phase-bindings",
            "phase-and-bindings",
            "phase-binding-documents",
            "phase-and-binding-documents",
        ),
        "pbd",
    ),
}

TYPE_ALIASES: dict[str, str] = {
    **PATH_SEGMENTS,
    **{t: t for t in DOC_TYPES},
    "decision": "adr",
    "architecture-decision-record": "adr",
    "term": "glossary",
    "terms": "glossary",
    "specification": "spec",
}

_HEADING_RULES = re.compile(
    r"(?P<adr>\badr\b|\barchitecture[- ]decisions?\b)"
    r"|(?P<prd>\bprd\b|\bproduct[- ]requirements?\b)"
    r"|(?P<srs>\bsrs\b|\bsoftware[- ]requirements?\b)"
    r"|(?P<spec>\bspec(?:s|ifications?)?\b|기능\s*명세|상세\s*명세)"
    r"|(?P<plan>\bplans?\b|실행\s*계획)"
    r"|(?P<ddd>\bddd\b|\bdomain[- ]driven\b)"
    r"|(?P<glossary>\bglossary\b|용어집)"
    r"|(?P<pbd>\bpbd\b|\bpb\b|\bphase[- ]and[- ]binding[- ]documents?\b|위상과\s*결속)",
    re.IGNORECASE,
)

__all__ = [
    "DOC_TYPES",
    "PATH_SEGMENTS",
    "TYPE_ALIASES",
    "UNKNOWN",
    "detect_doc_type",
    "normalize_type",
    "parse_frontmatter",
]


def normalize_type(value: str) -> str | None:
    """The canonical doc type for a frontmatter ``type`` value, or ``None``."""
    key = re.sub(r"[\s_]+", "-", value.strip().lower())
    return TYPE_ALIASES.get(key)


def _type_from_path(path: str) -> str | None:
    segments = [s for s in path.replace("\\", "/").lower().split("/") if s]
    if not segments:
        return None
    for segment in reversed(segments[:-1]):
        if segment in PATH_SEGMENTS:
            return PATH_SEGMENTS[segment]
    stem = segments[-1].rsplit(".", 1)[0] if "." in segments[-1] else segments[-1]
    return PATH_SEGMENTS.get(stem)


def _type_from_heading(title: str) -> str | None:
    match = _HEADING_RULES.search(title)
    if match is None:
        return None
    return match.lastgroup


def detect_doc_type(path: str, text: str) -> str:
    """The doc type of a markdown document (rules in the module docstring).

    ``path`` is the repo-relative POSIX path, ``text`` the raw document.
    """
    from ragit.ingest.chunking import first_heading, normalize_text

    fields, body = parse_frontmatter(normalize_text(text))
    for key, value in fields.items():
        if key.lower() == "type":
            declared = normalize_type(value)
            if declared is not None:
                return declared
    by_path = _type_from_path(path)
    if by_path is not None:
        return by_path
    title = first_heading(body)
    if title is not None:
        by_heading = _type_from_heading(title)
        if by_heading is not None:
            return by_heading
    return UNKNOWN
