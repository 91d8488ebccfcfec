"""The golden matchers of the conformance suite (docs/conformance.md, "Matchers")."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.matchers import MatchContext, lint, match

SHA = "0123456789abcdef0123456789abcdef01234567"
CTX = MatchContext(cwd="/tmp/case/repo", outside="/tmp/case/outside", head=SHA)


@pytest.mark.parametrize(
    ("token", "good", "bad"),
    [
        ("<ANY>", [None, 0, "x", [], {}], []),
        ("<STRING>", ["x", "two words"], ["", 1, None]),
        ("<INT>", [0, -3, 12], [1.5, True, "5", None]),
        ("<SCORE>", [0, 0.5, 1, 1.0], [-0.01, 1.01, True, "0.5", None]),
        ("<SHA40>", [SHA], [SHA.upper(), SHA[:39], None]),
        ("<NULL|SHA40>", [None, SHA], ["", SHA[:7]]),
        ("<VERSION>", ["0.1.0", "1.1.1", "2.0.0rc1", "0.1.0.dev3+g1234"], ["v1", "one", ""]),
        (
            "<ISO8601>",
            ["2026-01-01T00:00:00Z", "2026-01-01T12:30:00.125+02:00"],
            ["2026-01-01", "2026-13-01T00:00:00Z", "2026-01-01T00:00:00"],
        ),
        ("<CITE>", ["cite-" + "a" * 24], ["cite-" + "a" * 23, "cite-" + "A" * 24]),
        ("<HEAD>", [SHA], ["f" * 40]),
        ("<CWD>", ["/tmp/case/repo"], ["/tmp/case/repo/"]),
        ("<OUTSIDE>", ["/tmp/case/outside"], ["/tmp/case/repo"]),
    ],
)
def test_token_matchers_accept_their_shape_and_reject_others(
    token: str, good: list[Any], bad: list[Any]
) -> None:
    """Each documented token accepts exactly the values of its documented shape (suite rule)."""
    for value in good:
        assert match(token, value, CTX) == [], (token, value)
    for value in bad:
        assert match(token, value, CTX) != [], (token, value)


def test_head_matcher_never_matches_an_unborn_head() -> None:
    """<HEAD> with no HEAD commit fails instead of matching null (suite rule)."""
    unborn = MatchContext(cwd="/r", outside="/o", head=None)
    assert match("<HEAD>", None, unborn) != []
    assert match("ragit ingest --since <HEAD>", "ragit ingest --since ", unborn) != []


def test_template_string_matches_tokens_inside_literal_text() -> None:
    """Tokens inside a string match by their rule, the rest of it literally (suite rule)."""
    assert match("ragit ingest --since <SHA40>", f"ragit ingest --since {SHA}", CTX) == []
    assert match("ragit ingest --all --at <HEAD>", f"ragit ingest --all --at {SHA}", CTX) == []
    assert match("git add <STRING> && git commit", "git add a.md b.md && git commit", CTX) == []
    assert match("ragit ingest --since <SHA40>", "ragit ingest --all", CTX) != []
    assert match("path <CWD>/x", "path /tmp/case/repo/x", CTX) == []
    assert match("literal <paths> stay", "literal <paths> stay", CTX) == []


def test_object_keys_are_exact_unless_ellipsis() -> None:
    """Objects match exact key sets; "...": "<ANY>" allows other keys (suite rule)."""
    assert match({"a": 1}, {"a": 1}, CTX) == []
    problems = match({"a": 1}, {"a": 1, "b": 2}, CTX)
    assert problems == ["$: unexpected keys ['b']"]
    assert match({"a": 1, "...": "<ANY>"}, {"a": 1, "b": 2}, CTX) == []
    assert match({"a": 1, "...": "<ANY>"}, {"b": 2}, CTX) == ["$.a: missing (expected 1)"]
    assert match({"...": "<ANY>"}, [], CTX) != []


def test_lists_match_elementwise_with_exact_length() -> None:
    """Lists match element by element and must have the same length (suite rule)."""
    assert match(["<SHA40>", 1], [SHA, 1], CTX) == []
    assert match(["<SHA40>"], [SHA, SHA], CTX) != []
    assert match([1, 2], [2, 1], CTX) == ["$[0]: expected 1, got 2", "$[1]: expected 2, got 1"]


def test_list_forms_check_length_each_and_contains() -> None:
    """$len, $minLen, $each and $contains describe lists by their properties (suite rule)."""
    golden = {"$len": 2, "$each": "<SHA40>", "$contains": [SHA]}
    assert match(golden, [SHA, "f" * 40], CTX) == []
    assert match(golden, [SHA], CTX) == ["$: expected 2 items, got 1"]
    assert match({"$contains": ["x"]}, ["a", "b"], CTX) == ['$: no item matches "x"']
    assert match({"$minLen": 1}, [], CTX) == ["$: expected at least 1 items, got 0"]
    assert match({"$each": "<INT>"}, [1, "2"], CTX) == ['$[1]: expected <INT>, got "2"']
    assert match({"$each": "<INT>"}, {"not": "a list"}, CTX) != []


def test_distinct_names_the_repeated_item() -> None:
    """$distinct: no two items share a value under the key (suite rule)."""
    hits = [{"path": "a.md"}, {"path": "b.md"}]
    assert match({"$distinct": "path"}, hits, CTX) == []
    assert match({"$distinct": "path"}, [*hits, {"path": "a.md"}], CTX) == [
        "$[2].path: 'a.md' repeats item 0 ($distinct)"
    ]
    assert lint({"$distinct": ""}) == ["$.$distinct: must be a non-empty key name"]


def test_booleans_never_equal_numbers() -> None:
    """true and 1 are different JSON values; 5 and 5.0 are the same number (suite rule)."""
    assert match(True, 1, CTX) != []
    assert match(1, True, CTX) != []
    assert match(0, False, CTX) != []
    assert match(5, 5.0, CTX) == []
    assert match(None, 0, CTX) != []


def test_lint_reports_unknown_tokens_and_malformed_forms() -> None:
    """The checker's lint names every malformed golden construct (suite rule)."""
    assert lint({"a": "<SHA>"}) == ["$.a: unknown matcher <SHA>"]
    assert lint("x <ANY> y") == ["$: <ANY> cannot be used inside a template string"]
    assert lint({"...": True}) == ['$: the "..." key must have the value "<ANY>"']
    assert lint({"$len": -1}) == ["$.$len: must be a non-negative integer"]
    assert lint({"$size": 1}) == [
        "$: unknown list forms ['$size'] "
        "(known: ['$len', '$minLen', '$each', '$contains', '$distinct'])"
    ]
    assert lint({"$len": 1, "a": 1}) == ["$: cannot mix $-forms ['$len'] with object keys"]
    assert lint({"$contains": []}) == ["$.$contains: must be a non-empty list"]
    assert lint({"a": ["<HEAD>", {"$each": "<CITE>"}], "...": "<ANY>"}) == []
