"""English stop words and the plural rule."""

from __future__ import annotations

import pytest

from ragit.text.english import QUESTION_STOP_WORDS, STOP_WORDS, strip_plural


def test_the_question_stop_list_is_a_subset_of_the_embedding_stop_list() -> None:
    """Implementation choice: the overlay drops fewer words than the placeholder embedding."""
    assert QUESTION_STOP_WORDS < STOP_WORDS
    assert len(QUESTION_STOP_WORDS) == 41 and len(STOP_WORDS) == 118


@pytest.mark.parametrize("word", ["not", "only", "all", "can", "should", "because", "vs"])
def test_some_function_words_are_only_embedding_stop_words(word: str) -> None:
    """Implementation choice: these count as question terms in the overlay keyword score."""
    assert word in STOP_WORDS and word not in QUESTION_STOP_WORDS


@pytest.mark.parametrize("word", ["how", "the", "do", "does", "what", "we", "you", "with"])
def test_question_words_are_stop_words_of_both_lists(word: str) -> None:
    """Implementation choice: question words carry no topic."""
    assert word in QUESTION_STOP_WORDS and word in STOP_WORDS


def test_stop_words_are_lower_case() -> None:
    """Implementation choice: both lists are matched against lower-cased words."""
    assert all(w == w.lower() for w in STOP_WORDS | QUESTION_STOP_WORDS)


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("tokens", "token"),
        ("rotates", "rotate"),
        ("class", "class"),  # -ss stays
        ("bus", "bus"),  # three characters or fewer stay
        ("its", "its"),
        ("keys", "key"),
        ("s", "s"),
        ("", ""),
        ("토큰s", "토큰s"),  # length counts characters of any script
        ("토큰값s", "토큰값"),
    ],
)
def test_strip_plural_drops_one_trailing_s_of_longer_words(token: str, expected: str) -> None:
    """Implementation choice: a crude plural rule, the same for question and text."""
    assert strip_plural(token) == expected
