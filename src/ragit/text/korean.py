"""Korean particles, stop words and content words.

Korean attaches particles to the word before them (``저장소를``: ``저장소`` +
``를``). :func:`strip_particle` removes one trailing particle, longest first,
and only where a stem of at least :data:`MIN_STEM` syllables is left: many common
nouns end in a syllable that is also a particle (``결과``, ``경로``, ``정의``,
``회의``, ``차이``), and a one-syllable stem forms no bigram, so stripping it would
make the noun vanish from the bigram search. :data:`STOP_WORDS` are question
words, endings and standalone particles. The placeholder embedding uses both, so
changing either changes every vector and must change ``PLACEHOLDER_VERSION``;
retrieval uses :func:`korean_content_words` for the query text of the bigram index.
"""

from __future__ import annotations

# fmt: off
# Longest first, so that ``에서는`` is stripped before ``는``.
PARTICLES = tuple(
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
STOP_WORDS = frozenset(
    (
        "어떻게", "무엇", "무엇인가요", "무엇을", "무엇으로", "무엇이", "어디", "어디에",
        "어디에서", "언제", "누가", "누구", "왜", "어떤", "어느", "얼마나", "하나요", "있나요",
        "되나요", "인가요", "가요", "나요", "해야", "해야하나요", "하려면", "하는", "하고",
        "한", "할", "합니다", "입니다", "됩니다", "있습니다", "없습니다", "않습니다",
        "했습니다", "및", "또는", "그리고", "그", "이", "저", "것", "수", "등", "더", "때",
        "위해", "대한", "통해", "없이", "있는", "되는", "된", "하게", "않게",
    )
) | frozenset(PARTICLES)
# Pronouns and bound nouns of one syllable: with a case particle (``그는``, ``것을``,
# ``수가``) the word is a function word, although strip_particle keeps it whole.
FUNCTION_SYLLABLES = frozenset(("그", "이", "저", "것", "수", "등", "때"))
CASE_PARTICLES = frozenset(("은", "는", "을", "를", "이", "가", "의", "에"))
# fmt: on


# The shortest stem strip_particle leaves: 결과 stays 결과, 결과를 becomes 결과.
MIN_STEM = 2


def strip_particle(word: str, min_stem: int = MIN_STEM) -> str:
    """``word`` without one trailing particle: the longest that leaves ``min_stem`` characters.

    A word too short for that is returned whole: ``결과``, ``경로`` and ``회의`` are
    nouns, not ``결`` + ``과``. ``min_stem=1`` is the rule of the ``ngram-hash-1``
    placeholder, which must not change under its version.
    """
    for particle in PARTICLES:
        if len(word) - len(particle) >= min_stem and word.endswith(particle):
            return word[: -len(particle)]
    return word


def is_function_word(word: str) -> bool:
    """Whether ``word`` is a one-syllable pronoun or bound noun with a case particle
    (``그는``, ``것을``, ``수가``)."""
    return len(word) == 2 and word[0] in FUNCTION_SYLLABLES and word[1] in CASE_PARTICLES


def korean_content_words(text: str) -> list[str]:
    """Hangul/CJK words of ``text`` minus stop words, each without one trailing particle.

    A word that is a one-syllable stop word plus a particle (``그는``, ``것을``) is a
    stop word too. A text made only of stop words keeps all its words.
    """
    out: list[str] = []
    for word in text.split():
        if word in STOP_WORDS or is_function_word(word):
            continue
        stem = strip_particle(word)
        if stem and stem not in STOP_WORDS:
            out.append(stem)
    return out or text.split()
