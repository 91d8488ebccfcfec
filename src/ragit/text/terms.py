"""The terms of RAGit's keyword index: what a chunk and a question are split into.

Two fields, each with its own term rule, used the same way at ingest (the chunk's
``search_en`` / ``search_cjk`` text) and for the question:

* ``en`` — words as Unicode word segmentation (UAX #29) draws them, which is what a
  standard full-text tokenizer does: runs of letters, digits and ``_`` of any script,
  joined across an apostrophe or a dot between two of them (``claim's``, ``I'm``,
  ``v1.28``, ``kubernetes.io`` and ``feature_gate`` are one word each; ``kube-apiserver``
  is two), lower-cased and folded by the Snowball English stemmer (``queries`` and
  ``query`` meet at ``queri``; ``claim's`` becomes ``claim``). Words longer than
  :data:`MAX_TERM` characters (hashes, base64) are dropped: they match nothing a person
  types;
* ``cjk`` — character bigrams inside each run of Hangul/kana/Han
  (:data:`~ragit.text.scripts.CJK_RUN`), so Korean particles do not hide a match
  (``커밋을`` and ``커밋`` share ``커밋``). A one-character run has no bigram.

:data:`TERMS_VERSION` names these rules. The keyword index records it; an index built
under other rules is rebuilt, never mixed (its statistics would no longer describe the
text a question is split with).

The stemmer is PyStemmer (the Snowball project's C implementation, ~1 µs a word); stems
are memoized per word, since a corpus repeats a small vocabulary.
"""

from __future__ import annotations

from functools import lru_cache

import Stemmer

from ragit.text.patterns import lazy
from ragit.text.scripts import CJK_RUN, CJK_RUN_CLASS

# A word: letters, digits and ``_`` outside the CJK runs, joined across ' ’ . between two of
# them (UAX #29's MidLetter/MidNumLet between letters or digits). A word ends where a CJK run
# begins: in ``useState를`` or ``React.lazy로`` the Korean particle is not part of the API name.
_LETTER = rf"[^\W{CJK_RUN_CLASS}]"
_WORD = lazy(rf"{_LETTER}+(?:['\u2019.]{_LETTER}+)*")
# The same words in lower-cased ASCII text (no CJK run, no U+2019), about a third faster.
_ASCII_WORD = lazy(r"[a-z0-9_]+(?:['.][a-z0-9_]+)*")

TERMS_VERSION = "terms-2"
MAX_TERM = 40

_STEMMER = Stemmer.Stemmer("english")


@lru_cache(maxsize=262_144)
def _stem(word: str) -> str:
    return str(_STEMMER.stemWord(word))


def en_terms(text: str) -> list[str]:
    """The ``en`` terms of ``text``, in order (repeats kept)."""
    lowered = text.lower()
    words = (_ASCII_WORD if lowered.isascii() else _WORD).findall(lowered)
    if words and max(map(len, words)) > MAX_TERM:
        words = [w for w in words if len(w) <= MAX_TERM]
    return list(map(_stem, words))


def cjk_terms(text: str) -> list[str]:
    """The ``cjk`` terms of ``text``: the character bigrams of its CJK runs, in order."""
    out: list[str] = []
    for run in CJK_RUN.findall(text.lower()):
        out.extend(run[i : i + 2] for i in range(len(run) - 1))
    return out


def query_terms(terms: list[str]) -> list[tuple[str, int]]:
    """The distinct terms of a question with how often each occurs, in first-seen order
    (a word asked twice weighs twice, as in a full-text engine's query)."""
    counts: dict[str, int] = {}
    for term in terms:
        counts[term] = counts.get(term, 0) + 1
    return list(counts.items())
