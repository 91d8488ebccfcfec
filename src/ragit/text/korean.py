"""Korean particles, stop words and content words.

Korean attaches particles to the word before them (``저장소를``: ``저장소`` +
``를``). :func:`strip_particle` removes one trailing particle, longest first;
:data:`STOP_WORDS` are question words, endings and standalone particles. The
placeholder embedding (``ngram-hash-1``) uses both, so changing either changes
every vector and must change ``PLACEHOLDER_VERSION``; retrieval uses
:func:`korean_content_words` for the query text of the bigram index.
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
# fmt: on


def strip_particle(word: str) -> str:
    """``word`` without one trailing particle (the longest that leaves something)."""
    for particle in PARTICLES:
        if len(word) > len(particle) and word.endswith(particle):
            return word[: -len(particle)]
    return word


def korean_content_words(text: str) -> list[str]:
    """Hangul/CJK words of ``text`` minus stop words, each without one trailing particle.

    A text made only of stop words keeps all its words.
    """
    out: list[str] = []
    for word in text.split():
        if word in STOP_WORDS:
            continue
        stem = strip_particle(word)
        if stem and stem not in STOP_WORDS:
            out.append(stem)
    return out or text.split()
