"""``local-placeholder``: a deterministic, offline, lexical embedding.

Algorithm ``ngram-hash-1`` (:data:`ragit.embed.profile.PLACEHOLDER_VERSION`):

1. NFKC-normalize and lower-case the text; split it into words, where a run of
   Hangul, a run of kana/Han and a run of any other letters or digits are each a
   word (so ``ingest가`` is ``ingest`` + ``가``; ``_`` separates words).
2. Drop stop words (English function words, Korean question words and endings,
   standalone particles). A text made only of stop words keeps them.
3. Strip one trailing particle from a Hangul word (``저장소를`` → ``저장소``), so
   Korean inflections of a noun share the word feature.
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
(tokenization follows the Python's Unicode database). Changing anything above
must change ``PLACEHOLDER_VERSION``.
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from array import array
from collections import Counter

from ragit.embed.base import Embedder, ProviderOptions, Vector
from ragit.embed.profile import PLACEHOLDER_VERSION, EmbeddingProfile

_CJK_RANGES = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_HANGUL_RANGE = "\uac00-\ud7a3"
_WORD = re.compile(rf"[{_HANGUL_RANGE}]+|[{_CJK_RANGES}]+|[^\W_{_HANGUL_RANGE}{_CJK_RANGES}]+")
_SYLLABIC = re.compile(rf"[{_HANGUL_RANGE}{_CJK_RANGES}]")
_HANGUL = re.compile(rf"[{_HANGUL_RANGE}]")

# fmt: off
_EN_STOP = frozenset(
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
_KO_PARTICLES = tuple(
    sorted(
        (
            "을", "를", "이", "가", "은", "는", "의", "에", "에서", "에게", "께", "한테",
            "으로", "로", "와", "과", "도", "만", "까지", "부터", "이나", "나", "랑", "이랑",
            "처럼", "보다", "마다", "으로써", "로써", "으로서", "로서", "에는", "에서는",
            "와의", "과의", "으로는", "로는", "만의", "이라는", "라는", "이며", "이고", "고",
        ),
        key=lambda p: (-len(p), p),
    )
)
_KO_STOP = frozenset(
    (
        "어떻게", "무엇", "무엇인가요", "무엇을", "무엇으로", "무엇이", "어디", "어디에",
        "어디에서", "언제", "누가", "누구", "왜", "어떤", "어느", "얼마나", "하나요", "있나요",
        "되나요", "인가요", "가요", "나요", "해야", "해야하나요", "하려면", "하는", "하고",
        "한", "할", "합니다", "입니다", "됩니다", "있습니다", "없습니다", "않습니다",
        "했습니다", "및", "또는", "그리고", "그", "이", "저", "것", "수", "등", "더", "때",
        "위해", "대한", "통해", "없이", "있는", "되는", "된", "하게", "않게",
    )
) | frozenset(_KO_PARTICLES)
# fmt: on
_STOP = _EN_STOP | _KO_STOP

_WORD_WEIGHT = 1.0
_NGRAM_WEIGHT = 2.0
_ALPHA_NGRAMS = (3, 4)
_SYLLABIC_NGRAMS = (2, 3)
# On ASCII text (NFKC leaves it as it is, lower() keeps it ASCII) _WORD matches exactly these
# runs, about twice as fast.
_ASCII_WORD = re.compile(r"[0-9a-z]+")

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


def _stem(word: str) -> str:
    for particle in _KO_PARTICLES:
        if len(word) > len(particle) and word.endswith(particle):
            return word[: -len(particle)]
    return word


def korean_content_words(text: str) -> list[str]:
    """Hangul/CJK words of ``text`` minus stop words, each without one trailing particle."""
    out: list[str] = []
    for word in text.split():
        if word in _KO_STOP:
            continue
        stem = _stem(word)
        if stem and stem not in _KO_STOP:
            out.append(stem)
    return out or text.split()


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
        lowered = unicodedata.normalize("NFKC", text).lower()
        words = (_ASCII_WORD if lowered.isascii() else _WORD).findall(lowered)
        counts = Counter(words)
        stops = _STOP.intersection(counts)
        if stops and len(stops) < len(counts):
            # Deleting keeps the first-seen order of the remaining words.
            pop = counts.pop  # dict.pop: Counter's own __delitem__ is Python code
            for word in stops:
                pop(word)
        return counts

    def _unit(self) -> Vector:
        unit = [0.0] * self._dims
        unit[self._empty] = 1.0
        return unit

    def vector(self, text: str) -> Vector:
        """The placeholder vector of one text."""
        counts = self._counts(text)
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
        syllabic = _SYLLABIC.match(word) is not None
        base = _stem(word) if _HANGUL.match(word) else word
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
