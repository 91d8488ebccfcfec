"""A question is analysed once: :func:`ragit.text.question.analyze` runs each analyzer of
:mod:`ragit.text` exactly once and keeps what retrieval reads of the text."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from ragit.text import morphemes, question
from ragit.text.korean import korean_content_words
from ragit.text.morphemes import candidate_terms, question_morphemes
from ragit.text.question import Question, analyze, overlay_terms
from ragit.text.scripts import cjk_runs, script_weights
from ragit.text.terms import cjk_terms, en_terms, query_terms

# The analyzers analyze calls, by the name it calls them by (the real functions, counted).
ANALYZERS = (
    "script_weights",
    "en_terms",
    "cjk_runs",
    "korean_content_words",
    "cjk_terms",
    "question_prefixes",
    "ngram_words",
    "overlay_terms",
)


def _count_calls(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Wrap each real analyzer (in :mod:`ragit.text.question`, and the Hangul word split of
    :mod:`ragit.text.morphemes` that the prefixes come from) with a call counter."""
    calls: Counter[str] = Counter()

    def counted(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return real(*args, **kwargs)

        return wrapper

    for name in ANALYZERS:
        monkeypatch.setattr(question, name, counted(name, getattr(question, name)))
    monkeypatch.setattr(
        morphemes, "question_words", counted("question_words", morphemes.question_words)
    )
    return calls


def test_analyze_calls_each_analyzer_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _count_calls(monkeypatch)
    analysed = analyze("payment retry 방지를 어떻게 하나요")
    assert isinstance(analysed, Question)
    assert calls == dict.fromkeys((*ANALYZERS, "question_words"), 1)


def test_a_korean_question_skips_the_english_terms(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _count_calls(monkeypatch)
    analysed = analyze("스레드가 종료되면 어떻게 하나요?")
    assert calls == {name: 1 for name in (*ANALYZERS, "question_words") if name != "en_terms"}
    assert analysed.en_terms == ()


def test_an_english_question_skips_the_korean_analyzers(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _count_calls(monkeypatch)
    analysed = analyze("How do refresh tokens rotate?")
    assert calls == {"script_weights": 1, "en_terms": 1, "overlay_terms": 1}
    assert analysed.cjk_terms == analysed.morpheme_prefixes == analysed.ngram_words == ()


@pytest.mark.parametrize(
    "text",
    [
        "payment retry 방지를 어떻게 하나요",
        "스레드가 종료되면 어떻게 하나요?",
        "How do refresh tokens rotate?",
        "React.lazy로 state를 useFormStatus의",
        "?! ...",
    ],
)
def test_the_question_holds_what_each_analyzer_gives(text: str) -> None:
    analysed = analyze(text)
    w_en, w_cjk = script_weights(text)
    assert (analysed.latin_share, analysed.cjk_share) == (w_en, w_cjk)
    assert list(analysed.en_terms) == (query_terms(en_terms(text)) if w_en > 0 else [])
    korean = korean_content_words(cjk_runs(text)) if w_cjk > 0 else []
    assert list(analysed.korean_words) == korean
    assert list(analysed.cjk_terms) == (query_terms(cjk_terms(" ".join(korean))) if korean else [])
    held = {"스레드", "종료", "방지"}.__contains__
    from ragit.text.morphemes import held_prefixes

    if analysed.cjk_terms:
        assert held_prefixes(analysed.morpheme_prefixes, held) == question_morphemes(text, held)
        assert analysed.morpheme_candidates() == list(candidate_terms(text))
    assert analysed.overlay_terms == overlay_terms(text)


def test_the_question_is_a_frozen_value() -> None:
    analysed = analyze("retry budget")
    assert analysed == analyze("retry budget")
    with pytest.raises(AttributeError):
        analysed.text = "other"  # type: ignore[misc]
