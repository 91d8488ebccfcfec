"""The terms of RAGit's keyword index: what a chunk and a question are split into.

Three fields, each with its own term rule, used the same way at ingest (the chunk's
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
  (``커밋을`` and ``커밋`` share ``커밋``). A one-character run has no bigram;
* ``ko`` — Korean morphemes of the same runs (nouns, verb and adjective stems), found by a
  morphological analyzer at ingest (:mod:`ragit.text.morphemes`); a question's words are
  matched to the morphemes a snapshot holds, never analysed.

:data:`TERMS_VERSION` names these rules. The keyword index records it; an index built
under other rules is rebuilt, never mixed (its statistics would no longer describe the
text a question is split with).

The stemmer is PyStemmer (the Snowball project's C implementation, ~1 µs a word); stems
are memoized per word, since a corpus repeats a small vocabulary.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import Stemmer

from ragit.text.morphemes import morpheme_terms_batch
from ragit.text.patterns import lazy
from ragit.text.scripts import CJK_RUN, CJK_RUN_CLASS

# A word: letters, digits and ``_`` outside the CJK runs, joined across ' ’ . between two of
# them (UAX #29's MidLetter/MidNumLet between letters or digits). A word ends where a CJK run
# begins: in ``useState를`` or ``React.lazy로`` the Korean particle is not part of the API name.
_LETTER = rf"[^\W{CJK_RUN_CLASS}]"
_WORD = lazy(rf"{_LETTER}+(?:['\u2019.]{_LETTER}+)*")
# The same words in lower-cased ASCII text (no CJK run, no U+2019), about a third faster.
_ASCII_WORD = lazy(r"[a-z0-9_]+(?:['.][a-z0-9_]+)*")

# Splits a joined word into its parts (``.`` and ``_``; an apostrophe's clitic is no part).
_JOINER = lazy(r"[._]+")

TERMS_VERSION = "terms-3"
MAX_TERM = 40

_STEMMER = Stemmer.Stemmer("english")


@lru_cache(maxsize=262_144)
def _stem(word: str) -> str:
    return str(_STEMMER.stemWord(word))


def en_terms(text: str) -> list[str]:
    """The ``en`` terms of ``text``: each word's stem, in order (repeats kept), then the
    parts of each word joined by ``.`` or ``_`` (``React.lazy`` → ``react.lazi``, then
    ``react``, ``lazi``; ``generic_associated_types`` → …, ``generic``, ``associ``,
    ``type``), so an identifier is found by its parts and a part by the identifier."""
    lowered = text.lower()
    words = (_ASCII_WORD if lowered.isascii() else _WORD).findall(lowered)
    if words and max(map(len, words)) > MAX_TERM:
        words = [w for w in words if len(w) <= MAX_TERM]
    out = list(map(_stem, words))
    if "." in lowered or "_" in lowered:
        for word in words:
            if "." in word or "_" in word:
                out.extend(_stem(part) for part in _JOINER.split(word) if len(part) > 1)
    return out


def cjk_terms(text: str) -> list[str]:
    """The ``cjk`` terms of ``text``: the character bigrams of its CJK runs, in order."""
    out: list[str] = []
    for run in CJK_RUN.findall(text.lower()):
        out.extend(run[i : i + 2] for i in range(len(run) - 1))
    return out


def field_terms(
    search_en: Sequence[str], search_cjk: Sequence[str]
) -> tuple[list[list[str]], list[list[str]], list[list[str]]]:
    """The terms of each of a batch of texts in the three fields, in field order: ``en`` of
    ``search_en``, ``cjk`` and ``ko`` of ``search_cjk`` (what every keyword index stores)."""
    return (
        [en_terms(text) for text in search_en],
        [cjk_terms(text) for text in search_cjk],
        morpheme_terms_batch(search_cjk),
    )


def query_terms(terms: list[str]) -> list[tuple[str, int]]:
    """The distinct terms of a question with how often each occurs, in first-seen order
    (a word asked twice weighs twice, as in a full-text engine's query)."""
    counts: dict[str, int] = {}
    for term in terms:
        counts[term] = counts.get(term, 0) + 1
    return list(counts.items())
