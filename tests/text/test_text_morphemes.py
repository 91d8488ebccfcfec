"""Korean morphemes of the keyword index's ``ko`` field (ragit.text.morphemes)."""

from __future__ import annotations

import subprocess
import sys

from ragit.text.morphemes import (
    MIN_QUESTION_MORPHEME,
    analyzer,
    candidate_terms,
    morpheme_terms,
    morpheme_terms_batch,
    question_morphemes,
)


def test_nouns_and_stems_are_kept_particles_and_endings_dropped() -> None:
    """Implementation choice: the ``ko`` field holds what a Korean reader calls the words."""
    assert morpheme_terms("스레드가 종료됐다") == ["스레드", "종료"]
    assert morpheme_terms("커밋을 작성했습니다") == ["커밋", "작성"]
    assert morpheme_terms("빌리다 대여") == ["빌리", "대여"]


def test_compounds_are_split() -> None:
    """Implementation choice: a compound noun is found by each of its parts."""
    assert morpheme_terms("해시맵에 값을 넣기") == ["해시", "맵", "값", "넣"]


def test_text_without_hangul_has_no_morphemes_and_loads_no_model() -> None:
    """Implementation choice: an English corpus never pays for the Korean analyzer."""
    script = (
        "import sys\n"
        "from ragit.text.morphemes import morpheme_terms_batch\n"
        "assert morpheme_terms_batch(['plain English', '', '漢字 only']) == [[], [], []]\n"
        "assert 'kiwipiepy' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)


def test_a_batch_gives_each_text_its_own_terms() -> None:
    """Implementation choice: batch analysis is per text, in order."""
    texts = ["스레드가 종료됐다", "no hangul", "커밋을 작성했습니다"]
    assert morpheme_terms_batch(texts) == [morpheme_terms(t) for t in texts]


def test_a_question_word_stands_for_the_longest_prefix_the_snapshot_holds() -> None:
    """Implementation choice: questions are not analysed; each content word is matched to the
    longest prefix (of two syllables or more) that is a morpheme of the snapshot."""
    held = {"스레드", "종료", "종", "스레"}.__contains__
    assert question_morphemes("스레드가 종료되면 어떻게 하나요?", held) == ["스레드", "종료"]
    # A one-syllable prefix never stands for a morpheme: it would match particles and endings.
    assert MIN_QUESTION_MORPHEME == 2
    assert question_morphemes("종이", held) == []
    # Question words and particles alone are not looked up.
    assert "어떻게" not in candidate_terms("스레드가 어떻게 되나요")
    assert list(candidate_terms("스레드가")) == ["스레드가", "스레드", "스레"]


def test_the_analyzer_is_named_by_its_versions() -> None:
    """Implementation choice: an index records which analysis made its ``ko`` terms."""
    name = analyzer()
    assert name.startswith("kiwipiepy-0.24.") and "/model-0.24." in name
