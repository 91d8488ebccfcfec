"""The envelope and the one emitter (contract.md §2).

Success: ``{command, ok: true, version, cwd, data, warnings}``; failure adds
``error`` and sets ``data`` to null. ``emit_success`` and ``emit_failure`` are
the only writers of command results; they implement the stream routing of
``--format text|json|both`` so every command behaves the same.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from ragit import __version__, _toml
from ragit.contract.errors import RagitError
from ragit.contract.inputs import escape_non_utf8, is_unicode_text
from ragit.contract.terminal import colour_enabled, json_safe, printable

FORMATS = ("text", "json", "both")
FORMAT_ALIASES = {"markdown": "text", "table": "text"}
VIEWS = ("minimal", "default", "full")


def configured_output_format(root: Path) -> str | None:
    """``output.format`` of the repository's config when the user set it, else None.

    Reads the TOML alone: the typed configuration (pydantic models) is not built, so the
    format of a command that needs no configuration costs no model imports. A missing,
    unreadable or invalid file is None here; the commands that load the configuration
    report it.
    """
    try:
        data = _toml.loads((root / ".ragit" / "config.toml").read_bytes().decode("utf-8"))
    except Exception:
        return None
    output = data.get("output")
    value = output.get("format") if isinstance(output, dict) else None
    if value in FORMAT_ALIASES:
        return FORMAT_ALIASES[value]
    return value if value in FORMATS else None


def envelope(
    command: str, cwd: str, data: Any, warnings: list[str], error: RagitError | None = None
) -> dict[str, Any]:
    """Build the envelope dict for a result or a typed failure."""
    env: dict[str, Any] = {
        "command": command,
        "ok": error is None,
        "version": __version__,
        "cwd": cwd,
        "data": data if error is None else None,
        "warnings": list(warnings),
    }
    if error is not None:
        env["error"] = error.payload()
    return env


def _escape_bytes(value: Any) -> Any:
    """``value`` with every string passed through :func:`escape_non_utf8`."""
    if isinstance(value, str):
        return escape_non_utf8(value)
    if isinstance(value, list):
        return [_escape_bytes(v) for v in value]
    if isinstance(value, dict):
        return {_escape_bytes(k): _escape_bytes(v) for k, v in value.items()}
    return value


def _dumps(value: Any, **options: Any) -> str:
    """JSON text: non-UTF-8 names escaped, DEL, C1 and bidi controls as ``\\u`` escapes."""
    text = json.dumps(value, ensure_ascii=False, **options)
    if not is_unicode_text(text):
        text = json.dumps(_escape_bytes(value), ensure_ascii=False, **options)
    return json_safe(text)


def dumps_compact(value: Any) -> str:
    """One-line JSON with non-ASCII kept readable (and terminal controls escaped)."""
    return _dumps(value, separators=(",", ":"))


def _dumps_for(stream: IO[str], value: Any) -> str:
    if stream.isatty():
        return _dumps(value, indent=2)
    return dumps_compact(value)


def emit_success(
    fmt: str,
    env: dict[str, Any],
    render_text: Callable[[], str],
    *,
    stdout: IO[str] | None = None,
    pager: Callable[[str], bool] | None = None,
) -> None:
    """Write a successful result in the requested format (all on stdout).

    ``pager``: for ``text`` only, shows the text instead of writing it (True when it did).
    """
    out = stdout or sys.stdout
    if fmt == "json":
        out.write(_dumps_for(out, env) + "\n")
        return
    text = printable(render_text(), keep_colour=colour_enabled(out))
    if text and not text.endswith("\n"):
        text += "\n"
    if fmt == "text" and pager is not None and pager(text):
        return
    out.write(text)
    if fmt == "both":
        out.write("---\n")
        out.write(dumps_compact(env) + "\n")


def render_failure_text(error: RagitError) -> str:
    """The human failure block (stderr for ``text`` and ``both``)."""
    lines = [
        "[ragit] operational error",
        f"- code: {error.code}",
        f"- message: {error.message}",
        f"- retryable: {'true' if error.retryable else 'false'}",
        f"- details: {dumps_compact(error.details)}",
        f"- recovery: {error.recovery if error.recovery else '(none)'}",
    ]
    if error.hint:
        lines.append(f"- hint: {error.hint}")
    return "\n".join(lines) + "\n"


def emit_failure(
    fmt: str,
    env: dict[str, Any],
    error: RagitError,
    *,
    stdout: IO[str] | None = None,
    stderr: IO[str] | None = None,
    human: str | None = None,
) -> None:
    """Write a typed failure: text → stderr, json → stdout, both → both streams."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    if fmt in ("text", "both"):
        shown = human if human is not None else render_failure_text(error)
        err.write(printable(shown, keep_colour=colour_enabled(err)))
    if fmt in ("json", "both"):
        out.write((_dumps_for(out, env) if fmt == "json" else dumps_compact(env)) + "\n")
