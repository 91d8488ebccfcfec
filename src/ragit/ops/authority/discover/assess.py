"""From a scan to a diagnosis: repository mode, knowledge-slot coverage, maturity scores and
the knowledge map (docs/authority.md, step 2). Pure functions of the scan (and README's
headings)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ragit.ops.authority.discover.scan import BUILD_FILE_BYTES, Scan

MODES = ("auto", "empty", "existing", "monorepo", "docs-heavy")
STRATEGIES = ("minimal", "balanced", "full")
SLOTS = (
    "projectOverview",
    "localDevelopmentGuide",
    "architectureRationale",
    "decisionRecords",
    "packageOwnershipMap",
    "ingestionPolicy",
)
KNOWLEDGE_SLOTS = (
    "project",
    "product",
    "architecture",
    "workspace",
    "rules",
    "decisions",
    "operations",
    "glossary",
    "ingestion-policy",
)
MAX_SOURCES = 20

_DEV_HEADING = re.compile(
    r"\b(install(ation|ing)?|setup|set up|getting started|quick ?start|development|develop|"
    r"build(ing)?|contributing|running tests|tests?)\b|설치|개발|시작하기|빌드",
    re.IGNORECASE,
)
_ARCH_NAME = re.compile(
    r"(^|/)(architecture|design|overview|internals)([^/]*\.(md|mdx|markdown|rst)$|/)", re.I
)
_DEV_NAME = re.compile(
    r"(^|/)(contributing|development|developing|hacking|getting[-_]started|setup|install|"
    r"building|local[-_]development)[^/]*\.(md|mdx|markdown|rst)$",
    re.I,
)
_OPS_NAME = re.compile(
    r"(^|/)(runbooks?|operations?|ops|deploy(ment)?|release|oncall)[^/]*(\.md|/)", re.I
)
_RULES = (
    "AGENTS.md",
    "CLAUDE.md",
    "CONTRIBUTING.md",
    ".cursorrules",
    "GEMINI.md",
    ".github/copilot-instructions.md",
)
_OWNERS = ("CODEOWNERS", ".github/CODEOWNERS", "docs/CODEOWNERS", "docs/workspace-map.md")


def _slot(status: str, sources: list[str]) -> dict[str, Any]:
    return {"status": status, "sources": sorted(set(sources))[:MAX_SOURCES]}


def classify(scan: Scan, requested: str) -> str:
    """The repository mode: ``requested`` unless it is ``auto``."""
    if requested != "auto":
        return requested
    if scan.code_file_count == 0 and scan.doc_file_count <= 1 and not scan.build_files:
        return "empty"
    if scan.monorepo:
        return "monorepo"
    if scan.doc_file_count >= 20 and scan.doc_file_count >= scan.code_file_count:
        return "docs-heavy"
    return "existing"


def _readme_headings(root: Path, scan: Scan) -> list[str]:
    if not scan.has("README.md"):
        return []
    try:
        with open(root / "README.md", "rb") as handle:
            text = handle.read(BUILD_FILE_BYTES).decode("utf-8", errors="ignore")
    except OSError:
        return []
    return re.findall(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", text, re.MULTILINE)


# Documents under these directories are test data or someone else's, not this project's
# knowledge: they are counted by the scan but never cover a slot.
NOT_KNOWLEDGE = frozenset(
    {
        "fixtures",
        "fixture",
        "tests",
        "test",
        "testdata",
        "examples",
        "example",
        "vendor",
        "third_party",
        "third-party",
        "node_modules",
    }
)


def knowledge_docs(scan: Scan) -> list[Any]:
    """The scan's markdown documents that can describe this project."""
    return [
        d
        for d in scan.docs
        if d.path.lower().endswith((".md", ".mdx", ".markdown"))
        and not NOT_KNOWLEDGE & {s.lower() for s in d.path.split("/")[:-1]}
    ]


def coverage(root: Path, scan: Scan, *, initialized: bool) -> dict[str, dict[str, Any]]:
    """Each knowledge slot of `ragit init` (docs/authority.md):
    ``{status: sufficient|partial|missing, sources}``."""
    md = knowledge_docs(scan)
    out: dict[str, dict[str, Any]] = {}
    overview = [p for p in ("README.md", "RAGIT.md", "README.rst") if scan.has(p)]
    readme = scan.doc("README.md")
    if scan.has("RAGIT.md") or (
        readme is not None and (readme.size >= 600 or len(readme.headings) >= 3)
    ):
        out["projectOverview"] = _slot("sufficient", overview)
    elif overview:
        out["projectOverview"] = _slot("partial", overview)
    else:
        out["projectOverview"] = _slot("missing", [])

    dev = [d.path for d in md if _DEV_NAME.search(d.path)]
    readme_dev = [h for h in _readme_headings(root, scan) if _DEV_HEADING.search(h)]
    if dev:
        out["localDevelopmentGuide"] = _slot("sufficient", dev)
    elif readme_dev:
        out["localDevelopmentGuide"] = _slot("partial", ["README.md"])
    else:
        out["localDevelopmentGuide"] = _slot("missing", [])

    arch = [d.path for d in md if _ARCH_NAME.search(d.path)]
    design = [d.path for d in md if d.doc_type in ("spec", "srs", "ddd", "pbd")]
    if arch:
        out["architectureRationale"] = _slot("sufficient", arch + design)
    elif design:
        out["architectureRationale"] = _slot("partial", design)
    else:
        out["architectureRationale"] = _slot("missing", [])

    adrs = [d.path for d in md if d.doc_type == "adr" and not _is_index(d.path)]
    adr_index = [d.path for d in md if d.doc_type == "adr" and _is_index(d.path)]
    if adrs:
        out["decisionRecords"] = _slot("sufficient", adrs)
    elif adr_index:
        out["decisionRecords"] = _slot("partial", adr_index)
    else:
        out["decisionRecords"] = _slot("missing", [])

    owners = [p for p in _OWNERS if scan.has(p)]
    member_dirs = [*scan.apps, *scan.packages]
    member_readmes = [f"{m}/README.md" for m in member_dirs if scan.has(f"{m}/README.md")]
    if owners:
        out["packageOwnershipMap"] = _slot("sufficient", owners)
    elif scan.monorepo and member_readmes:
        out["packageOwnershipMap"] = _slot("partial", member_readmes)
    elif not scan.monorepo and scan.build_files:
        out["packageOwnershipMap"] = _slot("partial", [b for b in scan.build_files if "/" not in b])
    else:
        out["packageOwnershipMap"] = _slot("missing", [])

    if scan.has("docs/ragit/ingestion-policy.md"):
        out["ingestionPolicy"] = _slot("sufficient", ["docs/ragit/ingestion-policy.md"])
    elif initialized:
        out["ingestionPolicy"] = _slot("partial", [".ragit/config.toml"])
    else:
        out["ingestionPolicy"] = _slot("missing", [])
    return out


def _is_index(path: str) -> bool:
    return path.rsplit("/", 1)[-1].lower() in ("readme.md", "index.md", "readme.mdx", "index.mdx")


_SCORE = {"sufficient": 1.0, "partial": 0.5, "missing": 0.0}


def maturity(scan: Scan, cov: dict[str, dict[str, Any]]) -> dict[str, int]:
    """Four scores from 0 to 100 (weights documented in docs/init.md)."""

    def s(slot: str) -> float:
        return _SCORE[cov[slot]["status"]]

    md = knowledge_docs(scan)
    typed = sum(1 for d in md if d.doc_type != "unknown")
    typed_share = typed / len(md) if md else 0.0
    agents = 1.0 if scan.has("AGENTS.md") else 0.0
    entry = 1.0 if scan.has("RAGIT.md") else 0.0
    return {
        "discoverability": round(
            100
            * (
                0.4 * s("projectOverview")
                + 0.3 * s("localDevelopmentGuide")
                + 0.2 * agents
                + 0.1 * s("ingestionPolicy")
            )
        ),
        "architectureClarity": round(
            100
            * (
                0.5 * s("architectureRationale")
                + 0.3 * s("decisionRecords")
                + 0.2 * s("packageOwnershipMap")
            )
        ),
        "operationalReadiness": round(
            100
            * (
                0.4 * s("localDevelopmentGuide")
                + 0.3 * (1.0 if scan.ci_files else 0.0)
                + 0.15 * (1.0 if scan.build_files else 0.0)
                + 0.15 * (1.0 if scan.infra_files else 0.0)
            )
        ),
        "agentReadability": round(
            100 * (0.3 * agents + 0.3 * typed_share + 0.2 * s("ingestionPolicy") + 0.2 * entry)
        ),
    }


def knowledge_map(scan: Scan, cov: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Where each kind of knowledge lives today: ``[{slot, sources}]`` in UR order."""
    md = knowledge_docs(scan)

    def typed(*types: str) -> list[str]:
        return [d.path for d in md if d.doc_type in types]

    sources: dict[str, list[str]] = {
        "project": cov["projectOverview"]["sources"],
        "product": typed("prd"),
        "architecture": [
            *cov["architectureRationale"]["sources"],
            *typed("spec", "srs", "ddd", "pbd"),
        ],
        "workspace": [*cov["packageOwnershipMap"]["sources"], *scan.workspace_files],
        "rules": [p for p in _RULES if scan.has(p)],
        "decisions": typed("adr"),
        "operations": [
            *scan.ci_files,
            *scan.infra_files,
            *[d.path for d in md if _OPS_NAME.search(d.path)],
            *typed("plan"),
        ],
        "glossary": typed("glossary"),
        "ingestion-policy": cov["ingestionPolicy"]["sources"],
    }
    return [
        {"slot": slot, "sources": sorted(set(sources[slot]))[:MAX_SOURCES]}
        for slot in KNOWLEDGE_SLOTS
    ]
