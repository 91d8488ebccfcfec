"""Checks of one step's streams, envelope and files against the case's expectations.

Each check returns its problems as short strings (empty means the expectation holds);
the goldens inside them are compared by :mod:`conformance.matchers`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance.matchers import MatchContext, match

TRACEBACK = "Traceback (most recent call last):"


def decode(data: bytes, stream: str, problems: list[str]) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.append(f"{stream}: not valid UTF-8 ({exc})")
        return data.decode("utf-8", "replace")


def _is_envelope(value: object) -> bool:
    return isinstance(value, dict) and "ok" in value and ("command" in value or "tool" in value)


def _last_line_is_envelope(lines: list[str]) -> bool:
    try:
        return bool(lines) and _is_envelope(json.loads(lines[-1]))
    except ValueError:
        return False


def _why_not_envelope(stdout: str) -> str:
    """Say what stdout holds instead of exactly one JSON envelope."""
    if not stdout.strip():
        return "stdout: empty; expected one JSON envelope"
    lines = stdout.rstrip("\n").split("\n")
    if len(lines) > 1 and _last_line_is_envelope(lines):
        return "stdout: text before the JSON envelope; expected the envelope alone"
    return "stdout: not one JSON object; expected the JSON envelope alone"


def _why_not_both(lines: list[str]) -> str:
    """Say what is missing from a ``both``-format stdout (text, ``---``, envelope line)."""
    if not any(line.strip() for line in lines):
        return "stdout: empty; expected text, a `---` line, then the JSON envelope"
    has_envelope = _last_line_is_envelope(lines)
    if "---" not in lines:
        if has_envelope:
            return "stdout: no `---` line between the text and the JSON envelope"
        return "stdout: no `---` line and no JSON envelope on the last line"
    if not has_envelope:
        return "stdout: the line after `---` is not one compact JSON envelope ending stdout"
    return "stdout: the `---` line is not directly before the JSON envelope line"


def parse_stdout(mode: str, stdout: str) -> tuple[Any, list[str]]:
    """Check stdout against its mode; return the envelope it carries (if any) and problems.

    A problem says what is missing (the output itself goes to the case's excerpt).
    """
    if mode == "any":
        return None, []
    if mode == "empty":
        return None, [] if stdout == "" else ["stdout: expected nothing, got output"]
    if mode == "envelope":
        try:
            value = json.loads(stdout)
        except ValueError:
            return None, [_why_not_envelope(stdout)]
        if not isinstance(value, dict):
            return None, [f"stdout: a JSON {type(value).__name__}, not an envelope object"]
        return value, []
    if mode == "text":
        problems = []
        if not stdout.strip():
            problems.append("stdout: expected human text, got nothing")
        else:
            try:
                json.loads(stdout)
                problems.append("stdout: JSON where human text was expected")
            except ValueError:
                pass
            for line in stdout.splitlines():
                try:
                    if _is_envelope(json.loads(line)):
                        problems.append("stdout: expected human text only, found an envelope line")
                        break
                except ValueError:
                    continue
        return None, problems
    if mode == "text+envelope":
        body = stdout[:-1] if stdout.endswith("\n") else stdout
        lines = body.split("\n")
        if len(lines) < 3 or lines[-2] != "---":
            return None, [_why_not_both(lines)]
        problems = []
        if not "\n".join(lines[:-2]).strip():
            problems.append("stdout: no text before the `---` line")
        try:
            value = json.loads(lines[-1])
        except ValueError as exc:
            return None, [*problems, f"stdout: the last line is not one JSON envelope ({exc})"]
        if not isinstance(value, dict):
            return None, [*problems, "stdout: the last line is not a JSON object"]
        return value, problems
    return None, [f"stdout: unknown expectation {mode!r}"]


def _first_line(text: str, limit: int = 80) -> str:
    line = next((ln for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def check_stderr(expect: Any, stderr: str) -> list[str]:
    """Compare stderr with ``empty``, ``nonEmpty`` or ``{"contains": [...]}``."""
    if expect == "empty" and stderr != "":
        return [f"stderr: expected nothing, got {_first_line(stderr)!r}"]
    if expect == "nonEmpty" and not stderr.strip():
        return ["stderr: expected a message, got nothing"]
    if isinstance(expect, dict):
        return [
            f"stderr: no {needle!r}"
            for needle in expect.get("contains", [])
            if needle not in stderr
        ]
    return []


def check_absent(stream: str, needles: list[str], text: str) -> list[str]:
    """Strings that must not occur in a stream (a planted secret, a private query)."""
    return [
        f"{stream}: contains {needle!r}, which must not appear"
        for needle in needles
        if needle in text
    ]


def json_path(value: Any, path: str) -> Any:
    """Follow a dotted path (``data.hits.0.path``); raises KeyError when it does not exist."""
    current = value
    for part in [p for p in path.split(".") if p]:
        if isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        elif isinstance(current, dict) and part in current:
            current = current[part]
        else:
            raise KeyError(path)
    return current


def check_files(
    resolve: Callable[[str], Path], specs: list[dict[str, Any]], ctx: MatchContext
) -> list[str]:
    """Check the ``files`` expectations (existence and content of repository paths).

    ``resolve`` turns a case path into a filesystem path (and rejects a bad one).
    """
    problems: list[str] = []
    for spec in specs:
        rel = spec["path"]
        path = resolve(rel)
        exists = path.exists() or path.is_symlink()
        if "exists" in spec and exists != spec["exists"]:
            problems.append(f"files: {rel} should {'' if spec['exists'] else 'not '}exist")
            continue
        content_checks = {"equals", "startsWith", "containsLines", "matches", "json"} & set(spec)
        if not content_checks:
            continue
        if not path.is_file():
            problems.append(f"files: {rel} is not a regular file")
            continue
        text = path.read_bytes().decode("utf-8", "replace")
        if "equals" in spec and text != spec["equals"]:
            problems.append(f"files: {rel} is {text[:300]!r}, expected {spec['equals'][:300]!r}")
        if "startsWith" in spec and not text.startswith(spec["startsWith"]):
            problems.append(f"files: {rel} does not start with {spec['startsWith']!r}")
        lines = text.splitlines()
        for line in spec.get("containsLines", []):
            if line not in lines:
                problems.append(f"files: {rel} has no line {line!r}")
        if "matches" in spec and not re.search(spec["matches"], text, re.MULTILINE):
            problems.append(f"files: {rel} does not match /{spec['matches']}/")
        if "json" in spec:
            try:
                value = json.loads(text)
            except ValueError as exc:
                problems.append(f"files: {rel} is not JSON ({exc})")
            else:
                problems += [f"files: {rel}: {p}" for p in match(spec["json"], value, ctx)]
    return problems


_WORDS_LIMIT = 1000


def own_words(stdout: bytes | str, stderr: bytes | str) -> str | None:
    """What the implementation said about a failure, in its own words, as one line.

    The message of an error envelope on stdout (``CODE: message``) when there is one, else
    the first non-blank line of stderr (the last one for a traceback, which names the
    exception). ``None`` when it said nothing.
    """
    out = stdout.decode("utf-8", "replace") if isinstance(stdout, bytes) else stdout
    err = stderr.decode("utf-8", "replace") if isinstance(stderr, bytes) else stderr
    words = _envelope_error(out)
    if words is None:
        lines = [line.strip() for line in err.splitlines() if line.strip()]
        if lines:
            words = lines[-1] if TRACEBACK in err else lines[0]
    if words is None or len(words) <= _WORDS_LIMIT:
        return words
    return f"{words[:_WORDS_LIMIT]} [+{len(words) - _WORDS_LIMIT} chars]"


def envelope_words(envelope: Any) -> str | None:
    """``CODE: message`` of a failure envelope, else ``None``."""
    error = envelope.get("error") if isinstance(envelope, dict) else None
    if not isinstance(error, dict):
        return None
    code = error.get("code") if isinstance(error.get("code"), str) else ""
    message = " ".join(str(error.get("message") or "").split())
    return ": ".join(part for part in (code, message) if part) or None


def _envelope_error(stdout: str) -> str | None:
    text = stdout.strip()
    for candidate in (text, text.rsplit("\n", 1)[-1] if text else ""):
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        return envelope_words(value)
    return None
