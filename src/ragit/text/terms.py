"""The terms of RAGit's keyword index: what a chunk and a question are split into.

Two fields, each with its own term rule, used the same way at ingest (the chunk's
``search_en`` / ``search_cjk`` text) and for the question:

* ``en`` — runs of letters and digits of any script (:data:`~ragit.text.scripts.WORD`),
  lower-cased, folded by the Snowball English stemmer (``queries`` and ``query`` meet
  at ``queri``). Runs longer than :data:`MAX_TERM` characters (hashes, base64) are
  dropped: they match nothing a person types;
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

from ragit.text.scripts import CJK_RUN, WORD

TERMS_VERSION = "terms-1"
MAX_TERM = 40

_STEMMER = Stemmer.Stemmer("english")


@lru_cache(maxsize=262_144)
def _stem(word: str) -> str:
    return str(_STEMMER.stemWord(word))


def en_terms(text: str) -> list[str]:
    """The ``en`` terms of ``text``, in order (repeats kept)."""
    return [_stem(w) for w in WORD.findall(text.lower()) if len(w) <= MAX_TERM]


def cjk_terms(text: str) -> list[str]:
    """The ``cjk`` terms of ``text``: the character bigrams of its CJK runs, in order."""
    out: list[str] = []
    for run in CJK_RUN.findall(text.lower()):
        out.extend(run[i : i + 2] for i in range(len(run) - 1))
    return out


def query_terms(terms: list[str]) -> list[str]:
    """The distinct terms of a question, in first-seen order (a repeated word in a
    question is asked once)."""
    return list(dict.fromkeys(terms))
