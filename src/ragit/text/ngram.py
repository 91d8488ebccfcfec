"""The words of the offline character n-gram embedding (``ngram-hash-1``).

:func:`ngram_words` is steps 1 and 2 of the placeholder embedding
(:mod:`ragit.embed.providers.placeholder`): NFKC-fold and lower-case the text, split it
with :data:`~ragit.text.scripts.SCRIPT_WORD`, count each word, and drop the stop words of
both languages unless nothing else is left. Its result is part of every placeholder
vector: changing it must change ``PLACEHOLDER_VERSION``.
"""

from __future__ import annotations

from collections import Counter

from ragit.text import english, korean
from ragit.text.normalize import fold
from ragit.text.scripts import ASCII_WORD, SCRIPT_WORD

STOP_WORDS = english.STOP_WORDS | korean.STOP_WORDS


def ngram_words(text: str) -> dict[str, int]:
    """Term frequencies of the text's words in first-seen order, stop words dropped (a text
    made only of stop words keeps them)."""
    lowered = fold(text)
    # On ASCII text (NFKC leaves it as it is, lower() keeps it ASCII) SCRIPT_WORD
    # matches exactly the ASCII_WORD runs, about twice as fast.
    words = (ASCII_WORD if lowered.isascii() else SCRIPT_WORD).findall(lowered)
    counts = Counter(words)
    stops = STOP_WORDS.intersection(counts)
    if stops and len(stops) < len(counts):
        # Deleting keeps the first-seen order of the remaining words.
        pop = counts.pop  # dict.pop: Counter's own __delitem__ is Python code
        for word in stops:
            pop(word)
    return counts
