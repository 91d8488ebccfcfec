"""Golden-value matching with placeholders for volatile values.

A golden is plain JSON in which a few forms have a meaning (docs/conformance.md):

- a string that is exactly a token (``"<SHA40>"``) matches by the token's rule;
- a string that contains tokens among other text (``"ragit ingest --since <SHA40>"``)
  matches as a template: the tokens by their rule, the rest literally;
- an object matches an object with exactly the same keys, unless it holds
  ``"...": "<ANY>"``, which allows other keys;
- a list matches a list of the same length, element by element;
- an object whose keys all start with ``$`` matches a list by its properties:
  ``$len`` (exact length), ``$minLen``, ``$each`` (every element matches),
  ``$contains`` (every listed golden matches at least one element) and
  ``$distinct`` (a key: no two elements have the same value under it);
- any other value matches an equal value (``true`` never equals ``1``).

:func:`match` returns the mismatches as ``"<json path>: <what>"`` strings (empty
means a match); :func:`lint` returns the problems of a golden itself.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

ANY = "<ANY>"
ELLIPSIS_KEY = "..."
ARRAY_FORMS = ("$len", "$minLen", "$each", "$contains", "$distinct")

_TOKEN_SHAPE = re.compile(r"<[A-Z0-9|_]+>")
_SHA40 = r"[0-9a-f]{40}"
_VERSION = r"\d+\.\d+(?:\.\d+)?(?:[-+.]?[0-9A-Za-z][0-9A-Za-z.+-]*)?"
_ISO8601 = r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})"
_CITE = r"cite-[0-9a-f]{24}"


@dataclass(frozen=True)
class MatchContext:
    """Values the context-dependent tokens compare with.

    ``cwd`` is the case's working root (the repository root, or the plain
    directory of a case without a repository), ``outside`` the case's scratch
    directory outside the repository, ``head`` the repository's HEAD after the
    step under test (None when unborn or absent).
    """

    cwd: str
    outside: str
    head: str | None


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_iso8601(value: object) -> bool:
    if not isinstance(value, str) or not re.fullmatch(_ISO8601, value):
        return False
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def _literal(expected: str | None) -> Callable[[object], bool]:
    return lambda value: expected is not None and value == expected


def _checks(ctx: MatchContext) -> dict[str, Callable[[object], bool]]:
    return {
        "<ANY>": lambda value: True,
        "<STRING>": lambda value: isinstance(value, str) and value != "",
        "<INT>": lambda value: isinstance(value, int) and not isinstance(value, bool),
        "<SCORE>": lambda value: (
            isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1
        ),
        "<SHA40>": lambda value: isinstance(value, str) and bool(re.fullmatch(_SHA40, value)),
        "<NULL|SHA40>": lambda value: (
            value is None or (isinstance(value, str) and bool(re.fullmatch(_SHA40, value)))
        ),
        "<VERSION>": lambda value: isinstance(value, str) and bool(re.fullmatch(_VERSION, value)),
        "<ISO8601>": _is_iso8601,
        "<CITE>": lambda value: isinstance(value, str) and bool(re.fullmatch(_CITE, value)),
        "<HEAD>": _literal(ctx.head),
        "<CWD>": _literal(ctx.cwd),
        "<OUTSIDE>": _literal(ctx.outside),
    }


TOKENS = (
    "<ANY>",
    "<STRING>",
    "<INT>",
    "<SCORE>",
    "<SHA40>",
    "<NULL|SHA40>",
    "<VERSION>",
    "<ISO8601>",
    "<CITE>",
    "<HEAD>",
    "<CWD>",
    "<OUTSIDE>",
)

# Tokens usable inside a template string, with the regular expression they stand for.
_TEMPLATE_FRAGMENTS: dict[str, Callable[[MatchContext], str]] = {
    "<STRING>": lambda ctx: r".+?",
    "<INT>": lambda ctx: r"-?\d+",
    "<SHA40>": lambda ctx: _SHA40,
    "<VERSION>": lambda ctx: _VERSION,
    "<ISO8601>": lambda ctx: _ISO8601,
    "<CITE>": lambda ctx: _CITE,
    # A value that cannot occur in a string (an unborn HEAD) must never match.
    "<HEAD>": lambda ctx: re.escape(ctx.head) if ctx.head else r"(?!)",
    "<CWD>": lambda ctx: re.escape(ctx.cwd),
    "<OUTSIDE>": lambda ctx: re.escape(ctx.outside),
}


def _template_tokens(text: str) -> list[str]:
    return [tok for tok in _TOKEN_SHAPE.findall(text) if tok in TOKENS]


def _template_regex(text: str, ctx: MatchContext) -> str:
    out: list[str] = []
    pos = 0
    for found in _TOKEN_SHAPE.finditer(text):
        token = found.group(0)
        if token not in _TEMPLATE_FRAGMENTS:
            continue
        out.append(re.escape(text[pos : found.start()]))
        out.append(_TEMPLATE_FRAGMENTS[token](ctx))
        pos = found.end()
    out.append(re.escape(text[pos:]))
    return "".join(out)


def _short(value: object) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 120 else text[:117] + "..."


def match(expected: Any, actual: Any, ctx: MatchContext, path: str = "$") -> list[str]:
    """Return every mismatch between the golden ``expected`` and ``actual``."""
    if isinstance(expected, str):
        return _match_string(expected, actual, ctx, path)
    if isinstance(expected, dict):
        if expected and all(key.startswith("$") for key in expected):
            return _match_array_form(expected, actual, ctx, path)
        return _match_object(expected, actual, ctx, path)
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return [f"{path}: expected a list of {len(expected)}, got {_short(actual)}"]
        if len(actual) != len(expected):
            return [f"{path}: expected {len(expected)} items, got {len(actual)}: {_short(actual)}"]
        problems: list[str] = []
        for index, (exp, act) in enumerate(zip(expected, actual, strict=True)):
            problems += match(exp, act, ctx, f"{path}[{index}]")
        return problems
    if isinstance(expected, bool) or expected is None:
        ok = actual is expected
    elif _is_number(expected):
        ok = _is_number(actual) and actual == expected
    else:
        ok = actual == expected
    return [] if ok else [f"{path}: expected {_short(expected)}, got {_short(actual)}"]


def _match_string(expected: str, actual: Any, ctx: MatchContext, path: str) -> list[str]:
    if expected in TOKENS:
        if _checks(ctx)[expected](actual):
            return []
        hint = ""
        if expected == "<HEAD>":
            hint = f" (HEAD is {ctx.head})"
        elif expected == "<CWD>":
            hint = f" (cwd is {ctx.cwd})"
        elif expected == "<OUTSIDE>":
            hint = f" (outside dir is {ctx.outside})"
        return [f"{path}: expected {expected}{hint}, got {_short(actual)}"]
    if _template_tokens(expected):
        if isinstance(actual, str) and re.fullmatch(_template_regex(expected, ctx), actual):
            return []
        return [f"{path}: expected a string like {_short(expected)}, got {_short(actual)}"]
    if actual == expected:
        return []
    return [f"{path}: expected {_short(expected)}, got {_short(actual)}"]


def _match_object(expected: dict[str, Any], actual: Any, ctx: MatchContext, path: str) -> list[str]:
    if not isinstance(actual, dict):
        return [f"{path}: expected an object, got {_short(actual)}"]
    problems: list[str] = []
    open_keys = ELLIPSIS_KEY in expected
    for key, exp in expected.items():
        if key == ELLIPSIS_KEY:
            continue
        if key not in actual:
            problems.append(f"{path}.{key}: missing (expected {_short(exp)})")
            continue
        problems += match(exp, actual[key], ctx, f"{path}.{key}")
    if not open_keys:
        extra = sorted(set(actual) - set(expected))
        if extra:
            problems.append(f"{path}: unexpected keys {extra}")
    return problems


def _match_array_form(
    expected: dict[str, Any], actual: Any, ctx: MatchContext, path: str
) -> list[str]:
    if not isinstance(actual, list):
        return [f"{path}: expected a list, got {_short(actual)}"]
    problems: list[str] = []
    if "$len" in expected and len(actual) != expected["$len"]:
        problems.append(f"{path}: expected {expected['$len']} items, got {len(actual)}")
    if "$minLen" in expected and len(actual) < expected["$minLen"]:
        problems.append(f"{path}: expected at least {expected['$minLen']} items, got {len(actual)}")
    if "$each" in expected:
        for index, item in enumerate(actual):
            problems += match(expected["$each"], item, ctx, f"{path}[{index}]")
    for wanted in expected.get("$contains", []):
        if not any(not match(wanted, item, ctx) for item in actual):
            problems.append(f"{path}: no item matches {_short(wanted)}")
    if "$distinct" in expected:
        key = expected["$distinct"]
        seen: dict[str, int] = {}
        for index, item in enumerate(actual):
            value = repr(item.get(key)) if isinstance(item, dict) else repr(item)
            if value in seen:
                problems.append(
                    f"{path}[{index}].{key}: {value} repeats item {seen[value]} ($distinct)"
                )
            seen.setdefault(value, index)
    return problems


def lint(expected: Any, path: str = "$") -> list[str]:
    """Return the problems of a golden: unknown tokens, malformed array forms, bad ``...``."""
    problems: list[str] = []
    if isinstance(expected, str):
        for token in _TOKEN_SHAPE.findall(expected):
            if token not in TOKENS:
                problems.append(f"{path}: unknown matcher {token}")
            elif expected != token and token not in _TEMPLATE_FRAGMENTS:
                problems.append(f"{path}: {token} cannot be used inside a template string")
    elif isinstance(expected, list):
        for index, item in enumerate(expected):
            problems += lint(item, f"{path}[{index}]")
    elif isinstance(expected, dict):
        dollar = [key for key in expected if key.startswith("$")]
        if dollar and len(dollar) != len(expected):
            problems.append(f"{path}: cannot mix $-forms {dollar} with object keys")
        elif dollar:
            problems += _lint_array_form(expected, path)
        else:
            if ELLIPSIS_KEY in expected and expected[ELLIPSIS_KEY] != ANY:
                problems.append(f'{path}: the "..." key must have the value "<ANY>"')
            for key, value in expected.items():
                if key != ELLIPSIS_KEY:
                    problems += lint(value, f"{path}.{key}")
    return problems


def _lint_array_form(expected: dict[str, Any], path: str) -> list[str]:
    problems: list[str] = []
    unknown = sorted(set(expected) - set(ARRAY_FORMS))
    if unknown:
        problems.append(f"{path}: unknown list forms {unknown} (known: {list(ARRAY_FORMS)})")
    for key in ("$len", "$minLen"):
        if key in expected:
            value = expected[key]
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                problems.append(f"{path}.{key}: must be a non-negative integer")
    if "$contains" in expected:
        if not isinstance(expected["$contains"], list) or not expected["$contains"]:
            problems.append(f"{path}.$contains: must be a non-empty list")
        else:
            for index, item in enumerate(expected["$contains"]):
                problems += lint(item, f"{path}.$contains[{index}]")
    if "$each" in expected:
        problems += lint(expected["$each"], f"{path}.$each")
    if "$distinct" in expected and (
        not isinstance(expected["$distinct"], str) or not expected["$distinct"]
    ):
        problems.append(f"{path}.$distinct: must be a non-empty key name")
    return problems
