"""Document contracts (docs/authority.md): the checks, the insert-only refresh, create's skeletons.

The central property: ``refresh`` never removes or reorders a byte — the old text is a
subsequence of the new one — and a refreshed document meets its contract (unless its
frontmatter names another type, which refresh leaves alone).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragit.ingest.doctype import DOC_TYPES
from ragit.ops.authority.contracts import (
    contract_for,
    headings,
    refreshed,
    skeleton,
    violations,
)


def _is_subsequence(old: str, new: str) -> bool:
    it = iter(new)
    return all(ch in it for ch in old)


def _codes(text: str, doc_type: str) -> list[str]:
    return [v["code"] for v in violations(text, doc_type, contract_for(doc_type))]


@pytest.mark.parametrize("doc_type", DOC_TYPES)
def test_a_skeleton_meets_its_contract(doc_type: str) -> None:
    text = skeleton(doc_type, contract_for(doc_type), "Something")
    assert violations(text, doc_type, contract_for(doc_type)) == []


def test_an_adr_without_frontmatter_h1_prefix_and_sections_lists_each_violation() -> None:
    codes = _codes("# Use zvec\n\n## Decision\n\nWe do.\n", "adr")
    assert codes == [
        "frontmatter-type-missing",
        "h1-prefix-mismatch",
        "section-missing",
        "section-missing",
    ]


def test_section_names_match_case_insensitively_with_numbers_and_colons() -> None:
    text = "---\ntype: adr\n---\n# ADR: x\n## 1. context\n### DECISION:\n#### Consequences\n"
    assert _codes(text, "adr") == []


def test_korean_headings_count_like_english_ones() -> None:
    text = "---\ntype: prd\n---\n# PRD: 원장\n## 목표\n## 사용자 스토리\n## 인수 기준\n"
    assert _codes(text, "prd") == []


def test_configured_sections_replace_the_builtin_ones() -> None:
    contract = contract_for("adr", {"adr": ["Status", "Decision"]})
    text = "---\ntype: adr\n---\n# ADR: x\n## Status\n## Decision\n"
    assert violations(text, "adr", contract) == []
    assert [v["section"] for v in violations("# ADR: x\n", "adr", contract)[1:]] == [
        "Status",
        "Decision",
    ]


def test_pbd_needs_a_topology_identifier_heading() -> None:
    base = skeleton("pbd", contract_for("pbd"), "Flow").replace("## [B1] Boundary", "## Boundary")
    assert _codes(base, "pbd") == ["topology-heading-missing"]


def test_a_frontmatter_type_naming_another_value_is_a_mismatch_refresh_leaves_alone() -> None:
    text = "---\ntype: note\n---\n# ADR: x\n## Context\n## Decision\n## Consequences\n"
    assert _codes(text, "adr") == ["frontmatter-type-mismatch"]
    assert refreshed(text, "adr", contract_for("adr"), "docs/adr/x.md") == text


def test_headings_inside_code_fences_do_not_count() -> None:
    text = "---\ntype: glossary\n---\n# Glossary: g\n```\n## Terms\n```\n"
    assert _codes(text, "glossary") == ["section-missing"]


def test_a_setext_h1_counts_as_the_h1() -> None:
    assert [h for h in headings("ADR: Title\n==========\n\nbody\n")] == [(1, "ADR: Title")]


def test_refresh_inserts_type_h1_and_sections_and_keeps_every_byte() -> None:
    old = "Some intro\n\n## Decision\nWe do.\n"
    new = refreshed(old, "adr", contract_for("adr"), "docs/adr/0002-use-zvec.md")
    assert new == (
        "---\ntype: adr\n---\n\n# ADR: 0002 use zvec\n\nSome intro\n\n## Decision\nWe do.\n"
        "\n## Context\n\n- TODO: describe context.\n"
        "\n## Consequences\n\n- TODO: describe consequences.\n"
    )
    assert _is_subsequence(old, new)
    assert _codes(new, "adr") == []


def test_refresh_adds_type_inside_existing_frontmatter_and_keeps_crlf() -> None:
    old = "---\r\ntitle: x\r\n---\r\n# SRS: x\r\n## Functional Requirements\r\n"
    new = refreshed(old, "srs", contract_for("srs"), "docs/srs/x.md")
    assert new.startswith("---\r\ntype: srs\r\ntitle: x\r\n---\r\n# SRS: x\r\n")
    assert "\n## Non-Functional Requirements\r\n" in new
    assert "\n" not in new.replace("\r\n", "")
    assert _is_subsequence(old, new)


def test_refresh_of_a_conforming_document_changes_nothing() -> None:
    text = skeleton("spec", contract_for("spec"), "Ingest")
    assert refreshed(text, "spec", contract_for("spec"), "docs/spec/ingest.md") == text


_LINES = st.sampled_from(
    [
        "",
        "---",
        "type: adr",
        "title: x",
        "# ADR: Title",
        "# Title",
        "## Context",
        "## Decision",
        "## 결정",
        "```",
        "## Consequences",
        "text",
        "- item",
        "===",
        "## [B1] Edge",
        "\ufeffhello",
        "  indented",
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(_LINES, max_size=14),
    crlf=st.booleans(),
    trailing=st.booleans(),
    doc_type=st.sampled_from(DOC_TYPES),
)
def test_refresh_only_inserts_and_is_idempotent(
    lines: list[str], crlf: bool, trailing: bool, doc_type: str
) -> None:
    nl = "\r\n" if crlf else "\n"
    old = nl.join(lines) + (nl if trailing and lines else "")
    contract = contract_for(doc_type)
    new = refreshed(old, doc_type, contract, f"docs/{doc_type}/x.md")
    assert _is_subsequence(old, new)
    assert refreshed(new, doc_type, contract, f"docs/{doc_type}/x.md") == new
    remaining = {v["code"] for v in violations(new, doc_type, contract)}
    assert remaining <= {"frontmatter-type-mismatch", "h1-prefix-mismatch"}


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=300), doc_type=st.sampled_from(DOC_TYPES))
def test_refresh_of_any_text_keeps_it_as_a_subsequence(text: str, doc_type: str) -> None:
    new = refreshed(text, doc_type, contract_for(doc_type), f"docs/{doc_type}/x.md")
    assert _is_subsequence(text, new)
