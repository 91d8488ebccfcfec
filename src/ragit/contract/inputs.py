"""Input rules shared by the CLI and the MCP server (contract.md §4).

``load_input_payload`` reads ``--input <path|->``: a JSON object from stdin or
from a file inside the repository, with every string checked for control
characters. ``validate_payload`` turns a pydantic validation failure into an
``INPUT_INVALID`` error that names the offending field without echoing its
value. Integer and string rules live here too so both faces share them.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

from ragit import _json
from ragit.contract.errors import InputInvalid

if TYPE_CHECKING:
    from pydantic import BaseModel

    M = TypeVar("M", bound=BaseModel)

_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SURROGATE = re.compile("[\ud800-\udfff]")
MAX_INPUT_BYTES = 16 * 1024 * 1024


def has_control_chars(text: str) -> bool:
    """True when ``text`` holds a character that contract §4 forbids."""
    return _CONTROL.search(text) is not None


def is_unicode_text(text: str) -> bool:
    """False when ``text`` holds a lone surrogate: bytes that were not UTF-8 (PEP 383)."""
    return _SURROGATE.search(text) is None


def escape_non_utf8(text: str) -> str:
    """``text`` with each lone surrogate written as the escape of the byte it stands for.

    A file name or argument that is not UTF-8 reaches Python as lone surrogates
    (PEP 383), which no UTF-8 stream can carry: ``docs/bad-\\xff.md`` is shown instead.
    """
    return _SURROGATE.sub(_byte_escape, text)


def _byte_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def find_control_chars(value: Any, path: str = "") -> str | None:
    """Return the path of the first string (key or value) holding a forbidden character."""
    if isinstance(value, str):
        return (path or "<root>") if has_control_chars(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            sub = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and has_control_chars(key):
                return sub
            found = find_control_chars(item, sub)
            if found:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = find_control_chars(item, f"{path}[{i}]")
            if found:
                return found
    return None


def _reject_constant(token: str) -> float:
    raise ValueError(f"non-standard JSON constant {token}")


def parse_json_object(raw: bytes, field: str = "input") -> dict[str, Any]:
    """Decode UTF-8 JSON that must be an object free of control characters.

    Raises:
        InputInvalid: invalid UTF-8, invalid JSON, a non-object, or a control character.
    """
    if len(raw) > MAX_INPUT_BYTES:
        raise InputInvalid(field, f"payload larger than {MAX_INPUT_BYTES} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputInvalid(field, "payload is not valid UTF-8") from exc
    text = text.removeprefix("\ufeff")
    try:
        value = _json.loads(
            text, max_depth=_json.REQUEST_MAX_DEPTH, parse_constant=_reject_constant
        )
    except _json.JsonTooDeep as exc:
        raise InputInvalid(field, str(exc)) from exc
    except (json.JSONDecodeError, ValueError) as exc:
        raise InputInvalid(field, f"payload is not valid JSON ({type(exc).__name__})") from exc
    if not isinstance(value, dict):
        raise InputInvalid(field, "payload must be a JSON object")
    bad = find_control_chars(value)
    if bad:
        raise InputInvalid(bad, "control characters are not allowed")
    return value


def resolve_inside(root: Path, candidate: str, field: str, *, base: Path | None = None) -> Path:
    """Resolve ``candidate`` (against ``base`` or the cwd) and require it inside ``root``.

    Raises:
        InputInvalid: the path escapes the repository.
    """
    path = Path(candidate)
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    resolved = path.resolve()
    root_resolved = root.resolve()
    if resolved != root_resolved and root_resolved not in resolved.parents:
        raise InputInvalid(field, "path must lie inside the repository")
    return resolved


def load_input_payload(source: str, root: Path, stdin: IO[bytes]) -> dict[str, Any]:
    """Read ``--input <path|->`` and return the decoded JSON object.

    Raises:
        InputInvalid: unreadable, outside the repository, or not a clean JSON object.
    """
    if source == "-":
        return parse_json_object(stdin.read(MAX_INPUT_BYTES + 1))
    if not source or has_control_chars(source):
        raise InputInvalid("input", "a file path or - is required")
    path = resolve_inside(root, source, "input")
    if not path.is_file():
        raise InputInvalid("input", "file not found")
    try:
        size = path.stat().st_size
        if size > MAX_INPUT_BYTES:
            raise InputInvalid("input", f"payload larger than {MAX_INPUT_BYTES} bytes")
        raw = path.read_bytes()
    except OSError as exc:
        raise InputInvalid("input", f"file is not readable ({exc.strerror})") from exc
    return parse_json_object(raw)


def _loc(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "input"


def validate_payload(model: type[M], payload: dict[str, Any]) -> M:
    """Validate ``payload`` against a strict input model.

    Raises:
        InputInvalid: naming the first offending field (never echoing its value).
    """
    from pydantic import ValidationError

    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        field = _loc(tuple(first["loc"]))
        kind = first["type"]
        reason = "unknown field" if kind == "extra_forbidden" else str(first["msg"])
        raise InputInvalid(field, reason) from None


def positive_int(value: Any, field: str, maximum: int) -> int:
    """Apply the integer rule of contract §4 to a JSON value.

    Raises:
        InputInvalid: booleans, strings, fractions, zero, negatives or values above ``maximum``.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputInvalid(field, "must be a positive integer")
    if value < 1 or value > maximum:
        raise InputInvalid(field, f"must be between 1 and {maximum}")
    return value


def positive_int_option(raw: str, field: str, maximum: int) -> int:
    """Parse a CLI integer option text with the same rule as JSON integers.

    Raises:
        InputInvalid: anything but a plain decimal integer in ``1..maximum``.
    """
    text = raw.strip()
    if not re.fullmatch(r"\+?[0-9]+", text):
        raise InputInvalid(field, "must be a positive integer")
    return positive_int(int(text), field, maximum)


def wait_seconds(raw: str | None, no_wait: bool) -> float | None:
    """The ``--wait SECONDS`` / ``--no-wait`` of a read: seconds, or None for the configured
    ``retrieval.wait_for_ingest``.

    Raises:
        InputInvalid: field ``wait``: not a plain integer 0-600, or given with ``--no-wait``.
    """
    if raw is None:
        return 0.0 if no_wait else None
    if no_wait:
        raise InputInvalid("wait", "--wait and --no-wait contradict each other")
    text = raw.strip()
    if not re.fullmatch(r"\+?[0-9]+", text) or int(text) > 600:
        raise InputInvalid("wait", "must be an integer number of seconds, 0-600")
    return float(int(text))


def required_text(value: str, field: str) -> str:
    """A required string must hold something other than whitespace and no control characters.

    Raises:
        InputInvalid: empty, whitespace-only or containing control characters.
    """
    if not value or not value.strip():
        raise InputInvalid(field, "must not be empty")
    if has_control_chars(value):
        raise InputInvalid(field, "control characters are not allowed")
    return value


def existing_directory(raw: str, field: str = "cwd") -> Path:
    """Resolve ``--cwd``: it must name an existing directory.

    Raises:
        InputInvalid: missing, not a directory, or containing control characters.
    """
    if not raw or has_control_chars(raw):
        raise InputInvalid(field, "must be a directory path")
    path = Path(raw).expanduser()
    if not path.is_absolute():
        path = Path(os.getcwd()) / path
    if not path.is_dir():
        raise InputInvalid(field, "directory does not exist")
    return path.resolve()
