"""Script detection: Hangul, kana and Han ranges, CJK runs, word patterns.

The ranges are character-class fragments (``"\\uac00-\\ud7a3"``) combined into the
patterns below. Two CJK sets exist on purpose, and each call site keeps the one it
has always used (its results are part of the index and of the eval figures):

* :data:`CJK_CHAR` — Hangul syllables and jamo (conjoining and compatibility),
  kana, CJK Unified Ideographs and Extension A, *without* the CJK Compatibility
  Ideographs (U+F900–FAFF). Used to weigh a question's scripts
  (:func:`script_weights`) and to match CJK terms inside longer runs in the
  artifact overlay. A compatibility ideograph counts there as a letter of a
  Latin-script word (``\\w`` matches it).
* :data:`CJK_RUN` — the same set *plus* U+F900–FAFF, in runs. It extracts the
  text of the ``search_cjk`` bigram field, at ingest and for the query, so both
  sides must use it; widening :data:`CJK_CHAR` would change query scores, and
  narrowing this one would change indexed rows.

The placeholder embedding (``ngram-hash-1``) splits NFKC-folded text with
:data:`SCRIPT_WORD`, whose classes are narrower again: Hangul syllables only
(conjoining jamo, which NFKC makes of compatibility jamo, are "other letters")
and kana/Han including U+F900–FAFF. Any change to those patterns changes every
placeholder vector and must change ``PLACEHOLDER_VERSION``.
"""

from __future__ import annotations

import re

from ragit.text.patterns import lazy

HANGUL_JAMO = "\u1100-\u11ff"
KANA = "\u3040-\u30ff"  # Hiragana and Katakana
HANGUL_COMPAT_JAMO = "\u3130-\u318f"
CJK_EXT_A = "\u3400-\u4dbf"
CJK_UNIFIED = "\u4e00-\u9fff"
HANGUL_SYLLABLES = "\uac00-\ud7a3"
CJK_COMPAT_IDEOGRAPHS = "\uf900-\ufaff"

_CJK_RANGES = f"{HANGUL_JAMO}{KANA}{HANGUL_COMPAT_JAMO}{CJK_EXT_A}{CJK_UNIFIED}{HANGUL_SYLLABLES}"

# One Hangul/kana/Han character, compatibility ideographs excluded (see the module docstring).
CJK_CHAR = lazy(f"[{_CJK_RANGES}]")
# A run of Hangul/kana/Han, compatibility ideographs included: the search_cjk field's text.
CJK_RUN_CLASS = f"{_CJK_RANGES}{CJK_COMPAT_IDEOGRAPHS}"
CJK_RUN = lazy(f"[{CJK_RUN_CLASS}]+")

# A run of letters and digits of any script (``_`` separates words).
WORD = lazy(r"[^\W_]+", re.UNICODE)
# A run of letters and digits outside the CJK runs (``state`` of ``state를``).
LATIN_WORD = lazy(f"[^\\W_{CJK_RUN_CLASS}]+")

# Placeholder embedding words (ngram-hash-1), on NFKC-folded text: a run of Hangul
# syllables, a run of kana/Han, or a run of other letters and digits.
_KANA_HAN = f"{KANA}{CJK_EXT_A}{CJK_UNIFIED}{CJK_COMPAT_IDEOGRAPHS}"
SCRIPT_WORD = lazy(rf"[{HANGUL_SYLLABLES}]+|[{_KANA_HAN}]+|[^\W_{HANGUL_SYLLABLES}{_KANA_HAN}]+")
# On folded ASCII text SCRIPT_WORD matches exactly these runs, about twice as fast.
ASCII_WORD = lazy(r"[0-9a-z]+")
# A Hangul syllable or kana/Han character (``match``: a word that starts with one).
SYLLABIC_CHAR = lazy(rf"[{HANGUL_SYLLABLES}{_KANA_HAN}]")
# A Hangul syllable (``match``: a word that starts with one).
HANGUL_CHAR = lazy(rf"[{HANGUL_SYLLABLES}]")


def cjk_runs(text: str) -> str:
    """The CJK/Hangul runs of ``text`` joined by spaces (fed to the n-gram index)."""
    return " ".join(CJK_RUN.findall(text))


def has_cjk(text: str) -> bool:
    """Whether ``text`` has a character of a :func:`cjk_runs` run."""
    return CJK_RUN.search(text) is not None


def script_weights(question: str) -> tuple[float, float]:
    """Share of the question that is Latin-script words vs. CJK characters."""
    cjk = len(CJK_CHAR.findall(question))
    # Latin words counted apart from the Korean particles written onto them (``state를``).
    latin = len(LATIN_WORD.findall(question))
    if cjk == 0 and latin == 0:
        return 1.0, 0.0
    # A CJK word of n characters carries about one term per two characters.
    cjk_terms = cjk / 2.0
    total = latin + cjk_terms
    return latin / total, cjk_terms / total
