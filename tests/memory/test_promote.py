"""`ragit memory promote`: corpus documents, never overwritten, never ingested."""

from __future__ import annotations

import re
from typing import Any

import pytest
from _memkit import SECRET, Repo, tree_state, wrap_payload

from ragit.ingest.doctype import detect_doc_type, parse_frontmatter

DECISION = {
    "kind": "decision",
    "title": "Retry budget",
    "summary": "Retries use exponential backoff with jitter capped at 30 seconds.",
    "context": "A flaky upstream.",
    "consequences": ["bounded latency"],
}


def _promote(repo: Repo, payload: Any, *flags: str) -> Any:
    run = repo.input("memory", "promote", *flags, payload=payload)
    assert run.code == 0, run.output
    return run.data


def test_promote_writes_a_typed_document_with_contract_sections(repo: Repo) -> None:
    """Contract-mandated: frontmatter (type, source_session, promoted_at) and ADR sections."""
    data = _promote(repo, {"promotionCandidates": [DECISION], "promotedAt": "2026-04-11T08:00:00Z"})
    assert data["createdFiles"] == ["docs/memory/decisions/retry-budget.md"]
    assert data["plannedFiles"] == data["createdFiles"]
    assert data["ingested"] is False
    text = (repo.root / data["createdFiles"][0]).read_text(encoding="utf-8")
    fields, body = parse_frontmatter(text)
    assert fields["type"] == "adr"
    assert fields["promoted_at"] == "2026-04-11T08:00:00Z"
    assert "source_session" in fields
    assert body.lstrip().startswith("# ADR: Retry budget")
    for section in ("## Context", "## Decision", "## Consequences"):
        assert section in body
    assert "- bounded latency" in body
    assert detect_doc_type(data["createdFiles"][0], text) == "adr"


@pytest.mark.parametrize(
    ("candidate", "path", "sections"),
    [
        (
            {"kind": "glossary", "title": "Token", "summary": "s", "term": "Token"},
            "docs/memory/glossary/token.md",
            ["## Terms"],
        ),
        (
            {"kind": "plan", "title": "Auth rollout", "summary": "s", "milestones": ["m1"]},
            "docs/memory/plans/auth-rollout.md",
            ["## Milestones", "## Work Breakdown"],
        ),
        (
            {"type": "adr", "title": "Use JWT", "summary": "s", "rationale": "stateless"},
            "docs/memory/decisions/use-jwt.md",
            ["## Context", "## Decision", "## Rationale"],
        ),
        (
            {"type": "terms", "title": "Glossed", "summary": "s"},
            "docs/memory/glossary/glossed.md",
            ["## Terms"],
        ),
        (
            {"type": "spec", "title": "Login API", "summary": "s"},
            "docs/memory/spec/login-api.md",
            ["## Scope", "## Interfaces and Contracts"],
        ),
    ],
)
def test_kinds_and_types_map_to_directories_and_sections(
    repo: Repo, candidate: dict[str, Any], path: str, sections: list[str]
) -> None:
    """Contract-mandated: kind decision|glossary|plan or type adr|glossary|plan|<docType>."""
    data = _promote(repo, [candidate])
    assert data["createdFiles"] == [path]
    text = (repo.root / path).read_text(encoding="utf-8")
    for section in sections:
        assert section in text


def test_two_promotions_in_a_row_both_survive(repo: Repo) -> None:
    """Contract-mandated: existing files are never overwritten (-2, -3 suffixes)."""
    first = _promote(repo, [DECISION])
    second = _promote(repo, [{**DECISION, "summary": "Second take."}])
    third = _promote(repo, [DECISION, DECISION])
    assert first["createdFiles"] == ["docs/memory/decisions/retry-budget.md"]
    assert second["createdFiles"] == ["docs/memory/decisions/retry-budget-2.md"]
    assert third["createdFiles"] == [
        "docs/memory/decisions/retry-budget-3.md",
        "docs/memory/decisions/retry-budget-4.md",
    ]
    first_text = (repo.root / "docs/memory/decisions/retry-budget.md").read_text(encoding="utf-8")
    assert "exponential backoff" in first_text and "Second take." not in first_text


def test_promote_dry_run_plans_and_writes_nothing(repo: Repo) -> None:
    """Contract-mandated: dry-run lists plannedFiles and writes nothing."""
    _promote(repo, [DECISION])
    before = tree_state(repo.root)
    data = _promote(repo, [DECISION], "--dry-run")
    assert data["dryRun"] is True
    assert data["createdFiles"] == []
    assert data["plannedFiles"] == ["docs/memory/decisions/retry-budget-2.md"]
    assert tree_state(repo.root) == before


def test_promote_records_the_latest_session_by_default(repo: Repo) -> None:
    """Implementation choice: source_session defaults to the working state's latest wrap."""
    sid = repo.input("memory", "wrap", payload=wrap_payload()).data["sessionId"]
    data = _promote(repo, [DECISION])
    assert data["sourceSessionId"] == sid
    fields, _ = parse_frontmatter((repo.root / data["createdFiles"][0]).read_text(encoding="utf-8"))
    assert fields["source_session"] == sid
    assert fields["source_head_sha"] == repo.head()


@pytest.mark.parametrize(
    "title",
    ["../../../../etc/passwd", "/etc/passwd", "..", "a/../../b", "C:\\\\evil", "인증"],
)
def test_hostile_titles_stay_inside_the_corpus(repo: Repo, title: str) -> None:
    """Contract-mandated: slugs are safe (ASCII, no traversal)."""
    data = _promote(repo, [{**DECISION, "title": title}])
    (path,) = data["createdFiles"]
    assert re.fullmatch(r"docs/memory/decisions/[a-z0-9-]+\.md", path)
    assert (repo.root / path).resolve().is_relative_to((repo.root / "docs/memory").resolve())


def test_promote_masks_secrets_in_documents_and_output(repo: Repo) -> None:
    """Contract-mandated: memory writes are masked; output is re-masked."""
    run = repo.input(
        "memory", "promote", payload=[{**DECISION, "summary": f"Use api_key={SECRET} carefully."}]
    )
    assert run.code == 0
    assert SECRET not in run.output
    assert SECRET not in repo.all_text()


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"promotionCandidates": [{**DECISION, "kind": "memo"}]}, "promotionCandidates[0].kind"),
        (
            {"promotionCandidates": [{**DECISION, "kind": None, "type": "novel"}]},
            "promotionCandidates[0]",
        ),
        ({"promotionCandidates": [{**DECISION, "type": "glossary"}]}, "promotionCandidates[0]"),
        ({"promotionCandidates": [{**DECISION, "color": "red"}]}, "promotionCandidates[0].color"),
        (
            {"promotionCandidates": [{**DECISION, "title": "two\nlines"}]},
            "promotionCandidates[0].title",
        ),
        (
            {"promotionCandidates": [{**DECISION, "relatedFiles": ["../x"]}]},
            "promotionCandidates[0].relatedFiles[0]",
        ),
        ({"promotionCandidates": []}, "promotionCandidates"),
        ({"promotionCandidates": [DECISION], "sourceSessionId": "../../x"}, "sourceSessionId"),
        ({"promotionCandidates": [DECISION], "promotedAt": "soon"}, "promotedAt"),
        ({"candidates": [DECISION]}, "promotionCandidates"),
        ([{**DECISION, "summary": "x" * 20_001}], "promotionCandidates[0].summary"),
    ],
)
def test_bad_promotions_are_input_invalid(repo: Repo, payload: Any, field: str) -> None:
    """Contract-mandated: strict candidates → INPUT_INVALID, nothing written."""
    before = tree_state(repo.root)
    run = repo.input("memory", "promote", payload=payload)
    assert run.code == 2, run.output
    assert run.error["details"]["field"] == field
    assert tree_state(repo.root) == before


def test_promote_rejects_a_scalar_payload(repo: Repo) -> None:
    """Contract-mandated: --input is an object (or, for promote, an array)."""
    run = repo.ragit("memory", "promote", "--input", "-", "--format", "json", stdin='"x"')
    assert run.code == 2
    assert run.error["details"]["field"] == "input"


@pytest.mark.parametrize("corpus", ["../outside", "/tmp/abs", ".ragit/memory", ".git/x"])
def test_unsafe_corpus_dir_is_config_invalid(repo: Repo, corpus: str) -> None:
    """Implementation choice: memory.corpus_dir must be a repo-relative corpus directory."""
    config = repo.root / ".ragit/config.toml"
    text = config.read_text(encoding="utf-8")
    config.write_text(
        text.replace('corpus_dir = "docs/memory"', f'corpus_dir = "{corpus}"'), encoding="utf-8"
    )
    run = repo.input("memory", "promote", payload=[DECISION])
    assert run.code == 3, run.output
    assert run.error["code"] == "CONFIG_INVALID"
    assert run.error["details"]["key"] == "memory.corpus_dir"


def test_corpus_symlinked_outside_is_refused(repo: Repo, tmp_path: Any) -> None:
    """Implementation choice: a corpus directory that resolves outside the repository is refused."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (repo.root / "docs/memory").mkdir(parents=True)
    (repo.root / "docs/memory/decisions").symlink_to(outside)
    run = repo.input("memory", "promote", payload=[DECISION])
    assert run.code == 3
    assert list(outside.iterdir()) == []
