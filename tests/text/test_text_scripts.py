"""Script detection: CJK characters and runs, word patterns, a question's script mix."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragit.text.normalize import fold
from ragit.text.scripts import (
    ASCII_WORD,
    CJK_CHAR,
    CJK_RUN,
    HANGUL_CHAR,
    SCRIPT_WORD,
    SYLLABIC_CHAR,
    WORD,
    cjk_runs,
    has_cjk,
    script_weights,
)

# A compatibility ideograph without a decomposition (NFKC keeps it) and one with one.
COMPAT_KEPT = "\ufa11"  # 﨑
COMPAT_FOLDED = "\uf900"  # 豈 → U+8C48


def test_the_patterns_are_the_ranges_retrieval_and_ingest_have_always_used() -> None:
    """Implementation choice: the index and the eval figures depend on these exact classes."""
    narrow = "\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3"
    assert CJK_CHAR.pattern == f"[{narrow}]"
    assert CJK_RUN.pattern == f"[{narrow}\uf900-\ufaff]+"
    kana_han = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    hangul = "\uac00-\ud7a3"
    assert SCRIPT_WORD.pattern == f"[{hangul}]+|[{kana_han}]+|[^\\W_{hangul}{kana_han}]+"
    assert SYLLABIC_CHAR.pattern == f"[{hangul}{kana_han}]"
    assert HANGUL_CHAR.pattern == f"[{hangul}]"
    assert WORD.pattern == r"[^\W_]+"


@pytest.mark.parametrize(
    "char",
    ["가", "힣", "\u1100", "\u3131", "ひ", "カ", "\u3400", "中", "\u9fff"],
)
def test_hangul_kana_and_han_are_cjk_characters(char: str) -> None:
    """Implementation choice: syllables, both jamo blocks, kana and Han count as CJK."""
    assert CJK_CHAR.fullmatch(char) and CJK_RUN.fullmatch(char)


@pytest.mark.parametrize("char", ["a", "1", "é", "Ω", " ", "。", "\uff21"])
def test_latin_digits_punctuation_and_fullwidth_latin_are_not_cjk(char: str) -> None:
    """Implementation choice: only the listed blocks are CJK."""
    assert not CJK_CHAR.search(char) and not has_cjk(char)


def test_compatibility_ideographs_are_in_runs_but_not_cjk_characters() -> None:
    """Implementation choice: U+F900–FAFF feeds the bigram field, not the script weights."""
    assert CJK_CHAR.search(COMPAT_KEPT) is None
    assert has_cjk(COMPAT_KEPT)
    assert cjk_runs(f"a{COMPAT_KEPT}b") == COMPAT_KEPT
    # In the script mix a compatibility ideograph is a letter of a Latin-script word.
    assert script_weights(COMPAT_KEPT) == (1.0, 0.0)


def test_cjk_runs_keeps_the_runs_joined_by_single_spaces() -> None:
    """Implementation choice: the search_cjk field is the runs of a text, in order."""
    assert (
        cjk_runs("ingest가 저장소를 잠근다 (writer-lock) 中文テスト")
        == "가 저장소를 잠근다 中文テスト"
    )
    assert cjk_runs("hello, world") == ""
    assert cjk_runs("") == ""
    assert cjk_runs("한국어\n\n日本語") == "한국어 日本語"


def test_has_cjk_is_whether_cjk_runs_finds_anything() -> None:
    """Implementation choice: one set for runs and for their presence."""
    for text in ("plain", "혼합 mixed", "", "漢", COMPAT_KEPT):
        assert has_cjk(text) == (cjk_runs(text) != "")


def test_script_weights_follow_the_question_composition() -> None:
    """Implementation choice: the share of Latin words vs CJK characters weighs each field's
    coverage and, for an English-only model, the n-gram embedding's share of the vector."""
    assert script_weights("how do retries work") == (1.0, 0.0)
    assert script_weights("재시도는 어떻게 동작하나요") == (0.0, 1.0)
    # Two Latin words, two Hangul characters (one CJK term per two characters).
    assert script_weights("payment retry 방지") == (pytest.approx(2 / 3), pytest.approx(1 / 3))
    # A Latin word with a Korean particle written onto it is a Latin word and CJK characters.
    assert script_weights("ingest가") == (pytest.approx(2 / 3), pytest.approx(1 / 3))
    assert script_weights("가") == (0.0, 1.0)


def test_script_weights_of_a_question_without_words_is_all_latin() -> None:
    """Implementation choice: an empty or punctuation-only question uses the word index."""
    assert script_weights("") == (1.0, 0.0)
    assert script_weights("?! ...") == (1.0, 0.0)


def test_word_splits_on_everything_but_letters_and_digits() -> None:
    """Implementation choice: underscore and punctuation separate words."""
    assert WORD.findall("snake_case v2.1 저장소를") == ["snake", "case", "v2", "1", "저장소를"]


def test_script_word_splits_runs_of_hangul_kana_han_and_other_letters() -> None:
    """Implementation choice: ngram-hash-1 words (a script change starts a new word)."""
    assert SCRIPT_WORD.findall(fold("ingest가 저장소를 ひらがな漢字 snake_case")) == [
        "ingest",
        "가",
        "저장소를",
        "ひらがな漢字",
        "snake",
        "case",
    ]
    # Compatibility jamo fold to conjoining jamo, which are "other letters" here.
    assert SCRIPT_WORD.findall(fold("\u3131a")) == ["\u1100a"]
    assert SCRIPT_WORD.findall(COMPAT_KEPT) == [COMPAT_KEPT]


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_ascii_word_matches_what_script_word_matches_on_folded_ascii(text: str) -> None:
    """Implementation choice: the ASCII fast path finds the same words."""
    folded = fold(text)
    if folded.isascii():
        assert ASCII_WORD.findall(folded) == SCRIPT_WORD.findall(folded)


def test_syllabic_and_hangul_characters_start_a_word() -> None:
    """Implementation choice: the n-gram sizes follow the first character of a word."""
    assert SYLLABIC_CHAR.match("저장소") and HANGUL_CHAR.match("저장소")
    assert SYLLABIC_CHAR.match("漢字") and not HANGUL_CHAR.match("漢字")
    assert not SYLLABIC_CHAR.match("ingest") and not HANGUL_CHAR.match("a저")


def test_fold_is_nfkc_then_lower_case() -> None:
    """Implementation choice: placeholder words are compared NFKC-folded and lower-cased."""
    assert fold("ＩＮＧＥＳＴ") == "ingest"
    assert fold("Ａpple ﬁle") == "apple file"
    assert fold(COMPAT_FOLDED) == unicodedata.normalize("NFKC", COMPAT_FOLDED) != COMPAT_FOLDED
    decomposed = unicodedata.normalize("NFD", "저장소")
    assert fold(decomposed) == "저장소"
    assert re.fullmatch(f"[{chr(0xAC00)}-{chr(0xD7A3)}]+", fold(decomposed))
