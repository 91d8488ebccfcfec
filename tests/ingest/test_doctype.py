"""Doc type detection (frontmatter, path segments, first heading) and frontmatter parsing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragit.ingest.doctype import DOC_TYPES, detect_doc_type, normalize_type, parse_frontmatter

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _head_tree(name: str) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The files of a fixture's HEAD commit, from its data (writeTree/rename/delete steps)."""
    root = FIXTURES / name
    spec = json.loads((root / "fixture.json").read_text(encoding="utf-8"))
    files: dict[str, bytes] = {}
    for step in spec["steps"]:
        if step["op"] == "writeTree":
            base = root / "files" / step["source"]
            for path in sorted(p for p in base.rglob("*") if p.is_file()):
                files[path.relative_to(base).as_posix()] = path.read_bytes()
        elif step["op"] == "rename":
            files[step["to"]] = files.pop(step["from"])
        elif step["op"] == "delete":
            files.pop(step["path"])
    return spec, files


def _fixture_doc_types() -> list[tuple[str, str, str, str]]:
    cases = []
    for name in ("docs-basic", "code-fences", "korean-mixed"):
        spec, files = _head_tree(name)
        for path, expected in spec["expect"]["docTypes"].items():
            cases.append((name, path, files[path].decode("utf-8"), expected))
    return cases


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [pytest.param(p, t, e, id=f"{n}:{p}") for n, p, t, e in _fixture_doc_types()],
)
def test_fixture_documents_get_their_intended_doc_type(path: str, text: str, expected: str) -> None:
    """Contract-mandated (contract §6 doc types, docs/reference/documents.md order), as pinned by
    the fixtures."""
    assert detect_doc_type(path, text) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("adr", "adr"),
        ("ADR", "adr"),
        ("decision", "adr"),
        ("term", "glossary"),
        ("terms", "glossary"),
        ("Glossary", "glossary"),
        ("specification", "spec"),
        ("pb", "pbd"),
        ("phase-binding", "pbd"),
        ("phase_bindings", "pbd"),
        ("phase and binding documents", "pbd"),
        ("phase-and-binding-documents", "pbd"),
        ("roadmap", "plan"),
        ("requirements", "srs"),
        (" prd ", "prd"),
        ("note", None),
        ("", None),
    ],
)
def test_frontmatter_type_aliases(value: str, expected: str | None) -> None:
    """Contract-mandated (docs/reference/documents.md aliases); path words as aliases are an
    implementation choice."""
    assert normalize_type(value) == expected


def test_frontmatter_beats_path_and_heading() -> None:
    """Contract-mandated (docs/reference/documents.md order: frontmatter first)."""
    text = "---\ntype: plan\n---\n# ADR: something\n"
    assert detect_doc_type("docs/adr/0001.md", text) == "plan"


def test_frontmatter_type_key_is_case_insensitive_and_quoted_values_work() -> None:
    """Implementation choice: `Type: "ADR"` is the same declaration."""
    assert detect_doc_type("x.md", '---\nType: "ADR"\n---\nbody\n') == "adr"


def test_unrecognized_frontmatter_type_falls_through_to_path() -> None:
    """Implementation choice: `type: note` does not force unknown."""
    assert detect_doc_type("docs/prd/x.md", "---\ntype: note\n---\n# Hello\n") == "prd"


def test_path_beats_heading() -> None:
    """Contract-mandated (docs/reference/documents.md order: path segments before headings)."""
    assert detect_doc_type("docs/spec/x.md", "# Glossary of terms\n") == "spec"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("docs/adr/0001-use-zvec.md", "adr"),
        ("docs/ADR/0001.md", "adr"),
        ("docs/architecture-decisions/0001.md", "adr"),
        ("docs/memory/decisions/use-zvec.md", "adr"),
        ("docs/memory/plans/q1.md", "plan"),
        ("docs/memory/glossary/ledger.md", "glossary"),
        ("docs/requirements/system.md", "srs"),
        ("docs/specs/api.md", "spec"),
        ("docs/roadmap/2026.md", "plan"),
        ("docs/domain-model/ledger.md", "ddd"),
        ("docs/phase-bindings/a.md", "pbd"),
        ("docs/glossary.md", "glossary"),
        ("ROADMAP.md", "plan"),
        ("docs/prd/terms.md", "prd"),
        ("docs/adrenaline/notes.md", "unknown"),
        ("docs/plans-archive/x.md", "unknown"),
        ("docs/specialists/x.md", "unknown"),
        ("docs/respec.md", "unknown"),
    ],
)
def test_path_segments_match_whole_segments_only(path: str, expected: str) -> None:
    """Contract-mandated (docs/reference/documents.md path segments); deepest-first and stem last
    are choices."""
    assert detect_doc_type(path, "no heading here\n") == expected


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("# ADR: Use zvec", "adr"),
        ("# ADR 0001: manifest를 commit마다", "adr"),
        ("# Architecture Decision Record 12", "adr"),
        ("# PRD: Memory recall", "prd"),
        ("# Product Requirements for billing", "prd"),
        ("# Software Requirements Specification", "srs"),
        ("# SPEC: Posting API", "spec"),
        ("# Posting API specification", "spec"),
        ("# Plan: Q1", "plan"),
        ("# Migration plan", "plan"),
        ("# Domain-Driven design of the ledger", "ddd"),
        ("# Glossary", "glossary"),
        ("# PBD: checkout", "pbd"),
        ("# Phase and Binding Documents", "pbd"),
        ("# 프로젝트 용어집", "glossary"),
        ("# 용어집을 정리합니다", "glossary"),
        ("# 실행계획: ingest 개선", "plan"),
        ("# 실행 계획", "plan"),
        ("# 검색 기능 명세", "spec"),
        ("# 상세 명세서", "spec"),
        ("# 위상과 결속 문서", "pbd"),
        ("Glossary\n========", "glossary"),
        ("# Special Handling of Chargebacks", "unknown"),
        ("# Planet-scale storage", "unknown"),
        ("# Mailing address validation", "unknown"),
        ("# Specter of legacy code", "unknown"),
        ("# Planning poker", "unknown"),
        ("# Respecting limits", "unknown"),
        ("# Onboarding", "unknown"),
    ],
)
def test_first_heading_keywords_are_whole_words(heading: str, expected: str) -> None:
    """Contract-mandated (docs/reference/documents.md heading keywords; never substring
    matches)."""
    assert detect_doc_type("notes/x.md", f"{heading}\n\nBody text.\n") == expected


def test_leftmost_heading_keyword_wins() -> None:
    """Implementation choice: the type named first in the title is the one meant."""
    assert detect_doc_type("x.md", "# Glossary for the product requirements\n") == "glossary"
    assert detect_doc_type("x.md", "# Product requirements glossary\n") == "prd"


def test_only_the_first_heading_counts_and_fenced_headings_are_not_headings() -> None:
    """Contract-mandated (docs/reference/documents.md: first heading); fences as in the chunker."""
    fenced = "```\n# ADR: not a heading\n```\n\n# Onboarding\n\n## Plan\n"
    assert detect_doc_type("x.md", fenced) == "unknown"


def test_untyped_document_is_unknown() -> None:
    """Contract-mandated (contract §6: unknown is metadata, not a gate)."""
    assert detect_doc_type("README.md", "Just text.\n") == "unknown"
    assert detect_doc_type("README.md", "") == "unknown"
    assert "unknown" not in DOC_TYPES


def test_parse_frontmatter_returns_fields_and_body() -> None:
    """Contract-mandated (docs/reference/documents.md YAML-ish frontmatter)."""
    text = "---\ntype: adr\ntitle: 'Use zvec'  \nstatus: accepted # for now\n---\n# Title\n"
    fields, body = parse_frontmatter(text)
    assert fields == {"type": "adr", "title": "Use zvec", "status": "accepted"}
    assert body == "# Title\n"


def test_parse_frontmatter_tolerates_crlf_and_bom() -> None:
    """Implementation choice: Windows editors write both."""
    fields, body = parse_frontmatter("\ufeff---\r\ntype: spec\r\n---\r\n# T\r\n")
    assert fields == {"type": "spec"}
    assert body == "# T\r\n"


def test_parse_frontmatter_accepts_lists_comments_and_dots_close() -> None:
    """Implementation choice: YAML-ish blocks with lists still parse their scalars."""
    text = "---\n# meta\ntags:\n  - a\n  - b\naliases: [x, y]\ntype: glossary\n...\nbody"
    fields, body = parse_frontmatter(text)
    assert fields == {"tags": "", "aliases": "[x, y]", "type": "glossary"}
    assert body == "body"


@pytest.mark.parametrize(
    "text",
    [
        "---\ntype: adr\nno closing line\n",
        "---\n\nA thematic break, then prose.\n\n---\n",
        "Not at the start\n---\ntype: adr\n---\n",
        "---\n# only a comment\n---\nbody\n",
        "----\ntype: adr\n----\n",
    ],
)
def test_text_that_is_not_frontmatter_is_left_as_body(text: str) -> None:
    """Implementation choice: a block that is not key/value metadata is content."""
    assert parse_frontmatter(text) == ({}, text)


def test_frontmatter_only_document_has_an_empty_body() -> None:
    """Implementation choice: the code-fences fixture's frontmatter-only doc."""
    assert parse_frontmatter("---\ntype: plan\n---\n") == ({"type": "plan"}, "")
    assert parse_frontmatter("---\ntype: plan\n---") == ({"type": "plan"}, "")
