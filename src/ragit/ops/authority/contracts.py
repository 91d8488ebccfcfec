"""The standard contracts of the eight document types (docs/authority.md) and the checks on one
text.

A contract is an H1 prefix and the required sections (headings H1–H6, matched
case-insensitively after dropping a leading number such as ``2.`` or ``2.1`` and a
trailing ``:``). Every section has an English name and Korean names that count the same
(bilingual documents, docs/reference/documents.md); ``docs_authority.sections_<type>`` replaces a
type's
sections with the configured names. PBD also needs one topology identifier heading
(``## [B1] ...``).

Pure text functions: nothing here reads or writes a file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ragit.ingest.doctype import (
    DOC_SECTIONS,
    DOC_TYPES,
    detect_doc_type,
    normalize_type,
    parse_frontmatter,
)

PREFIXES: dict[str, str] = {
    "adr": "ADR:",
    "prd": "PRD:",
    "srs": "SRS:",
    "spec": "SPEC:",
    "plan": "Plan:",
    "ddd": "DDD:",
    "glossary": "Glossary:",
    "pbd": "PBD:",
}

# English name -> Korean names that satisfy it.
_KOREAN: dict[str, tuple[str, ...]] = {
    "Context": ("맥락", "배경"),
    "Decision": ("결정",),
    "Consequences": ("결과", "영향"),
    "Goal": ("목표",),
    "User Stories": ("사용자 스토리",),
    "Acceptance Criteria": ("인수 기준", "수용 기준"),
    "Functional Requirements": ("기능 요구사항", "기능 요구 사항"),
    "Non-Functional Requirements": ("비기능 요구사항", "비기능 요구 사항"),
    "Scope": ("범위",),
    "Interfaces and Contracts": ("인터페이스와 계약",),
    "State and Flow": ("상태와 흐름",),
    "Milestones": ("마일스톤",),
    "Work Breakdown": ("작업 분해",),
    "Bounded Context": ("경계 컨텍스트", "바운디드 컨텍스트"),
    "Aggregate": ("애그리거트", "집합체"),
    "Terms": ("용어",),
    "Implementation Scope": ("구현 범위",),
    "Phase Topology": ("위상 구조", "단계 위상"),
    "Binding Map": ("결속 맵", "바인딩 맵"),
    "Interaction Paths": ("상호작용 경로",),
    "Failure and Drift Points": ("실패와 드리프트 지점",),
    "Observability Notes": ("관측성 노트",),
}

SECTIONS = DOC_SECTIONS

TOPOLOGY_HEADING = re.compile(r"^#{2,6}\s*(\[[A-Z][0-9]+(?:\.[a-z0-9]+)*\])\s+\S", re.MULTILINE)
_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_CANDIDATE = re.compile(r"^ {0,3}[#`~=-][^\n]*", re.MULTILINE)
_SETEXT = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(```+|~~~+)")
_NUMBER = re.compile(r"^(?:\d+(?:\.\d+)*\.?|[ivx]+\.)\s+", re.IGNORECASE)


@dataclass(frozen=True)
class Contract:
    """What a document of one type must have."""

    doc_type: str
    prefix: str
    sections: tuple[str, ...]
    # Normalized names that satisfy each section, in the order of ``sections``.
    accepted: tuple[frozenset[str], ...] = field(default=())


def _norm(heading: str) -> str:
    text = heading.strip().strip("*_`").strip()
    if text[:1].isdigit() or text[:1] in "ivxIVX":
        text = _NUMBER.sub("", text)
    text = text.rstrip(":：").strip()
    return " ".join(text.split()).casefold()


def contract_for(doc_type: str, configured: dict[str, list[str] | None] | None = None) -> Contract:
    """The contract of ``doc_type``; ``configured`` maps a type to its configured sections."""
    override = (configured or {}).get(doc_type)
    if override:
        names = tuple(override)
        accepted = tuple(frozenset({_norm(n)}) for n in names)
    else:
        names = SECTIONS[doc_type]
        accepted = tuple(
            frozenset({_norm(n), *(_norm(k) for k in _KOREAN.get(n, ()))}) for n in names
        )
    return Contract(doc_type, PREFIXES[doc_type], names, accepted)


def contracts_from_config(cfg: Any) -> dict[str, Contract]:
    """Every type's contract under a loaded config (``cfg.docs_authority``), or the defaults."""
    section = getattr(cfg, "docs_authority", None)
    configured = {t: getattr(section, f"sections_{t}", None) for t in DOC_TYPES}
    return {t: contract_for(t, configured) for t in DOC_TYPES}


def headings(body: str) -> list[tuple[int, str]]:
    """ATX and setext headings outside code fences: ``(level, text)``."""
    return _scan_headings(body)[0]


def open_fence(body: str) -> str | None:
    """The fence a document leaves open at its end (``` or ~~~), or None."""
    return _scan_headings(body)[1]


def _scan_headings(body: str) -> tuple[list[tuple[int, str]], str | None]:
    """Headings and the fence left open, visiting only lines that can be either (a fence, an
    ATX heading or a setext underline starts with one of ``#`~=-`` after at most 3 spaces)."""
    out: list[tuple[int, str]] = []
    fence: str | None = None
    for candidate in _CANDIDATE.finditer(body):
        line = candidate.group(0).rstrip("\r")
        marker = _FENCE.match(line)
        if marker is not None:
            token = marker.group(1)[0] * 3
            if fence is None:
                fence = token
            elif token == fence:
                fence = None
            continue
        if fence is not None:
            continue
        match = _ATX.match(line)
        if match is not None:
            out.append((len(match.group(1)), match.group(2)))
        elif _SETEXT.match(line):
            begin = candidate.start()
            prior = ""
            if begin > 0:
                prior = body[body.rfind("\n", 0, begin - 1) + 1 : begin - 1].rstrip("\r")
            if prior.strip() and not _ATX.match(prior):
                out.append((1 if line.lstrip().startswith("=") else 2, prior.strip()))
    return out, fence


def _light(text: str) -> str:
    """LF line ends, no BOM, NFC: what the heading and frontmatter checks need (cheaper than
    ingest's full normalization, which also trims every line; the checks ignore trailing
    blanks)."""
    import unicodedata

    if "\ufeff" in text:
        text = text.replace("\ufeff", "")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    return text


def _frontmatter_type(fields: dict[str, str]) -> tuple[bool, str | None, str | None]:
    """(present, raw value, canonical type or None)."""
    for key, value in fields.items():
        if key.lower() == "type":
            return True, value, normalize_type(value)
    return False, None, None


def violations(text: str, doc_type: str, contract: Contract) -> list[dict[str, Any]]:
    """Each way ``text`` breaks ``contract``: ``{code, message[, section]}`` in a stable order.

    Codes: ``frontmatter-type-missing``, ``frontmatter-type-mismatch``, ``h1-missing``,
    ``h1-prefix-mismatch``, ``section-missing``, ``topology-heading-missing``.
    """
    fields, body = parse_frontmatter(_light(text))
    out: list[dict[str, Any]] = []
    present, raw, declared = _frontmatter_type(fields)
    if not present:
        out.append(
            {
                "code": "frontmatter-type-missing",
                "message": f"frontmatter has no `type: {doc_type}`",
            }
        )
    elif declared != doc_type:
        out.append(
            {
                "code": "frontmatter-type-mismatch",
                "message": f"frontmatter type {raw!r} is not {doc_type!r}",
            }
        )
    found = headings(body)
    h1 = next((t for level, t in found if level == 1), None)
    if h1 is None:
        out.append({"code": "h1-missing", "message": f"no H1 (`# {contract.prefix} <title>`)"})
    elif not h1.strip().casefold().startswith(contract.prefix.casefold()):
        out.append(
            {
                "code": "h1-prefix-mismatch",
                "message": f"the H1 does not start with {contract.prefix!r}",
            }
        )
    names = {_norm(t) for _, t in found}
    for section, accepted in zip(contract.sections, contract.accepted, strict=True):
        if not names & accepted:
            out.append(
                {
                    "code": "section-missing",
                    "section": section,
                    "message": f"required section {section!r} is missing",
                }
            )
    if doc_type == "pbd" and TOPOLOGY_HEADING.search(body) is None:
        out.append(
            {
                "code": "topology-heading-missing",
                "message": "no topology identifier heading such as `## [B1] ...`",
            }
        )
    return out


def detect(path: str, text: str) -> str:
    """The doc type of ``text`` at ``path`` (docs/reference/documents.md, the same rules as
    ingest)."""
    return detect_doc_type(path, text)


_FM_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)
_ATX_LINE = re.compile(r"^ {0,3}#{1,6}(?:[ \t].*)?$", re.MULTILINE)


def detect_head(path: str, head: str) -> str:
    """:func:`detect` on the part of ``head`` that decides the type: the frontmatter and the
    text up to the first ATX heading line (the same answer, a fraction of the work)."""
    start = 0
    if head.startswith(("---", "\ufeff---")):
        from ragit.ingest.chunking import normalize_text
        from ragit.ingest.frontmatter import parse_frontmatter

        close = _FM_CLOSE.search(head, head.find("\n") + 1)
        if close is None or not parse_frontmatter(normalize_text(head))[0]:
            # No frontmatter by ingest's rule (never closed, or lines that are not
            # `key: value`): its `---` and fences are body text, decided on the whole head.
            return detect(path, head)
        start = close.end()
    heading = _ATX_LINE.search(head, start)
    if (
        heading is not None
        and "```" not in head[start : heading.start()]
        and "~~~" not in head[start : heading.start()]
    ):
        head = head[: heading.end()]
    return detect(path, head)


def title_from_path(path: str) -> str:
    """A readable title from a file name: ``0001-use-zvec.md`` → ``0001 use zvec``."""
    stem = path.rsplit("/", 1)[-1]
    stem = stem.rsplit(".", 1)[0] if "." in stem else stem
    words = re.sub(r"[-_]+", " ", stem).strip()
    return words or "Untitled"


_OPEN = re.compile(r"---[ \t]*\r?\n")
_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*(?:\r?\n|\r|\Z)", re.MULTILINE)


def _frontmatter_end(raw: str) -> int | None:
    """Offset just past the closing fence of the frontmatter block opening ``raw``."""
    opening = _OPEN.match(raw)
    if opening is None:
        return None
    closing = _CLOSE.search(raw, opening.end())
    return None if closing is None else closing.end()


def refreshed(text: str, doc_type: str, contract: Contract, path: str) -> str:
    """``text`` realigned with ``contract`` without removing or reordering a byte.

    Adds ``type: <doc_type>`` to the frontmatter (or a frontmatter block), an H1 when there
    is none, and each missing section with a TODO bullet at the end (plus a ``[B1]`` boundary
    section for PBD). A frontmatter ``type`` that names another value is left as it is (the
    violation stays reported). Line ends follow the document (CRLF stays CRLF). The old text
    is always a subsequence of the new one: only insertions happen.
    """
    nl = "\r\n" if "\r\n" in text else "\n"
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    rest = text[len(bom) :]
    fields, _body = parse_frontmatter(_light(rest))
    present, _raw, _declared = _frontmatter_type(fields)
    head = ""  # frontmatter part of ``rest`` (kept as is, possibly with an inserted line)
    tail = rest
    if fields:
        # The frontmatter block ends where the normalized body starts; find that boundary in
        # the raw text by its closing fence line.
        end = _frontmatter_end(rest)
        if end is None:  # cannot locate the block in the raw text: treat as no frontmatter
            fields = {}
        else:
            head, tail = rest[:end], rest[end:]
            if not present:
                first = re.match(r"---[ \t]*\r?\n", head)
                assert first is not None
                head = head[: first.end()] + f"type: {doc_type}{nl}" + head[first.end() :]
    created = not fields
    if created:
        head = f"---{nl}type: {doc_type}{nl}---{nl}"
    found = headings(_light(tail))
    if not any(level == 1 for level, _ in found):
        h1 = f"# {contract.prefix} {title_from_path(path)}{nl}{nl}"
        lead = re.match(r"(?:[ \t]*\r?\n)*", tail)
        cut = lead.end() if lead is not None else 0
        if cut == 0 and head and not created:
            h1 = nl + h1
        tail = tail[:cut] + h1 + tail[cut:]
    names = {_norm(t) for _, t in found}
    additions: list[str] = []
    for section, accepted in zip(contract.sections, contract.accepted, strict=True):
        if not names & accepted:
            additions.append(f"## {section}{nl}{nl}- TODO: describe {section.lower()}.{nl}")
    if doc_type == "pbd" and TOPOLOGY_HEADING.search(_light(tail)) is None:
        additions.append(
            f"## [B1] Boundary{nl}{nl}- TODO: name this boundary and its bindings.{nl}"
        )
    if additions:
        if tail and not tail.endswith(("\n", "\r")):
            tail += nl
        fence = open_fence(_light(tail))
        if fence is not None:  # close it, or the new sections would be code
            tail += fence + nl
        tail += "".join(nl + a for a in additions)
    if created and tail and not tail.startswith(("\n", "\r\n")):
        head += nl
    return bom + head + tail


def skeleton(doc_type: str, contract: Contract, title: str) -> str:
    """A new document: frontmatter, the H1 and every required section with a TODO bullet."""
    parts = [f"---\ntype: {doc_type}\n---\n\n# {contract.prefix} {title}\n"]
    for section in contract.sections:
        parts.append(f"\n## {section}\n\n- TODO: describe {section.lower()}.\n")
    if doc_type == "pbd":
        parts.append("\n## [B1] Boundary\n\n- TODO: name this boundary and its bindings.\n")
    return "".join(parts)


def from_template(template: str, doc_type: str, contract: Contract, title: str) -> str:
    """A new document from a template: ``{{title}}`` filled in, then realigned (frontmatter
    type, H1, missing sections) so that it meets the contract."""
    text = template.replace("{{title}}", title).replace("{{ title }}", title)
    return refreshed(text, doc_type, contract, title.replace(" ", "-") + ".md")
