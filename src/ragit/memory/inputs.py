"""``--input`` of the memory, session, artifact and harness commands (contract §4).

Stricter than the shared reader of :mod:`ragit.contract.inputs`: lone
surrogates are rejected, and ``memory promote`` accepts a top-level array.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, Any

from ragit import _json
from ragit.contract.errors import InputInvalid


def _reject_constant(token: str) -> float:
    raise ValueError(f"non-standard JSON constant {token}")


def _first_surrogate(value: Any, path: str = "") -> str | None:
    if isinstance(value, str):
        return (path or "<root>") if any(0xD800 <= ord(c) <= 0xDFFF for c in value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            sub = f"{path}.{key}" if path else str(key)
            found = _first_surrogate(key, sub) or _first_surrogate(item, sub)
            if found:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _first_surrogate(item, f"{path}[{index}]")
            if found:
                return found
    return None


def load_input(source: str, root: Path, stdin: IO[bytes], *, allow_array: bool = False) -> Any:
    """Read ``--input <path|->`` with the rules of contract §4.

    Besides the shared rules (inside the repository, 16 MiB, UTF-8 JSON, no
    control characters) it rejects lone surrogates, which cannot be written as
    UTF-8, and accepts a top-level array where ``allow_array`` says so
    (``memory promote``).

    Raises:
        InputInvalid: any violation, naming the field (never echoing a value).
    """
    from ragit.contract.inputs import (
        MAX_INPUT_BYTES,
        find_control_chars,
        has_control_chars,
        resolve_inside,
    )

    if source == "-":
        raw = stdin.read(MAX_INPUT_BYTES + 1)
    else:
        if not source or has_control_chars(source):
            raise InputInvalid("input", "a file path or - is required")
        path = resolve_inside(root, source, "input")
        if not path.is_file():
            raise InputInvalid("input", "file not found")
        try:
            if path.stat().st_size > MAX_INPUT_BYTES:
                raise InputInvalid("input", f"payload larger than {MAX_INPUT_BYTES} bytes")
            raw = path.read_bytes()
        except OSError as exc:
            raise InputInvalid("input", f"file is not readable ({exc.strerror})") from exc
    if len(raw) > MAX_INPUT_BYTES:
        raise InputInvalid("input", f"payload larger than {MAX_INPUT_BYTES} bytes")
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise InputInvalid("input", "payload is not valid UTF-8") from exc
    try:
        value = _json.loads(
            text, max_depth=_json.REQUEST_MAX_DEPTH, parse_constant=_reject_constant
        )
    except _json.JsonTooDeep as exc:
        raise InputInvalid("input", str(exc)) from exc
    except (json.JSONDecodeError, ValueError) as exc:
        raise InputInvalid("input", f"payload is not valid JSON ({type(exc).__name__})") from exc
    if not isinstance(value, dict) and not (allow_array and isinstance(value, list)):
        expected = "a JSON object or array" if allow_array else "a JSON object"
        raise InputInvalid("input", f"payload must be {expected}")
    try:
        bad = find_control_chars(value)
        if bad:
            raise InputInvalid(bad, "control characters are not allowed")
        bad = _first_surrogate(value)
    except RecursionError:
        raise InputInvalid("input", "payload is nested too deeply") from None
    if bad:
        raise InputInvalid(bad, "lone surrogate code points are not allowed")
    return value
