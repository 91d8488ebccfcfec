"""Secret masking for everything RAGit writes or prints (docs/masking.md,
docs/reference/security.md, contract §7).

:func:`mask_text` replaces secrets in a string; :func:`mask_json` does the same for
every string inside a JSON value and reports the masked field paths;
:class:`RedactionSummary` is the ``redactionSummary`` object of query, context pack
and memory outputs. What the faces print passes through :mod:`ragit.security.output`.

The rules — token formats (:mod:`ragit.security.token_formats`), PEM private-key
blocks and headers (:mod:`ragit.security.mask_rules`), the values of secret-naming
keys in every spelling (:mod:`ragit.security.key_rules`,
:mod:`ragit.security.phrase_rules`), and the value heuristics they share
(:mod:`ragit.security.secret_values`) — are listed in docs/masking.md, with the table
of secret forms and look-alikes they are measured on.

A replacement keeps a short recognizable prefix and appends ``***`` (a password
keeps nothing). The prefix is always shorter than the shortest value the rule
matches, and every rule refuses a value that already contains ``***``, so masking is
idempotent: masking masked text changes nothing and counts 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragit.security.mask_rules import apply_rules
from ragit.text.patterns import lazy

if TYPE_CHECKING:
    from ragit.security.redaction import RedactionSummary

__all__ = [
    "MaskResult",
    "RedactionSummary",
    "mask_json",
    "mask_text",
]


# Strings no rule can match, answered without running them (most of an envelope's
# fields): lower-case words (``durable``, ``head-exact``), hex ids and SHAs, citation
# ids and timestamps. Every token format needs an upper-case letter, a digit next to a
# non-hex letter, or a separator these lack.
_PLAIN = lazy(
    r"[a-z_.-]{0,64}|[0-9a-f]{1,128}|cite-[0-9a-f]{24}"
    r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)"
)


@dataclass(frozen=True)
class MaskResult:
    """The outcome of masking one string.

    ``labels`` lists the rule label of every replacement (rules run in the order
    PEM blocks, token formats, headers, key-value forms; text order within a
    rule), so ``len(labels) == masked_count``.
    """

    text: str
    masked_count: int
    labels: tuple[str, ...]


def mask_text(text: str) -> MaskResult:
    """Mask every secret in ``text`` (rules in the module docstring).

    Pure and idempotent: ``mask_text(mask_text(t).text)`` returns the same text
    with ``masked_count == 0``.
    """
    if _PLAIN.fullmatch(text):
        return MaskResult(text=text, masked_count=0, labels=())
    labels: list[str] = []
    masked = apply_rules(text, labels)
    return MaskResult(text=masked, masked_count=len(labels), labels=tuple(labels))


def _child_path(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def mask_json(value: object, path: str = "") -> tuple[object, int, list[str]]:
    """Mask every string inside a JSON value, recursively.

    Returns ``(masked value, masked count, masked field paths)``. Paths use dots
    for object keys and ``[i]`` for array items (``goal``, ``turns[0].content``);
    a string at the root is reported as ``path`` or ``"$"`` when ``path`` is empty.
    Object keys are not masked (they are schema, not data); non-string scalars are
    returned unchanged; tuples are treated as arrays. The input is not mutated.
    """
    sources: list[str] = []
    masked, count = _mask_json(value, path, sources)
    return masked, count, sources


def _mask_json(value: object, path: str, sources: list[str]) -> tuple[object, int]:
    if isinstance(value, str):
        result = mask_text(value)
        if result.masked_count:
            sources.append(path or "$")
        return result.text, result.masked_count
    if isinstance(value, Mapping):
        out: dict[object, object] = {}
        total = 0
        for key, item in value.items():
            masked, count = _mask_json(item, _child_path(path, str(key)), sources)
            out[key] = masked
            total += count
        return out, total
    if isinstance(value, (list, tuple)):
        items: list[object] = []
        total = 0
        for index, item in enumerate(value):
            masked, count = _mask_json(item, f"{path}[{index}]", sources)
            items.append(masked)
            total += count
        return items, total
    return value, 0


def __getattr__(name: str) -> Any:
    # RedactionSummary is a pydantic model: loaded by the commands that build one, not by
    # every command that masks its output.
    if name == "RedactionSummary":
        from ragit.security.redaction import RedactionSummary

        return RedactionSummary
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
