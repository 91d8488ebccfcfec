"""``local-placeholder``: a deterministic, offline, lexical embedding.

Algorithm ``ngram-hash-1`` (:data:`ragit.embed.profile.PLACEHOLDER_VERSION`):

1. NFKC-normalize and lower-case the text; split it into words, where a run of
   Hangul, a run of kana/Han and a run of any other letters or digits are each a
   word (so ``ingest가`` is ``ingest`` + ``가``; ``_`` separates words).
2. Drop stop words (English function words, Korean question words and endings,
   standalone particles). A text made only of stop words keeps them.
3. Strip one trailing particle from a Hangul word (``저장소를`` → ``저장소``), so
   Korean inflections of a noun share the word feature. ``ngram-hash-1`` strips down to a
   one-syllable stem (``strip_particle(word, 1)``: ``결과`` → ``결``), unlike the bigram
   query text, which keeps two; the rule is part of the stored vectors, so it stays.
4. Features of a word ``w``: the word itself (weight 1), and its character
   n-grams with ``<``/``>`` boundary marks (3- and 4-grams for alphabetic words,
   2- and 3-grams for Hangul and CJK), which together weigh 2 (each
   ``2/sqrt(count)``). N-grams make typos, plurals and particles overlap.
5. Each feature is hashed with BLAKE2b-64 to a dimension (hash mod ``dimensions``)
   and a sign (top bit): signed feature hashing spreads features over every
   dimension and keeps collisions unbiased.
6. A word occurring ``tf`` times contributes ``sqrt(tf)`` times its features.
7. The sum is L2-normalized. A text without any word maps to a fixed unit vector.

Only IEEE-exact operations (+, *, /, sqrt, hypot) are used on floats, so a given
text gives bit-identical vectors on every platform running the same Python
(tokenization follows the Python's Unicode database). The word pattern, the stop
words and the particles are :mod:`ragit.text`'s (``ngram.ngram_words``, ``scripts.SCRIPT_WORD``,
``english.STOP_WORDS``, ``korean.STOP_WORDS`` and ``korean.PARTICLES``). Changing
anything above, there included, must change ``PLACEHOLDER_VERSION``.
"""

from __future__ import annotations

import hashlib
import math
from array import array
from collections.abc import Mapping

from ragit.embed.base import Embedder, ProviderOptions, Vector
from ragit.embed.profile import PLACEHOLDER_VERSION, EmbeddingProfile
from ragit.text.korean import strip_particle
from ragit.text.ngram import ngram_words
from ragit.text.scripts import HANGUL_CHAR, SYLLABIC_CHAR

_WORD_WEIGHT = 1.0
_NGRAM_WEIGHT = 2.0
_ALPHA_NGRAMS = (3, 4)
_SYLLABIC_NGRAMS = (2, 3)

# Word feature tables are memoized per embedder; the cap bounds memory (~1 KB a
# word) on huge vocabularies. Results never depend on the memo.
_MEMO_LIMIT = 32_768
# Batches from this size on are summed with numpy (see _vectors); smaller ones, such as a
# question, in plain Python, which needs no numpy import.
_NUMPY_MIN_BATCH = 16

# A word's features: bucket indices and signed weights, in first-seen order (arrays, so
# that a batch appends them to its buffers with a memory copy).
Features = tuple["array[int]", "array[float]"]


def _hash(feature: str, dims: int) -> tuple[int, float]:
    value = int.from_bytes(
        hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little"
    )
    return value % dims, (1.0 if value >> 63 else -1.0)


class PlaceholderEmbedder(Embedder):
    """The default, offline profile (see the module docstring for the algorithm)."""

    def __init__(self, profile: EmbeddingProfile, options: ProviderOptions | None = None) -> None:
        if profile.version != PLACEHOLDER_VERSION:
            raise ValueError(
                f"placeholder version {profile.version!r} is not {PLACEHOLDER_VERSION!r}"
            )
        super().__init__(profile)
        self._dims = profile.dimensions
        self._memo: dict[str, Features] = {}
        self._empty = _hash("\x00empty", self._dims)[0]

    def _embed_batch(self, texts: list[str]) -> list[Vector]:
        self.requests_sent += 1
        if len(texts) >= _NUMPY_MIN_BATCH:
            return self._vectors(texts)
        return [self.vector(text) for text in texts]

    def _counts(self, text: str) -> dict[str, int]:
        """Term frequencies of the text's words in first-seen order, stop words dropped."""
        return ngram_words(text)

    def _unit(self) -> Vector:
        unit = [0.0] * self._dims
        unit[self._empty] = 1.0
        return unit

    def vector(self, text: str) -> Vector:
        """The placeholder vector of one text."""
        return self.vector_of_words(self._counts(text))

    def vector_of_words(self, counts: Mapping[str, int]) -> Vector:
        """The placeholder vector of a text whose :func:`~ragit.text.ngram.ngram_words` are
        ``counts`` (a question analysed once gives them to the n-gram signal)."""
        if not counts:
            return self._unit()
        vec = [0.0] * self._dims
        memo = self._memo
        for word, tf in counts.items():
            feats = memo.get(word)
            if feats is None:
                feats = self._features(word)
            indices, values = feats
            if tf == 1:
                for i, v in zip(indices, values, strict=True):
                    vec[i] += v
            else:
                scale = math.sqrt(tf)
                for i, v in zip(indices, values, strict=True):
                    vec[i] += v * scale
        norm = math.hypot(*vec)
        if norm == 0.0:
            # Every feature cancelled out (opposite signs on one bucket).
            return self._unit()
        return [x / norm for x in vec]

    def _vectors(self, texts: list[str]) -> list[Vector]:
        """:meth:`vector` of each text, bit for bit, with the sums done by numpy.

        ``bincount`` adds the weights into their buckets one after the other in input
        order, which is the order :meth:`vector` adds them in, so every bucket gets the
        same IEEE sums; ``v * 1.0`` is exact and the division is IEEE division in both.
        The norm is :func:`math.hypot` of the same numbers.
        """
        import numpy as np  # lazy: only batch embedding needs it

        dims = self._dims
        memo = self._memo
        indices = array("q")
        values = array("d")
        ends = array("q")  # where each word's features end in indices/values
        scales = array("d")  # each word's sqrt(tf)
        per_text = array("q")  # features per text
        sqrt = math.sqrt
        for text in texts:
            start = len(indices)
            for word, tf in self._counts(text).items():
                feats = memo.get(word)
                if feats is None:
                    feats = self._features(word)
                indices += feats[0]
                values += feats[1]
                ends.append(len(indices))
                scales.append(1.0 if tf == 1 else sqrt(tf))
            per_text.append(len(indices) - start)
        rows = len(texts)
        ends_at = np.frombuffer(ends, dtype=np.int64)
        sizes = ends_at - np.concatenate((np.zeros(1, dtype=np.int64), ends_at[:-1]))
        offsets = np.repeat(np.arange(rows, dtype=np.int64) * dims, per_text)
        weights = np.frombuffer(values, dtype=np.float64) * np.repeat(
            np.frombuffer(scales, dtype=np.float64), sizes
        )
        flat = np.frombuffer(indices, dtype=np.int64) + offsets
        sums = np.bincount(flat, weights=weights, minlength=rows * dims)
        matrix = sums.reshape(rows, dims)
        norms = np.array([math.hypot(*row) for row in matrix.tolist()])
        zero = norms == 0.0  # no word, or every feature cancelled out
        norms[zero] = 1.0
        out: list[Vector] = (matrix / norms[:, None]).tolist()
        for row in np.flatnonzero(zero).tolist():
            out[row] = self._unit()
        return out

    def _features(self, word: str) -> Features:
        dims = self._dims
        acc: dict[int, float] = {}
        syllabic = SYLLABIC_CHAR.match(word) is not None
        base = strip_particle(word, 1) if HANGUL_CHAR.match(word) else word
        index, sign = _hash("w\x00" + base, dims)
        acc[index] = sign * _WORD_WEIGHT
        padded = f"<{base}>"
        grams = [
            padded[k : k + n]
            for n in (_SYLLABIC_NGRAMS if syllabic else _ALPHA_NGRAMS)
            if len(padded) >= n
            for k in range(len(padded) - n + 1)
        ]
        if grams:
            weight = _NGRAM_WEIGHT / math.sqrt(len(grams))
            for gram in grams:
                index, sign = _hash("g\x00" + gram, dims)
                acc[index] = acc.get(index, 0.0) + sign * weight
        feats = (array("q", acc), array("d", acc.values()))
        if len(self._memo) >= _MEMO_LIMIT:
            self._memo.clear()
        self._memo[word] = feats
        return feats
