"""The one text vocabulary of the CLI: values, colour and the human failure line.

Every text renderer formats values through :func:`value` (``-`` for none, ``yes``/``no``
for booleans, ``k=v`` pairs for objects), so no Python repr reaches a person. Colour is
used only on a terminal and never when ``NO_COLOR`` is set (https://no-color.org).
:func:`human_failure` turns a typed error into what stderr shows for ``--format
text|both``; the JSON envelope is built elsewhere and never changes with it.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Iterable, Mapping
from typing import IO, Any

from ragit.contract.command_spec import Argument, CommandSpec
from ragit.contract.errors import RagitError
from ragit.contract.terminal import colour_enabled

_CODES = {
    "red": "31",
    "yellow": "33",
    "green": "32",
    "bold": "1",
    "dim": "2",
    "match": "1;33",  # a question word in a hit (bold yellow)
}


def paint(text: str, colour: str, stream: IO[str] | None = None) -> str:
    """``text`` in ``colour`` when the stream it goes to allows colour."""
    if not colour_enabled(stream):
        return text
    return f"\033[{_CODES[colour]}m{text}\033[0m"


def value(v: Any) -> str:
    """A value as a person reads it: ``-`` for none, ``yes``/``no``, ``k=v, …`` for objects."""
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, Mapping):
        return ", ".join(f"{k}={value(x)}" for k, x in v.items()) or "-"
    if isinstance(v, (list, tuple)):
        return ", ".join(value(x) for x in v) or "-"
    return str(v)


def nearest(word: str, choices: Iterable[str], n: int = 1) -> list[str]:
    """The closest ``choices`` to ``word`` (difflib), best first."""
    return difflib.get_close_matches(word, list(choices), n=n, cutoff=0.6)


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``; did you mean 'x'?`` or the empty string."""
    close = nearest(word, choices)
    return f"; did you mean '{close[0]}'?" if close else ""


def _see(spec: CommandSpec | None) -> str:
    return f" (see: ragit {spec.path} --help)" if spec else " (see: ragit --help)"


def _flag_for(spec: CommandSpec, field: str) -> tuple[str, Any] | None:
    """The option (or argument) a ``details.field`` names, with its kind."""
    for opt in spec.options:
        head, *rest = opt.dest.split("_")
        camel = head + "".join(word.title() for word in rest)
        if field in (opt.input_key, opt.dest, opt.name.lstrip("-"), camel):
            return opt.name, opt
    for arg in spec.arguments:
        if field in (arg.input_key, arg.name):
            return f"<{arg.name}>", arg
    common = {"format": "--format", "view": "--view", "input": "--input", "cwd": "--cwd"}
    if field in common:
        return common[field], None
    return None


def _expected(kind: Any, field: str, reason: str, raw: str) -> str:
    from ragit.contract.command_spec import FORMATS, VIEWS, Option

    if isinstance(kind, Option):
        if kind.type == "integer":
            top = f"1–{kind.maximum}" if kind.maximum else "of at least 1"
            return f"expected an integer {top}"
        if kind.type == "enum" and kind.enum:
            return f"expected one of {', '.join(kind.enum)}{did_you_mean(raw, kind.enum)}"
    if field == "format":
        return f"expected one of {', '.join(FORMATS)}{did_you_mean(raw, FORMATS)}"
    if field == "view":
        return f"expected one of {', '.join(VIEWS)}{did_you_mean(raw, VIEWS)}"
    return reason


def _raw(params: Mapping[str, Any], kind: Any, field: str) -> str | None:
    dest = getattr(kind, "dest", None) or getattr(kind, "name", None) or field
    raw = params.get(dest)
    if isinstance(raw, (list, tuple)):
        raw = " ".join(str(x) for x in raw)
    return None if raw is None else str(raw)


def _input_line(error: RagitError, spec: CommandSpec, params: Mapping[str, Any]) -> str | None:
    field = str(error.details.get("field", ""))
    reason = str(error.details.get("reason", ""))
    if spec.path == "describe" and field == "command":
        requested = str(error.details.get("requested", ""))
        available = [str(c) for c in error.details.get("availableCommands", [])]
        hint = did_you_mean(requested, available)
        return f"error: {reason} '{requested}'{hint} (see: ragit describe)"
    if spec.path in ("config set", "config get") and field == "key" and "unknown" in reason:
        from ragit.config import config_keys

        raw = str(params.get("key", ""))
        keys = config_keys()
        hint = did_you_mean(raw, keys)
        section = raw.partition(".")[0]
        shown = [k for k in keys if k.startswith(section + ".")] or keys
        return (
            f"error: unknown config key '{raw}'{hint} (see: ragit config list)\n"
            f"  keys: {', '.join(shown)}"
        )
    found = _flag_for(spec, field)
    if found is None:
        return None
    flag, kind = found
    given = _raw(params, kind, field)
    if isinstance(kind, Argument) and kind.required and not given and params.get("input") is None:
        return usage_line(spec, kind)
    if given is None or params.get("input") is not None:
        return None
    if getattr(kind, "variadic", False):  # the reason names the one value that is wrong
        return f"error: invalid value for '{flag}': {reason}{_see(spec)}"
    expected = _expected(kind, field, reason, given)
    return f"error: invalid value '{given}' for '{flag}': {expected}{_see(spec)}"


def usage_line(spec: CommandSpec, missing: Argument) -> str:
    """``usage: ragit query [OPTIONS] QUESTION...`` and what is missing, with an example."""
    words = []
    for arg in spec.arguments:
        name = arg.name.upper() + ("..." if arg.variadic or arg.joins_words else "")
        words.append(name if arg.required else f"[{name}]")
    alt = " (or --input PATH|-)" if spec.input_model else ""
    usage = f"usage: ragit {spec.path} [OPTIONS] {' '.join(words)}{alt}"
    example = next(
        (
            e.split(" --", 1)[0]
            for e in spec.examples
            if e.split(" --", 1)[0] != f"ragit {spec.path}"
        ),
        None,
    )
    hint = f", e.g. {example}" if example else ""
    return f"{usage}\nerror: missing {missing.name}{hint}{_see(spec)}"


def _at_command(spec: CommandSpec, params: Mapping[str, Any], sha: str) -> str:
    """The command as asked, with ``--at`` naming ``sha``: what a person runs instead of a
    ref that reads refuse. The question is masked like any output (docs/contract.md)."""
    import shlex

    from ragit.security.masking import mask_text

    parts = ["ragit", *spec.path.split(), "--at", sha]
    for arg in spec.arguments:
        raw = params.get(arg.name)
        words = " ".join(raw) if isinstance(raw, (list, tuple)) else raw
        if words:
            parts.append(shlex.quote(mask_text(str(words)).text))
    for opt in spec.options:
        given = params.get(opt.dest)
        if opt.name == "--at" or given in (None, False, ()) or given == opt.default:
            continue
        parts.append(opt.name if given is True else f"{opt.name} {shlex.quote(str(given))}")
    for flag in ("view", "format"):
        if params.get(flag):
            parts.append(f"--{flag} {shlex.quote(str(params[flag]))}")
    return " ".join(parts)


def human_failure(
    error: RagitError,
    spec: CommandSpec | None,
    params: Mapping[str, Any] | None = None,
    stream: IO[str] | None = None,
) -> str:
    """What stderr shows for a typed failure in ``text`` and ``both`` formats.

    A flag-level ``INPUT_INVALID`` is one line in the flag's own name with a hint;
    anything else is the message, its code and the recovery to run.
    """
    err = stream if stream is not None else sys.stderr
    label = paint("error:", "red", err)
    if error.code == "INPUT_INVALID" and spec is not None:
        line = _input_line(error, spec, params or {})
        if line is not None:
            return line.replace("error:", label, 1) + "\n"
    kind = error.category.replace("_", " ")
    retry = "retryable" if error.retryable else "not retryable"
    lines = [f"{label} {error.message}", f"  code: {error.code} ({kind}, {retry})"]
    for key, detail in error.details.items():
        if key in ("field", "reason") and error.code == "INPUT_INVALID":
            continue
        lines.append(f"  {key}: {value(detail)}")
    shown = error.human_next or error.recovery
    if error.code == "SNAPSHOT_REF_INVALID" and error.details.get("resolvedSha") and spec:
        shown = _at_command(spec, params or {}, str(error.details["resolvedSha"]))
    if shown:
        lines.append(f"  {paint('next:', 'bold', err)} {shown}")
    elif error.hint:
        lines.append(f"  {paint('hint:', 'bold', err)} {error.hint}")
    for other in error.alternatives:
        lines.append(f"  {paint('or:', 'bold', err)} {other}")
    return "\n".join(lines) + "\n"
