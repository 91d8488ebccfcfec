"""Markdown chunking: sections, fences, normalization, windows, indexed text."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ragit.ingest.chunking import (
    Chunk,
    chunk_markdown,
    indexed_text,
    iter_headings,
    normalize_for_id,
    normalize_text,
    normalized_body,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _fixture_file(name: str, path: str) -> str:
    spec = json.loads((FIXTURES / name / "fixture.json").read_text(encoding="utf-8"))
    content: bytes | None = None
    for step in spec["steps"]:
        if step["op"] == "writeTree":
            candidate = FIXTURES / name / "files" / step["source"] / path
            if candidate.is_file():
                content = candidate.read_bytes()
    assert content is not None, path
    return content.decode("utf-8")


def _fixture_headings() -> list[tuple[str, list[list[str]]]]:
    spec: dict[str, Any] = json.loads(
        (FIXTURES / "code-fences" / "fixture.json").read_text(encoding="utf-8")
    )
    return sorted(spec["expect"]["headings"].items())


def _section_paths(chunks: list[Chunk]) -> list[list[str]]:
    paths: list[list[str]] = []
    for chunk in chunks:
        if chunk.level > 0 and list(chunk.heading_path) not in paths:
            paths.append(list(chunk.heading_path))
    return paths


def _assert_invariants(text: str, chunks: list[Chunk], max_chars: int) -> None:
    body = normalized_body(text)
    indexes = [c.index for c in chunks]
    assert indexes == sorted(set(indexes))
    for chunk in chunks:
        assert chunk.text
        assert chunk.text == chunk.text.strip()
        assert len(chunk.text) <= max_chars
        assert body[chunk.char_start : chunk.char_start + len(chunk.text)] == chunk.text
        assert normalize_for_id(chunk.text) == chunk.text
        assert chunk.token_count == len(chunk.text.split())
        assert chunk.heading_path[-1] == chunk.section_title


@pytest.mark.parametrize(("path", "expected"), _fixture_headings())
def test_code_fences_fixture_heading_paths(path: str, expected: list[list[str]]) -> None:
    """Contract-mandated (docs/reference/documents.md: fences respected, H1 kept), as pinned by the
    fixture."""
    chunks = chunk_markdown(_fixture_file("code-fences", path))
    assert _section_paths(chunks) == expected


def test_setext_headings_are_sections() -> None:
    """Implementation choice: one-line setext titles are headings (the original ignored them)."""
    text = "Title\n=====\n\nIntro.\n\nSub part\n--------\nMore.\n"
    chunks = chunk_markdown(text)
    assert [(c.heading_path, c.level) for c in chunks] == [
        (("Title",), 1),
        (("Title", "Sub part"), 2),
    ]
    nested = chunk_markdown(_fixture_file("code-fences", "docs/guide/nested-headings.md"))
    assert ("Ledger runbook", "Setext heading") in [c.heading_path for c in nested]


def test_dashes_under_a_multi_line_paragraph_are_not_a_heading() -> None:
    """Implementation choice: only a one-line paragraph becomes a setext title."""
    text = "# T\n\nfirst line\nsecond line\n---\nafter\n"
    assert [c.section_title for c in chunk_markdown(text)] == ["T"]


def test_list_items_and_thematic_breaks_are_not_setext_titles() -> None:
    """Implementation choice: `- item` over `---` and `***` rules stay text."""
    text = "# T\n\n- item\n---\n\n***\n\ntext\n"
    assert [c.section_title for c in chunk_markdown(text)] == ["T"]


def test_h1_title_is_in_its_own_section_and_every_path() -> None:
    """Contract-mandated (docs/reference/documents.md: H1 titles never reached the original's
    index)."""
    text = "# ADR: Use zvec\n\nWe decided.\n\n## Decision\n\nUse it.\n\n### Consequences\n\nFast.\n"
    chunks = chunk_markdown(text)
    assert chunks[0].text == "# ADR: Use zvec\n\nWe decided."
    assert chunks[0].heading_path == ("ADR: Use zvec",)
    assert chunks[2].heading_path == ("ADR: Use zvec", "Decision", "Consequences")
    assert chunks[2].level == 3


def test_heading_only_sections_still_yield_their_heading() -> None:
    """Implementation choice: titles are searchable even without a body."""
    chunks = chunk_markdown("# Title\n\nIntro.\n\n## Empty\n\n## Also empty\n")
    assert [c.text for c in chunks] == ["# Title\n\nIntro.", "## Empty", "## Also empty"]


def test_heading_followed_directly_by_subsections_lives_in_their_breadcrumbs() -> None:
    """Implementation choice: a bare parent heading would only crowd results and budgets."""
    chunks = chunk_markdown("# Title\n## Empty\n### Also empty\n")
    assert [c.text for c in chunks] == ["### Also empty"]
    assert chunks[0].heading_path == ("Title", "Empty", "Also empty")
    assert chunks[0].indexed_text.startswith("Title > Empty")


def test_text_before_the_first_heading_is_introduction() -> None:
    """Contract-mandated (docs/reference/documents.md: preamble section "Introduction")."""
    chunks = chunk_markdown("[![badge](x)](y)\n\n# Project\n\nBody.\n")
    assert chunks[0].section_title == "Introduction"
    assert chunks[0].heading_path == ("Introduction",)
    assert chunks[0].level == 0
    assert chunks[1].heading_path == ("Project",)


def test_document_without_headings_is_one_body_section() -> None:
    """Contract-mandated (docs/reference/documents.md: no headings → "Body"); the override is a
    choice."""
    assert chunk_markdown("Just text.\n")[0].section_title == "Body"
    assert chunk_markdown("Just text.\n", body_title="notes")[0].heading_path == ("notes",)


@pytest.mark.parametrize("text", ["", "   \n\n\t\n", "\ufeff", "---\ntype: plan\n---\n"])
def test_empty_input_gives_no_chunks(text: str) -> None:
    """Implementation choice: nothing to index, nothing returned."""
    assert chunk_markdown(text) == []


def test_frontmatter_is_stripped() -> None:
    """Contract-mandated (docs/reference/documents.md: body with frontmatter stripped)."""
    chunks = chunk_markdown("---\ntype: adr\ntitle: x\n---\n# T\n\nBody.\n")
    assert chunks[0].text == "# T\n\nBody."
    assert chunks[0].char_start == 0


def test_crlf_cr_bom_and_trailing_spaces_are_normalized() -> None:
    """Implementation choice: the same content chunks the same on every platform."""
    unix = chunk_markdown("# T\n\nLine one\nLine two\n")
    windows = chunk_markdown("\ufeff# T  \r\n\r\nLine one\t\r\nLine two\r\n")
    old_mac = chunk_markdown("# T\r\rLine one\rLine two\r")
    assert unix == windows == old_mac


def test_windows_crlf_fixture_chunks_like_lf() -> None:
    """Implementation choice: CRLF in the blob does not change chunk text."""
    crlf = _fixture_file("code-fences", "docs/guide/windows-crlf.md")
    assert "\r\n" in crlf
    assert chunk_markdown(crlf) == chunk_markdown(crlf.replace("\r\n", "\n"))


def test_hash_lines_inside_fences_are_not_headings() -> None:
    """Contract-mandated (docs/reference/documents.md: the original split inside code fences)."""
    text = (
        "# Doc\n\n"
        "```bash\n# comment\n## also a comment\n```\n\n"
        "~~~\n# tilde\n~~~\n\n"
        "````markdown\n```\n# inside a longer fence\n```\n````\n\n"
        "   ```\n# indented fence\n   ```\n\n"
        "    # indented code\n\n"
        "#NoSpace is prose\n\n"
        "## Real\n"
    )
    assert [c.heading_path for c in chunk_markdown(text)] == [("Doc",), ("Doc", "Real")]


def test_a_fence_closes_only_with_the_same_char_and_enough_length() -> None:
    """Contract-mandated (CommonMark fence rule, docs/reference/documents.md)."""
    text = "# A\n\n````\n```\n~~~~\n# still code\n````\n\n## B\n"
    assert [c.section_title for c in chunk_markdown(text)] == ["A", "B"]


def test_backtick_info_string_with_a_backtick_is_not_a_fence() -> None:
    """Implementation choice: CommonMark rule, so inline code does not open a fence."""
    text = "# A\n\n``` not `a` fence\n\n## B\n"
    assert [c.section_title for c in chunk_markdown(text)] == ["A", "B"]


def test_unclosed_fence_runs_to_the_end() -> None:
    """Contract-mandated (docs/reference/documents.md), as in the code-fences fixture."""
    text = "# A\n\n```python\nx = 1\n## not a heading\n"
    chunks = chunk_markdown(text)
    assert [c.section_title for c in chunks] == ["A"]
    assert "## not a heading" in chunks[0].text


def test_closing_hashes_and_empty_headings() -> None:
    """Implementation choice: `## Title ##` is "Title"; a bare `#` is text."""
    chunks = chunk_markdown("# T\n\nIntro.\n\n## Closing notes ##\n\n#\n\ntext\n")
    assert [c.section_title for c in chunks] == ["T", "Closing notes"]
    assert "#\n\ntext" in chunks[1].text


def test_korean_document_sections_and_tokens() -> None:
    """Implementation choice: Hangul headings and text chunk like any other."""
    text = "# 용어집\n\n## 스냅샷\n\n커밋마다 manifest를 만든다. 검색은 snapshot에 한정된다.\n"
    chunks = chunk_markdown(text)
    assert chunks[0].heading_path == ("용어집", "스냅샷")
    assert chunks[0].token_count == 8


def test_decomposed_hangul_is_composed() -> None:
    """Implementation choice: NFC, so NFD files index like NFC ones."""
    import unicodedata

    composed = "# 용어집\n\n검색 기능\n"
    decomposed = unicodedata.normalize("NFD", composed)
    assert decomposed != composed
    assert chunk_markdown(decomposed) == chunk_markdown(composed)


def test_long_section_is_split_into_overlapping_windows_at_paragraphs() -> None:
    """Contract-mandated (docs/reference/documents.md: ~1000-char windows, 120-char overlap);
    boundaries are a choice."""
    paragraphs = [f"Paragraph {i} opens. " + "Then a word or two more. " * 8 for i in range(30)]
    text = "# Long\n\n" + "\n\n".join(p.strip() for p in paragraphs) + "\n"
    chunks = chunk_markdown(text)
    assert len(chunks) > 5
    assert [c.index for c in chunks] == list(range(len(chunks)))
    _assert_invariants(text, chunks, 1000)
    body = normalized_body(text)
    for first, second in itertools.pairwise(chunks):
        first_end = first.char_start + len(first.text)
        assert second.char_start < first_end  # overlap
        assert first_end - second.char_start <= 120
        assert body[first_end : first_end + 2] == "\n\n"  # cut at a paragraph boundary
        assert second.text.startswith("Then a word")  # the overlap is whole sentences


def _wrapped(sentences: list[str], width: int = 72) -> str:
    """Sentences as one paragraph hard-wrapped at ``width``, as many RFCs are written."""
    import textwrap

    return "\n".join(textwrap.wrap(" ".join(sentences), width))


def _starts_a_sentence(body: str, at: int) -> bool:
    before = body[:at].rstrip()
    if not before or "\n\n" in body[len(before) : at + 1]:
        return True
    line = body[body.rfind("\n", 0, at) + 1 : at + 2].lstrip()
    if line[:2] in ("- ", "* ", "> ") or line[:1] == "|":
        return True
    return before[-1] in ".!?" and not body[at].islower()


def test_windows_start_where_a_sentence_starts() -> None:
    """Implementation choice (chunking docstring): a window never starts mid-sentence."""
    sentences = [
        f"Closure {i} captures its environment, e.g. variables it mentions, when they can "
        "use async/await inside the body."
        if i % 3
        else f"Rule {i} holds! Does it hold?"
        for i in range(60)
    ]
    text = "# Captures\n\n" + _wrapped(sentences[:30]) + "\n\n" + _wrapped(sentences[30:])
    chunks = chunk_markdown(text)
    body = normalized_body(text)
    assert len(chunks) >= 4
    _assert_invariants(text, chunks, 1000)
    for chunk in chunks[1:]:
        assert _starts_a_sentence(body, chunk.char_start), chunk.text[:60]
        assert not chunk.text.startswith(("variables", "use async"))
    for first, second in itertools.pairwise(chunks):  # overlap stays under its bound
        assert first.char_start + len(first.text) - second.char_start <= 120


def test_no_chunk_starts_with_a_link_reference_definition() -> None:
    """Implementation choice (chunking docstring): link definitions are targets, not text."""
    definitions = "\n".join(f'[ref-{i}]: https://example.org/{i} "Title {i}"' for i in range(8))
    prose = _wrapped([f"Sentence {i} cites [ref-{i % 8}] and explains why." for i in range(40)])
    text = (
        f"{definitions}\n\n# Survey\n\n{prose}\n\n{definitions}\n\n{prose}\n\n"
        "[^note]: A footnote is text, so it stays.\n"
    )
    chunks = chunk_markdown(text)
    assert chunks, text
    for chunk in chunks:
        assert not re.match(r"\s*\[[^\]^][^\]]*\]: ", chunk.text), chunk.text[:60]
    assert chunks[0].section_title == "Survey"  # the definitions before the title: no chunk
    assert any("[^note]: A footnote is text" in c.text for c in chunks)
    only = chunk_markdown("[survey]: https://example.org/survey\n")
    assert only == []


def test_a_link_reference_definition_is_skipped_only_where_it_opens_a_line() -> None:
    """Implementation choice (chunking docstring): indented definitions (as in a list
    item) are targets too; mid-line, ``[label]: …`` is text and stays."""
    for indent in ("    ", "  \t", "\t"):
        assert chunk_markdown(f"{indent}[ref]: https://example.org/x\n") == []
    kept = chunk_markdown("Cut here. [ref]: https://example.org/x\n", max_chars=32, overlap=6)
    assert any("https://example.org/x" in c.text for c in kept)


def test_huge_headless_fixture_section_is_split_into_body_windows() -> None:
    """Implementation choice, as described by the code-fences fixture."""
    text = _fixture_file("code-fences", "docs/guide/huge-section.md")
    chunks = chunk_markdown(text)
    assert len(chunks) >= 8
    assert {c.section_title for c in chunks} == {"Body"}
    _assert_invariants(text, chunks, 1000)


def test_text_without_whitespace_is_hard_cut_without_overlap() -> None:
    """Implementation choice: CJK runs or base64 blobs still make progress."""
    text = "가" * 2500
    chunks = chunk_markdown(text)
    assert [len(c.text) for c in chunks] == [1000, 1000, 500]


def test_hard_cut_does_not_split_a_combining_sequence() -> None:
    """Implementation choice: never cut between a base character and its marks."""
    # q + two marks has no precomposed form, so NFC keeps the sequence.
    text = "q\u0307\u0323" * 500
    chunks = chunk_markdown(text, max_chars=100, overlap=0)
    for chunk in chunks:
        assert chunk.text[0] == "q"
    assert "".join(c.text for c in chunks) == normalize_text(text)


def test_invalid_window_parameters_are_rejected() -> None:
    """Implementation choice: windows that cannot make progress are a programming error."""
    with pytest.raises(ValueError, match="max_chars"):
        chunk_markdown("x", max_chars=10)
    with pytest.raises(ValueError, match="overlap"):
        chunk_markdown("x", max_chars=100, overlap=60)


def test_indexed_text_prefixes_the_breadcrumb_once() -> None:
    """Implementation choice: titles are indexed with every window, never twice."""
    text = "# ADR: Use zvec\n\nIntro.\n\n## Decision\n\n" + "Because " * 300 + "\n"
    chunks = chunk_markdown(text)
    assert chunks[0].indexed_text == chunks[0].text
    assert chunks[1].indexed_text == "ADR: Use zvec\n\n" + chunks[1].text
    continuation = chunks[2]
    assert not continuation.text.startswith("## Decision")
    assert continuation.indexed_text == "ADR: Use zvec > Decision\n\n" + continuation.text


def test_indexed_text_never_adds_synthetic_titles() -> None:
    """Implementation choice: "Introduction"/"Body" are not words of the document."""
    assert chunk_markdown("Preamble.\n\n# T\n")[0].indexed_text == "Preamble."
    assert indexed_text("text", ("Body",), 0) == "text"


def test_indexed_text_recognizes_setext_first_lines() -> None:
    """Implementation choice: the setext heading line counts as the title line."""
    assert indexed_text("Sub\n---\nmore", ("Title", "Sub"), 2) == "Title\n\nSub\n---\nmore"


def test_normalize_for_id_ignores_platform_differences() -> None:
    """Contract-mandated (docs/contract.md §5: ids derive from normalized text)."""
    assert normalize_for_id("\ufeff  a  \r\nb\t\r\n\r\n") == "a\nb"
    assert normalize_for_id("a\nb") == normalize_for_id("a\r\nb")


def test_iter_headings_reports_offsets_of_both_heading_kinds() -> None:
    """Implementation choice: offsets let callers slice sections."""
    body = "# A\n\nB\n=\n"
    headings = list(iter_headings(body))
    assert [(h.level, h.title, body[h.start : h.end]) for h in headings] == [
        (1, "A", "# A"),
        (1, "B", "B\n="),
    ]


def test_five_megabyte_document_chunks_completely() -> None:
    """Implementation choice: linear time (the benchmark measures speed, not this test)."""
    section = "## Section {n}\n\n" + ("Lorem ipsum dolor sit amet, 검색 품질. " * 40 + "\n\n") * 10
    parts = ["# Big\n\n"]
    size = 0
    n = 0
    while size < 5_000_000:
        piece = section.replace("{n}", str(n))
        parts.append(piece)
        size += len(piece.encode("utf-8"))
        n += 1
    text = "".join(parts)
    chunks = chunk_markdown(text)
    assert len({c.section_index for c in chunks}) == n  # the bare "# Big" folds into children
    assert chunks[-1].heading_path == ("Big", f"Section {n - 1}")
    assert [c.index for c in chunks] == list(range(len(chunks)))
    _assert_invariants(text, chunks[:50] + chunks[-50:], 1000)


def test_pathological_inputs_terminate() -> None:
    """Implementation choice: no quadratic path on hostile shapes."""
    for text in ("#" * 1_000_000, "```\n" * 200_000, "a\n-\n" * 100_000, "x" * 1_000_000):
        chunks = chunk_markdown(text)
        assert all(c.text for c in chunks)


_markdown_piece = st.sampled_from(
    [
        "# H1\n",
        "## H2\n",
        "### H3 ###\n",
        "Title\n",
        "=====\n",
        "---\n",
        "```\n",
        "~~~~\n",
        "    # indented\n",
        "- item\n",
        "\n",
        "\r\n",
        "\ufeff",
        "word ",
        "단어 ",
        "e\u0301",
        "  \t",
        "longwordwithoutspaces" * 3,
        "para.\n\n",
        "One sentence. ",
        "e.g. this ",
        "[ref]: https://example.org/x\n",
        "[^n]: a footnote\n",
    ]
)
_DEFINITION = re.compile(r"(?m)^[ \t]*\[(?!\^)[^\]\n]+\]:[ \t]*\S+[ \t]*$")


@settings(max_examples=400, deadline=None)
@given(
    st.lists(_markdown_piece, max_size=80).map("".join),
    st.integers(min_value=32, max_value=200),
)
@example(text="One sentence. [ref]: https://example.org/x\n", max_chars=32)
def test_chunk_invariants_hold_for_arbitrary_markdown(text: str, max_chars: int) -> None:
    """Implementation choice: non-empty, verbatim, normalized, bounded chunks covering all
    text but link definitions, none starting on one."""
    overlap = max_chars // 5
    chunks = chunk_markdown(text, max_chars=max_chars, overlap=overlap)
    _assert_invariants(text, chunks, max_chars)
    body = normalized_body(text)
    covered = bytearray(len(body))
    for chunk in chunks:
        covered[chunk.char_start : chunk.char_start + len(chunk.text)] = b"\x01" * len(chunk.text)
    for heading in iter_headings(body):  # bare parent headings live in child breadcrumbs
        covered[heading.start : heading.end] = b"\x01" * (heading.end - heading.start)
    for definition in _DEFINITION.finditer(body):  # link targets are not chunk text
        covered[definition.start() : definition.end()] = b"\x01" * len(definition.group(0))
    missing = [body[i] for i in range(len(body)) if not covered[i] and not body[i].isspace()]
    assert missing == []
    for chunk in chunks:  # a chunk may start on "[ref]:" only mid-line
        line = body.rfind("\n", 0, chunk.char_start) + 1
        assert body[line : chunk.char_start].strip() or _DEFINITION.match(body, line) is None
