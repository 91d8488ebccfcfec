"""English stop words and the plural ``-s`` rule.

Two stop lists exist on purpose; each call site keeps the one it has always used:

* :data:`STOP_WORDS` — English function words, dropped from the words of a text by
  the placeholder embedding (``ngram-hash-1``; changing it changes every vector and
  must change ``PLACEHOLDER_VERSION``);
* :data:`QUESTION_STOP_WORDS` — a short subset (question words, articles,
  auxiliaries), dropped from a question's terms by the artifact overlay's keyword
  score. The overlay scores the share of the question's terms found in an artifact,
  so dropping more words (``not``, ``only``, ``all``…) would change its scores.
"""

from __future__ import annotations

# fmt: off
STOP_WORDS = frozenset(
    (
        "a", "an", "the", "and", "or", "but", "if", "then", "else", "of", "to", "in", "on",
        "at", "by", "for", "with", "from", "into", "onto", "over", "under", "as", "is", "are",
        "was", "were", "be", "been", "being", "do", "does", "did", "done", "have", "has", "had",
        "having", "can", "could", "may", "might", "must", "shall", "should", "will", "would",
        "not", "no", "nor", "so", "such", "than", "that", "this", "these", "those", "it", "its",
        "i", "me", "my", "we", "our", "you", "your", "he", "she", "they", "them", "their",
        "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "all", "any",
        "both", "each", "few", "more", "most", "other", "some", "same", "only", "own", "too",
        "very", "just", "also", "there", "here", "about", "above", "after", "again", "against",
        "before", "below", "between", "during", "out", "off", "up", "down", "through", "until",
        "while", "because", "per", "via", "vs",
    )
)
QUESTION_STOP_WORDS = frozenset(
    (
        "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "from", "has", "have",
        "how", "i", "in", "is", "it", "its", "of", "on", "or", "that", "the", "this", "to",
        "was", "were", "what", "when", "where", "which", "who", "why", "will", "with", "do",
        "does", "did", "we", "you",
    )
)
# fmt: on


def strip_plural(token: str) -> str:
    """``token`` without a plural ``s`` (longer than 3 characters, not ending in ``ss``)."""
    if len(token) > 3 and token.endswith("s") and not token.endswith("ss"):
        return token[:-1]
    return token
