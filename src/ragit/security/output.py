"""Masking what leaves the process: command data, typed errors, refs and paths.

Contract §3 keeps secrets out of an error's ``message`` and ``details``; contract §7
re-masks every output. The faces (the CLI's envelope and text, the MCP server's
results) pass what they print through :func:`mask_in_place` and :func:`mask_error`,
whatever command produced it, so a secret in a file name, a commit message or a
configuration value is masked even where no field-level masking ran. Masking is
idempotent: text already masked (hit texts, summaries) is left as it is.

A ref a user gave (``--at``, ``--since``, MCP ``at``) is echoed only through
:func:`mask_ref`: the masking rules, and beyond them any ref shaped like an access
token (16+ characters of letters, digits and ``_+/=.-`` with upper case, lower case
and a digit), which no branch, tag or commit prefix looks like.
"""

from __future__ import annotations

from typing import Any

from ragit.contract.errors import RagitError
from ragit.security.masking import mask_text
from ragit.security.secret_values import MASK
from ragit.text.patterns import lazy

__all__ = ["mask_error", "mask_in_place", "mask_ref"]

_TOKEN_LIKE = lazy(r"[A-Za-z0-9_+/=.-]{16,}")


def mask_ref(ref: str) -> str:
    """``ref`` as it may be echoed: masked by the rules, or cut to 4 characters and
    ``***`` when it looks like a token."""
    masked = mask_text(ref).text
    if masked != ref:
        return masked
    if (
        _TOKEN_LIKE.fullmatch(ref)
        and any(c.isupper() for c in ref)
        and any(c.islower() for c in ref)
        and any(c.isdigit() for c in ref)
    ):
        return ref[:4] + MASK
    return ref


def mask_in_place(value: Any) -> int:
    """Mask every string inside a JSON-like value (dicts and lists, changed in place;
    a tuple inside becomes a list, which serializes the same).

    Object keys are schema and stay; returns the number of replacements.
    """
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return 0
    total = 0
    for key, item in list(items):
        if isinstance(item, str):
            result = mask_text(item)
            if result.masked_count:
                value[key] = result.text
                total += result.masked_count
        elif isinstance(item, tuple):
            value[key] = list(item)
            total += mask_in_place(value[key])
        elif isinstance(item, (dict, list)):
            total += mask_in_place(item)
    return total


def mask_error(error: RagitError) -> RagitError:
    """``error`` with its message, details and recovery masked (changed in place).

    A ``requestedRef`` in the details goes through :func:`mask_ref`, and the message
    that quotes it is changed the same way.
    """
    ref = error.details.get("requestedRef")
    if isinstance(ref, str):
        shown = mask_ref(ref)
        if shown != ref:
            error.details["requestedRef"] = shown
            error.message = error.message.replace(repr(ref), repr(shown)).replace(ref, shown)
    error.message = mask_text(error.message).text
    mask_in_place(error.details)
    if error.recovery is not None:
        error.recovery = mask_text(error.recovery).text
    if error.human_next is not None:
        error.human_next = mask_text(error.human_next).text
    error.alternatives = [mask_text(other).text for other in error.alternatives]
    return error
