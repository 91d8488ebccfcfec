"""Korean morphemes: the ``ko`` field of the keyword index (kiwipiepy only here).

Hangul bigrams (the ``cjk`` field) match any shared pair of syllables, so a particle or an
ending split across a word boundary matches too, and a word of two syllables is one term
among hundreds of common ones. The ``ko`` field holds what a Korean reader would call the
words of a text: nouns (general, proper, bound, numerals), verb and adjective stems, roots
and Hanja, as the Kiwi morphological analyzer (kiwipiepy, with its model package
kiwipiepy-model) finds them — compounds split, particles and endings dropped
(``스레드가 종료됐다`` → ``스레드``, ``종료``).

Analysis happens at ingest only, on the ``search_cjk`` text of a chunk (its CJK runs).
Questions are never analysed (loading the model costs about a second, which no cold query
can pay): :func:`question_morphemes` matches each content word of a question against the
morphemes the snapshot holds instead — the longest prefix of at least
:data:`MIN_QUESTION_MORPHEME` syllables that is one of them (``스레드가`` → ``스레드``,
``올리려고`` → ``올리``). The analyzer is named by :func:`analyzer`; an index records it, and
a writer of another analyzer re-indexes (its terms would differ).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import Any

from ragit.text.korean import STOP_WORDS, is_function_word

# Kiwi's tags (the Sejong tag set) of the morphemes kept: general, proper and bound nouns,
# numerals, verb and adjective stems, roots, Hanja. Irregular stems carry a suffix
# (``VV-R``, ``VA-I``): the part before ``-`` decides.
KEPT_TAGS = frozenset(("NNG", "NNP", "NNB", "NR", "VV", "VA", "XR", "SH"))
# The shortest prefix of a question's word that may stand for a morpheme: one syllable
# would match half the particles and endings of the language.
MIN_QUESTION_MORPHEME = 2
_HANGUL = re.compile("[\uac00-\ud7a3]")
_HANGUL_RUN = re.compile("[\uac00-\ud7a3]+")


@lru_cache(maxsize=1)
def _kiwi() -> Any:
    import warnings

    with warnings.catch_warnings():
        # kiwipiepy warns about its own defaults changing between versions; the options
        # below are explicit.
        warnings.simplefilter("ignore")
        from kiwipiepy import Kiwi

        return Kiwi(
            num_workers=-1,
            model_type="cong",
            load_typo_dict=False,
            load_multi_dict=False,
            load_default_dict=False,
        )


@lru_cache(maxsize=1)
def analyzer() -> str:
    """The name of the analysis :func:`morpheme_terms` does: the analyzer and model
    versions (an index records it; another name means other terms)."""
    from importlib.metadata import version

    return f"kiwipiepy-{version('kiwipiepy')}/model-{version('kiwipiepy_model')}"


def morpheme_terms_batch(texts: Sequence[str]) -> list[list[str]]:
    """The ``ko`` terms of each of ``texts`` (CJK runs), in order (repeats kept). Texts
    without Hangul are not analysed and have none; the model is loaded on the first text
    that has."""
    out: list[list[str]] = [[] for _ in texts]
    todo = [i for i, text in enumerate(texts) if _HANGUL.search(text)]
    if not todo:
        return out
    kiwi = _kiwi()
    for i, tokens in zip(todo, kiwi.tokenize([texts[i] for i in todo]), strict=True):
        out[i] = [t.form for t in tokens if t.tag.split("-", 1)[0] in KEPT_TAGS]
    return out


def morpheme_terms(text: str) -> list[str]:
    """The ``ko`` terms of one text (see :func:`morpheme_terms_batch`)."""
    return morpheme_terms_batch([text])[0]


def question_words(question: str) -> list[str]:
    """The Hangul content words of a question (runs of Hangul syllables), without question
    words, particles and other function words; a question made only of those keeps them."""
    runs = _HANGUL_RUN.findall(question)
    kept = [w for w in runs if w not in STOP_WORDS and not is_function_word(w)]
    return kept or runs


def prefixes(word: str) -> list[str]:
    """The prefixes of ``word`` that may stand for a morpheme, longest first."""
    return [word[:n] for n in range(len(word), MIN_QUESTION_MORPHEME - 1, -1)]


def question_prefixes(question: str) -> tuple[tuple[str, ...], ...]:
    """For each content word of a question (:func:`question_words`), its :func:`prefixes`: what
    :func:`held_prefixes` matches against the morphemes a snapshot holds."""
    return tuple(tuple(prefixes(word)) for word in question_words(question))


def held_prefixes(word_prefixes: Iterable[Sequence[str]], held: Callable[[str], bool]) -> list[str]:
    """The ``ko`` terms of a question whose words have ``word_prefixes``
    (:func:`question_prefixes`): for each word, its longest prefix for which ``held`` is true
    — a morpheme the snapshot holds. A word with none contributes nothing (its bigrams still
    count)."""
    out: list[str] = []
    for candidates in word_prefixes:
        for prefix in candidates:
            if held(prefix):
                out.append(prefix)
                break
    return out


def question_morphemes(question: str, held: Callable[[str], bool]) -> list[str]:
    """The ``ko`` terms of a question: for each content word, its longest prefix (of at
    least :data:`MIN_QUESTION_MORPHEME` syllables) for which ``held`` is true — a morpheme
    the snapshot holds. A word with none contributes nothing (its bigrams still count)."""
    return held_prefixes(question_prefixes(question), held)


def prefix_terms(word_prefixes: Iterable[Sequence[str]]) -> Iterable[str]:
    """Every term :func:`held_prefixes` may look up for ``word_prefixes``, once each (to read
    their postings in one round trip)."""
    return dict.fromkeys(p for candidates in word_prefixes for p in candidates)


def candidate_terms(question: str) -> Iterable[str]:
    """Every term :func:`question_morphemes` may look up for ``question`` (to read their
    postings in one round trip)."""
    return prefix_terms(question_prefixes(question))
