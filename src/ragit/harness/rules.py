"""Deterministic rules of harness resources: parsing them and checking a case's output.

Rules live in a resource's ``expected`` object (:data:`RULE_KEYS`); rule-bearing
kinds are ``case``, ``oracle``, ``checker``, ``rubric`` and ``golden``. Each rule
item is one check: ``exitCode``; ``mustInclude``/``mustNotInclude`` (stdout) and
``stderrMustInclude``/``stderrMustNotInclude``; ``jsonSubset``, which reads
stdout as JSON (or its last non-empty line): an object matches when every
expected key matches recursively, an array when it has the expected length and
matching items.
"""

from __future__ import annotations

import json
from typing import Any

from ragit import _json
from ragit.artifacts.catalog import ArtifactRecord
from ragit.contract.errors import InputInvalid

RULE_KEYS: tuple[str, ...] = (
    "exitCode",
    "mustInclude",
    "mustNotInclude",
    "stderrMustInclude",
    "stderrMustNotInclude",
    "jsonSubset",
)
RULE_KINDS = frozenset({"case", "oracle", "checker", "rubric", "golden"})
CASE_INPUT_KEYS = ("args", "stdin", "env", "timeoutMs")


def parse_rules(expected: Any, field: str) -> dict[str, Any]:
    """The deterministic rules inside an ``expected`` object (other keys are kept as data).

    Raises:
        InputInvalid: a rule key with a value of the wrong type.
    """
    if not isinstance(expected, dict):
        return {}
    rules: dict[str, Any] = {}
    for key in RULE_KEYS:
        if key not in expected:
            continue
        value = expected[key]
        where = f"{field}.{key}"
        if key == "exitCode":
            if isinstance(value, bool) or not isinstance(value, int) or not -255 <= value <= 255:
                raise InputInvalid(where, "must be an integer exit status")
        elif key == "jsonSubset":
            if not isinstance(value, (dict, list)):
                raise InputInvalid(where, "must be a JSON object or array")
        elif not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise InputInvalid(where, "must be a list of strings")
        rules[key] = value
    return rules


def check_case_input(value: Any, field: str) -> None:
    """Validate the keys a command executor reads from a case's ``input``.

    Raises:
        InputInvalid: ``args`` not strings, ``stdin`` not a string, ``env`` not a
            string map with variable names, ``timeoutMs`` not in 1..3,600,000.
    """
    if not isinstance(value, dict):
        return
    args = value.get("args")
    if args is not None and (
        not isinstance(args, list) or not all(isinstance(a, str) for a in args)
    ):
        raise InputInvalid(f"{field}.args", "must be a list of strings")
    if "stdin" in value and not isinstance(value["stdin"], str):
        raise InputInvalid(f"{field}.stdin", "must be a string")
    env = value.get("env")
    if env is not None:
        import re

        if not isinstance(env, dict) or not all(
            isinstance(k, str)
            and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,127}", k)
            and isinstance(v, str)
            for k, v in env.items()
        ):
            raise InputInvalid(f"{field}.env", "must map variable names to strings")
    timeout = value.get("timeoutMs")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int) or not 1 <= timeout <= 3_600_000
    ):
        raise InputInvalid(f"{field}.timeoutMs", "must be an integer between 1 and 3600000")


def record_rules(record: ArtifactRecord) -> dict[str, Any]:
    if record.kind not in RULE_KINDS or not record.payload:
        return {}
    try:
        return parse_rules(record.payload.get("expected"), "expected")
    except InputInvalid:
        return {}


def json_subset(expected: Any, actual: Any) -> bool:
    """Whether ``actual`` contains ``expected`` (objects by key, arrays item by item)."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            k in actual and json_subset(v, actual[k]) for k, v in expected.items()
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(expected)
            and all(json_subset(e, a) for e, a in zip(expected, actual, strict=True))
        )
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    return bool(expected == actual)


def parse_stdout_json(text: str) -> Any:
    """stdout as JSON, else its last non-empty line as JSON, else a sentinel ``...``."""
    try:
        return _json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        pass
    lines = [line for line in text.splitlines() if line.strip()]
    if lines:
        try:
            return _json.loads(lines[-1])
        except (json.JSONDecodeError, RecursionError):
            pass
    return ...


def evaluate_rules(
    sources: list[tuple[ArtifactRecord, dict[str, Any]]],
    exit_code: int | None,
    stdout: str,
    stderr: str,
) -> list[dict[str, Any]]:
    """One check per rule item (the ``checkResults`` of a case)."""
    checks: list[dict[str, Any]] = []
    parsed: Any = None

    def add(name: str, ok: bool, detail: str, src: ArtifactRecord) -> None:
        checks.append(
            {
                "name": name,
                "ok": ok,
                "detail": detail,
                "sourceArtifactId": src.artifact_id,
                "sourceKind": src.kind,
            }
        )

    for src, rules in sources:
        if "exitCode" in rules:
            want = rules["exitCode"]
            add("exitCode", exit_code == want, f"expected {want}, got {exit_code}", src)
        for key, stream, present in (
            ("mustInclude", stdout, True),
            ("mustNotInclude", stdout, False),
            ("stderrMustInclude", stderr, True),
            ("stderrMustNotInclude", stderr, False),
        ):
            for i, needle in enumerate(rules.get(key, [])):
                found = needle in stream
                ok = found if present else not found
                where = "stderr" if key.startswith("stderr") else "stdout"
                detail = f"{'found' if found else 'not found'} in {where}"
                add(f"{key}[{i}]", ok, detail, src)
        if "jsonSubset" in rules:
            if parsed is None:
                parsed = parse_stdout_json(stdout)
            if parsed is ...:
                add("jsonSubset", False, "stdout is not JSON", src)
            else:
                ok = json_subset(rules["jsonSubset"], parsed)
                add("jsonSubset", ok, "subset matches" if ok else "subset does not match", src)
    return checks
