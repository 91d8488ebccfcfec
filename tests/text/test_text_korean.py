"""Korean particles, stop words and content words."""

from __future__ import annotations

import pytest

from ragit.text.korean import PARTICLES, STOP_WORDS, korean_content_words, strip_particle


def test_particles_are_ordered_longest_first() -> None:
    """Implementation choice: the longest particle that fits is stripped."""
    lengths = [len(p) for p in PARTICLES]
    assert lengths == sorted(lengths, reverse=True)
    assert PARTICLES[0] == "에서는" and "을" in PARTICLES and len(PARTICLES) == 43


def test_standalone_particles_are_stop_words() -> None:
    """Implementation choice: a particle written apart carries no content."""
    assert set(PARTICLES) <= STOP_WORDS
    assert {"어떻게", "무엇인가요", "하나요", "있습니다", "및"} <= STOP_WORDS


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        ("저장소를", "저장소"),
        ("저장소에서는", "저장소"),  # 에서는, not 는
        ("커밋으로", "커밋"),  # 으로, not 로
        ("토큰은", "토큰"),
        ("캐시의", "캐시"),
        ("브랜치까지", "브랜치"),
        ("ingest가", "ingest"),
        ("저장소", "저장소"),  # no particle
        ("를", "를"),  # a word is never stripped to nothing
        ("이", "이"),
        ("나이", "나이"),  # a one-syllable stem is never left: 나이 is a noun
        ("나이가", "나이"),
        ("이름이", "이름"),
        ("정보보다", "정보"),
    ],
)
def test_strip_particle_removes_one_trailing_particle(word: str, stem: str) -> None:
    """Implementation choice: inflected nouns share a stem (``저장소를`` → ``저장소``)."""
    assert strip_particle(word) == stem


# Common nouns that end in a syllable which is also a particle (과, 로, 의, 이, 가, 도, 나,
# 고, 와, 만, 는, 은, 에). Stripping it would leave one syllable, which forms no bigram.
PARTICLE_LIKE_NOUNS = (
    "결과",
    "효과",
    "교과",
    "학과",
    "경로",
    "도로",
    "기로",
    "진로",
    "항로",
    "통로",
    "수로",
    "정의",
    "회의",
    "의의",
    "주의",
    "논의",
    "합의",
    "강의",
    "문의",
    "차이",
    "나이",
    "아이",
    "오이",
    "사이",
    "고가",
    "대가",
    "평가",
    "국가",
    "작가",
    "휴가",
    "의도",
    "온도",
    "속도",
    "정도",
    "제도",
    "지도",
    "태도",
    "한도",
    "각도",
    "밀도",
    "최고",
    "경고",
    "광고",
    "재고",
    "참고",
    "보고",
    "사고",
    "기와",
    "오만",
    "가로",
)


@pytest.mark.parametrize("noun", PARTICLE_LIKE_NOUNS)
def test_two_syllable_nouns_are_never_cut_to_one_syllable(noun: str) -> None:
    """Implementation choice: a stem keeps at least two syllables (``결과`` is not ``결`` +
    ``과``), so the noun keeps a bigram in the CJK search; with a particle it is found."""
    assert strip_particle(noun) == noun
    assert korean_content_words(noun) == [noun]
    for particle in ("를", "에서", "의", "으로는", "와"):
        assert strip_particle(noun + particle) == noun


def test_one_syllable_rule_is_kept_for_the_placeholder_version() -> None:
    """Implementation choice: ``ngram-hash-1`` vectors strip to one syllable; that rule is
    part of the stored vectors and is kept under its version."""
    assert strip_particle("결과", 1) == "결"
    assert strip_particle("결과를", 1) == "결과"


def test_strip_particle_strips_once() -> None:
    """Implementation choice: a stem that still ends in a particle keeps it."""
    assert strip_particle("사이의를") == "사이의"


def test_content_words_drop_question_endings_and_keep_stems() -> None:
    """Implementation choice: the bigram query keeps the content of a Korean question."""
    assert korean_content_words("재시도는 어떻게 동작하나요") == ["재시도", "동작하나요"]
    assert korean_content_words("저장소를 잠그는 장치는 무엇인가요") == ["저장소", "잠그", "장치"]
    assert korean_content_words("토큰 갱신") == ["토큰", "갱신"]


def test_content_words_drop_words_whose_stem_is_a_stop_word() -> None:
    """Implementation choice: ``무엇을`` is a stop word itself; ``그는`` and ``것을`` are a
    one-syllable pronoun or bound noun with a case particle."""
    assert korean_content_words("그는 무엇을 캐시에") == ["캐시"]
    assert korean_content_words("것을 수가 결과를") == ["결과"]


def test_a_text_of_only_stop_words_keeps_all_its_words() -> None:
    """Implementation choice: something is always left to search for."""
    assert korean_content_words("어떻게 하나요") == ["어떻게", "하나요"]
    assert korean_content_words("") == []
