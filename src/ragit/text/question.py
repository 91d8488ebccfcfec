"""A question, analysed once: everything retrieval reads of its text.

`ragit query`, `ragit context pack`, `memory recall` and the MCP server turn the asked text
into a :class:`Question` with :func:`analyze` at their entry point; the retrieval engine
(:func:`ragit.retrieve.engine.retrieve_durable`) and the artifact overlay
(:func:`ragit.retrieve.artifacts.artifact_hits`) read its fields and never split the text
again. Each analyzer of :mod:`ragit.text` runs once per question:

* its scripts (:func:`~ragit.text.scripts.script_weights`): the shares of Latin-script words
  and of CJK characters, which weigh the keyword fields and the n-gram signal;
* the ``en`` terms of the keyword index (:func:`~ragit.text.terms.en_terms`), when it has
  Latin-script words;
* its Korean content words (:func:`~ragit.text.korean.korean_content_words` of its CJK runs)
  and their ``cjk`` bigram terms (:func:`~ragit.text.terms.cjk_terms`), when it has CJK
  characters;
* for the ``ko`` field, the prefixes of its Hangul content words
  (:func:`~ragit.text.morphemes.question_prefixes`), matched later against the morphemes a
  snapshot holds (that match depends on the snapshot, so it is the engine's), when it has
  ``cjk`` terms;
* the words of the offline n-gram embedding (:func:`~ragit.text.ngram.ngram_words`), when it
  has CJK characters: the n-gram signal only ever weighs the CJK share of a question;
* the overlay's terms (:func:`overlay_terms`): its distinct lower-cased words.

What is left out under a condition is what the engine never reads under it, so a question
costs the analysis it needs and no more.
"""

from __future__ import annotations

from dataclasses import dataclass

from ragit.text.english import QUESTION_STOP_WORDS, strip_plural
from ragit.text.korean import korean_content_words
from ragit.text.morphemes import prefix_terms, question_prefixes
from ragit.text.ngram import ngram_words
from ragit.text.scripts import WORD, cjk_runs, script_weights
from ragit.text.terms import cjk_terms, en_terms, query_terms

Terms = tuple[tuple[str, int], ...]


@dataclass(frozen=True, slots=True)
class Question:
    """The analysis of one question (see the module docstring); made by :func:`analyze`."""

    text: str
    # Shares of the question that are Latin-script words and CJK characters (sum 1).
    latin_share: float
    cjk_share: float
    # The distinct terms of each keyword field with how often each is asked, in first-seen
    # order (empty where the question has no words of that script).
    en_terms: Terms
    cjk_terms: Terms
    # The Korean content words of the CJK runs, without function words and particles: the
    # text the ``cjk`` bigrams are taken from.
    korean_words: tuple[str, ...]
    # Per Hangul content word, the prefixes that may stand for a ``ko`` morpheme, longest
    # first (empty without ``cjk`` terms).
    morpheme_prefixes: tuple[tuple[str, ...], ...]
    # The n-gram embedding's words with their counts, in first-seen order (empty without CJK
    # characters).
    ngram_words: Terms
    # The artifact overlay's terms: distinct lower-cased words without the plural ``s``.
    overlay_terms: tuple[str, ...]

    @property
    def has_keyword_terms(self) -> bool:
        """Whether the question has terms for the ``en`` or ``cjk`` field."""
        return bool(self.en_terms or self.cjk_terms)

    def morpheme_candidates(self) -> list[str]:
        """Every ``ko`` term the engine may look up for the question, once each."""
        return list(prefix_terms(self.morpheme_prefixes))

    def ngram_counts(self) -> dict[str, int]:
        """:attr:`ngram_words` as the placeholder embedding takes them."""
        return dict(self.ngram_words)


def overlay_terms(text: str) -> tuple[str, ...]:
    """The distinct normalized terms of a text for the artifact overlay's keyword score:
    lower-cased words without a plural ``s``, question stop words dropped unless nothing is
    left."""
    words = [strip_plural(w) for w in WORD.findall(text.lower())]
    kept = [w for w in words if w not in QUESTION_STOP_WORDS] or words
    return tuple(dict.fromkeys(kept))


def analyze(text: str) -> Question:
    """The :class:`Question` of ``text``: each analyzer runs once, here."""
    latin_share, cjk_share = script_weights(text)
    en = tuple(query_terms(en_terms(text))) if latin_share > 0 else ()
    korean: tuple[str, ...] = ()
    cjk: Terms = ()
    if cjk_share > 0:
        korean = tuple(korean_content_words(cjk_runs(text)))
        cjk = tuple(query_terms(cjk_terms(" ".join(korean))))
    return Question(
        text=text,
        latin_share=latin_share,
        cjk_share=cjk_share,
        en_terms=en,
        cjk_terms=cjk,
        korean_words=korean,
        morpheme_prefixes=question_prefixes(text) if cjk else (),
        ngram_words=tuple(ngram_words(text).items()) if cjk_share > 0 else (),
        overlay_terms=overlay_terms(text),
    )
