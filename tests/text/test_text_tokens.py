"""The token estimate."""

from __future__ import annotations

import pytest

from ragit.text.tokens import token_estimate


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("", 0),
        ("   \n\t ", 0),
        ("one", 1),
        ("two  words", 2),
        ("line one\nline two\r\n", 4),
        ("저장소를 바꾸는 ingest", 3),
        ('{"a":1,"b":[1, 2]}', 2),
        ("non\u00a0breaking", 1 + 1),  # str.split() splits on Unicode whitespace
    ],
)
def test_token_estimate_counts_whitespace_separated_words(text: str, count: int) -> None:
    """Contract §8 and §11: the token estimate is the number of whitespace-separated words."""
    assert token_estimate(text) == count
